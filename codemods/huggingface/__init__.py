"""Hugging Face Trainer, Accelerate and the `_mp_fn` entry point (XLA801-XLA807)."""
