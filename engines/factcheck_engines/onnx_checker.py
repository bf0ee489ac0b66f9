"""`onnx/<name>`: a grounding cross-encoder from a folder of the checker's (FACTCHECK_ONNX_MODELS) answers the
verification call (`VerifyInputs`) by reading each claim against its passages the way the model was made
to be read (its card, onnx_card.py):

- "chunks" (MiniCheck): each passage is cut into chunks of consecutive sentences, as many tokens as the
  claim leaves of the model's max_length (or the card's chunk_tokens); every chunk is read with the claim;
- "sentences" (SummaC): every sentence of every passage is read with each sentence of the claim.

The readings become the verdict by the grounding models' decision (factcheck/core/model_verdicts.py): the best unit
decides, DISPUTED only on a contradiction class reading, no correction. The answer is the verification
format, the deciding chunk or sentence quoted verbatim and cited by its passage label.

A claim that cannot be read (no passages, a claim so long that it leaves the evidence under a quarter of
the model's length, a failure of the model on it) is UNVERIFIABLE with the reason; the other claims of
the call keep their verdicts. A claim's pairs are one list, batched on their own (onnx_model.py).

Only the verification call: a grounding model answers no council, assessment or review prompt (the
gateway accepts `onnx/` models as checkers only).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from factcheck.core.model_verdicts import (
    ClaimReading,
    Unit,
    UnitReading,
    answer_text,
    decide,
    no_passages_reason,
    verification_block,
)
from factcheck.kit.settings import Settings
from factcheck.models.availability import onnx_folder_setting
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.inputs import Passage, VerifyInputs, unanswerable
from factcheck.models.local import ONNX_PREFIX, LocalEngine
from factcheck.text.chunks import Span, chunk_spans, cut_span, sentence_units
from factcheck.text.sentences import split_sentences
from factcheck.text.text_safety import excerpt
from factcheck_engines.onnx_model import GroundingModel, OnnxModelError, Tokens, loaded

# The least share of the model's length a claim must leave for the evidence.
MIN_EVIDENCE_SHARE = 4


def answer(inputs: object, model: GroundingModel, model_id: str) -> str:
    """The verification format's blocks and summary for every claim of the call."""
    if not isinstance(inputs, VerifyInputs):
        raise unanswerable(inputs, model_id, (VerifyInputs,))
    passages: dict[str, Passage] = {}
    for passage in inputs.passages:
        passages.setdefault(passage.id, passage)
    tokens: dict[str, Tokens] = {}  # each passage tokenized once per call
    thresholds = model.card.thresholds
    if inputs.support_threshold is not None:  # the call's threshold (an evaluation's fitted one): support only
        thresholds = replace(thresholds, supported=inputs.support_threshold)
    blocks, verdicts = [], []
    for claim in inputs.claims:
        listed = [passages[pid] for pid in dict.fromkeys(inputs.claim_passages.get(claim.id, ())) if pid in passages]
        reading = read_claim(model, model_id, claim.id, claim.text.strip(), listed, tokens, bool(passages))
        decision = decide(reading, thresholds, model_id)
        blocks.append(verification_block(claim.id, decision, with_sources=bool(passages)))
        verdicts.append(decision.verdict)
    return answer_text(blocks, verdicts)


def read_claim(
    model: GroundingModel,
    model_id: str,
    claim_id: str,
    claim: str,
    passages: list[Passage],
    tokens: dict[str, Tokens],
    call_had_evidence: bool = True,
) -> ClaimReading:
    """Every reading of one claim, or why there is none."""
    if not passages:
        return ClaimReading(claim_id, not_checked=no_passages_reason(model_id, call_had_evidence))
    try:
        return _read(model, model_id, claim_id, claim, passages, tokens)
    except Exception as error:  # an engine failure on one claim must not cost the others their verdicts
        detail = excerpt(f"{type(error).__name__}: {error}", 200)
        return ClaimReading(
            claim_id, not_checked=f"{model_id} failed on this claim ({detail}); the other claims keep their verdicts"
        )


@dataclass
class _Pairs:
    """The pairs of one claim: (part, unit) for every part of the claim and every unit of its passages."""

    parts: list[str]
    units: list[Unit]
    spans: list[tuple[str, Span]]  # each unit's passage and span


