// The promise-based client against a running suite (FACTCHECK_GATEWAY_TARGET): every service's calls, a run's
// events as an async iterable, refusals as rejected promises with the gRPC status, cancellation by AbortSignal.
// tests/test_typescript_client.py starts the suite (its fake model server answers slowly enough for a run to be
// stopped half-way) and runs this file with `node --test`.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, Server, Socket } from "node:net";
import { after, before, describe, test } from "node:test";

import {
  common,
  connect,
  evaluation,
  FactCheckClient,
  FactCheckEvent,
  FactCheckServiceService,
  Mode,
  ServiceError,
  status,
} from "../src";
import { ClaimsServiceService } from "../src/generated/factcheck/v1/citations";
import { ReviewServiceService } from "../src/generated/factcheck/v1/investigation";
import { KnowledgeServiceService } from "../src/generated/factcheck/v1/knowledge";
import { UsageServiceService } from "../src/generated/factcheck/v1/usage";

const CONTENT = "The Paris Agreement was signed in 2015 by 196 countries. Water boils at lower temperatures at high altitude.";

let client: FactCheckClient;
before(() => {
  assert.ok(process.env.FACTCHECK_GATEWAY_TARGET, "FACTCHECK_GATEWAY_TARGET names the suite's gateway");
  client = connect();
});
after(() => client.close());

function checkContent(content: string = CONTENT) {
  return { question: "Fact-check this content", mode: Mode.MODE_FACT_CHECK, modeConfig: { contentToCheck: content } };
}

async function collect<Event>(events: AsyncIterable<Event>): Promise<Event[]> {
  const seen: Event[] = [];
  for await (const event of events) {
    seen.push(event);
  }
  return seen;
}

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the call to be refused");
}

async function refusedWith(promise: Promise<unknown>, code: status): Promise<void> {
  const error = (await rejection(promise)) as ServiceError;
  assert.equal(error.code, code, `${status[error.code]}: ${error.details}`);
}

describe("FactCheckService", () => {
  let events: FactCheckEvent[] = [];

  test("run: an async iterable of the run's events, in order, ending complete", async () => {
    events = await collect(await client.factCheck.run(checkContent()));
    assert.equal(events[0].event?.$case, "factcheckStart");
    assert.equal(events.at(-1)?.event?.$case, "complete");
    assert.deepEqual(
      events.map((event) => event.seq),
      events.map((_, index) => String(index + 1)),
    );
  });

  test("getResult, listResults and watch read the run back", async () => {
    const messageId = events[0].messageId;
    const { result } = await client.factCheck.getResult({ messageId });
    assert.equal(result?.messageId, messageId);
    assert.equal(result?.content?.text, CONTENT);
    const page = await client.factCheck.listResults({ pageSize: 100 });
    assert.ok(page.results.some((summary) => summary.messageId === messageId));
    const replayed = await collect(await client.factCheck.watch({ messageId }));
    assert.deepEqual(
      replayed.map((event) => event.event?.$case),
      events.map((event) => event.event?.$case),
    );
  });

  test("a refused call rejects with its status: INVALID_ARGUMENT before any event, FAILED_PRECONDITION", async () => {
    await refusedWith(client.factCheck.run({ question: "", mode: Mode.MODE_FACT_CHECK }), status.INVALID_ARGUMENT);
    await refusedWith(client.factCheck.cancel({ messageId: events[0].messageId }), status.FAILED_PRECONDITION);
    await refusedWith(client.factCheck.getResult({ messageId: randomUUID() }), status.NOT_FOUND);
  });

  test("leaving the loop early ends the stream", async () => {
    const messageId = events[0].messageId;
    let taken = 0;
    for await (const event of await client.factCheck.watch({ messageId })) {
      assert.equal(event.messageId, messageId);
      if (++taken === 2) {
        break;
      }
    }
    assert.equal(taken, 2);
  });
});

