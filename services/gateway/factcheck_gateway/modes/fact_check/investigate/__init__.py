"""The verification loop: fact-check mode's optional `investigate` stage.

flags.py (which claims, in what order) → queries.py (three variants) → services/gateway/factcheck_gateway/search
(providers, cache) → the investigator model through CheckerService.AssessEvidence → authority.py
(authority, owners, syndicated copies) → decide.py (re-classification, confidence) → loop.py
(batches, retries) → step.py (events, the stored row, reviews, what the report and result use).
"""
