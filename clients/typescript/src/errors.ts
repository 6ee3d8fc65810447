/**
 * The errors a call throws: one class per family of reasons (the gRPC code they share).
 *
 *     AgentMemoryError             code, reason, message, metadata, field, fieldViolations
 *     ├── InvalidArgumentError     INVALID_ARGUMENT, OUT_OF_RANGE: `field` names what to fix
 *     ├── UnauthenticatedError     UNAUTHENTICATED: no key, a bad, revoked or expired one
 *     ├── PermissionDeniedError    PERMISSION_DENIED: ADMIN_REQUIRED, AGENT_NOT_ALLOWED, ...
 *     ├── NotFoundError            NOT_FOUND: MEMORY_NOT_FOUND, RECEIPT_NOT_FOUND, ...
 *     ├── AlreadyExistsError       ALREADY_EXISTS: KEY_IN_USE, REQUEST_ID_REUSED, ...
 *     ├── FailedPreconditionError  FAILED_PRECONDITION: VERSION_CONFLICT, MEMORY_DISABLED, ...
 *     ├── ResourceExhaustedError   RESOURCE_EXHAUSTED: QUOTA_EXCEEDED, CAPACITY_EXCEEDED
 *     ├── UnavailableError         UNAVAILABLE: the gateway or a dependency of it is down
 *     ├── DeadlineExceededError    DEADLINE_EXCEEDED: the call's deadline passed
 *     └── InternalError            INTERNAL, UNKNOWN and any other code
 *
 * The gateway puts a google.rpc.Status with an ErrorInfo (the stable UPPER_SNAKE reason)
 * and, for field errors, a BadRequest on every error; a memory tool's refusal (a result
 * with isError) carries the same code, reason and metadata.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

export class AgentMemoryError extends Error {
  /** The gRPC status code's name, e.g. "INVALID_ARGUMENT". */
  readonly code: string;
  /** The stable UPPER_SNAKE reason, e.g. "VERSION_CONFLICT" (the code's name when none came). */
  readonly reason: string;
  readonly metadata: Record<string, string>;
  /** field path -> what is wrong with it. */
  readonly fieldViolations: Record<string, string>;

  constructor(code: string, message: string, reason = "", metadata: Record<string, string> = {},
              fieldViolations: Record<string, string> = {}) {
    super(`${reason || code}: ${message}`);
    this.name = new.target.name;
    this.code = code;
    this.reason = reason || code;
    this.metadata = metadata;
    this.fieldViolations = fieldViolations;
  }

  /** The request field the error is about, e.g. "tokenBudget"'s "token_budget", if any. */
  get field(): string | undefined {
    return Object.keys(this.fieldViolations)[0] ?? this.metadata.field;
  }
}

export class InvalidArgumentError extends AgentMemoryError {}
export class UnauthenticatedError extends AgentMemoryError {}
export class PermissionDeniedError extends AgentMemoryError {}
export class NotFoundError extends AgentMemoryError {}
export class AlreadyExistsError extends AgentMemoryError {}
export class FailedPreconditionError extends AgentMemoryError {}
export class ResourceExhaustedError extends AgentMemoryError {}
export class UnavailableError extends AgentMemoryError {}
export class DeadlineExceededError extends AgentMemoryError {}
export class InternalError extends AgentMemoryError {}

const FAMILIES: Record<string, typeof AgentMemoryError> = {
  INVALID_ARGUMENT: InvalidArgumentError,
  OUT_OF_RANGE: InvalidArgumentError,
  UNAUTHENTICATED: UnauthenticatedError,
  PERMISSION_DENIED: PermissionDeniedError,
  NOT_FOUND: NotFoundError,
  ALREADY_EXISTS: AlreadyExistsError,
  ABORTED: AlreadyExistsError,
  FAILED_PRECONDITION: FailedPreconditionError,
  RESOURCE_EXHAUSTED: ResourceExhaustedError,
  UNAVAILABLE: UnavailableError,
  DEADLINE_EXCEEDED: DeadlineExceededError,
};

// gRPC's code names by number (Connect's Code enum has the same numbers).
const CODE_NAMES = [
  "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
  "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
  "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
];

export function error(code: string, message: string, reason = "",
                      metadata: Record<string, string> = {},
                      fieldViolations: Record<string, string> = {}): AgentMemoryError {
  const Family = FAMILIES[code] ?? InternalError;
  return new Family(code, message, reason, metadata, fieldViolations);
}

/** The error a failed call (a ConnectError, or anything thrown on the way) stands for. */
export function fromCallError(thrown: unknown): AgentMemoryError {
  const failure = ConnectError.from(thrown);
  const [info] = failure.findDetails(ErrorInfoSchema);
  const violations: Record<string, string> = {};
  for (const bad of failure.findDetails(BadRequestSchema)) {
    for (const violation of bad.fieldViolations) violations[violation.field] = violation.description;
  }
  return error(CODE_NAMES[failure.code] ?? "UNKNOWN", failure.rawMessage, info?.reason,
               info ? { ...info.metadata } : {}, violations);
}

/** The error a memory tool's isError result stands for. */
export function fromToolResult(result: JsonObject): AgentMemoryError {
  const metadata = (result.metadata ?? {}) as Record<string, string>;
  const violations: Record<string, string> = {};
  for (const v of (result.fieldViolations ?? []) as Array<Record<string, string>>) {
    violations[String(v.field ?? "")] = String(v.description ?? "");
  }
  return error(String(result.code ?? "UNKNOWN"), String(result.message ?? ""),
               String(result.reason ?? ""), metadata, violations);
}
