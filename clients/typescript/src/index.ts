/** The agentmemory gateway's client library: `Client`, its results, one error class per family of reasons. */
export {
  ADDRESS_VARIABLE, API_KEY_VARIABLE, Client, type ClientOptions, Context, DEFAULT_ADDRESS, DEFAULT_RETRY,
  Keys, Memory, type NewMessage, type RecalledMemory, type RecallResult, type RetryPolicy, Runs,
  type SearchOptions, type StoreResult, Threads,
} from "./client.js";
export {
  AgentMemoryError, AlreadyExistsError, DeadlineExceededError, FailedPreconditionError, InternalError,
  InvalidArgumentError, NotFoundError, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError,
  UnavailableError,
} from "./errors.js";
export { VERSION } from "./version.js";
