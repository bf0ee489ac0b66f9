// The factcheck TypeScript client: `connect()`, a promise-based client of every gateway service (client.ts);
// the generated messages and grpc-js service clients (src/generated, from protos/factcheck/v1 by ts-proto); and
// `connectGateway()`, those grpc-js clients with callbacks and streams as grpc-js makes them. Both reach the
// gateway the way the Python CLI does (FACTCHECK_GATEWAY_TARGET, FACTCHECK_GATEWAY_TOKEN, FACTCHECK_TLS_CA_FILE).
import { Metadata } from "@grpc/grpc-js";

import { ClaimsServiceClient } from "./generated/factcheck/v1/citations";
import { EvaluationServiceClient } from "./generated/factcheck/v1/evaluation";
import { FactCheckServiceClient } from "./generated/factcheck/v1/factcheck";
import { ReviewServiceClient } from "./generated/factcheck/v1/investigation";
import { KnowledgeServiceClient } from "./generated/factcheck/v1/knowledge";
import { UsageServiceClient } from "./generated/factcheck/v1/usage";
import { GatewayOptions, gatewaySettings } from "./gateway";

export { connect, FactCheckClient } from "./client";
export { CallOptions, EventStream, Rpc, StreamCall, UnaryCall } from "./promises";
export { DEFAULT_GATEWAY_TARGET, GatewayOptions } from "./gateway";
// A call the gateway refuses rejects with grpc-js's ServiceError: compare its `code` with `status`.
export { ServiceError, status } from "@grpc/grpc-js";

// FactCheckService's messages at the top level; the other files as namespaces (each generated file
// exports the same helper names, e.g. DeepPartial).
export * from "./generated/factcheck/v1/factcheck";
export * as citations from "./generated/factcheck/v1/citations";
export * as common from "./generated/factcheck/v1/common";
export * as council from "./generated/factcheck/v1/council";
export * as evaluation from "./generated/factcheck/v1/evaluation";
export * as investigation from "./generated/factcheck/v1/investigation";
export * as knowledge from "./generated/factcheck/v1/knowledge";
export * as usage from "./generated/factcheck/v1/usage";

/** A client for each service the gateway serves; they share the gateway's target and credentials. */
export interface Gateway {
  target: string;
  /** FactCheckService: Run, Watch, Cancel, GetResult, ListResults. */
  factCheck: FactCheckServiceClient;
  /** KnowledgeService: AddDocuments, DeleteDocument, ListDocuments, Search. */
  knowledge: KnowledgeServiceClient;
  /** ClaimsService: ListClaims, GetClaim (the stored claims of runs with citations). */
  claims: ClaimsServiceClient;
  /** ReviewService: ListReviews, DecideReview (the outcomes the verification loop holds for a person). */
  review: ReviewServiceClient;
  /** UsageService: GetUsage, PurgeCache (the model-call ledger and the verification cache). */
  usage: UsageServiceClient;
  /** EvaluationService: RunEvaluation, ResumeEvaluation, WatchEvaluation, CancelEvaluation, GetEvaluation,
   * ListEvaluations, ListEvaluationItems, CompareEvaluations, ListEvaluationSets (checker models measured on
   * labelled sets). */
  evaluation: EvaluationServiceClient;
  /** Call metadata: the bearer token when there is one. Pass it to every call. */
  metadata(): Metadata;
  close(): void;
}

export function connectGateway(options: GatewayOptions = {}): Gateway {
  const { target, credentials, metadata } = gatewaySettings(options);
  const clients = {
    factCheck: new FactCheckServiceClient(target, credentials),
    knowledge: new KnowledgeServiceClient(target, credentials),
    claims: new ClaimsServiceClient(target, credentials),
    review: new ReviewServiceClient(target, credentials),
    usage: new UsageServiceClient(target, credentials),
    evaluation: new EvaluationServiceClient(target, credentials),
  };
  return {
    target,
    ...clients,
    metadata,
    close() {
      for (const client of Object.values(clients)) {
        client.close();
      }
    },
  };
}
