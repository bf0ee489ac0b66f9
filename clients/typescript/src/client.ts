// The promise-based client: every RPC the gateway serves, one method per RPC, typed from the generated code
// (promises.ts), on one channel with the gateway's target, TLS and bearer token (gateway.ts).
//
//   const client = connect();
//   const events = await client.factCheck.run({ question: "…", modeConfig: { contentToCheck: "…" } });
//   for await (const event of events) console.log(event.event?.$case);
//   const { claims } = await client.claims.list({ messageId });
import { Client } from "@grpc/grpc-js";

import { ClaimsServiceService, GetClaimRequest, ListClaimsRequest } from "./generated/factcheck/v1/citations";
import {
  CancelEvaluationRequest,
  CompareEvaluationsRequest,
  EvaluationServiceService,
  GetEvaluationRequest,
  ListEvaluationItemsRequest,
  ListEvaluationSetsRequest,
  ListEvaluationsRequest,
  ResumeEvaluationRequest,
  RunEvaluationRequest,
  WatchEvaluationRequest,
} from "./generated/factcheck/v1/evaluation";
import {
  CancelRequest,
  FactCheckServiceService,
  GetResultRequest,
  ListResultsRequest,
  RunRequest,
  WatchRequest,
} from "./generated/factcheck/v1/factcheck";
import { DecideReviewRequest, ListReviewsRequest, ReviewServiceService } from "./generated/factcheck/v1/investigation";
import {
  AddDocumentsRequest,
  DeleteDocumentRequest,
  KnowledgeServiceService,
  ListDocumentsRequest,
  SearchRequest,
} from "./generated/factcheck/v1/knowledge";
import { GetUsageRequest, PurgeCacheRequest, UsageServiceService } from "./generated/factcheck/v1/usage";
import { GatewayOptions, gatewaySettings } from "./gateway";
import { Caller } from "./promises";

function services(call: Caller) {
  return {
    /** FactCheckService: runs (fact-check, council, entailment) and their stored results. */
    factCheck: {
      /** Starts a run; resolves to its events once the gateway accepted it (INVALID_ARGUMENT rejects). */
      run: call.stream(FactCheckServiceService.run, RunRequest),
      /** A run's events after `afterSeq`: the stored ones, then the rest live until it ends. */
      watch: call.stream(FactCheckServiceService.watch, WatchRequest),
      cancel: call.unary(FactCheckServiceService.cancel, CancelRequest),
      getResult: call.unary(FactCheckServiceService.getResult, GetResultRequest),
      listResults: call.unary(FactCheckServiceService.listResults, ListResultsRequest),
    },
    /** KnowledgeService: the tenant's documents and search over their passages. */
    knowledge: {
      addDocuments: call.unary(KnowledgeServiceService.addDocuments, AddDocumentsRequest),
      deleteDocument: call.unary(KnowledgeServiceService.deleteDocument, DeleteDocumentRequest),
      listDocuments: call.unary(KnowledgeServiceService.listDocuments, ListDocumentsRequest),
      search: call.unary(KnowledgeServiceService.search, SearchRequest),
    },
    /** ClaimsService: the stored claims of runs with citations. */
    claims: {
      list: call.unary(ClaimsServiceService.listClaims, ListClaimsRequest),
      get: call.unary(ClaimsServiceService.getClaim, GetClaimRequest),
    },
    /** ReviewService: the outcomes the verification loop holds for a person. */
    review: {
      list: call.unary(ReviewServiceService.listReviews, ListReviewsRequest),
      decide: call.unary(ReviewServiceService.decideReview, DecideReviewRequest),
    },
    /** UsageService: the model-call ledger and the verification cache. */
    usage: {
      get: call.unary(UsageServiceService.getUsage, GetUsageRequest),
      purgeCache: call.unary(UsageServiceService.purgeCache, PurgeCacheRequest),
    },
    /** EvaluationService: checker models measured on labelled sets. */
    evaluation: {
      /** Starts an evaluation; resolves to its events (progress, scores, finished) once accepted. An evaluation
       * outlives the call: leaving the loop leaves it running, and `watch` follows it again. */
      run: call.stream(EvaluationServiceService.runEvaluation, RunEvaluationRequest),
      resume: call.stream(EvaluationServiceService.resumeEvaluation, ResumeEvaluationRequest),
      /** An evaluation's events after `afterSeq`, from any gateway: the stored ones, then the rest live until it
       * ends (a finished one: up to its `finished` event). */
      watch: call.stream(EvaluationServiceService.watchEvaluation, WatchEvaluationRequest),
      cancel: call.unary(EvaluationServiceService.cancelEvaluation, CancelEvaluationRequest),
      get: call.unary(EvaluationServiceService.getEvaluation, GetEvaluationRequest),
      list: call.unary(EvaluationServiceService.listEvaluations, ListEvaluationsRequest),
      listSets: call.unary(EvaluationServiceService.listEvaluationSets, ListEvaluationSetsRequest),
      /** Every checker's answer on every item, a page at a time, filtered (checker, set, label, wrong or failed). */
      listItems: call.unary(EvaluationServiceService.listEvaluationItems, ListEvaluationItemsRequest),
      /** Two evaluations side by side: balanced accuracy per checker and set with a 95% interval, and the items
       * where they disagree. */
      compare: call.unary(EvaluationServiceService.compareEvaluations, CompareEvaluationsRequest),
    },
  };
}

/** Every service of the gateway as promises and async iterables (see the README for one example each). */
export type FactCheckClient = ReturnType<typeof services> & {
  /** The gateway's gRPC target. */
  readonly target: string;
  /** Closes the channel; calls made after fail. */
  close(): void;
};

/** A promise-based client of the gateway: FACTCHECK_GATEWAY_TARGET, FACTCHECK_GATEWAY_TOKEN and
 * FACTCHECK_TLS_CA_FILE unless `options` say otherwise, as the `factcheck` command reads them. */
export function connect(options: GatewayOptions = {}): FactCheckClient {
  const settings = gatewaySettings(options);
  const channel = new Client(settings.target, settings.credentials);
  return { ...services(new Caller(channel, settings.metadata)), target: settings.target, close: () => channel.close() };
}
