"""A scripted, OpenAI-compatible fake model server for tests and benchmarks.

It is a real HTTP server on 127.0.0.1 (ephemeral port) running in daemon threads, so it
never blocks the asyncio loop of the test using it, and the model client under test
talks real HTTP to it.

    with FakeModelServer() as server:
        settings = Settings(model_base_url=server.base_url)
        server.script("openai/gpt", fail(503, retry_after=0.1), reply("hello"))
        ...
        assert server.requests[0].kind == "generate"

Default answers follow fact-check mode's answer formats (docs/modes.md#fact-check-mode), chosen by the prompt's
opening (see `classify`): "generate", "extract", "verify", "report", "title", "council"
(every response MOSTLY ACCURATE but the first, ACCURATE and MOST RELIABLE; `council_answer`
writes any other summary for a scripted `reply`), "synthesize", "other"; and the entailment
agents' JSON ("entail_extractor", "entail_reliability", "entail_judge", "entail_auditor"), the
same as local/entailment's. `RecordedRequest.response_format` is the structured-outputs schema a
request asked for.

Scripting: `server.script(model_id, *behaviours)` queues behaviours for one model id;
each request to that model consumes the next one and the last one repeats. Behaviours
are built with `reply`, `default_reply`, `echo`, `verdicts`, `delay`, `fail`, `garbage`,
`bad_shape`, `hang`, `disconnect`, `raw_bytes` (any status, body and headers) and
`raw_response` (the whole HTTP response as bytes, however malformed) and `sse` (server-sent events
as given, then a clean end, a dropped connection or a hang). `minicheck(p_yes)` is a grounding model of
the MiniCheck dialect (its system prompt opens the prompt): one answer token, "Yes" or "No", with its
log-probabilities when the request asks for them (`with_logprobs=False`: a server that never sends any),
P(yes) for each (document, claim) given by `p_yes`; `refuse_logprobs()` a server that answers 400 to the
field. Unscripted, a MiniCheck prompt gets `minicheck(default_p_yes)`. `server.set_latency(kind_or_model, s)`
adds a fixed delay before answering (a model id wins over a kind). Everything is
thread-safe.

Streaming: a request with `"stream": true` gets its answer text as server-sent events
(`chat.completion.chunk`s, one per token, then, when the request asked with
`stream_options.include_usage`, a usage chunk, and `data: [DONE]`), unless the behaviour is
`plain(...)` (a provider that ignores `stream`). With
`server.set_token_rate(kind_or_model, tokens_per_s)` the model writes at that fixed rate:
a streamed answer sends each token when it is written, a plain answer comes whole once the
last token is written. A token is a word with the whitespace before it. While it streams,
the server watches the connection: a client that goes away stops the writing at once, and
`server.disconnects` records it (model, time, tokens written), as llama.cpp's server stops
generating. `server.generated_tokens()` is every token the model wrote, streamed or not.

Like a real server, the model honours the request's output limit (`max_tokens` or
`max_completion_tokens`: the answer is cut there, finish reason "length") and its `stop`
sequences (the answer ends before the first one). `refuse_json_schema()` answers as
llama-cpp-python does to a `json_schema` response_format (HTTP 500, "Input should be 'text' or
'json_object'"); `refuse_stream_options()` as a server that takes no `stream_options`.

Standalone: `python -m tests.fake_model_server --port 8089` serves the defaults.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import select
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping

__all__ = [
    "assessments",
    "Behaviour",
    "FakeModelServer",
    "HttpAnswer",
    "RecordedRequest",
    "bad_shape",
    "classify",
    "council_answer",
    "council_labels_in_prompt",
    "default_answer",
    "default_reply",
    "delay",
    "disconnect",
    "echo",
    "fail",
    "garbage",
    "hang",
    "minicheck",
    "minicheck_answer",
    "raw_bytes",
    "refuse_logprobs",
    "raw_response",
    "plain",
    "refuse_json_schema",
    "refuse_stream_options",
    "reply",
    "sse",
    "tokens_of",
    "verdicts",
    "extraction_levels",
    "review",
    "review_text",
]

CHAT_PATH = "/v1/chat/completions"

# The prompts' openings, by kind.
PROMPT_OPENINGS = {
    "generate": "Answer the following question comprehensively.",
    "extract": "You are a claim extraction engine.",
    "verify": "You are a fact-checker.",
    "report": "You are producing a fact-check report",
    "title": "Write a short title",
    "council": "You are a fact-checker evaluating different AI responses",
    "synthesize": "You are the chairman of a council of AI models.",
    # The entailment agents; their default answers are local/entailment's JSON.
    "entail_extractor": "You are the EXTRACTOR agent of a multi-agent entailment check.",
    "entail_reliability": "You are the RELIABILITY agent of a multi-agent entailment check.",
    "entail_judge": "You are the ENTAILMENT JUDGE agent of a multi-agent entailment check.",
    "entail_auditor": "You are the ADVERSARIAL AUDITOR agent of a multi-agent entailment check.",
    "assess": "You are assessing search results as evidence for one claim.",
    "review": "You are a citation reviewer.",  # claim-level citations
    # The MiniCheck dialect's system prompt (services/checker/factcheck_checker/minicheck.py).
    "minicheck": "Determine whether the provided claim is consistent with the corresponding document.",
}
KINDS = (*PROMPT_OPENINGS, "other")

DEFAULT_TITLE = "Fact-check of the supplied content"
DEFAULT_SYNTHESIS = "The council's corrected final answer."
DEFAULT_SCORE = 85
GENERATED_CONTENT = (
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. "
    "It is about 330 metres tall and weighs roughly 10,100 tonnes. "
    "Around 7 million people visit it every year. "
    "It remained the tallest man-made structure in the world until 1930."
)


# --- requests and answers --------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    """One chat-completions request as the server saw it.

    `headers` has lower-cased names; `time` is `time.monotonic()` at arrival;
    `body` is the parsed JSON request.
    """

    model: str
    prompt: str
    kind: str
    headers: dict[str, str]
    time: float
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The `response_format` the client asked for (structured outputs), if any."""
        value = self.body.get("response_format")
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class HttpAnswer:
    """What to send back: status, raw body and extra headers.

    With `raw`, `body` is the whole response (status line, headers, body) written as it
    is, after which the connection is closed; `status` and `headers` are then unused.
    `text` is the answer's text when it is a completion (what a streaming request gets,
    token by token); `events` are server-sent events' data to send as they are, then
    `ending` ("done": end the response, "close": drop the connection, "hang").
    """

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    raw: bool = False
    text: str | None = None
    events: tuple[str, ...] | None = None
    ending: str = "done"
    finish_reason: str = "stop"
    # The usage a completion reports (streamed too, when the request asks for it).
    usage: Mapping[str, Any] | None = None


# A behaviour's action: given the request and the server's stop event, the answer to
# send, or None to close the connection without answering.
Action = Callable[[RecordedRequest, threading.Event], "HttpAnswer | None"]


