/**
 * The gateway's API over one HTTP/2 connection: each call built from its arguments, sent
 * with the key, a deadline and retries, its reply turned into the result.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { DescEnum, DescMessage, JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type CallOptions, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { error, fromCallError, fromToolResult, UnauthenticatedError } from "./errors.js";
import {
  type Entry, MemoryKindSchema, MemoryScopeSchema, SourceKindSchema,
} from "./gen/agentmemory/agent_memory/v1/agent_memory_service_pb.js";
import { AsOfAxisSchema, RetrievalModeSchema } from "./gen/agentmemory/agent_memory/v1/retrieval_pb.js";
import { type MessageSchema, RoleSchema } from "./gen/agentmemory/common/v1/message_pb.js";
import { KeyRoleSchema, Surface } from "./gen/agentmemory/common/v1/principal_pb.js";
import { RunOutcomeSchema } from "./gen/agentmemory/common/v1/run_pb.js";
import { type Caller, type CallerSchema, GatewayService } from "./gen/agentmemory/gateway/v1/gateway_service_pb.js";
import { KeyService } from "./gen/agentmemory/gateway/v1/key_service_pb.js";
import { MemoryLibraryService } from "./gen/agentmemory/gateway/v1/memory_library_service_pb.js";
import {
  type RetrieveContextRequestSchema, RetrievalService,
} from "./gen/agentmemory/gateway/v1/retrieval_service_pb.js";
import { RunService } from "./gen/agentmemory/gateway/v1/run_service_pb.js";
import { VERSION } from "./version.js";

export const API_KEY_VARIABLE = "AGENTMEMORY_API_KEY";
export const ADDRESS_VARIABLE = "AGENTMEMORY_ADDRESS";
export const DEFAULT_ADDRESS = "localhost:50051";

/**
 * Retries of a call that failed with UNAVAILABLE, when sending it again is safe: it is
 * idempotent, or carries a request id (which the SDK generates). Exponential backoff with
 * full jitter, always within the call's deadline.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included (1: never retry). Default 4. */
  attempts: number;
  /** The first retry waits up to this many milliseconds, each next one twice as long. */
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, initialBackoffMs: 200, maxBackoffMs: 3000 };

export interface ClientOptions {
  agentId?: string;
  /** The end user (a key that may act for users, or the key's own user). */
  userId?: string;
  environment?: string;
  /** Default: the AGENTMEMORY_API_KEY environment variable. */
  apiKey?: string;
  /** host:port; default: AGENTMEMORY_ADDRESS, else localhost:50051. */
  address?: string;
  tls?: boolean;
  /** Milliseconds each call may take, its retries included. Default 30,000. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
}

/** What `memory.store` did (seed 000's rules). */
export interface StoreResult {
  key: string;
  /** "private" or "shared": the one used, which may differ from the one asked for. */
  visibility: string;
  /** The key already held byte-identical content: nothing was written. */
  unchanged: boolean;
  /** An existing memory's content was replaced (a new version). */
  replaced: boolean;
  /** Why the visibility differs from the one asked for, if it does. */
  note: string;
}

export interface RecalledMemory {
  key: string;
  content: string;
  /** user_profile, project_fact or observation. */
  category: string;
  score: number;
}

export interface RecallResult {
  /** Best first. */
  memories: RecalledMemory[];
  /** The index could not answer and PostgreSQL keyword search did. */
  fallback: boolean;
}

type Enum<E> = E | string;
/** A message's fields as plain values (not a built message). */
type Init<S extends DescMessage> = Extract<MessageInitShape<S>, { $typeName?: undefined }>;
type RetrieveInit = Init<typeof RetrieveContextRequestSchema>;
type Times = "asOf" | "temporalAfter" | "temporalBefore" | "temporalAnchor";

/** Seed 002's retrieve request fields (camelCase), beside the query. */
export type SearchOptions = Omit<RetrieveInit, "caller" | "semanticQuery" | "mode" | "asOfAxis" | Times>
  & { runId: string; mode?: Enum<number>; asOfAxis?: Enum<number> }
  & { [time in Times]?: Date };

/** A message to append: a role ("user", "assistant", ...), content, and an id (generated when missing). */
export type NewMessage = Omit<Init<typeof MessageSchema>, "role"> & { role: Enum<number> };

interface Settings {
  apiKey: string;
  timeoutMs: number;
  retry: RetryPolicy;
}

function enumValue(schema: DescEnum, value: Enum<number>, field: string): number {
  if (typeof value === "number") return value;
  const prefix = schema.values[0].name.replace(/UNSPECIFIED$/, "");
  const name = value.startsWith(prefix) ? value : prefix + value.toUpperCase();
  const found = schema.values.find((v) => v.name === name);
  if (found) return found.number;
  const names = schema.values.slice(1).map((v) => v.name.slice(prefix.length).toLowerCase()).join(", ");
  throw error("INVALID_ARGUMENT", `${field}: must be one of ${names}`, "INVALID_FIELD",
              { field }, { [field]: `must be one of ${names}` });
}

/** The options given (undefined: left to the gateway's default). */
function given<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as T;
}

