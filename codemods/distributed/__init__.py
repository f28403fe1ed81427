"""Distributed training (XLA6): process groups, ranks, launch, DDP, samplers, the entry point."""