@dataclass(frozen=True)
class Behaviour:
    """One scripted reaction to a request. Build them with the helper functions."""

    name: str
    action: Action

    def __call__(self, request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        return self.action(request, stop)

    def __repr__(self) -> str:
        return f"<Behaviour {self.name}>"


def completion_answer(
    model: str, text: str, usage: Mapping[str, Any] | None = None, *, prompt: str = "", finish_reason: str = "stop"
) -> HttpAnswer:
    """A 200 OpenAI chat completion carrying `text`; usage defaults to word counts."""
    scripted = dict(usage) if usage is not None else None
    if usage is None:
        prompt_tokens, completion_tokens = len(prompt.split()), len(text.split())
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    payload = {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
        "usage": dict(usage),
    }
    return HttpAnswer(200, json.dumps(payload).encode(), text=text, finish_reason=finish_reason, usage=scripted)


def tokens_of(text: str) -> list[str]:
    """The answer's tokens as the fake model writes them: each word with the whitespace before it."""
    return re.findall(r"\s*\S+|\s+\Z", text)


def chunk_event(model: str, content: str | None = None, *, finish: bool | str = False, role: bool = False) -> str:
    """One `chat.completion.chunk` event's data (`finish`: True for "stop", or the finish reason)."""
    delta: dict[str, Any] = {"role": "assistant"} if role else {}
    if content is not None:
        delta["content"] = content
    reason = finish if isinstance(finish, str) else ("stop" if finish else None)
    choice = {"index": 0, "delta": delta, "finish_reason": reason}
    payload = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model, "choices": [choice]}
    return json.dumps(payload)


# --- behaviours --------------------------------------------------------------------------


def reply(text: str | Callable[[str], str], *, usage: Mapping[str, Any] | None = None) -> Behaviour:
    """Answer 200 with `text`, or with `text(prompt)` when it is callable."""

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer:
        answer = text(request.prompt) if callable(text) else text
        return completion_answer(request.model, answer, usage, prompt=request.prompt)

    return Behaviour(f"reply({text!r:.40})", action)


def echo() -> Behaviour:
    """A model that answers with its own prompt (small models do)."""
    return reply(lambda prompt: prompt)


def default_reply() -> Behaviour:
    """Answer with the default text for the prompt's kind (what unscripted models get)."""

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer:
        if request.kind == "minicheck":
            return minicheck_answer(request, default_p_yes)
        return completion_answer(request.model, default_answer(request.prompt), prompt=request.prompt)

    return Behaviour("default_reply()", action)


def verdicts(
    overrides: Mapping[str, str] | None = None,
    *,
    default: str = "VERIFIED",
    correction: str = "Reliable sources give a different figure.",
    confidence: str | Mapping[str, str] = "HIGH",
    evidence: str | None = None,
    cite: str | None = None,
    support: str | Mapping[str, str] | None = None,
) -> Behaviour:
    """A checker's answer: a VERIFICATION block for every `CLAIM claim_N:` of the prompt.

    `cite="quote"` cites each claim's passages with their first six words quoted;
    `cite="forged"` quotes words that are in no passage (their citations must be dropped).

    `overrides` maps claim ids to verdicts (others get `default`); `correction` is used
    for DISPUTED claims ("N/A" otherwise); `confidence` is one level or a per-claim map
    (missing claims: HIGH); `evidence` replaces the per-verdict default evidence.
    `support` (claim-level citations) adds a "Support:" line after Confidence: one word, or a
    per-claim map (claims not in it get no line).
    """
    overrides = dict(overrides or {})

    def text_for(prompt: str) -> str:
        return verification_text(
            claim_ids_in_verify_prompt(prompt),
            overrides,
            default=default,
            correction=correction,
            confidence=confidence,
            evidence=evidence,
            sources=_sources_lines(prompt, cite) if cite else None,
            support=support,
        )

    behaviour = reply(text_for)
    return Behaviour(f"verdicts({overrides!r}, default={default!r})", behaviour.action)


def _sources_lines(prompt: str, cite: str) -> dict[str, str]:
    texts, per_claim = passages_in_verify_prompt(prompt)
    lines = {}
    for claim_id, passage_ids in per_claim.items():
        quotes = []
        for passage_id in passage_ids:
            words = " ".join(texts.get(passage_id, "").split()[:6])
            quote = words if cite == "quote" else "words that appear in no passage at all"
            quotes.append(f'[{passage_id}] "{quote}"')
        lines[claim_id] = "; ".join(quotes) or "none"
    return lines


@dataclass(frozen=True)
class ClaimAnswer:
    """How a scripted checker answers one claim (`answers_by_claim`).

    `quote`: what its `Sources:` line quotes from the claim's first passage, and its Evidence line repeats in
    quotes: "" quotes the passage's first sentence (faithful), any other text is quoted as it is (a fabrication
    when the passage does not hold it). `evidence`: the whole Evidence line instead (quotes in it are read too)."""

    verdict: str = "VERIFIED"
    quote: str = ""
    evidence: str | None = None
    correction: str = "N/A"
    confidence: str = "HIGH"


def answers_by_claim(answers: Mapping[str, ClaimAnswer], default: ClaimAnswer | None = None) -> Behaviour:
    """A checker that answers each claim of a verify prompt as `answers` says for the first key its text contains
    (others: `default`, else UNVERIFIABLE without a quote), citing the claim's first passage."""
    fallback = default or ClaimAnswer("UNVERIFIABLE", evidence="The passages do not say.")

    def text_for(prompt: str) -> str:
        texts, per_claim = passages_in_verify_prompt(prompt)
        blocks = []
        for claim_id, claim in claims_in_verify_prompt(prompt):
            answer = next((a for key, a in answers.items() if key in claim), fallback)
            passage_id = next(iter(per_claim.get(claim_id, [])), None)
            first = re.split(r"(?<=[.!?])\s", " ".join(texts.get(passage_id or "", "").split()), maxsplit=1)[0]
            quote = answer.quote or first
            evidence = answer.evidence or (f'{passage_id} states: "{quote}"' if passage_id else "No passage.")
            lines = [
                f"VERIFICATION {claim_id}: {answer.verdict}",
                f"Evidence: {evidence}",
                f"Correction: {answer.correction}",
                f"Confidence: {answer.confidence}",
            ]
            if passage_id and answer.evidence is None:
                lines.append(f'Sources: [{passage_id}] "{quote}"')
            blocks.append("\n".join(lines) + "\n")
        return "\n".join(blocks) + "\nVERIFICATION SUMMARY:\n"

    return Behaviour(f"answers_by_claim({sorted(answers)!r})", reply(text_for).action)


def plain(behaviour: Behaviour | None = None) -> Behaviour:
    """Like `behaviour` (default answer), but never streamed nor cut at the output limit: a provider
    that ignores `"stream": true` and `max_tokens`."""
    inner = behaviour or default_reply()

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        answer = inner(request, stop)
        return None if answer is None else HttpAnswer(answer.status, answer.body, answer.headers, answer.raw)

    return Behaviour(f"plain({inner.name})", action)


