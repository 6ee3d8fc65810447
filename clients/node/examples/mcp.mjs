// Use the gateway's MCP server from Node with the MCP SDK: list the tools,
// remember a fact, recall it, get the compiled context for a task
// (search_memory). Each step prints one JSON line.
//
//   AGENTMEMORY_MCP_URL=http://localhost:8080/mcp AGENTMEMORY_API_KEY=... node examples/mcp.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const env = process.env;
const headers = {
  Authorization: `Bearer ${env.AGENTMEMORY_API_KEY}`,
  "X-Agent-Id": env.AGENT_ID ?? "example-agent",
  // Optional: the end user, as the key holder vouches for it. Without it a
  // private memory is stored shared.
  ...(env.USER_ID ? { "X-User-Id": env.USER_ID } : {}),
};
const transport = new StreamableHTTPClientTransport(
  new URL(env.AGENTMEMORY_MCP_URL ?? "http://localhost:8080/mcp"), { requestInit: { headers } });
const client = new Client({ name: "agentmemory-node-example", version: "1.0.0" });
const print = (step, value) => console.log(JSON.stringify({ step, ...value }));

await client.connect(transport);
try {
  const { tools } = await client.listTools();
  print("tools", { names: tools.map((t) => t.name) });
  const stored = await client.callTool({ name: "memory_store", arguments: {
    key: "editor", content: "The user edits code in Helix.", category: "user_profile",
    visibility: "private" } });
  print("store", { isError: stored.isError ?? false, result: stored.structuredContent });
  const recalled = await client.callTool({ name: "memory_recall",
                                           arguments: { query: "Which editor does the user use?" } });
  print("recall", { isError: recalled.isError ?? false, result: recalled.structuredContent });
  const searched = await client.callTool({ name: "search_memory", arguments: {
    query: "edits code in Helix", runId: env.RUN_ID ?? "example-run", tokenBudget: 1000 } });
  print("search", { isError: searched.isError ?? false, text: searched.content[0].text,
                    receiptId: searched.structuredContent?.receipt_id });
  const refused = await client.callTool({ name: "journal_message_search",
                                          arguments: { query: "editor" } });
  print("refused", { isError: refused.isError ?? false, text: refused.content[0].text });
} finally {
  await client.close();
}
