"""The fact-checking vocabulary the services share: the claim and verdict shapes, consensus inputs, the council's error taxonomy, entailment rules, claim profiles and numeric checks, prompt versions.

Imports factcheck.text, factcheck.kit and factcheck.v1; never a service, the CLI or the engines.
"""