def sse(*events: str, ending: str = "done") -> Behaviour:
    """Answer 200 `text/event-stream` with these events' data (`data: ...`, each then a blank line),
    then `ending`: "done" ends the response, "close" drops the connection mid-response, "hang"
    waits until the server stops."""
    if ending not in ("done", "close", "hang"):
        raise ValueError(f"unknown ending {ending!r}")
    answer = HttpAnswer(200, b"", (("Content-Type", "text/event-stream"),), events=tuple(events), ending=ending)
    return Behaviour(f"sse({len(events)} events, ending={ending!r})", lambda request, stop: answer)


def delay(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Wait `seconds` (cut short when the server stops), then behave like `then` (default answer)."""
    follow = then or default_reply()

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        if stop.wait(seconds):
            return None
        return follow(request, stop)

    return Behaviour(f"delay({seconds}, then={follow.name})", action)


def fail(
    status: int, retry_after: float | str | None = None, body: str | bytes | Mapping[str, Any] | None = None
) -> Behaviour:
    """Answer `status` with an OpenAI-style error body (or `body`), and `Retry-After` if given."""
    if body is None:
        payload: bytes = json.dumps(
            {"error": {"message": f"scripted failure {status}", "type": "fake_error", "code": status}}
        ).encode()
    elif isinstance(body, bytes):
        payload = body
    elif isinstance(body, str):
        payload = body.encode()
    else:
        payload = json.dumps(body).encode()
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    if retry_after is not None:
        retry_value = retry_after if isinstance(retry_after, str) else f"{retry_after:g}"
        headers += (("Retry-After", retry_value),)
    answer = HttpAnswer(status, payload, headers)
    return Behaviour(f"fail({status}, retry_after={retry_after!r})", lambda request, stop: answer)


def garbage() -> Behaviour:
    """Answer 200 with a body that is not JSON."""
    answer = HttpAnswer(200, b"<html><body>502 Bad Gateway (not JSON)</body></html>", (("Content-Type", "text/html"),))
    return Behaviour("garbage()", lambda request, stop: answer)


def bad_shape() -> Behaviour:
    """Answer 200 with JSON that has no `choices`."""
    answer = HttpAnswer(200, json.dumps({"id": "chatcmpl-fake", "object": "chat.completion", "result": "?"}).encode())
    return Behaviour("bad_shape()", lambda request, stop: answer)


def raw_bytes(
    data: bytes,
    status: int = 200,
    content_type: str = "application/json",
    headers: tuple[tuple[str, str], ...] = (),
) -> Behaviour:
    """Answer exactly `data` (e.g. invalid UTF-8 inside a JSON string), with extra `headers`
    (e.g. `(("Content-Encoding", "gzip"),)` on a body that is not gzip)."""
    answer = HttpAnswer(status, data, (("Content-Type", content_type), *headers))
    return Behaviour(f"raw_bytes({data[:40]!r}, {status})", lambda request, stop: answer)


def raw_response(data: bytes) -> Behaviour:
    """Write `data` as the whole HTTP response (status line and headers included), then close."""
    answer = HttpAnswer(0, data, (), raw=True)
    return Behaviour(f"raw_response({data[:40]!r})", lambda request, stop: answer)


def hang() -> Behaviour:
    """Never answer; the connection is closed only when the server stops."""

    def action(request: RecordedRequest, stop: threading.Event) -> None:
        stop.wait()
        return None

    return Behaviour("hang()", action)


# The connection of the request a server thread is answering (for behaviours that watch it).
_answering = threading.local()
# Models whose request connection the client closed while `hold_until_closed` held it.
CLOSED_BY_CLIENT: list[str] = []
_closed_lock = threading.Lock()


def hold_until_closed(limit_s: float = 60.0) -> Behaviour:
    """Never answer; notice when the client closes the connection (a cancelled call) and record
    the request's model in CLOSED_BY_CLIENT. Gives up after `limit_s` or when the server stops."""

    def action(request: RecordedRequest, stop: threading.Event) -> None:
        connection: socket.socket = _answering.connection
        give_up = time.monotonic() + limit_s
        while not stop.is_set() and time.monotonic() < give_up:
            readable, _, _ = select.select([connection], [], [], 0.05)
            if readable:
                try:
                    closed = connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    closed = True
                if closed:
                    with _closed_lock:
                        CLOSED_BY_CLIENT.append(request.model)
                    return None
        return None

    return Behaviour(f"hold_until_closed({limit_s})", action)


# What llama-cpp-python's server answers to {"type": "json_schema", ...} (it takes 'text' or 'json_object').
LLAMA_CPP_JSON_SCHEMA_ERROR = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or "
    "'json_object' [type=literal_error, input_value='json_schema', input_type=str]"
)


def refuse_json_schema(then: Behaviour | None = None) -> Behaviour:
    """Like llama-cpp-python's server: HTTP 500 to a `json_schema` response_format; any other
    request (json_object with or without a schema, none) is answered like `then` (default answer)."""
    follow = then or default_reply()
    body = json.dumps({"error": {"message": LLAMA_CPP_JSON_SCHEMA_ERROR, "type": "internal_server_error"}}).encode()

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        form = request.response_format
        if form is not None and form.get("type") == "json_schema":
            return HttpAnswer(500, body)
        return follow(request, stop)

    return Behaviour(f"refuse_json_schema(then={follow.name})", action)


def refuse_stream_options(then: Behaviour | None = None) -> Behaviour:
    """A server that takes no `stream_options`: HTTP 400 naming it; otherwise like `then`."""
    follow = then or default_reply()
    body = json.dumps({"error": {"message": "Unrecognized request argument supplied: stream_options"}}).encode()

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        if "stream_options" in request.body:
            return HttpAnswer(400, body)
        return follow(request, stop)

    return Behaviour(f"refuse_stream_options(then={follow.name})", action)


def minicheck(
    p_yes: Callable[[str, str], float] | None = None, *, with_logprobs: bool = True, stream: bool = True
) -> Behaviour:
    """A MiniCheck-dialect model: "Yes" or "No" (whichever is likelier), P(yes) = `p_yes(document, claim)`
    (default: `default_p_yes`). With `with_logprobs` and a request that asks for them, the answer token
    carries its alternatives: "Yes", "yes" and "No", "no", the two spellings of each sharing its probability
    9 to 1 (their sum is P(yes)), most likely first, at most `top_logprobs` of them. `stream=False`: a
    server that answers a whole completion even to a request that asks for a stream."""
    score = p_yes or default_p_yes

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer:
        return minicheck_answer(request, score, with_logprobs=with_logprobs, stream=stream)

    return Behaviour(f"minicheck(with_logprobs={with_logprobs}, stream={stream})", action)


def minicheck_document_and_claim(prompt: str) -> tuple[str, str]:
    """The document and the claim of a MiniCheck prompt ("Document: ...\nClaim: ...")."""
    user = prompt.split("\n\nDocument: ", 1)[-1]
    document, _, claim = user.rpartition("\nClaim: ")
    return document, claim


def default_p_yes(document: str, claim: str) -> float:
    """The unscripted MiniCheck model: the share of the claim's words (lower-cased, 3+ letters) that the
    document holds, as a probability between 0.05 and 0.95."""
    words = {word for word in re.findall(r"[a-z0-9]{3,}", claim.lower())}
    held = {word for word in re.findall(r"[a-z0-9]{3,}", document.lower())}
    share = len(words & held) / len(words) if words else 0.0
    return round(0.05 + 0.9 * share, 6)


