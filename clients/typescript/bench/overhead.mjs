// The SDK against a raw Connect client of the generated code, each on its own HTTP/2
// connection, interleaved in rounds (bench/sdk_bench.py runs it after `npm run build` and
// prints the tables). Prints {"recall": {name: [ms, ...]}, "search": {...}}.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Client } from "@agentmemory/client";
import { Surface } from "../dist/gen/agentmemory/common/v1/principal_pb.js";
import { GatewayService } from "../dist/gen/agentmemory/gateway/v1/gateway_service_pb.js";
import { RetrievalService } from "../dist/gen/agentmemory/gateway/v1/retrieval_service_pb.js";

const env = process.env;
const [rounds, perRound, budget] = [Number(env.ROUNDS), Number(env.PER_ROUND), Number(env.BUDGET)];
const transport = createGrpcTransport({
  baseUrl: `http://${env.AGENTMEMORY_ADDRESS}`,
  interceptors: [(next) => (request) => {
    request.header.set("authorization", `Bearer ${env.AGENTMEMORY_API_KEY}`);
    return next(request);
  }],
});
const gateway = createClient(GatewayService, transport);
const retrieval = createClient(RetrievalService, transport);
const caller = { agentId: env.AGENT, userId: env.USER, surface: Surface.AGENT };
const sdk = new Client({ agentId: env.AGENT, userId: env.USER });

const groups = {
  recall: {
    "raw Connect client callTool": () => gateway.callTool(
      { caller, toolName: "memory_recall", arguments: { query: env.QUERY } }, { timeoutMs: 30_000 }),
    "Client.memory.recall": () => sdk.memory.recall(env.QUERY),
  },
  search: {
    "raw Connect client retrieveContext": () => retrieval.retrieveContext(
      { caller, runId: env.RUN, semanticQuery: env.QUERY, tokenBudget: budget }, { timeoutMs: 30_000 }),
    "Client.memory.search": () => sdk.memory.search(env.QUERY, { runId: env.RUN, tokenBudget: budget }),
  },
};

async function measure(calls, rounds) {
  const latencies = Object.fromEntries(Object.keys(calls).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, call] of Object.entries(calls)) {
      for (let i = 0; i < perRound; i++) {
        const started = performance.now();
        await call();
        latencies[name].push(performance.now() - started);
      }
    }
  }
  return latencies;
}

const results = {};
for (const [group, calls] of Object.entries(groups)) {
  await measure(calls, 1); // warm-up
  results[group] = await measure(calls, rounds);
}
sdk.close();
console.log(JSON.stringify(results));
