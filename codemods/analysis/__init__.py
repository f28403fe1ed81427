"""Analyse: read-only passes over a parsed file that build the facts the rewrites apply."""