describe("cancellation by AbortSignal", () => {
  test("a signal already aborted: the call is not made, the promise rejects with its reason", async () => {
    const reason = new Error("not wanted");
    assert.equal(await rejection(client.factCheck.listResults({}, { signal: AbortSignal.abort(reason) })), reason);
    assert.equal(await rejection(client.factCheck.run(checkContent(), { signal: AbortSignal.abort(reason) })), reason);
  });

  test("a run's stream, aborted half-way: the iteration throws the abort at once; the run goes on", async () => {
    const controller = new AbortController();
    const events = await client.factCheck.run(checkContent(), { signal: controller.signal });
    const seen: FactCheckEvent[] = [];
    const started = Date.now();
    const error = await rejection(
      (async () => {
        for await (const event of events) {
          seen.push(event);
          controller.abort();
        }
      })(),
    );
    assert.equal((error as Error).name, "AbortError");
    assert.ok(Date.now() - started < 5_000);
    assert.equal(seen.length, 1); // the model server answers slowly: the run had more to send
    const messageId = seen[0].messageId;
    // Only the call was cancelled: the gateway still carries the run, which Cancel stops.
    await client.factCheck.cancel({ messageId });
    const { result } = await client.factCheck.getResult({ messageId });
    assert.equal(result?.messageId, messageId);
  });

  describe("a call in flight (a server that accepts the connection and never answers)", () => {
    let silent: Server;
    const sockets: Socket[] = [];
    let stalled: FactCheckClient;
    before(async () => {
      silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      const address = silent.address();
      assert.ok(address && typeof address === "object");
      stalled = connect({ target: `127.0.0.1:${address.port}` });
    });
    after(() => {
      stalled.close();
      sockets.forEach((socket) => socket.destroy());
      silent.close();
    });

    for (const [name, call] of [
      ["unary", (signal: AbortSignal) => stalled.claims.list({ messageId: "x" }, { signal })],
      ["streaming", (signal: AbortSignal) => stalled.factCheck.run(checkContent(), { signal })],
    ] as const) {
      test(`${name}: abort rejects the pending promise with AbortError`, async () => {
        const controller = new AbortController();
        const pending = call(controller.signal);
        setTimeout(() => controller.abort(), 200);
        const started = Date.now();
        const error = (await rejection(pending)) as Error;
        assert.equal(error.name, "AbortError");
        assert.ok(Date.now() - started < 3_000);
      });
    }
  });
});

describe("the other services", () => {
  test("knowledge: addDocuments, listDocuments, search, deleteDocument", async () => {
    const id = `ts-${randomUUID()}`;
    const text = "The Zorblatt Bridge over the Quill river was opened in 1931 by the city of Vantor.";
    const added = await client.knowledge.addDocuments({ documents: [{ id, title: "Zorblatt Bridge", text }] });
    assert.equal(added.documents[0].documentId, id);
    try {
      const listed = await client.knowledge.listDocuments({ pageSize: 100 });
      assert.ok(listed.documents.some((document) => document.id === id));
      const found = await client.knowledge.search({ query: "Zorblatt Bridge opened", topK: 3 });
      assert.equal(found.passages[0].sourceId, id);
    } finally {
      const deleted = await client.knowledge.deleteDocument({ documentId: id });
      assert.ok(deleted.passagesDeleted >= 1);
    }
  });

  test("claims: list and get", async () => {
    const { claims } = await client.claims.list({ messageId: randomUUID() });
    assert.deepEqual(claims, []);
    await refusedWith(client.claims.get({ claimId: randomUUID() }), status.NOT_FOUND);
  });

  test("review: list and decide", async () => {
    const { reviews } = await client.review.list({ includeDecided: true });
    assert.ok(Array.isArray(reviews));
    await refusedWith(client.review.decide({ messageId: randomUUID(), claimId: "claim_1" }), status.INVALID_ARGUMENT);
  });

  test("usage: get and purgeCache", async () => {
    const spent = await client.usage.get({});
    assert.ok(Number(spent.total?.calls) > 0);
    const purged = await client.usage.purgeCache({});
    assert.ok(Number(purged.purged) >= 0);
  });

  test("evaluation: listSets, list, get, resume and cancel", async () => {
    const { sets } = await client.evaluation.listSets({});
    assert.ok(sets.length > 0 && sets.every((set) => set.name));
    const { evaluations } = await client.evaluation.list({});
    assert.ok(Array.isArray(evaluations));
    const unknown = randomUUID();
    await refusedWith(client.evaluation.get({ evaluationId: unknown }), status.NOT_FOUND);
    await refusedWith(client.evaluation.resume({ evaluationId: unknown }), status.NOT_FOUND);
    await refusedWith(client.evaluation.cancel({ evaluationId: unknown }), status.NOT_FOUND);
    await refusedWith(client.evaluation.run({}), status.INVALID_ARGUMENT);
  });
});

