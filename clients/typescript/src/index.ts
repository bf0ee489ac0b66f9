// The factcheck TypeScript client: the generated messages and grpc-js service clients (src/generated,
// from protos/factcheck/v1 by ts-proto), and a helper that connects to the gateway the way the
// Python CLI does (FACTCHECK_GATEWAY_TARGET, FACTCHECK_GATEWAY_TOKEN, FACTCHECK_TLS_CA_FILE).
import { readFileSync } from "node:fs";

import { ChannelCredentials, credentials, Metadata } from "@grpc/grpc-js";

import { ClaimsServiceClient } from "./generated/factcheck/v1/citations";
import { EvaluationServiceClient } from "./generated/factcheck/v1/evaluation";
import { FactCheckServiceClient } from "./generated/factcheck/v1/factcheck";
import { ReviewServiceClient } from "./generated/factcheck/v1/investigation";
import { KnowledgeServiceClient } from "./generated/factcheck/v1/knowledge";
import { UsageServiceClient } from "./generated/factcheck/v1/usage";

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

export const DEFAULT_GATEWAY_TARGET = "localhost:50051";

export interface GatewayOptions {
  /** gRPC target, e.g. "localhost:50051" (default: FACTCHECK_GATEWAY_TARGET, else localhost:50051). */
  target?: string;
  /** Bearer token the gateway accepts (its FACTCHECK_AUTH_TOKENS); default FACTCHECK_GATEWAY_TOKEN. */
  token?: string;
  /** PEM file of the CA that signed the gateway's certificate: TLS; default FACTCHECK_TLS_CA_FILE, else plaintext. */
  caFile?: string;
}

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
  const target = options.target ?? process.env.FACTCHECK_GATEWAY_TARGET ?? DEFAULT_GATEWAY_TARGET;
  const token = options.token ?? process.env.FACTCHECK_GATEWAY_TOKEN;
  const caFile = options.caFile ?? process.env.FACTCHECK_TLS_CA_FILE;
  const channel: ChannelCredentials = caFile
    ? credentials.createSsl(readFileSync(caFile))
    : credentials.createInsecure();
  const clients = {
    factCheck: new FactCheckServiceClient(target, channel),
    knowledge: new KnowledgeServiceClient(target, channel),
    claims: new ClaimsServiceClient(target, channel),
    review: new ReviewServiceClient(target, channel),
    usage: new UsageServiceClient(target, channel),
    evaluation: new EvaluationServiceClient(target, channel),
  };
  return {
    target,
    ...clients,
    metadata() {
      const metadata = new Metadata();
      if (token) {
        metadata.set("authorization", `Bearer ${token}`);
      }
      return metadata;
    },
    close() {
      for (const client of Object.values(clients)) {
        client.close();
      }
    },
  };
}
