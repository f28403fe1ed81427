"""PyTorch FSDP (XLA611-XLA613): torch's FullyShardedDataParallel becomes torch_xla's."""
