"""Jupyter notebooks (XLN1): code cells ported as one program, written back into their cells."""
