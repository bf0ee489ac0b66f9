"""Generated gRPC code for the factcheck.v1 protos (see scripts/generate_protos.py)."""
