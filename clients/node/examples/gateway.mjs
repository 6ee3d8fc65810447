// Append messages, remember a fact, build the next turn's context, recall, and get
// a compiled context for a task (seed 002's RetrieveContext), through the gateway's gRPC API with the generated client (Connect's gRPC
// transport). Each step prints one JSON line.
//
//   AGENTMEMORY_GATEWAY=localhost:50051 AGENTMEMORY_API_KEY=$(cat data/demo-api-key) \
//     node examples/gateway.mjs
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Role, RoleSchema } from "../gen/agentmemory/common/v1/message_pb.js";
import { Surface } from "../gen/agentmemory/common/v1/principal_pb.js";
import { GatewayService } from "../gen/agentmemory/gateway/v1/gateway_service_pb.js";
import { RetrievalService } from "../gen/agentmemory/gateway/v1/retrieval_service_pb.js";

const env = process.env;
const transport = createGrpcTransport({
  baseUrl: `http://${env.AGENTMEMORY_GATEWAY ?? "localhost:50051"}`,
  interceptors: [(next) => (request) => {
    request.header.set("authorization", `Bearer ${env.AGENTMEMORY_API_KEY}`);
    return next(request);
  }],
});
const gateway = createClient(GatewayService, transport);
const retrieval = createClient(RetrievalService, transport);
const threadId = env.THREAD_ID ?? "example-thread";
const print = (step, value) => console.log(JSON.stringify({ step, ...value }));

const caller = {
  agentId: env.AGENT_ID ?? "example-agent",
  userId: env.USER_ID ?? "ana",
  surface: Surface.AGENT,
};
// The memory tools answer only if Memory is bound to this agent: an agent setting an admin
// key changes (MemoryLibraryService.UpdateAgentSettings; see the README).

const appended = await gateway.appendMessages({
  caller, threadId, messages: [
    { id: "m1", role: Role.USER, content: "Hi, I am Ana and I live in Lisbon." },
    { id: "m2", role: Role.ASSISTANT, content: "Nice to meet you, Ana." },
  ],
});
print("append", { offsets: appended.offsets.map(Number) });

const stored = await gateway.callTool({
  caller, threadId, toolName: "memory_store",
  arguments: { key: "home_city", content: "The user lives in Lisbon.",
               category: "user_profile", importance: 0.9 },
});
print("store", { isError: stored.isError, result: stored.result });

const context = await gateway.buildContext({ caller, threadId });
print("context", {
  messages: context.messages.map((m) => ({ role: RoleSchema.value[m.role].name, content: m.content })),
  tools: context.tools.map((t) => t.name),
});

const recalled = await gateway.callTool({
  caller, threadId, toolName: "memory_recall", arguments: { query: "Where does the user live?" },
});
print("recall", {
  isError: recalled.isError,
  contents: recalled.result.entries.map((e) => e.content),
});

const compiled = await retrieval.retrieveContext({
  caller, runId: env.RUN_ID ?? "example-run", semanticQuery: "Where does the user live?",
  tokenBudget: 1000,
});
print("retrieve", { receiptId: compiled.receiptId, rendered: compiled.rendered });
