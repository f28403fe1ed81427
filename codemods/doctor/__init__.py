"""``xla-codemod doctor``: run a converted script for a few steps on XLA and name the lines that make it compile new graphs or read the device (diagnose.py; its rules are XLD, rules.py)."""
