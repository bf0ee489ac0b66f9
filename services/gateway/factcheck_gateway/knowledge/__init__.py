"""The knowledge store and evidence retrieval: documents the checkers verify claims against."""
