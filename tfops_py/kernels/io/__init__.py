"""Kernels that read and write files: checkpoint save/restore (SaveV2, RestoreV2, MergeV2Checkpoints ...)
and TensorBoard summaries."""
