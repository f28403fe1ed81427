"""What every concern shares: the analysis walk, the rewriter, node helpers, positions, the round trip, import aliases, the rule model and the report."""