def minicheck_alternatives(p_yes: float) -> list[tuple[str, float]]:
    """The answer token's alternatives for P(yes) `p_yes`, most likely first (log-probabilities)."""
    floor = 1e-12
    alternatives = [
        ("Yes", math.log(max(p_yes * 0.9, floor))),
        ("yes", math.log(max(p_yes * 0.1, floor))),
        ("No", math.log(max((1 - p_yes) * 0.9, floor))),
        ("no", math.log(max((1 - p_yes) * 0.1, floor))),
    ]
    return sorted(alternatives, key=lambda alternative: -alternative[1])


def minicheck_answer(
    request: RecordedRequest, p_yes: Callable[[str, str], float], *, with_logprobs: bool = True, stream: bool = True
) -> HttpAnswer:
    """The answer of a MiniCheck model to `request`: streamed (with a usage chunk when asked) or whole."""
    document, claim = minicheck_document_and_claim(request.prompt)
    probability = p_yes(document, claim)
    token = "Yes" if probability >= 0.5 else "No"
    logprobs = None
    top = request.body.get("top_logprobs")
    if with_logprobs and request.body.get("logprobs") is True:
        count = top if isinstance(top, int) and not isinstance(top, bool) and top >= 0 else 0
        alternatives = minicheck_alternatives(probability)
        own = next(logprob for text, logprob in alternatives if text == token)
        logprobs = {
            "content": [
                {
                    "token": token,
                    "logprob": own,
                    "top_logprobs": [{"token": text, "logprob": value} for text, value in alternatives[:count]],
                }
            ]
        }
    prompt_tokens = len(request.prompt.split())
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": prompt_tokens + 1}
    if not stream or request.body.get("stream") is not True:
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": token}}
        choice.update(finish_reason="length", logprobs=logprobs)
        body: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion", "model": request.model}
        body.update(choices=[choice], usage=usage)
        return HttpAnswer(200, json.dumps(body).encode(), text=None, usage=usage)
    first = json.loads(chunk_event(request.model, token))
    first["choices"][0]["logprobs"] = logprobs
    events = [chunk_event(request.model, "", role=True), json.dumps(first), chunk_event(request.model, finish="length")]
    options = request.body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") is True:
        events.append(
            json.dumps({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [], "usage": usage})
        )
    events.append("[DONE]")
    return HttpAnswer(200, b"", (("Content-Type", "text/event-stream"),), events=tuple(events))


def refuse_logprobs(then: Behaviour | None = None) -> Behaviour:
    """A server that takes no `logprobs`: HTTP 400 naming it; otherwise like `then` (default answer)."""
    follow = then or default_reply()
    body = json.dumps({"error": {"message": "logprobs is not supported by this server"}}).encode()

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        if "logprobs" in request.body:
            return HttpAnswer(400, body)
        return follow(request, stop)

    return Behaviour(f"refuse_logprobs(then={follow.name})", action)


def output_limit_of(body: Mapping[str, Any]) -> int | None:
    """The request's output limit (max_completion_tokens, else max_tokens), if it sent a valid one."""
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def bounded(request: RecordedRequest, text: str) -> tuple[str, str]:
    """(the text the model writes, its finish reason) under the request's stop sequences and output limit."""
    stops = request.body.get("stop")
    stops = [stops] if isinstance(stops, str) else stops if isinstance(stops, list) else []
    reason = "stop"
    for stop_text in stops:
        if isinstance(stop_text, str) and stop_text and stop_text in text:
            text = text[: text.index(stop_text)]
    limit = output_limit_of(request.body)
    tokens = tokens_of(text)
    if limit is not None and len(tokens) > limit:
        text, reason = "".join(tokens[:limit]), "length"
    return text, reason


def disconnect() -> Behaviour:
    """Close the connection without answering (the client sees a protocol error)."""
    return Behaviour("disconnect()", lambda request, stop: None)


# --- default answers in the prompts' formats ---------------------------------------------


def classify(prompt: str) -> str:
    """The prompt's kind, from its opening; "other" when none matches."""
    start = prompt.lstrip()
    for kind, opening in PROMPT_OPENINGS.items():
        if start.startswith(opening):
            return kind
    return "other"


def default_answer(prompt: str) -> str:
    """The deterministic default answer for a prompt, by kind."""
    kind = classify(prompt)
    if kind == "generate":
        return GENERATED_CONTENT
    if kind == "extract":
        return extraction_text(extraction_content(prompt))
    if kind == "verify":
        return verification_text(claim_ids_in_verify_prompt(prompt))
    if kind == "report":
        return report_text(prompt)
    if kind == "title":
        return DEFAULT_TITLE
    if kind == "council":
        labels = council_labels_in_prompt(prompt)
        ratings = {label: "ACCURATE" if i == 0 else "MOSTLY ACCURATE" for i, label in enumerate(labels)}
        return council_answer(ratings, labels[0] if labels else "")
    if kind == "synthesize":
        return DEFAULT_SYNTHESIS
    if kind.startswith("entail_"):
        return entailment_answer(kind, prompt)
    if kind == "assess":
        return assessment_text({rid: "IRRELEVANT" for rid, _ in assess_results_in_prompt(prompt)})
    if kind == "review":
        return review_text(prompt)
    return "This is the fake model server's default answer."


def entailment_answer(kind: str, prompt: str) -> str:
    """An entailment agent's answer: the prompt's quoted sections (as the checker's agent prompts write
    them) given to local/entailment's agents, so the JSON is valid for the schema a request asks for."""
    from factcheck.core.entailment_rules import unquote
    from factcheck.engines import entailment

    lines = prompt.split("\n")

    def section(heading: str) -> str:
        start = end = lines.index(heading) + 1
        while end < len(lines) and lines[end].startswith(">"):
            end += 1
        return unquote(lines[start:end])

    if kind == "entail_extractor":
        data = entailment.extract(section("CLAIM:"), section("SOURCE EXCERPT:"))
    elif kind == "entail_reliability":
        data = entailment.rate_source(section("SOURCE TYPE:"))
    elif kind == "entail_judge":
        statements = json.loads(lines[lines.index("EXTRACTED STATEMENTS (JSON):") + 1])
        data = entailment.judge_statements(section("CLAIM:"), statements)
    else:
        verdict = next(line for line in lines if line.startswith("JUDGE VERDICT: "))
        found = re.match(r"JUDGE VERDICT: (.*?) \(confidence \d+\)$", verdict)
        assert found is not None
        data = entailment.audit(section("CLAIM:"), section("SOURCE EXCERPT:"), found.group(1))
    return json.dumps(data, ensure_ascii=False)


def assess_results_in_prompt(prompt: str) -> list[tuple[str, str]]:
    """(id, heading and quoted text) of every result of an evidence-assessment prompt, in order."""
    body = prompt[prompt.rfind("\nRESULTS:\n") :]
    results: list[tuple[str, list[str]]] = []
    for line in body.split("\n"):
        heading = re.match(r"^\[(R\d+)\] (.*)$", line)
        if heading:
            results.append((heading.group(1), [heading.group(2)]))
        elif line.startswith(">") and results:
            results[-1][1].append(line[2:])
    return [(rid, "\n".join(lines)) for rid, lines in results]


