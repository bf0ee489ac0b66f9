"""The verification cache: checkers' verifications and extractions a tenant already paid for, reused.

Shared by the fact-check mode (its verify and extract steps) and by evaluations (each checker call);
`cached.py` says what a key depends on and when an answer is reused. It imports no mode: the
gateway's modes and evaluations plug into it (docs/development.md, the gateway's floors).
"""
