"""The knowledge store and evidence retrieval (issue 4): documents the checkers verify claims against."""
