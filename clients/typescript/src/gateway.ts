// Where the gateway is and how to reach it, read the way the Python CLI reads it: FACTCHECK_GATEWAY_TARGET,
// FACTCHECK_GATEWAY_TOKEN (a bearer token) and FACTCHECK_TLS_CA_FILE (TLS with that CA; plaintext without).
import { readFileSync } from "node:fs";

import { ChannelCredentials, credentials, Metadata } from "@grpc/grpc-js";

export const DEFAULT_GATEWAY_TARGET = "localhost:50051";

export interface GatewayOptions {
  /** gRPC target, e.g. "localhost:50051" (default: FACTCHECK_GATEWAY_TARGET, else localhost:50051). */
  target?: string;
  /** Bearer token the gateway accepts (its FACTCHECK_AUTH_TOKENS); default FACTCHECK_GATEWAY_TOKEN. */
  token?: string;
  /** PEM file of the CA that signed the gateway's certificate: TLS; default FACTCHECK_TLS_CA_FILE, else plaintext. */
  caFile?: string;
}

export interface GatewaySettings {
  target: string;
  credentials: ChannelCredentials;
  /** Call metadata: the bearer token when there is one (a fresh object per call). */
  metadata(): Metadata;
}

export function gatewaySettings(options: GatewayOptions = {}): GatewaySettings {
  const target = options.target ?? process.env.FACTCHECK_GATEWAY_TARGET ?? DEFAULT_GATEWAY_TARGET;
  const token = options.token ?? process.env.FACTCHECK_GATEWAY_TOKEN;
  const caFile = options.caFile ?? process.env.FACTCHECK_TLS_CA_FILE;
  return {
    target,
    credentials: caFile ? credentials.createSsl(readFileSync(caFile)) : credentials.createInsecure(),
    metadata() {
      const metadata = new Metadata();
      if (token) {
        metadata.set("authorization", `Bearer ${token}`);
      }
      return metadata;
    },
  };
}
