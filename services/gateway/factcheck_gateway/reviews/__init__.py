"""Human review of the verification loop's CRITICAL outcomes (issue 18, part 7): the pending reviews
(investigation_reviews) and ReviewService."""
