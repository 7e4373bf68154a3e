"""Random number kernels, bit-exact with TF's CPU kernels where TF's Philox streams make that possible."""
