"""The consensus of a claim's checkers: one package for the gateway.

- `combine.py`: each claim's consensus verdict from its checkers' verdicts (the majority, or weighted);
- `weighted.py`: the reliability-weighted consensus's math (weights fitted on an evaluation's confusions);
- `weights.py`: which consensus a fact-check asked for (FactCheckConfig.consensus), the weights it looked
  up from the evaluations, and the row that stores them with the run.

One line of text describing what a run used is shared with the command line: factcheck/core/weighting_text.py.
"""

from factcheck_gateway.consensus.combine import MISSING_EVIDENCE, calculate_consensus

__all__ = ["MISSING_EVIDENCE", "calculate_consensus"]
