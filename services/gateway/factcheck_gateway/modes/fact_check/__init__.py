"""Fact-check mode (MODE_FACT_CHECK): extract → verify in parallel → consensus → report."""
