"""The run machinery every mode shares: a run's events, writes, lease, limits, Watch and the evidence stage.

It knows no particular mode: modes build on it, never the other way round.
"""
