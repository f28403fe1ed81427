"""Imports (XLA001, XLA002): what rewritten code needs, what rewrites left unused, code that already handles XLA."""
