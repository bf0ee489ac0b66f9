"""Entailment mode (MODE_ENTAILMENT): each item's claim and source excerpt through four isolated
agents (extractor, reliability, entailment judge, adversarial auditor), aggregated by the gateway."""
