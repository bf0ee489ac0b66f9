// What the examples share with the `factcheck` command: its exit codes, how they refuse bad arguments, and a
// closed stdout (`| head -3`) ending them quietly.
import { ServiceError, status } from "@grpc/grpc-js";

/** The `factcheck` command's exit codes (docs/cli.md). */
export const EXIT = {
  ok: 0,
  runFailed: 1,
  usage: 2,
  gateway: 3,
  cancelled: 4,
  // Stopped by Ctrl-C (128 + SIGINT), as a shell reports it.
  interrupted: 130,
  notFound: 5,
  // A reader that closed stdout, as a shell reports SIGPIPE (128 + 13).
  brokenPipe: 141,
} as const;

const PROGRAM = "factcheck example";

/** Ends the program with exit 2 and `message` on stderr: a bad argument, nothing sent to the gateway. */
export function refuse(message: string): never {
  console.error(`${PROGRAM}: ${message}`);
  process.exit(EXIT.usage);
}

/** Reports a failed call on stderr; returns the exit code it means (2 invalid argument, 5 not found, else 3). */
export function reportCallError(error: ServiceError, target: string): number {
  console.error(`${PROGRAM}: ${status[error.code] ?? error.code} from ${target}: ${error.details}`);
  if (error.code === status.INVALID_ARGUMENT) {
    return EXIT.usage;
  }
  return error.code === status.NOT_FOUND ? EXIT.notFound : EXIT.gateway;
}

/**
 * A write to a stdout whose reader has gone (`| head -3`) ends the program at once with exit 141 and nothing
 * on stderr, as the `factcheck` command does, instead of Node's unhandled EPIPE error and its stack trace.
 */
export function exitQuietlyWhenStdoutCloses(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") {
      throw error;
    }
    process.exit(EXIT.brokenPipe);
  });
}
