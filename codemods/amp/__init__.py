"""Mixed precision (XLA2): autocast, gradient scalers and the optimizers that run under them."""
