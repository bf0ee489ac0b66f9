// The factcheck TypeScript client: the generated messages and grpc-js service clients (src/generated,
// from protos/factcheck/v1 by ts-proto), and a helper that connects to the gateway the way the
// Python CLI does (FACTCHECK_GATEWAY_TARGET, FACTCHECK_GATEWAY_TOKEN, FACTCHECK_TLS_CA_FILE).
import { readFileSync } from "node:fs";

import { ChannelCredentials, credentials, Metadata } from "@grpc/grpc-js";

import { FactCheckServiceClient } from "./generated/factcheck/v1/factcheck";
import { KnowledgeServiceClient } from "./generated/factcheck/v1/knowledge";

// FactCheckService's messages at the top level; the other files as namespaces (each generated file
// exports the same helper names, e.g. DeepPartial).
export * from "./generated/factcheck/v1/factcheck";
export * as common from "./generated/factcheck/v1/common";
export * as council from "./generated/factcheck/v1/council";
export * as knowledge from "./generated/factcheck/v1/knowledge";

export const DEFAULT_GATEWAY_TARGET = "localhost:50051";

export interface GatewayOptions {
  /** gRPC target, e.g. "localhost:50051" (default: FACTCHECK_GATEWAY_TARGET, else localhost:50051). */
  target?: string;
  /** Bearer token the gateway accepts (its FACTCHECK_AUTH_TOKENS); default FACTCHECK_GATEWAY_TOKEN. */
  token?: string;
  /** PEM file of the CA that signed the gateway's certificate: TLS; default FACTCHECK_TLS_CA_FILE, else plaintext. */
  caFile?: string;
}

export interface Gateway {
  target: string;
  factCheck: FactCheckServiceClient;
  knowledge: KnowledgeServiceClient;
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
  const factCheck = new FactCheckServiceClient(target, channel);
  const knowledge = new KnowledgeServiceClient(target, channel);
  return {
    target,
    factCheck,
    knowledge,
    metadata() {
      const metadata = new Metadata();
      if (token) {
        metadata.set("authorization", `Bearer ${token}`);
      }
      return metadata;
    },
    close() {
      factCheck.close();
      knowledge.close();
    },
  };
}
