"""Fact-check mode (MODE_FACT_CHECK, seed 0): extract → verify in parallel → consensus → report."""