def assessment_text(stances: Mapping[str, str]) -> str:
    """ASSESSMENT blocks: result id → "SUPPORTS", "REFUTES", "REFUTES TEMPORAL" or "IRRELEVANT"."""
    blocks = []
    for rid, stance in stances.items():
        word, _, temporal = stance.partition(" ")
        blocks.append(
            f"ASSESSMENT {rid}: {word}\nTemporal: {'YES' if temporal else 'NO'}\nReason: scripted {word.lower()}."
        )
    return "\n\n".join(blocks) + "\n"


def assessments(rules: Mapping[str, str], default: str = "IRRELEVANT") -> Behaviour:
    """An investigator's answer: each result gets the stance of the first rule whose key occurs in
    its heading or text ("SUPPORTS", "REFUTES", "REFUTES TEMPORAL", "IRRELEVANT"), else `default`."""

    def text_for(prompt: str) -> str:
        stances = {}
        for rid, text in assess_results_in_prompt(prompt):
            stances[rid] = next((stance for key, stance in rules.items() if key in text), default)
        return assessment_text(stances)

    return reply(text_for)


def assessments_by_claim(rules: Mapping[str, Mapping[str, str]], default: str = "IRRELEVANT") -> Behaviour:
    """`assessments` per claim: the rules of the first key that occurs in the prompt's claim (the text
    before its RESULTS block); a claim no key names gets `default` for every result."""

    def text_for(prompt: str) -> str:
        claim = prompt[: prompt.rfind("\nRESULTS:\n")]
        chosen = next((r for key, r in rules.items() if key in claim), {})
        stances = {}
        for rid, text in assess_results_in_prompt(prompt):
            stances[rid] = next((stance for key, stance in chosen.items() if key in text), default)
        return assessment_text(stances)

    return reply(text_for)


def council_labels_in_prompt(prompt: str) -> list[str]:
    """The "Response X" labels of a council fact-check prompt, in order (after its last responses line)."""
    marker = "Here are the responses from different models (anonymized):\n"
    body = prompt[prompt.rfind(marker) :] if marker in prompt else prompt
    return re.findall(r"^(Response [A-Z]):$", body, re.MULTILINE)


def council_answer(
    ratings: Mapping[str, str], most_reliable: str = "", claims: tuple[tuple[str, str, str, str], ...] = ()
) -> str:
    """A council fact-checker's answer: a short analysis, the INACCURATE CLAIMS block (label, error
    type, claim, correction) and the FACT CHECK SUMMARY (label -> rating word, MOST RELIABLE)."""
    analysis = "\n".join(f"{label}: checked every claim." for label in ratings)
    claim_lines = [" | ".join(claim) for claim in claims] or ["None"]
    summary = [f"{label}: {rating}" for label, rating in ratings.items()]
    if most_reliable:
        summary.append(f"MOST RELIABLE: {most_reliable}")
    return "\n".join([analysis, "", "INACCURATE CLAIMS:", *claim_lines, "FACT CHECK SUMMARY:", *summary])


def _block(prompt: str, start_pattern: str, end_pattern: str) -> str | None:
    """Text between the line matching `start_pattern` and the next line matching `end_pattern`."""
    match = re.search(rf"^{start_pattern}[ \t]*\n(.*?)^{end_pattern}", prompt, re.S | re.M)
    return match.group(1) if match else None


def extraction_content(prompt: str) -> str:
    """The CONTENT block of an extraction prompt ("" when absent)."""
    return (_block(prompt, r"CONTENT:", r"Extract each verifiable claim") or "").strip()


def sentences(text: str) -> list[str]:
    """Sentences of `text` that contain a letter, whitespace-collapsed, one line each."""
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    collapsed = (re.sub(r"\s+", " ", part).strip() for part in parts)
    return [sentence for sentence in collapsed if re.search(r"[^\W\d_]", sentence)]


def claim_type(sentence: str) -> str:
    """DATE with a 4-digit year, STATISTIC with other digits, else TECHNICAL."""
    if re.search(r"(?<!\d)\d{4}(?!\d)", sentence):
        return "DATE"
    if re.search(r"\d", sentence):
        return "STATISTIC"
    return "TECHNICAL"


def extraction_text(content: str) -> str:
    """One CLAIM block per sentence of `content`, then the EXTRACTION SUMMARY."""
    found = sentences(content)
    if not found:
        return "No verifiable claims found.\n\nEXTRACTION SUMMARY:\nTotal claims: 0\nBy type: none\n"
    blocks = [f"CLAIM {n}: {s}\nContext: {s}\nType: {claim_type(s)}\n" for n, s in enumerate(found, 1)]
    counts: dict[str, int] = {}
    for sentence in found:
        counts[claim_type(sentence)] = counts.get(claim_type(sentence), 0) + 1
    breakdown = ", ".join(f"{kind}: {n}" for kind, n in counts.items())
    return "\n".join(blocks) + f"\nEXTRACTION SUMMARY:\nTotal claims: {len(found)}\nBy type: {breakdown}\n"


def extraction_levels(levels: Mapping[int, str], entities: Mapping[int, str] | None = None) -> Behaviour:
    """The default extraction, with "Level:" (and "Entity:") lines after the Type line of the claims
    numbered in `levels` (claim-level citations' CLAIM DETAIL section)."""
    entities = dict(entities or {})

    def text_for(prompt: str) -> str:
        text = extraction_text(extraction_content(prompt))

        def add(match: re.Match[str]) -> str:
            number = int(match.group(1))
            extra = f"Level: {levels[number]}\n" if number in levels else ""
            extra += f"Entity: {entities[number]}\n" if number in entities else ""
            return match.group(0) + extra

        return re.sub(r"^CLAIM (\d+): .*\nContext: .*\nType: .*\n", add, text, flags=re.M)

    return Behaviour(f"extraction_levels({dict(levels)!r})", reply(text_for).action)


def review_claims_in_prompt(prompt: str) -> list[tuple[str, list[str], bool]]:
    """(claim id, cited passage ids, numeric) of a citation review prompt's CLAIMS TO REVIEW block."""
    block = _block(prompt, r"CLAIMS TO REVIEW:", r"EVIDENCE POOL:") or ""
    found: list[tuple[str, list[str], bool]] = []
    for line in block.splitlines():
        if match := re.match(r"^CLAIM (\S+): ", line):
            found.append((match.group(1), [], False))
        elif found and (match := re.match(r"^Cited: (.*)$", line)):
            found[-1] = (found[-1][0], re.findall(r"P\d+", match.group(1)), found[-1][2])
        elif found and line.startswith("NUMERIC: "):
            found[-1] = (found[-1][0], found[-1][1], True)
    return found


