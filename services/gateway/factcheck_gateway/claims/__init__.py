"""Claim-level citations in the gateway: the rows a run writes (writes.py), the four-tier
consensus (tiers.py), the stored claims read back (claim_store.py) and their tables (tables.py); ClaimsService
serves them (servicers/claims.py)."""
