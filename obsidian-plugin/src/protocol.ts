import type { MethodParams } from "./protocol-params.generated";
import type { Finding, MethodResults } from "./protocol-results.generated";

/**
 * The sidecar's JSON-RPC contract as TypeScript types. Params and results are generated from the
 * sidecar's pydantic models (protocol-params.generated.ts, protocol-results.generated.ts, written
 * by scripts/gen_protocol.py); this file names them for the plugin and adds the constants.
 * Nothing here runs: these are shapes and constants only.
 */

export type {
  AgentSaveResult,
  ApplyEditParams,
  ApplyEditResult,
  Backlink,
  ConsolidateResult,
  CoreResult,
  ExtractItem,
  ExtractResult,
  Finding,
  FixResult,
  GraphEdge,
  GraphNode,
  InboxItem,
  InboxList,
  InboxReviewResult,
  IndexStatus,
  JobInfo,
  LintResult,
  Neighbourhood,
  NoteInfo,
  Notifications,
  RepairCandidate,
  SearchHit,
  SearchResult,
  SidecarSettings,
  StatusResult,
} from "./protocol-results.generated";

export type Severity = Finding["severity"];

/** What the plugin sends on every editor change: all three, always. */
export type EditorStateParams = Required<MethodParams["editor.state"]>;

/** Every method the plugin calls, with its result; both generated from the sidecar's models. */
export type Methods = MethodResults;

export type MethodName = keyof MethodResults & keyof MethodParams;
export type ParamsOf<M extends MethodName> = MethodParams[M];
export type ResultOf<M extends MethodName> = MethodResults[M];

/** JSON-RPC error codes of the protocol, plus the client's own (negative small numbers). */
export const ErrorCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL: -32603,
  PATH_OUTSIDE_VAULT: -32010,
  FILE_NOT_FOUND: -32011,
  CONFLICT: -32012,
  NOT_AVAILABLE: -32013,
  BUSY: -32014,
  // Raised by the client itself, never sent by the sidecar.
  TIMEOUT: -1,
  NOT_CONNECTED: -2,
  CONNECTION_CLOSED: -3,
} as const;

/** Link checks whose findings carry a `target` (PROTOCOL.md "A finding"). */
export const LINK_CHECKS: readonly string[] = ["broken_link", "broken_anchor", "unresolvable_label", "wiki_drift"];
