"""Human review of the verification loop's CRITICAL outcomes: the pending reviews
(investigation_reviews) and ReviewService."""
