"""Security of the suite: TLS credentials, bearer-token auth, and keeping secrets out of logs."""