function retryDelay(retry: RetryPolicy, attempt: number, deadline: number): number | undefined {
  if (attempt >= retry.attempts) return undefined;
  const delay = Math.random() * Math.min(retry.maxBackoffMs, retry.initialBackoffMs * 2 ** (attempt - 1));
  return Date.now() + delay < deadline ? delay : undefined;
}

/** The connection, its stubs and the caller; what Memory, Threads ... run their calls on. */
class Connection {
  readonly gateway;
  readonly library;
  readonly retrieval;
  readonly runs;
  readonly keys;

  constructor(readonly baseUrl: string, readonly sessions: Http2SessionManager, readonly settings: Settings,
              readonly caller: MessageInitShape<typeof CallerSchema>,
              transport = createGrpcTransport({
                baseUrl, sessionManager: sessions,
                interceptors: [(next) => (request) => {
                  request.header.set("authorization", `Bearer ${settings.apiKey}`);
                  request.header.set("user-agent", `agentmemory-client-typescript/${VERSION}`);
                  return next(request);
                }],
              })) {
    this.gateway = createClient(GatewayService, transport);
    this.library = createClient(MemoryLibraryService, transport);
    this.retrieval = createClient(RetrievalService, transport);
    this.runs = createClient(RunService, transport);
    this.keys = createClient(KeyService, transport);
  }

  /** `send` until it answers, or fails for good: retried after UNAVAILABLE when `retry`. */
  async run<R>(send: (options: CallOptions) => Promise<R>, retry: boolean): Promise<R> {
    const deadline = Date.now() + this.settings.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await send({ timeoutMs: Math.max(deadline - Date.now(), 1) });
      } catch (thrown) {
        const failure = fromCallError(thrown);
        const delay = retry && failure.code === "UNAVAILABLE"
          ? retryDelay(this.settings.retry, attempt, deadline) : undefined;
        if (delay === undefined) throw failure;
        await sleep(delay);
      }
    }
  }

  /** A memory tool (CallTool): its JSON result, or its refusal thrown as an error. */
  async tool(name: string, args: JsonObject, options: { threadId?: string; mutates: boolean }): Promise<JsonObject> {
    const request = { caller: this.caller, toolName: name, arguments: args, threadId: options.threadId ?? "",
                      requestId: options.mutates ? randomUUID() : "" };
    const reply = await this.run((o) => this.gateway.callTool(request, o), true);
    if (reply.isError) throw fromToolResult(reply.result ?? {});
    return reply.result ?? {};
  }
}

/** A message field the gateway always sets (its absence is the gateway's fault). */
function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw error("INTERNAL", `the gateway's reply has no ${what}`);
  return value;
}

const time = (value?: Date) => (value === undefined ? undefined : timestampFromDate(value));

/** Seed 002's search, seed 000's memory tools, and the memory library. */
export class Memory {
  constructor(private readonly c: Connection) {}

  /** A compiled, prompt-ready context for the task `query` describes, with its receipt (seed 002's retrieve). */
  search(query: string, options: SearchOptions) {
    const { mode, asOfAxis, asOf, temporalAfter, temporalBefore, temporalAnchor, ...rest } = options;
    const request = given({
      ...rest, caller: this.c.caller, semanticQuery: query,
      mode: mode === undefined ? undefined : enumValue(RetrievalModeSchema, mode, "mode"),
      asOfAxis: asOfAxis === undefined ? undefined : enumValue(AsOfAxisSchema, asOfAxis, "as_of_axis"),
      asOf: time(asOf), temporalAfter: time(temporalAfter), temporalBefore: time(temporalBefore),
      temporalAnchor: time(temporalAnchor),
    });
    // A retry may leave one more receipt (counted in receipts_per_day), never a wrong answer.
    return this.c.run((o) => this.c.retrieval.retrieveContext(request, o), true);
  }

