"""Human review of the verification loop's CRITICAL outcomes: the pending reviews (review_store.py, their
table in tables.py), their states and the statuses a decision may put in force (states.py); ReviewService
is servicers/reviews.py."""
