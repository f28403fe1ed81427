"""torch_xla names that moved between releases (XLA9)."""
