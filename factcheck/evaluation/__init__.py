"""Evaluating a checker model on labelled sets: the sets (`sets`) and the scores (`metrics`).

`sets` reads labelled items, (claim, evidence passages, gold verdict), from the sets shipped with
the package (`factcheck-bench`, `wice`, `climate-fever`: package data, never downloaded) or from a
caller's own JSONL file; `metrics` scores a model's verdicts on them. Both are pure Python with no
gRPC: the gateway's evaluation runs the items through the real CheckerService and hands the
verdicts to `metrics.score`. See docs/evaluation.md.
"""
