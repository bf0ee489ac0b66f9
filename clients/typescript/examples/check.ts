// Run a fact-check from Node and print its events as they stream, then the score and title.
//
//   npm run build && node dist/examples/check.js "The Eiffel Tower was completed in 1889."
//   FACTCHECK_GATEWAY_TARGET=host:50051 node dist/examples/check.js --json "..."   # one JSON object per event
//
// Exit codes as the `factcheck` command's: 0 complete, 1 the run failed, 2 nothing to check (no or empty
// content) or a request the gateway refuses as invalid, 3 the gateway is unreachable or refused the call,
// 4 cancelled, 141 stdout closed by its reader (`--json | head -3`: nothing printed about it).
import { randomUUID } from "node:crypto";

import { ServiceError } from "@grpc/grpc-js";

import { connectGateway, FactCheckEvent, Mode, RunRequest, RunResponse } from "../src";
import { EXIT, exitQuietlyWhenStdoutCloses, refuse, reportCallError } from "./cli";

function describe(event: FactCheckEvent): string {
  const kind = event.event?.$case ?? "unknown";
  const e = event.event;
  switch (e?.$case) {
    case "factcheckStart":
      return `run ${e.value.messageId}: checkers ${e.value.config?.checkerModels.join(", ")}`;
    case "extractComplete":
      return `${e.value.totalClaims} claims by ${e.value.model}`;
    case "checkerComplete": {
      const s = e.value.summary;
      return `${e.value.model}: ${s?.verified} verified, ${s?.disputed} disputed, ${s?.unverifiable} unverifiable`;
    }
    case "reportComplete":
      return `reliability score ${e.value.reliabilityScore ?? "n/a"} by ${e.value.model}`;
    case "titleComplete":
      return e.value.title;
    case "error":
      return e.value.message;
    default:
      return kind;
  }
}

function main(): void {
  const args = process.argv.slice(2);
  const json = args[0] === "--json";
  const words = json ? args.slice(1) : args;
  if (words.length === 0) {
    refuse("nothing to check: give the content, e.g. node dist/examples/check.js [--json] \"The Eiffel Tower ...\"");
  }
  const content = words.join(" ");
  if (!content.trim()) {
    refuse("nothing to check: the content is empty");
  }
  exitQuietlyWhenStdoutCloses();
  const gateway = connectGateway();
  const request = RunRequest.fromPartial({
    question: "Fact-check this content",
    mode: Mode.MODE_FACT_CHECK,
    modeConfig: { contentToCheck: content },
    // AIP-155: a retried Run with the same id attaches to this run instead of starting another.
    requestId: randomUUID(),
  });
  let exitCode: number = EXIT.runFailed;
  const stream = gateway.factCheck.run(request, gateway.metadata());
  stream.on("data", (response: RunResponse) => {
    const event = response.event;
    if (!event) {
      return;
    }
    if (json) {
      console.log(JSON.stringify(FactCheckEvent.toJSON(event)));
    } else {
      console.log(`${event.seq.padStart(3)} ${(event.event?.$case ?? "?").padEnd(20)} ${describe(event)}`);
    }
    if (event.event?.$case === "complete") {
      exitCode = EXIT.ok;
    } else if (event.event?.$case === "cancelled") {
      exitCode = EXIT.cancelled;
    }
  });
  stream.on("error", (error: ServiceError) => {
    exitCode = reportCallError(error, gateway.target);
  });
  stream.on("close", () => {
    gateway.close();
    process.exitCode = exitCode;
  });
}

main();
