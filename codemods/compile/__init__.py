"""torch.compile on the XLA device (XLA721-XLA724)."""