  /**
   * Remembers `content` under `key` (the memory_store tool): the same content again changes
   * nothing, new content is a new version. Needs Memory bound to the agent.
   */
  async store(key: string, content: string, options: {
    category: string; scope?: "private" | "shared"; importance?: number; threadId?: string;
  }): Promise<StoreResult> {
    const { threadId, ...args } = options;
    const r = await this.c.tool("memory_store", given({ key, content, ...args }), { threadId, mutates: true });
    return { key: String(r.key), visibility: String(r.visibility), unchanged: Boolean(r.unchanged),
             replaced: Boolean(r.replaced), note: String(r.note ?? "") };
  }

  /** The remembered facts most relevant to `query` (the memory_recall tool; limit default 5, at most 20). */
  async recall(query: string, options: { limit?: number; categories?: string[] } = {}): Promise<RecallResult> {
    const r = await this.c.tool("memory_recall", given({ query, ...options }), { mutates: false });
    const entries = (r.entries ?? []) as JsonObject[];
    return {
      memories: entries.map((e) => ({ key: String(e.key), content: String(e.content),
                                      category: String(e.category), score: Number(e.score) })),
      fallback: Boolean(r.fallback),
    };
  }

  /** Forgets the fact under `key` (the memory_forget tool); false when there was none. */
  async forget(key: string): Promise<boolean> {
    return Boolean((await this.c.tool("memory_forget", { key }, { mutates: true })).forgotten);
  }

  /** A new memory through the library, any kind and scope; the memory itself, with its id. */
  async add(content: string, options: {
    kind: Enum<number>; scope?: Enum<number>; key?: string; importance?: number; confidence?: number;
    tags?: Record<string, string>;
  }): Promise<Entry> {
    const { kind, scope, ...rest } = options;
    const memory = given({ ...rest, content, kind: enumValue(MemoryKindSchema, kind, "memory.kind"),
                           scope: scope === undefined ? undefined : enumValue(MemoryScopeSchema, scope, "memory.scope") });
    const request = { caller: this.c.caller, memory, requestId: randomUUID() };
    return present((await this.c.run((o) => this.c.library.addMemory(request, o), true)).memory, "memory");
  }

  /** The memory (`.memory`) and its versions (`.versions`, oldest first). */
  get(memoryId: string, options: { asOf?: Date } = {}) {
    const request = given({ caller: this.c.caller, memoryId, asOf: time(options.asOf) });
    return this.c.run((o) => this.c.library.getMemory(request, o), true);
  }

  /** The memories the caller can see, newest first, every filter given matching; pages fetched as needed. */
  async *list(filter: {
    scopes?: Enum<number>[]; kinds?: Enum<number>[]; sources?: Enum<number>[]; tags?: Record<string, string>;
    text?: string; includeDeleted?: boolean; includeSuperseded?: boolean; asOf?: Date; pageSize?: number;
  } = {}): AsyncGenerator<Entry> {
    const { scopes = [], kinds = [], sources = [], asOf, pageSize, ...rest } = filter;
    const request = {
      caller: this.c.caller, pageSize, pageToken: "",
      filter: given({
        ...rest, asOf: time(asOf),
        scopes: scopes.map((s, i) => enumValue(MemoryScopeSchema, s, `filter.scopes[${i}]`)),
        kinds: kinds.map((k, i) => enumValue(MemoryKindSchema, k, `filter.kinds[${i}]`)),
        sources: sources.map((s, i) => enumValue(SourceKindSchema, s, `filter.sources[${i}]`)),
      }),
    };
    do {
      const reply = await this.c.run((o) => this.c.library.listMemories(request, o), true);
      yield* reply.memories;
      request.pageToken = reply.nextPageToken;
    } while (request.pageToken);
  }

  /** A new version with the fields given; `expectedVersion` is the version edited (else VERSION_CONFLICT). */
  async edit(memoryId: string, options: {
    expectedVersion: bigint | number; key?: string; content?: string; kind?: Enum<number>;
    importance?: number; confidence?: number; tags?: Record<string, string>;
  }): Promise<Entry> {
    const { expectedVersion, kind, ...rest } = options;
    const edit = given({ ...rest, kind: kind === undefined ? undefined : enumValue(MemoryKindSchema, kind, "edit.kind") });
    const request = { caller: this.c.caller, memoryId, expectedVersion: BigInt(expectedVersion), edit,
                      updateMask: { paths: Object.keys(edit) } };
    // Sent once: after a lost reply, a second attempt would meet its own first version.
    return present((await this.c.run((o) => this.c.library.editMemory(request, o), false)).memory, "memory");
  }