describe("every RPC", () => {
  test("connect() has a method for every RPC of every gateway service, and nothing else", () => {
    const definitions = [
      FactCheckServiceService,
      KnowledgeServiceService,
      ClaimsServiceService,
      ReviewServiceService,
      UsageServiceService,
      evaluation.EvaluationServiceService,
    ];
    const served = definitions.flatMap((definition) => Object.values(definition).map((method) => method.path));
    const groups = Object.values(client).filter((value) => typeof value === "object" && value !== null);
    const exposed = groups.flatMap((group) => Object.values(group as Record<string, { path: string }>).map((m) => m.path));
    assert.deepEqual([...exposed].sort(), [...served].sort());
    assert.equal(new Set(exposed).size, exposed.length);
  });
});

// Items of the tests' own set; the scripted server's MiniCheck model (unscripted) reads P(yes) as the share of
// the claim's words the passage holds: 0.95, 0.77, 0.35 and 0.725 here.
const BRIDGE = "The Zorblatt Bridge over the Quill opened in 1931.";
const ITEMS = [
  ["opened", "The Zorblatt Bridge opened in 1931.", common.Verdict.VERDICT_VERIFIED],
  ["later", "The Zorblatt Bridge opened in 1950.", common.Verdict.VERDICT_UNVERIFIABLE],
  ["floods", "The Quill river floods every spring.", common.Verdict.VERDICT_UNVERIFIABLE],
  ["crosses", "The bridge crosses the Quill.", common.Verdict.VERDICT_VERIFIED],
] as const;
const BINARY_CHECKER = "fake/minicheck"; // a model of the minicheck dialect (FACTCHECK_MODEL_DIALECTS)

function evaluationConfig(checkerModels: string[], name = "ts-bridges") {
  const items = ITEMS.map(([id, claim, label]) => ({ id, claim, label, evidence: [{ title: "Bridges", text: BRIDGE }] }));
  return { checkerModels, customSets: [{ name, items }] };
}

function finishedOf(events: evaluation.EvaluationEvent[]): evaluation.Evaluation {
  const last = events.at(-1)?.event;
  assert.equal(last?.$case, "finished");
  return last.value;
}