def review_text(
    prompt: str,
    decisions: Mapping[str, tuple[str, str, str]] | None = None,
    answers: Mapping[str, tuple[str, str, str]] | None = None,
) -> str:
    """A citation review: `decisions` maps claim ids to (KEEP|REPLACE|REMOVE|ADD_ALTERNATE, passage id,
    quote) (others: KEEP); `answers` maps numeric claim ids to (claim answer, passage id, evidence answer)."""
    decisions, answers = dict(decisions or {}), dict(answers or {})
    blocks = []
    for claim_id, cited, _numeric in review_claims_in_prompt(prompt):
        decision, passage, quote = decisions.get(claim_id, ("KEEP", "", ""))
        lines = [
            f"REVIEW {claim_id}: {decision}",
            f"Original: [{cited[0]}]" if cited else "Original: none",
            f'Corrected: [{passage}] "{quote}"' if passage else "Corrected: none",
            f"Reasoning: scripted {decision.lower()}",
        ]
        if claim_id in answers:
            claim_answer, source, evidence = answers[claim_id]
            lines += [
                f"QUESTION {claim_id}: What figure does the claim state?",
                f"Claim answer: {claim_answer}",
                f'Evidence answer: [{source}] "{evidence}"' if source else "Evidence answer: not stated",
            ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def review(
    decisions: Mapping[str, tuple[str, str, str]] | None = None,
    answers: Mapping[str, tuple[str, str, str]] | None = None,
) -> Behaviour:
    """A citation reviewer's answer (see `review_text`)."""
    return Behaviour("review()", reply(lambda prompt: review_text(prompt, decisions, answers)).action)


def passages_in_verify_prompt(prompt: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The EVIDENCE section: passage id → text (its "> " lines unquoted), and claim id → passage ids."""
    texts: dict[str, str] = {}
    current: str | None = None
    for line in (_block(prompt, r"EVIDENCE:", r"PASSAGES FOR EACH CLAIM:") or "").splitlines():
        if heading := re.match(r"^\[(P\d+)\] ", line):
            current = heading.group(1)
            texts[current] = ""
        elif current and line.startswith("> "):
            texts[current] = (texts[current] + "\n" + line[2:]).lstrip("\n")
    listing = _block(prompt, r"PASSAGES FOR EACH CLAIM:", r"For EACH claim, provide:") or ""
    per_claim = {
        claim_id: re.findall(r"P\d+", ids) for claim_id, ids in re.findall(r"^(claim_\d+): (.*)$", listing, re.M)
    }
    return texts, per_claim


def claim_ids_in_verify_prompt(prompt: str) -> list[str]:
    """Ids of the `CLAIM claim_N:` lines in the CLAIMS TO VERIFY block (whole prompt if absent)."""
    block = _block(prompt, r"CLAIMS TO VERIFY:", r"For EACH claim, provide:")
    return re.findall(r"^CLAIM\s+(claim_\d+):", block if block is not None else prompt, re.M)


def claims_in_verify_prompt(prompt: str) -> list[tuple[str, str]]:
    """(id, text) of the `CLAIM claim_N: text` lines in the CLAIMS TO VERIFY block (whole prompt if absent)."""
    block = _block(prompt, r"CLAIMS TO VERIFY:", r"For EACH claim, provide:")
    return re.findall(r"^CLAIM\s+(claim_\d+):[ \t]*(.*)$", block if block is not None else prompt, re.M)


_EVIDENCE = {
    "VERIFIED": "Consistent with well-established reference sources.",
    "DISPUTED": "Reference sources contradict this claim.",
    "UNVERIFIABLE": "No reliable information is available to confirm or refute this claim.",
}


def verification_text(
    claim_ids: list[str],
    overrides: Mapping[str, str] | None = None,
    *,
    default: str = "VERIFIED",
    correction: str = "Reliable sources give a different figure.",
    confidence: str | Mapping[str, str] = "HIGH",
    evidence: str | None = None,
    sources: Mapping[str, str] | None = None,
    support: str | Mapping[str, str] | None = None,
) -> str:
    """VERIFICATION blocks in the verification prompt's format, then the VERIFICATION SUMMARY.

    `sources` maps claim ids to the text of their `Sources:` line (evidence runs only).
    """
    sources = sources or {}
    overrides = overrides or {}
    blocks, tally = [], {"VERIFIED": 0, "DISPUTED": 0, "UNVERIFIABLE": 0}
    for claim_id in claim_ids:
        verdict = overrides.get(claim_id, default)
        level = confidence if isinstance(confidence, str) else confidence.get(claim_id, "HIGH")
        word = support if isinstance(support, str) else (support or {}).get(claim_id)
        blocks.append(
            f"VERIFICATION {claim_id}: {verdict}\n"
            f"Evidence: {evidence or _EVIDENCE.get(verdict, 'No comment.')}\n"
            f"Correction: {correction if verdict == 'DISPUTED' else 'N/A'}\n"
            f"Confidence: {level}\n"
            + (f"Support: {word}\n" if word else "")
            + (f"Sources: {sources[claim_id]}\n" if claim_id in sources else "")
        )
        tally[verdict] = tally.get(verdict, 0) + 1
    summary = (
        f"VERIFICATION SUMMARY:\nVerified: {tally['VERIFIED']}\n"
        f"Disputed: {tally['DISPUTED']}\nUnverifiable: {tally['UNVERIFIABLE']}\n"
    )
    return "\n".join(blocks) + "\n" + summary


@dataclass(frozen=True)
class _ReportClaim:
    claim_id: str
    claim: str
    type: str
    verdict: str
    agreement: str
    correction: str


def _report_claims(prompt: str) -> list[_ReportClaim]:
    """The claims of a report prompt's CLAIM VERIFICATION RESULTS block."""
    pattern = re.compile(
        r'^CLAIM\s+(\S+):\s*"?(.*?)"?\s*\nType:\s*(\w+)\s*\n'
        r"Consensus Verdict:\s*(\w+)(?:\s*\((\d+(?:\.\d+)?)%)?[^\n]*\n"
        r"((?:(?!CLAIM\s)[^\n]*\n)*)",
        re.M,
    )
    claims = []
    for match in pattern.finditer(prompt):
        correction = re.search(r"^Consensus Correction:\s*(.+)$", match.group(6), re.M)
        claims.append(
            _ReportClaim(
                claim_id=match.group(1),
                claim=match.group(2),
                type=match.group(3),
                verdict=match.group(4),
                agreement=match.group(5) or "100",
                correction=correction.group(1).strip() if correction else "—",
            )
        )
    return claims


def report_text(prompt: str) -> str:
    """A markdown report following the report prompt's template, with score 85."""
    content = (_block(prompt, r"ORIGINAL CONTENT:", r"CLAIM VERIFICATION RESULTS:") or "").strip()
    claims = _report_claims(prompt)
    by_verdict = {v: [c for c in claims if c.verdict == v] for v in ("VERIFIED", "DISPUTED", "UNVERIFIABLE")}
    annotated = content
    for claim in claims:
        if claim.claim and claim.claim in annotated:
            annotated = annotated.replace(claim.claim, f"{claim.claim} [{claim.verdict}]", 1)
    rows = [f"| {c.claim_id} | {c.claim} | {c.type} | {c.verdict} | {c.agreement}% | {c.correction} |" for c in claims]
    methodology = re.search(r"^## Methodology\n(.*)\Z", prompt, re.S | re.M)
    lines = [
        "# Fact-Check Report",
        "",
        "## Content Summary",
        f"The content makes {len(claims)} verifiable claims, checked by independent checkers.",
        "",
        f"## Overall Reliability Score: {DEFAULT_SCORE}",
        "Mostly reliable with minor issues.",
        "",
        "## Evidence Table",
        "",
        "| # | Claim | Type | Verdict | Agreement | Correction |",
        "|---|-------|------|---------|:---------:|-----------|",
        *rows,
        "",
        "## Detailed Findings",
    ]
    for verdict, title in (("VERIFIED", "Verified"), ("DISPUTED", "Disputed"), ("UNVERIFIABLE", "Unverifiable")):
        lines += ["", f"### {title} Claims ({len(by_verdict[verdict])})"]
        lines += [f"- {c.claim_id}: {c.claim}" for c in by_verdict[verdict]] or ["None."]
    lines += ["", "## Annotated Content", annotated or "(no content)", "", "## Methodology"]
    lines.append(methodology.group(1).strip() if methodology else "- Consensus method: Majority verdict")
    return "\n".join(lines) + "\n"


# --- the server ------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    """Speaks just enough HTTP/1.1 (keep-alive) for chat completions."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Replies go out at once: with Nagle's algorithm on, a reply on a reused connection
        # could wait for the client's delayed ACK of the previous one (~40 ms on Linux).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, open_=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, open_=False)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != CHAT_PATH:
            self._send(HttpAnswer(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode()))
            return
        try:
            payload = json.loads(body)
            request = _recorded(payload, self.headers)
        except (ValueError, TypeError, AttributeError, KeyError):
            self._send(HttpAnswer(400, json.dumps({"error": {"message": "invalid request body"}}).encode()))
            return
        _answering.connection = self.connection
        answer = self.server.owner._handle(request)
        if answer is None:
            self.close_connection = True
        elif answer.events is not None:
            self._send_events(answer.events, answer.ending)
        elif answer.text is not None and answer.status == 200 and request.body.get("stream") is True:
            self._stream_text(request, answer, self.server.owner.token_rate(request))
        else:
            self._send(answer)

    def _send_events(self, events, ending: str, schedule=None, request: RecordedRequest | None = None) -> None:
        """Server-sent events, one chunk of the chunked body each (TCP_NODELAY: each goes out at once);
        `schedule` gives, per event, the time.monotonic() to send it at. Between events the
        connection is watched: a client that closed it ends the answer (and is recorded)."""
        stop = self.server.owner._stop
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for index, data in enumerate(events):
                if schedule is not None and self._wait_or_gone(schedule[index], request, index):
                    self.close_connection = True
                    return
                frame = f"data: {data}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            if ending == "hang":
                stop.wait()
            if ending != "done":
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client gave up
            self.close_connection = True

    def _wait_or_gone(self, until: float, request: RecordedRequest | None, index: int) -> bool:
        """Wait until `until` (monotonic); True when the server stops or the client closed the
        connection meanwhile (then recorded in `disconnects`, with the tokens written: `index` - 1)."""
        stop = self.server.owner._stop
        while True:
            if stop.is_set():
                return True
            left = until - time.monotonic()
            if left <= 0:
                return False
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.02))
            if readable:
                try:
                    gone = self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    gone = True
                if gone:
                    if request is not None:
                        written = max(index - 1, 0)
                        self.server.owner._disconnected(request, written, getattr(self, "_answer_tokens", written))
                    return True

    def _stream_text(self, request: RecordedRequest, answer: HttpAnswer, tokens_per_s: float) -> None:
        """`text` as chat.completion.chunks, one per token (at `tokens_per_s` when it is set); the
        usage chunk only when the request asked for it (stream_options.include_usage)."""
        text, finish_reason = answer.text or "", answer.finish_reason
        model, tokens, prompt_tokens = request.model, tokens_of(text), len(request.prompt.split())
        usage = (
            dict(answer.usage)
            if answer.usage is not None
            else {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(tokens),
                "total_tokens": prompt_tokens + len(tokens),
            }
        )
        options = request.body.get("stream_options")
        with_usage = isinstance(options, dict) and options.get("include_usage") is True
        self._answer_tokens = len(tokens)
        events = [chunk_event(model, "", role=True)]
        events += [chunk_event(model, token) for token in tokens]
        events += [
            chunk_event(model, finish=finish_reason),
            json.dumps(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
            ),
            "[DONE]",
        ]
        if with_usage:
            self.server.owner._count_usage(events[-2].encode())
        else:
            del events[-2]
        schedule = None
        if tokens_per_s:
            start = time.monotonic()
            written = [start + (i + 1) / tokens_per_s for i in range(len(tokens))]
            last = written[-1] if written else start
            schedule = [start, *written] + [last] * (len(events) - len(tokens) - 1)
        self._send_events(events, "done", schedule, request)

    def _send(self, answer: HttpAnswer) -> None:
        if answer.status == 200 and not answer.raw:
            self.server.owner._count_usage(answer.body)
        if answer.raw:
            self.close_connection = True
            try:
                self.wfile.write(answer.body)
            except OSError:
                pass
            return
        try:
            self.send_response(answer.status)
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.body)))
            # Headers and body in one send (what end_headers() and a second write would split).
            # (BaseHTTPRequestHandler's own buffer, which typeshed leaves out)
            self._headers_buffer.append(b"\r\n" + answer.body)  # type: ignore[attr-defined]
            self.flush_headers()
        except OSError:  # the client gave up (e.g. its deadline passed)
            self.close_connection = True


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (its deadline passed, it refused a broken answer) is no test failure."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def _prompt_of(messages: list[dict[str, Any]]) -> str:
    """The messages' contents joined (content parts' text joined too)."""
    texts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        texts.append(content or "")
    return "\n\n".join(texts)


