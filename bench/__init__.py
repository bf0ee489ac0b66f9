"""Benchmarks that print figures (see docs/benchmarks.md)."""
