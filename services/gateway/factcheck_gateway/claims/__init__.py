"""Claim-level citations in the gateway: the rows a run writes (writes.py), the four-tier
consensus (tiers.py), the stored claims read back (store.py) and ClaimsService (service.py)."""
