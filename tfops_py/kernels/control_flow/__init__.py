"""Control flow: TF1 dataflow ops (Switch, Merge, Enter ...), functional ops (While, If, Case, calls), TensorList
and TensorArray."""
