"""Lightning and Fabric (XLA821, XLA822)."""
