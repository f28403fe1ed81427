"""Lazy mode (XLA7): host reads, step closures and what makes XLA compile more than one graph per step."""