  /** A tombstone, restorable within the account's retention window. */
  async delete(memoryId: string, options: { expectedVersion?: bigint | number } = {}): Promise<Entry> {
    const request = { caller: this.c.caller, memoryId, expectedVersion: BigInt(options.expectedVersion ?? 0) };
    return present((await this.c.run((o) => this.c.library.deleteMemory(request, o), false)).memory, "memory");
  }

  /** Undoes a delete, as a new version. */
  async restore(memoryId: string, options: { expectedVersion?: bigint | number } = {}): Promise<Entry> {
    const request = { caller: this.c.caller, memoryId, expectedVersion: BigInt(options.expectedVersion ?? 0) };
    return present((await this.c.run((o) => this.c.library.restoreMemory(request, o), false)).memory, "memory");
  }

  /** Makes `version` current again, as a new version. */
  async rollback(memoryId: string, version: bigint | number,
                 options: { expectedVersion?: bigint | number } = {}): Promise<Entry> {
    const request = { caller: this.c.caller, memoryId, version: BigInt(version),
                      expectedVersion: BigInt(options.expectedVersion ?? 0) };
    return present((await this.c.run((o) => this.c.library.rollbackMemory(request, o), false)).memory, "memory");
  }

  /** Where the memory came from and what happened to it: source, versions, supersede links, audit. */
  explain(memoryId: string) {
    const request = { caller: this.c.caller, memoryId };
    return this.c.run((o) => this.c.library.explainMemory(request, o), true);
  }
}

export class Threads {
  constructor(private readonly c: Connection) {}

  /**
   * Appends to the thread (creating it); the messages' offsets. A message without an id
   * gets a generated one, which makes a retried append append nothing twice.
   */
  async append(threadId: string, messages: NewMessage[], options: { threadMetadata?: JsonObject } = {}): Promise<number[]> {
    const request = given({
      caller: this.c.caller, threadId, threadMetadata: options.threadMetadata,
      messages: messages.map((m) => ({ id: randomUUID(), ...m, role: enumValue(RoleSchema, m.role, "role") })),
    });
    return (await this.c.run((o) => this.c.gateway.appendMessages(request, o), true)).offsets.map(Number);
  }
}

export class Context {
  constructor(private readonly c: Connection) {}

  /** The next turn's messages (pinned facts, summary, recent window) and tools. */
  build(threadId: string, options: { task?: string; runId?: string; delegated?: boolean; threadMetadata?: JsonObject } = {}) {
    const request = given({ caller: this.c.caller, threadId, ...options });
    return this.c.run((o) => this.c.gateway.buildContext(request, o), true);
  }
}

export class Runs {
  constructor(private readonly c: Connection) {}

  /** Opens a run on the thread (`runId` generated when not given); `credentials` are masked out of what is learned. */
  async start(threadId: string, options: { runId?: string; credentials?: string[] } = {}) {
    const request = { caller: this.c.caller, threadId, runId: options.runId ?? randomUUID(),
                      credentials: options.credentials ?? [] };
    // Starting the same run again is deduplicated, so a retry is safe.
    return present((await this.c.run((o) => this.c.runs.startRun(request, o), true)).run, "run");
  }

  /** Closes the run with succeeded (the default), failed or cancelled. */
  async finish(threadId: string, runId: string, options: { outcome?: Enum<number>; credentials?: string[] } = {}) {
    const request = { caller: this.c.caller, threadId, runId, credentials: options.credentials ?? [],
                      outcome: enumValue(RunOutcomeSchema, options.outcome ?? "succeeded", "outcome") };
    return present((await this.c.run((o) => this.c.runs.finishRun(request, o), true)).run, "run");
  }

  /** A run of the thread, or its open run when `runId` is empty. */
  async get(threadId: string, runId = "") {
    const request = { caller: this.c.caller, threadId, runId };
    return present((await this.c.run((o) => this.c.runs.getRun(request, o), true)).run, "run");
  }
}

/** The account's credentials (an admin key; mintUserToken: a key that may act for users). */
export class Keys {
  constructor(private readonly c: Connection) {}

