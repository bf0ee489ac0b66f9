"""Text utilities with no knowledge of services: spans, sentences, numbers and dates, untrusted text in prompts, protocol lines.

Imports nothing of the suite but the generated contract (factcheck.v1).
"""
