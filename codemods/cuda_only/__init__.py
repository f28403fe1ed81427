"""CUDA-only APIs (XLA004, XLA212, XLA5): runtime calls, fused kernels, CUDA-only libraries and settings."""