def _recorded(payload: dict[str, Any], headers: Any) -> RecordedRequest:
    prompt = _prompt_of(payload.get("messages") or [])
    return RecordedRequest(
        model=str(payload["model"]),
        prompt=prompt,
        kind=classify(prompt),
        headers={name.lower(): value for name, value in headers.items()},
        time=time.monotonic(),
        body=payload,
    )


@dataclass(frozen=True)
class Disconnect:
    """A client that closed its connection while its answer was being streamed."""

    model: str
    time: float  # time.monotonic() when the server noticed
    tokens_written: int


class FakeModelServer:
    """A scripted OpenAI-compatible server on 127.0.0.1. Use as a context manager."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._requests: list[RecordedRequest] = []
        self._scripts: dict[str, deque[Behaviour]] = {}
        self._latency: dict[str, float] = {}
        self._token_rate: dict[str, float] = {}
        self._connections: set[socket.socket] = set()
        self._in_flight: dict[str, int] = {}
        self._peak: dict[str, int] = {}
        self._peak_total = 0
        self._usage: dict[str, dict[str, int]] = {}
        self._disconnects: list[Disconnect] = []
        self._generated_tokens: dict[str, int] = {}
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> FakeModelServer:
        """Bind and serve in a daemon thread."""
        self._stop.clear()
        self._httpd = _HTTPServer((self._host, self._port), _Handler)
        self._httpd.owner = self
        # A short poll interval keeps stop() (and so every test's teardown) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging and delayed requests are released and their connections closed."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. "http://127.0.0.1:PORT/v1"."""
        return f"http://{self._host}:{self.port}/v1"

    # scripting and inspection

    def script(self, model_id: str, *behaviours: Behaviour) -> None:
        """Queue behaviours for `model_id` (replacing its script); the last one repeats."""
        if not behaviours:
            raise ValueError("script() needs at least one behaviour")
        with self._lock:
            self._scripts[model_id] = deque(behaviours)

    def set_latency(self, kind_or_model: str, seconds: float) -> None:
        """Delay every answer for a kind ("verify", ...) or a model id; a model id wins."""
        with self._lock:
            self._latency[kind_or_model] = seconds

    def set_token_rate(self, kind_or_model: str, tokens_per_s: float) -> None:
        """Write answers of a kind or a model id at a fixed rate (0: at once); a model id wins."""
        with self._lock:
            self._token_rate[kind_or_model] = tokens_per_s

    def token_rate(self, request: RecordedRequest) -> float:
        """The tokens per second at which this request's answer is written (0: at once)."""
        with self._lock:
            return self._token_rate.get(request.model, self._token_rate.get(request.kind, 0.0))

    def reset(self) -> None:
        """Forget recorded requests, scripts, latencies, token rates and in-flight peaks."""
        with self._lock:
            self._requests.clear()
            self._scripts.clear()
            self._latency.clear()
            self._token_rate.clear()
            self._peak.clear()
            self._peak_total = 0
            self._usage.clear()
            self._disconnects.clear()
            self._generated_tokens.clear()

    @property
    def disconnects(self) -> list[Disconnect]:
        """Streams whose client closed the connection before the answer's end, in order."""
        with self._lock:
            return list(self._disconnects)

    def generated_tokens(self, model_id: str | None = None) -> int:
        """Tokens the model wrote (all models, or one): what it would take to write every answer
        in full, less what a client that went away mid-stream spared it."""
        with self._lock:
            return sum(n for model, n in self._generated_tokens.items() if model_id is None or model == model_id)

    def _generated(self, request: RecordedRequest, tokens: int) -> None:
        with self._lock:
            self._generated_tokens[request.model] = self._generated_tokens.get(request.model, 0) + tokens

    def _disconnected(self, request: RecordedRequest, tokens_written: int, answer_tokens: int) -> None:
        """The client went away after `tokens_written` of the answer's tokens: the model stops there."""
        with self._lock:
            self._disconnects.append(Disconnect(request.model, time.monotonic(), tokens_written))
            spared = max(answer_tokens - tokens_written, 0)
            self._generated_tokens[request.model] = self._generated_tokens.get(request.model, 0) - spared

    def reported_usage(self, model_id: str | None = None) -> dict[str, int]:
        """The token usage the server reported in its successful answers (all models, or one):
        {"calls", "prompt_tokens", "completion_tokens"}. What a ledger must add up to."""
        with self._lock:
            rows = [usage for model, usage in self._usage.items() if model_id is None or model == model_id]
        return {key: sum(row.get(key, 0) for row in rows) for key in ("calls", "prompt_tokens", "completion_tokens")}

    def _count_usage(self, body: bytes) -> None:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # scripted garbage, hostile nesting: no usage reported
            return
        usage = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(usage, dict):
            return
        with self._lock:
            row = self._usage.setdefault(str(data.get("model", "")), {})
            row["calls"] = row.get("calls", 0) + 1
            for key in ("prompt_tokens", "completion_tokens"):
                value = usage.get(key)
                row[key] = row.get(key, 0) + (value if isinstance(value, int) else 0)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, model_id: str) -> list[RecordedRequest]:
        """The requests received for one model id."""
        return [request for request in self.requests if request.model == model_id]

    def wait_for_requests(self, model_id: str, count: int, timeout: float = 30.0) -> None:
        """Block until `count` requests for `model_id` have arrived. A test that kills a gateway while the model
        server holds one of its calls waits for that call first: killed before it arrived, the resumed run's
        call would be the first to arrive, and be the one held (a loaded machine did that)."""
        deadline = time.monotonic() + timeout
        while len(self.requests_for(model_id)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{count} request(s) for {model_id} never arrived: {self.requests_for(model_id)}")
            time.sleep(0.05)

    def peak_in_flight(self, model_id: str | None = None) -> int:
        """Most requests being answered at the same time (for one model, or overall)."""
        with self._lock:
            return self._peak_total if model_id is None else self._peak.get(model_id, 0)

    # request handling (server threads)

    def _handle(self, request: RecordedRequest) -> HttpAnswer | None:
        behaviour, latency = self._next(request)
        self._enter(request.model)
        try:
            if latency and self._stop.wait(latency):
                return None
            answer = behaviour(request, self._stop)
            if answer is not None and answer.text is not None and answer.status == 200 and not answer.raw:
                text, reason = bounded(request, answer.text)
                if (text, reason) != (answer.text, answer.finish_reason):
                    answer = completion_answer(request.model, text, prompt=request.prompt, finish_reason=reason)
                self._generated(request, len(tokens_of(answer.text or "")))
            rate = self.token_rate(request)
            if answer is not None and answer.text is not None and rate and request.body.get("stream") is not True:
                # A plain answer comes once its last token is written.
                if self._stop.wait(len(tokens_of(answer.text)) / rate):
                    return None
            return answer
        finally:
            self._leave(request.model)

    def _next(self, request: RecordedRequest) -> tuple[Behaviour, float]:
        """Record the request; pick its behaviour and latency."""
        with self._lock:
            self._requests.append(request)
            queue = self._scripts.get(request.model)
            if queue:
                behaviour = queue.popleft() if len(queue) > 1 else queue[0]
            else:
                behaviour = default_reply()
            latency = self._latency.get(request.model, self._latency.get(request.kind, 0.0))
        return behaviour, latency

    def _enter(self, model_id: str) -> None:
        with self._lock:
            self._in_flight[model_id] = self._in_flight.get(model_id, 0) + 1
            self._peak[model_id] = max(self._peak.get(model_id, 0), self._in_flight[model_id])
            self._peak_total = max(self._peak_total, sum(self._in_flight.values()))

    def _leave(self, model_id: str) -> None:
        with self._lock:
            self._in_flight[model_id] -= 1

    def _track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


def main(argv: list[str] | None = None) -> None:
    """Serve the default answers until Ctrl-C."""
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible model server (default answers).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument(
        "--latency", action="append", default=[], metavar="KIND_OR_MODEL=SECONDS", help="fixed delay, repeatable"
    )
    args = parser.parse_args(argv)
    server = FakeModelServer(args.host, args.port)
    for item in args.latency:
        key, _, seconds = item.partition("=")
        server.set_latency(key, float(seconds))
    with server:
        print(f"fake model server at {server.base_url} (FACTCHECK_MODEL_BASE_URL); Ctrl-C to stop", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
