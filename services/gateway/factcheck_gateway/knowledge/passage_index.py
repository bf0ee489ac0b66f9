"""What search asks of a backend's full-text index: which of one tenant's passages hold a query's words.

The knowledge store (passage_store.py) searches through a `PassageIndex`; each database has its own
(sqlite_index.py: the FTS5 table; postgresql_index.py: the tsvector column and its GIN index), with the
same interface. Which passages a group of posting lists finds is decided here, for both: a backend only
reads lists (`_matching`) and passages (`passages`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from factcheck_gateway.knowledge.top_k import PostingList


class PassageIndex:
    """A backend's full-text index over one tenant's passages, as search uses it: which passages hold words."""

    def __init__(self) -> None:
        # The passages `matching` found, read with their ids: (text, length in terms).
        self._found: dict[int, tuple[str, int]] = {}

    # A group is read either as the index's AND of its lists or through its shortest list (its lead), whose
    # passages are filtered here by the words their texts hold: an AND walks the entries of each of its lists
    # (FTS5: 10 ms for a short list ANDed with a term in 40% of a million passages), while a lead's passages are
    # read once for all the groups it leads, each row costing about as much as walking ROW_COST entries
    # (its best value measured at a million passages, on the benchmark's common-word questions: PostgreSQL's
    # in postgresql_index.py). Only speed depends on the choice: both read every passage of the group.
    ROW_COST = 300

    def matching(self, groups: list[tuple[PostingList, ...]]) -> list[int]:
        """Ids of the tenant's passages in every posting list of at least one group, all of them: never cut at a
        limit. More are fine (a list that is not salient is read as every passage holding the term, a term the
        index makes several tokens of as their phrase): each is scored exactly."""
        by_lead: dict[PostingList, list[tuple[PostingList, ...]]] = {}
        for group in groups:
            by_lead.setdefault(min(group, key=lambda posting: posting.passages), []).append(group)
        by_index = [
            group
            for lead, led in by_lead.items()
            if lead.passages * self.ROW_COST >= sum(p.passages for group in led for p in group)
            for group in led
        ]
        found = self._matching(by_index) if by_index else {}
        read = {lead: led for lead, led in by_lead.items() if led[0] not in by_index}
        if read:
            led_groups = [group for led in read.values() for group in led]
            bits = {term: 1 << b for b, term in enumerate(dict.fromkeys(p.term for g in led_groups for p in g))}
            masks = {sum(bits[term] for term in {posting.term for posting in group}) for group in led_groups}
            # A number written with thousands separators is not a substring of its term ("1,000": "1000"): always held.
            always = sum(bit for term, bit in bits.items() if term.isdigit())
            for identifier, row in self._matching([(lead,) for lead in read]).items():
                lowered = row[0].lower()
                held = always | sum(bit for term, bit in bits.items() if term in lowered)
                if any(held & mask == mask for mask in masks):
                    found[identifier] = row
        self._found.update(found)
        return list(found)

    def _matching(self, groups: list[tuple[PostingList, ...]]) -> dict[int, tuple[str, int]]:
        """`matching`'s passages, id -> (text, length)."""
        raise NotImplementedError

    @staticmethod
    def _by_lead(groups: list[tuple[PostingList, ...]]) -> list[tuple[PostingList, list[tuple[PostingList, ...]]]]:
        """The groups as one AND per lead (the group's shortest list): the lead, and the OR of what else each group
        it leads needs (nothing: the lead alone). An index evaluates an OR of many ANDs on every entry of every
        list in it (PostgreSQL: 150-250 ms for 50 groups of a question's common words at a million passages);
        led by their shortest list, the same passages cost a walk along a few short lists."""
        led: dict[PostingList, list[tuple[PostingList, ...]]] = {}
        for group in groups:
            lead = min(group, key=lambda posting: posting.passages)
            rest = tuple(posting for posting in group if posting != lead)
            if rest not in led.setdefault(lead, []):
                led[lead].append(rest)
        return [(lead, [] if () in rests else rests) for lead, rests in led.items()]

    def texts(self, ids: list[int]) -> list[str]:
        """The texts of passages `matching` found."""
        return [self._found[i][0] for i in ids]

    def lengths(self, ids: list[int]) -> list[int]:
        """The stored lengths of passages `matching` found (0: not known)."""
        return [self._found[i][1] for i in ids]

    def passages(self, ids: list[int]) -> Sequence[Mapping]:
        """The tenant's passages among `ids`, with their documents' metadata."""
        raise NotImplementedError
