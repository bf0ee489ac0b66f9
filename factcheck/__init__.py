"""factcheck: gRPC fact-checking suite (shared package: generated stubs, settings, model client)."""
