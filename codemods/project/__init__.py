"""The project around a file (XLA003): its root, module summaries and setup that lives in another file."""
