"""Linear algebra kernels: matrix products, Einsum, factorizations, solvers, matrix functions, diagonals and bands."""