  create(name: string, options: { role?: Enum<number>; actForUsers?: boolean; userId?: string; agentIds?: string[] } = {}) {
    const { role = "agent", ...rest } = options;
    const request = given({ ...rest, name, role: enumValue(KeyRoleSchema, role, "role") });
    return this.c.run((o) => this.c.keys.createKey(request, o), false);
  }

  async list() {
    return (await this.c.run((o) => this.c.keys.listKeys({}, o), true)).keys;
  }

  rotate(keyId: string, options: { graceSeconds?: number } = {}) {
    return this.c.run((o) => this.c.keys.rotateKey({ keyId, ...options }, o), false);
  }

  async revoke(keyId: string) {
    return present((await this.c.run((o) => this.c.keys.revokeKey({ keyId }, o), false)).key, "key");
  }

  mintUserToken(userId: string, agentId: string, options: { ttlSeconds?: number } = {}) {
    return this.c.run((o) => this.c.keys.mintUserToken({ userId, agentId, ...options }, o), false);
  }
}

/**
 * The gateway's API.
 *
 *     const client = new Client({ agentId: "concierge", userId: "ana" });
 *     await client.memory.store("home_city", "The user lives in Lisbon.", { category: "user_profile" });
 *     client.close();
 *
 * The key comes from `apiKey` or AGENTMEMORY_API_KEY, the address from `address` or
 * AGENTMEMORY_ADDRESS (default localhost:50051).
 */
export class Client {
  readonly memory: Memory;
  readonly threads: Threads;
  readonly context: Context;
  readonly runs: Runs;
  readonly keys: Keys;

  /** `connection`: withOptions' shared one (internal). */
  constructor(options: ClientOptions = {}, connection?: Connection) {
    this.connection = connection ?? Client.connect(options);
    this.memory = new Memory(this.connection);
    this.threads = new Threads(this.connection);
    this.context = new Context(this.connection);
    this.runs = new Runs(this.connection);
    this.keys = new Keys(this.connection);
  }

  private readonly connection: Connection;

  private static connect(options: ClientOptions): Connection {
    const apiKey = options.apiKey || process.env[API_KEY_VARIABLE];
    if (!apiKey) {
      throw new UnauthenticatedError("UNAUTHENTICATED", `no API key: pass apiKey or set ${API_KEY_VARIABLE}`,
                                     "API_KEY_MISSING");
    }
    const address = options.address || process.env[ADDRESS_VARIABLE] || DEFAULT_ADDRESS;
    const baseUrl = `${options.tls ? "https" : "http"}://${address}`;
    const settings = { apiKey, timeoutMs: options.timeoutMs ?? 30_000,
                       retry: { ...DEFAULT_RETRY, ...options.retry } };
    return new Connection(baseUrl, new Http2SessionManager(baseUrl), settings, {
      agentId: options.agentId ?? "", userId: options.userId ?? "",
      environment: options.environment ?? "", surface: Surface.AGENT,
    });
  }

  /** The same connection acting as another agent or user, or with another deadline. */
  withOptions(options: { agentId?: string; userId?: string; environment?: string; timeoutMs?: number }): Client {
    const { timeoutMs, ...caller } = options;
    const c = this.connection;
    return new Client({}, new Connection(c.baseUrl, c.sessions, { ...c.settings, timeoutMs: timeoutMs ?? c.settings.timeoutMs },
                                         { ...c.caller, ...given(caller) }));
  }

  /** Rates what a search delivered (or the `memoryIds` of it). */
  feedback(receiptId: string, options: { helpful: boolean; memoryIds?: string[] }) {
    const request = { caller: this.connection.caller, receiptId, requestId: randomUUID(), ...options };
    return this.connection.run((o) => this.connection.retrieval.recordFeedback(request, o), true);
  }

  /** How the run that used a search ended: succeeded credits what it delivered, failed counts against it. */
  outcome(receiptId: string, outcome: Enum<number>) {
    const request = { caller: this.connection.caller, receiptId, requestId: randomUUID(),
                      outcome: enumValue(RunOutcomeSchema, outcome, "outcome") };
    return this.connection.run((o) => this.connection.retrieval.recordOutcome(request, o), true);
  }

  /** Closes the connection (and every client made from it with withOptions). */
  close(): void {
    this.connection.sessions.abort();
  }
}

export type { Caller };
