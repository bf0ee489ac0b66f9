// Promise-based calls built from ts-proto's generated service definitions (`FactCheckServiceService` and the
// like), not from grpc-js's client classes: their methods are overloaded (callback, metadata, options in
// several orders), which defeats a generic wrapper, while a definition names one request type, one response
// type and whether the answer streams. So every call here is typed from the generated code alone.
import { Client, Metadata, ServiceError } from "@grpc/grpc-js";
import type { ClientReadableStream } from "@grpc/grpc-js";

import type { DeepPartial } from "./generated/factcheck/v1/factcheck";

/** One RPC as ts-proto defines it (the fields of its `...ServiceService` entry this module uses). */
export interface MethodDefinition<Request, Response> {
  path: string;
  requestStream: false;
  responseStream: boolean;
  requestSerialize: (value: Request) => Buffer;
  responseDeserialize: (value: Buffer) => Response;
}

/** A generated message type: builds a whole message from a partial one (defaults filled in). */
export interface MessageType<Message> {
  fromPartial(object: DeepPartial<Message>): Message;
}

/** What every call takes besides its request. */
export interface CallOptions {
  /** Cancels the call: a pending promise rejects with the signal's reason, a stream's iteration throws it. */
  signal?: AbortSignal;
  /** When the call must have finished (a Date, or milliseconds since the epoch); DEADLINE_EXCEEDED after. */
  deadline?: Date | number;
  /** More metadata for this call (the client's bearer token is added anyway). */
  metadata?: Record<string, string>;
}

/** What every call method names: the RPC it calls ("/factcheck.v1.EvaluationService/WatchEvaluation"). */
export interface Rpc {
  readonly path: string;
}

/** A unary RPC: the request (any part of it; the rest takes its defaults) in, a promise of the response out. */
export type UnaryCall<Request, Response> = Rpc &
  ((request?: DeepPartial<Request>, options?: CallOptions) => Promise<Response>);

/** A server-streaming RPC: resolves once the server has accepted the call (it rejects a call the server refuses,
 * e.g. INVALID_ARGUMENT, before any event), to the stream of its events. */
export type StreamCall<Request, Event> = Rpc &
  ((request?: DeepPartial<Request>, options?: CallOptions) => Promise<EventStream<Event>>);

/** The events of a server stream, in order, as an async iterable: `for await (const event of stream)`. Leaving the
 * loop early (break, return, throw) cancels the call; so does `cancel()` or the call's AbortSignal. */
export interface EventStream<Event> extends AsyncIterable<Event> {
  cancel(): void;
}

/** Binds definitions to one channel (a grpc-js Client) and the metadata every call carries. */
export class Caller {
  constructor(
    private readonly client: Client,
    private readonly baseMetadata: () => Metadata,
  ) {}

  unary<Request, Response>(method: MethodDefinition<Request, Response>, type: MessageType<Request>): UnaryCall<Request, Response> {
    const invoke = (request?: DeepPartial<Request>, options: CallOptions = {}) =>
      new Promise<Response>((resolve, reject) => {
        const { signal } = options;
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        const onAbort = () => call.cancel();
        const sent = this.outgoing(type, request, options);
        const { path, requestSerialize, responseDeserialize } = method;
        const call = this.client.makeUnaryRequest(
          ...[path, requestSerialize, responseDeserialize, sent.argument, sent.metadata, sent.options] as const,
          (error: ServiceError | null, response?: Response) => {
            signal?.removeEventListener("abort", onAbort);
            if (signal?.aborted) {
              reject(signal.reason);
            } else if (error || response === undefined) {
              reject(error);
            } else {
              resolve(response);
            }
          },
        );
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    return Object.assign(invoke, { path: method.path });
  }

  stream<Request, Response extends { event: unknown }>(
    method: MethodDefinition<Request, Response>,
    type: MessageType<Request>,
  ): StreamCall<Request, NonNullable<Response["event"]>> {
    const invoke = (request?: DeepPartial<Request>, options: CallOptions = {}) => {
      const { signal } = options;
      if (signal?.aborted) {
        return Promise.reject(signal.reason);
      }
      const sent = this.outgoing(type, request, options);
      const { path, requestSerialize, responseDeserialize } = method;
      const stream = this.client.makeServerStreamRequest(
        ...[path, requestSerialize, responseDeserialize, sent.argument, sent.metadata, sent.options] as const,
      );
      const events = new ResponseEvents<Response>(stream, signal);
      return events.accepted.then(() => events as EventStream<NonNullable<Response["event"]>>);
    };
    return Object.assign(invoke, { path: method.path });
  }

  /** The request message (defaults filled in), the call's metadata and its grpc-js options. */
  private outgoing<Request>(type: MessageType<Request>, request: DeepPartial<Request> | undefined, options: CallOptions) {
    return {
      argument: type.fromPartial(request ?? ({} as DeepPartial<Request>)),
      metadata: this.metadata(options),
      options: { deadline: options.deadline },
    };
  }

  private metadata(options: CallOptions): Metadata {
    const metadata = this.baseMetadata();
    for (const [key, value] of Object.entries(options.metadata ?? {})) {
      metadata.set(key, value);
    }
    return metadata;
  }
}

// At most this many events wait to be read before the stream is paused (the server then waits too).
const HIGH_WATER = 64;

/** A server stream's `event`s, queued as they arrive and handed out to one async iteration. */
class ResponseEvents<Response extends { event: unknown }> implements EventStream<NonNullable<Response["event"]>> {
  /** Settles on the server's first answer: headers, an event or the end resolve it; an error first rejects it. */
  readonly accepted: Promise<void>;
  private readonly queue: NonNullable<Response["event"]>[] = [];
  private ended = false;
  private failure: unknown = undefined;
  private wake: () => void = () => {};

  constructor(
    private readonly call: ClientReadableStream<Response>,
    private readonly signal?: AbortSignal,
  ) {
    let accept: () => void = () => {};
    let refuse: (error: unknown) => void = () => {};
    this.accepted = new Promise<void>((resolve, reject) => {
      accept = resolve;
      refuse = reject;
    });
    const onAbort = () => call.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    call.once("metadata", () => accept());
    call.on("data", (response: Response) => {
      accept();
      if (response.event !== undefined && response.event !== null) {
        this.queue.push(response.event as NonNullable<Response["event"]>);
      }
      if (this.queue.length >= HIGH_WATER) {
        call.pause();
      }
      this.wake();
    });
    call.on("end", () => {
      signal?.removeEventListener("abort", onAbort);
      this.ended = true;
      accept();
      this.wake();
    });
    call.on("error", (error: ServiceError) => {
      signal?.removeEventListener("abort", onAbort);
      this.failure = signal?.aborted ? signal.reason : error;
      refuse(this.failure);
      this.wake();
    });
  }

  cancel(): void {
    this.call.cancel();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<NonNullable<Response["event"]>> {
    try {
      for (;;) {
        const next = this.queue.shift();
        if (next !== undefined) {
          if (this.queue.length < HIGH_WATER / 2) {
            this.call.resume();
          }
          yield next;
        } else if (this.failure !== undefined) {
          throw this.failure;
        } else if (this.ended) {
          return;
        } else {
          await new Promise<void>((resolve) => (this.wake = resolve));
        }
      }
    } finally {
      if (!this.ended && this.failure === undefined) {
        this.call.cancel(); // the loop was left early: nobody reads the rest
      }
    }
  }
}
