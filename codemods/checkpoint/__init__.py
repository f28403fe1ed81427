"""Checkpoints (XLA4): saving and loading on the XLA device."""