describe("EvaluationService: watch, listItems, compare, fitted thresholds", () => {
  let events: evaluation.EvaluationEvent[] = [];
  let evaluationId = "";

  test("watch: an evaluation's events again from the start, or after a seq, as an async iterable", async () => {
    events = await collect(await client.evaluation.run({ config: evaluationConfig(["local/checker-overlap"]) }));
    evaluationId = events[0].evaluationId;
    assert.equal(finishedOf(events).status, evaluation.EvaluationStatus.EVALUATION_STATUS_COMPLETE);
    const replayed = await collect(await client.evaluation.watch({ evaluationId }));
    assert.deepEqual(
      replayed.map((event) => [event.seq, event.event?.$case]),
      events.map((event) => [event.seq, event.event?.$case]),
    );
    const after = await collect(await client.evaluation.watch({ evaluationId, afterSeq: events[1].seq }));
    assert.deepEqual(
      after.map((event) => event.seq),
      events.slice(2).map((event) => event.seq),
    );
    await refusedWith(client.evaluation.watch({ evaluationId: randomUUID() }), status.NOT_FOUND);
  });

  test("listItems: every answer, a page at a time, filtered", async () => {
    const first = await client.evaluation.listItems({ evaluationId, pageSize: 3 });
    assert.equal(first.items.length, 3);
    assert.ok(first.nextPageToken);
    const rest = await client.evaluation.listItems({ evaluationId, pageSize: 3, pageToken: first.nextPageToken });
    const ids = [...first.items, ...rest.items].map((item) => item.itemId).sort();
    assert.deepEqual(ids, ITEMS.map(([id]) => id).sort());
    assert.ok(first.items.every((item) => item.checkerModel === "local/checker-overlap" && item.claim));
    const verified = await client.evaluation.listItems({ evaluationId, label: common.Verdict.VERDICT_VERIFIED });
    assert.deepEqual(verified.items.map((item) => item.itemId).sort(), ["crosses", "opened"]);
    await refusedWith(client.evaluation.listItems({ evaluationId, wrongOnly: true, failedOnly: true }), status.INVALID_ARGUMENT);
  });

  test("compare: the same checker on the same items twice differs by nothing", async () => {
    const again = finishedOf(await collect(await client.evaluation.run({ config: evaluationConfig(["local/checker-overlap"]) })));
    const compared = await client.evaluation.compare({ evaluationId, otherEvaluationId: again.evaluationId });
    assert.equal(compared.otherEvaluationId, again.evaluationId);
    const [comparison] = compared.comparisons;
    assert.equal(comparison.sharedItems, ITEMS.length);
    assert.equal(comparison.difference, 0);
    assert.equal(comparison.disagreements, 0);
    assert.deepEqual(compared.disagreements, []);
    await refusedWith(client.evaluation.compare({ evaluationId, otherEvaluationId: randomUUID() }), status.NOT_FOUND);
  });

  test("fitted thresholds: an evaluation fits a binary checker's, a run names it and says it used it", async () => {
    const config = { ...evaluationConfig([BINARY_CHECKER], "ts-fit"), fitThresholds: true };
    const fitted = finishedOf(await collect(await client.evaluation.run({ config })));
    assert.ok(fitted.fitThresholds);
    const [threshold] = fitted.fittedThresholds;
    // Balanced accuracy 3/4 at 0.725 and at 0.95: the lower middle of the tie.
    assert.equal(threshold.checkerModel, BINARY_CHECKER);
    assert.ok(Math.abs((threshold.threshold ?? 0) - 0.725) < 1e-9, String(threshold.threshold));
    assert.equal(threshold.criterion, evaluation.ThresholdCriterion.THRESHOLD_CRITERION_BALANCED_ACCURACY);
    assert.equal(threshold.balancedAccuracy, 0.75);
    const { items } = await client.evaluation.listItems({ evaluationId: fitted.evaluationId, pageSize: 10 });
    assert.ok(items.every((item) => item.supportProbability !== undefined && item.supportThreshold === 0.5));

    const run = await collect(
      await client.factCheck.run({
        question: "Fact-check this content",
        mode: Mode.MODE_FACT_CHECK,
        modeConfig: {
          contentToCheck: "The bridge crosses the Quill.",
          checkerModels: [BINARY_CHECKER],
          sources: [{ id: "bridges", title: "Bridges", text: BRIDGE }],
          useKnowledgeStore: false,
          thresholdEvaluationId: fitted.evaluationId,
        },
      }),
    );
    const start = run[0].event;
    assert.equal(start?.$case, "factcheckStart");
    assert.equal(start.value.config?.thresholdEvaluationId, fitted.evaluationId);
    const { result } = await client.factCheck.getResult({ messageId: run[0].messageId });
    const [checker] = result?.verification?.checkers ?? [];
    assert.deepEqual(checker.threshold, {
      checkerModel: BINARY_CHECKER,
      threshold: threshold.threshold,
      evaluationId: fitted.evaluationId,
      fittedOn: "ts-fit",
    });
    assert.ok(checker.verifications.every((verification) => verification.supportThreshold === threshold.threshold));
    await refusedWith(
      client.evaluation.run({ config: { ...evaluationConfig(["local/checker-overlap"]), fitThresholds: true } }),
      status.INVALID_ARGUMENT,
    );
  });
});
