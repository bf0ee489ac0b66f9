"""The gRPC runtime every service and the CLI share: servers, channels, errors, settings, health, observability and security.

Imports only factcheck.text and factcheck.v1; never the engines, the model client, the CLI or a service.
"""
