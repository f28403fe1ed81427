"""Training (XLA201, XLA203, XLA3): optimizer steps, optimizers built before their model moves, step barriers and device loaders."""
