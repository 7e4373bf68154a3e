"""Spectral and complex kernels: FFT/IFFT/RFFT/IRFFT in 1-3 dimensions; Complex, Real, Imag, Angle, Conj,
ComplexAbs."""