def _read(
    model: GroundingModel,
    model_id: str,
    claim_id: str,
    claim: str,
    passages: list[Passage],
    tokens: dict[str, Tokens],
) -> ClaimReading:
    card = model.card
    sentences = card.aggregation == "sentences"
    parts = (split_sentences(claim) or [claim]) if sentences else [claim]
    part_tokens = [model.tokens(part) for part in parts]
    longest = max(len(t.ids) for t in part_tokens)
    room = card.max_length - model.overhead - longest
    if card.chunk_tokens is not None:
        room = min(room, card.chunk_tokens)
    least = card.max_length // MIN_EVIDENCE_SHARE
    if room < least:
        return ClaimReading(
            claim_id,
            not_checked=(
                f"the claim{' sentence' if len(parts) > 1 else ''} is {longest} tokens long: with the "
                f"{model.overhead} of the model's own it leaves {max(room, 0)} of the {card.max_length} tokens "
                f"{model_id} reads (its card's max_length) for the evidence, and at least {least} are needed"
            ),
        )
    kind = "sentence" if sentences else "chunk"
    units: list[Unit] = []
    spans: list[tuple[str, Span]] = []
    texts = {passage.id: passage.text for passage in passages}
    for passage in passages:
        if passage.id not in tokens:
            tokens[passage.id] = model.tokens(passage.text)
        cut = sentence_units if sentences else chunk_spans
        for span in cut(passage.text, tokens[passage.id].offsets, room):
            units.append(Unit(passage.id, passage.title, passage.text[span[0] : span[1]], kind))
            spans.append((passage.id, span))
    pairs = [(part, unit.text) for part in parts for unit in units]
    encoded = _encoded(model, parts, part_tokens, spans, texts, tokens)
    unread, over = 0, [i for i, e in enumerate(encoded) if len(e.ids) > card.max_length]
    if over:
        # The units were cut by the passage's own tokens; a pair's tokens can come out a few more (a word
        # split otherwise at a chunk's edge). Such a unit is cut again, to its overflow's worth less.
        units, spans, unread = _recut(model, parts, units, spans, encoded, tokens, passages)
        pairs = [(part, unit.text) for part in parts for unit in units]
        encoded = model.encode(pairs)
        unread += sum(len(e.ids) > card.max_length for e in encoded)
        keep = [i for i, e in enumerate(encoded) if len(e.ids) <= card.max_length]
    else:
        keep = list(range(len(pairs)))
    rows = model.probabilities([encoded[i] for i in keep], [len(pairs[i][0]) + len(pairs[i][1]) for i in keep])
    by_pair = dict(zip(keep, rows))
    readings: list[tuple[UnitReading, ...]] = []
    for p in range(len(parts)):
        part = []
        for u, unit in enumerate(units):
            row = by_pair.get(p * len(units) + u)
            if row is not None:
                contradicted = row[card.contradicted] if card.contradicted is not None else None
                part.append(UnitReading(unit, row[card.supported], contradicted))
        readings.append(tuple(part))
    reason = f"longer than the {card.max_length} tokens {model_id} reads" if unread else ""
    return ClaimReading(claim_id, tuple(readings), unread=unread, unread_reason=reason)


def _encoded(model, parts, part_tokens, spans, texts, tokens) -> list:
    """Every (part, unit) pair encoded, parts first, each passage's units together."""
    by_passage: dict[str, list[Span]] = {}
    for passage_id, span in spans:
        by_passage.setdefault(passage_id, []).append(span)
    return [
        encoding
        for part, claim_tokens in zip(parts, part_tokens)
        for passage_id, passage_spans in by_passage.items()
        for encoding in model.encode_units(part, claim_tokens, texts[passage_id], tokens[passage_id], passage_spans)
    ]


def _recut(model, parts, units, spans, encoded, tokens, passages):
    """Units whose pair is too long cut again by their overflow; how many could not be."""
    card = model.card
    texts = {passage.id: passage.text for passage in passages}
    overflow = [0] * len(units)
    for index, e in enumerate(encoded):
        overflow[index % len(units)] = max(overflow[index % len(units)], len(e.ids) - card.max_length)
    new_units: list[Unit] = []
    new_spans: list[tuple[str, Span]] = []
    dropped = 0
    for unit, (passage_id, span), extra in zip(units, spans, overflow):
        if extra <= 0:
            new_units.append(unit)
            new_spans.append((passage_id, span))
            continue
        text = texts[passage_id]
        offsets = tokens[passage_id].offsets
        inside = [t for t in offsets if span[0] <= t[0] < span[1]]
        room = len(inside) - extra
        if room < 1:
            dropped += 1
            continue
        for piece in cut_span(text, offsets, span, room):
            new_units.append(Unit(unit.passage_id, unit.title, text[piece[0] : piece[1]], unit.kind))
            new_spans.append((passage_id, piece))
    return new_units, new_spans, dropped


class OnnxFamily:
    """The `onnx/` engine family: each name's folder from the settings, its model loaded once per process
    (and, once loaded, found again without touching the disk: every call asks for it)."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str, int, int], GroundingModel] = {}

    def engine(self, name: str, settings: Settings) -> LocalEngine:
        model, model_id = self._model(name, settings)

        def engine(prompt: str, inputs: object) -> str:
            return answer(inputs, model, model_id)

        return engine

    def revision(self, name: str, settings: Settings) -> str:
        """The SHA-256 of the model's card, tokenizer and weights (loading and checking it first)."""
        return self._model(name, settings)[0].revision

    def _model(self, name: str, settings: Settings) -> tuple[GroundingModel, str]:
        model_id = f"{ONNX_PREFIX}{name}"
        onnx_folder_setting(model_id, settings)
        folder = settings.onnx_models[name]
        key = (name, str(folder), settings.onnx_threads, settings.onnx_batch_size)
        if (found := self._found.get(key)) is not None:
            return found, model_id
        try:
            model = self._found[key] = loaded(folder, settings)
            return model, model_id
        except OnnxModelError as error:
            raise ModelNotConfiguredError(
                model_id, f"the folder FACTCHECK_ONNX_MODELS gives it ({folder}) cannot be used: {error}"
            ) from None
