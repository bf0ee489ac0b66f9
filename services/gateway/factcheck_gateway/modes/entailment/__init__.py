"""Entailment mode (MODE_ENTAILMENT, seed 1): each item's claim and source excerpt through four isolated
agents (extractor, reliability, entailment judge, adversarial auditor), aggregated by the gateway."""
