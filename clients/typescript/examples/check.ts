// Run a fact-check from Node and print its events as they stream, then the score and title.
//
//   npm run build && node dist/examples/check.js "The Eiffel Tower was completed in 1889."
//   node dist/examples/check.js --checker local/checker --checker local/checker-lexical "..."
//   FACTCHECK_GATEWAY_TARGET=host:50051 node dist/examples/check.js --json "..."   # one JSON object per event
//
// Options (before or after the content; `--` ends them): --json, --checker MODEL (repeat for 1-4),
// --extractor MODEL, --reporter MODEL, -q/--question TEXT (what the content answers), -h/--help.
// Ctrl-C stops following the run (an AbortSignal cancels the call); the run goes on in the gateway.
//
// Exit codes as the `factcheck` command's: 0 complete, 1 the run failed, 2 a bad option, nothing to check (no
// or empty content) or a request the gateway refuses as invalid, 3 the gateway is unreachable or refused the
// call, 4 cancelled, 130 stopped by Ctrl-C, 141 stdout closed by its reader (`--json | head -3`).
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";

import { connect, FactCheckEvent, Mode, ServiceError } from "../src";
import { EXIT, exitQuietlyWhenStdoutCloses, refuse, reportCallError } from "./cli";

const USAGE =
  "usage: node dist/examples/check.js [--json] [--checker MODEL]... [--extractor MODEL] [--reporter MODEL] " +
  "[-q QUESTION] CONTENT...";

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

interface Options {
  json: boolean;
  content: string;
  question: string;
  checkers: string[];
  extractor?: string;
  reporter?: string;
}

/** The command line, or exit 2 with one line saying what is wrong (nothing is sent then). */
function parse(args: string[]): Options {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        json: { type: "boolean" },
        checker: { type: "string", multiple: true },
        extractor: { type: "string" },
        reporter: { type: "string" },
        question: { type: "string", short: "q" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    // parseArgs says "Unknown option '--bogus'. To specify a positional argument starting with a '-', ...".
    refuse(`${(error as Error).message.replace(/\. To specify .*$/s, "")}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    process.exit(EXIT.ok);
  }
  if (positionals.length === 0) {
    refuse(`nothing to check: give the content\n${USAGE}`);
  }
  const content = positionals.join(" ");
  if (!content.trim()) {
    refuse("nothing to check: the content is empty");
  }
  const checkers = values.checker ?? [];
  if (checkers.length > 4) {
    refuse(`at most 4 checkers (--checker given ${checkers.length} times)`);
  }
  return {
    json: values.json ?? false,
    content,
    question: values.question ?? "Fact-check this content",
    checkers,
    extractor: values.extractor,
    reporter: values.reporter,
  };
}

async function main(): Promise<number> {
  const options = parse(process.argv.slice(2));
  exitQuietlyWhenStdoutCloses();
  const client = connect();
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  let exitCode: number = EXIT.runFailed;
  let messageId = "";
  try {
    const events = await client.factCheck.run(
      {
        question: options.question,
        mode: Mode.MODE_FACT_CHECK,
        modeConfig: {
          contentToCheck: options.content,
          checkerModels: options.checkers,
          extractorModel: options.extractor,
          reporterModel: options.reporter,
        },
        // AIP-155: a retried Run with the same id attaches to this run instead of starting another.
        requestId: randomUUID(),
      },
      { signal: stop.signal },
    );
    for await (const event of events) {
      messageId ||= event.messageId;
      if (options.json) {
        console.log(JSON.stringify(FactCheckEvent.toJSON(event)));
      } else {
        console.log(`${event.seq.padStart(3)} ${(event.event?.$case ?? "?").padEnd(20)} ${describe(event)}`);
      }
      if (event.event?.$case === "complete") {
        exitCode = EXIT.ok;
      } else if (event.event?.$case === "cancelled") {
        exitCode = EXIT.cancelled;
      }
    }
  } catch (error) {
    if (stop.signal.aborted) {
      console.error(`factcheck example: stopped following run ${messageId || "(not started)"}; it goes on in the gateway`);
      return EXIT.interrupted;
    }
    if (!(error instanceof Error && "code" in error && "details" in error)) {
      throw error;
    }
    return reportCallError(error as ServiceError, client.target);
  } finally {
    client.close();
  }
  return exitCode;
}

main().then((code) => {
  process.exitCode = code;
});
