"""The `factcheck` command: `serve` runs the suite locally; `check`, `council`, `entail`, `watch`, `cancel`, `show`,
`list`, `kb`, `reviews`, `usage` and `cache` use its gateway."""
