// What a finished run left behind, from the gateway's other services: its claims (ClaimsService), the
// outcomes it holds for a person's review (ReviewService), and what the tenant's model calls cost
// (UsageService).
//
//   npm run build && node dist/examples/inspect.js MESSAGE_ID
//   node dist/examples/inspect.js --json MESSAGE_ID   # {"result", "claims", "reviews", "usage"}: one JSON object
//
// Exit codes as the `factcheck` command's: 0 shown, 2 no run id, 3 the gateway is unreachable or refused
// the call, 5 no such run, 141 stdout closed by its reader.
import { citations, connect, FactCheckResult, investigation, messageStatusToJSON, ServiceError, usage } from "../src";
import { EXIT, exitQuietlyWhenStdoutCloses, refuse, reportCallError } from "./cli";

function counted(count: number | string, noun: string): string {
  return `${count} ${Number(count) === 1 ? noun : `${noun}s`}`;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const json = args[0] === "--json";
  const [messageId, ...rest] = json ? args.slice(1) : args;
  if (!messageId?.trim() || rest.length > 0) {
    refuse("give one run's message id: node dist/examples/inspect.js [--json] MESSAGE_ID");
  }
  exitQuietlyWhenStdoutCloses();
  const client = connect();
  try {
    // GetResult first: an unknown id is NOT_FOUND there (the listings would answer an empty page).
    const { result } = await client.factCheck.getResult({ messageId });
    const [claims, reviews, spent] = await Promise.all([
      client.claims.list({ messageId, pageSize: 100 }),
      client.review.list({ messageId, includeDecided: true, pageSize: 100 }),
      client.usage.get({ groupBy: [usage.UsageGroupBy.USAGE_GROUP_BY_MODEL] }),
    ]);
    if (json) {
      console.log(
        JSON.stringify({
          result: result && FactCheckResult.toJSON(result),
          claims: citations.ListClaimsResponse.toJSON(claims),
          reviews: investigation.ListReviewsResponse.toJSON(reviews),
          usage: usage.GetUsageResponse.toJSON(spent),
        }),
      );
      return EXIT.ok;
    }
    console.log(`run ${messageId}: ${result?.title ?? "(no title)"} (${messageStatusToJSON(result?.status ?? 0)})`);
    console.log(`claims: ${claims.claims.length}`);
    for (const claim of claims.claims) {
      console.log(`  ${claim.claimKey.padEnd(9)} ${citations.supportTierToJSON(claim.support).padEnd(36)} ${claim.claimText}`);
    }
    console.log(`reviews: ${reviews.reviews.length}`);
    for (const review of reviews.reviews) {
      const state = investigation.reviewStateToJSON(review.state);
      const proposed = investigation.investigationStatusToJSON(review.proposedStatus);
      console.log(`  ${review.claimId.padEnd(9)} ${state.padEnd(22)} proposed ${proposed}: ${review.claim}`);
    }
    const total = spent.total;
    const cost = (total?.costUsd ?? 0).toFixed(4);
    console.log(
      `usage, last 30 days: ${counted(total?.calls ?? 0, "call")}, ${counted(total?.totalTokens ?? 0, "token")}, $${cost}`,
    );
    for (const row of spent.rows) {
      const calls = counted(row.usage?.calls ?? 0, "call");
      console.log(`  ${row.model.padEnd(24)} ${calls}, ${counted(row.usage?.totalTokens ?? 0, "token")}`);
    }
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof Error && "code" in error && "details" in error)) {
      throw error;
    }
    return reportCallError(error as ServiceError, client.target);
  } finally {
    client.close();
  }
}

main().then((code) => {
  process.exitCode = code;
});
