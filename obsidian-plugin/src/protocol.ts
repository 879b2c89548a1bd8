import type { MethodParams } from "./protocol-params.generated";

/**
 * The sidecar's JSON-RPC contract as TypeScript types. Params are generated from the sidecar's
 * models (protocol-params.generated.ts); results are written here, beside docs/PROTOCOL.md.
 * Nothing here runs: these are shapes and constants only.
 */

export type Severity = "error" | "warning" | "info";

/** One lint finding on a note. `target` is set on link findings and is the link text as written. */
export interface Finding {
  check: string;
  severity: Severity;
  path: string;
  line: number;
  column: number;
  message: string;
  target?: string;
  fixable: boolean;
}

export interface IndexStatus {
  mode: "hybrid" | "keyword";
  driver: string;
  model: string | null;
  reason: string | null;
}

export interface StatusResult {
  version: string;
  pid: number;
  port: number;
  vault: string;
  counts: {
    markdown_files: number;
    memory_files: number;
    links: number;
    unresolved: number;
    orphans: number;
  };
  findings: Record<string, number>;
  last_write: { time: string; paths: string[] } | null;
  last_error: string | null;
  index: IndexStatus;
  busy: string | null;
}

export interface LintResult {
  total_files: number;
  findings: Finding[];
  counts: Record<string, number>;
}

export interface FixResult {
  written: string[];
  unchanged: number;
  skipped: { path: string; reason: string }[];
  diff: string;
}

/** A canonical entity ref (`person/alice-smith`). */
export type EntityRef = string;

export interface NoteInfo {
  path: string;
  title: string;
  category: string | null;
  entities: EntityRef[];
  cross_refs: EntityRef[];
  hash: string;
}

export interface Backlink {
  path: string;
  title: string;
  category: string | null;
  kinds: Record<string, number>;
}

export interface GraphNode {
  id: string;
  path: string | null;
  title: string;
  category: string | null;
  resolved: boolean;
}

export interface GraphEdge {
  source: string;
  target: string;
  kind: string;
  count: number;
}

export interface Neighbourhood {
  center: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface RepairCandidate {
  path: string;
  score: number;
  why: string;
}

export interface SearchHit {
  path: string;
  score: number;
  title: string;
  snippet: string;
}

export interface SearchResult {
  mode: string;
  results: SearchHit[];
  note?: string;
}

export interface ExtractItem {
  op: string;
  type: string;
  path: string;
  confidence: number;
  reason: string;
}

export interface ExtractResult {
  items: ExtractItem[];
  withheld_secrets: number;
}

export interface ConsolidateResult {
  operations: { op: string; path: string; reason: string }[];
  written: string[];
}

/** One inbox note waiting for the person's review (`status: review`). */
export interface InboxItem {
  path: string;
  title: string;
  type: string;
  confidence: number | null;
  /** The date it has waited since (YYYY-MM-DD), or "" when the note has none. */
  since: string;
}

export interface InboxListResult {
  items: InboxItem[];
}

/** An approved or rejected inbox note: where it is now, what was written, and the journal run (undo reverts it). */
export interface InboxReviewResult {
  path: string;
  written: string[];
  run: string | null;
}

/** Approval moves the note into its type's folder (or merges it into an existing person/project note). */
export type InboxApproveResult = InboxReviewResult;
/** Rejection archives the note under archive/inbox/; nothing is deleted. */
export type InboxRejectResult = InboxReviewResult;

export interface SidecarSettings {
  quiet_seconds: number;
  auto_fixes: { footer: boolean; cross_refs: boolean };
  models: { embedding: string | null; generation: string | null };
}

/** What the plugin sends on every editor change: all three, always. */
export type EditorStateParams = Required<MethodParams["editor.state"]>;

/** Every method the plugin calls, with its result. Params come from the sidecar's own models
 * (protocol-params.generated.ts, written by scripts/gen_protocol.py). */
export interface Methods {
  status: StatusResult;
  lint: LintResult;
  fix: FixResult;
  "note.findings": { path: string; findings: Finding[] };
  "note.info": NoteInfo;
  "note.backlinks": { path: string; backlinks: Backlink[] };
  "graph.neighbourhood": Neighbourhood;
  "link.repair_candidates": { target: string; candidates: RepairCandidate[] };
  "link.repair": FixResult;
  undo: { restored: string[]; run: string | null };
  "editor.state": { ok: true };
  rename: { written: string[]; refs_updated: number };
  search: SearchResult;
  dedup_suggest: { results: { path: string; similarity: number; strong: boolean }[] };
  related: { results: { path: string; similarity: number }[] };
  extract: ExtractResult;
  consolidate: ConsolidateResult;
  "extract.start": JobInfo;
  "consolidate.start": JobInfo;
  "reindex.start": JobInfo;
  "job.get": JobInfo;
  "job.cancel": JobInfo;
  "job.list": { jobs: JobInfo[] };
  "inbox.list": InboxListResult;
  "inbox.approve": InboxApproveResult;
  "inbox.reject": InboxRejectResult;
  core: { files: { path: string; title: string }[]; chars: number };
  "settings.get": SidecarSettings;
  "settings.set": SidecarSettings;
}

export type MethodName = keyof Methods & keyof MethodParams;
export type ParamsOf<M extends MethodName> = MethodParams[M];
export type ResultOf<M extends MethodName> = Methods[M];

/** Notifications pushed by the sidecar (no `id`). */
export interface Notifications {
  "findings.changed": { paths: string[]; counts: Record<string, number>; total: number };
  /** `phase`: scan, index, embed, consolidate, or a job's kind. */
  progress: { phase: string; done: number; total: number };
  wrote: { paths: string[]; reason: string };
  "job.progress": { id: string; kind: string; done: number; total: number; message: string };
  "job.done": { id: string; kind: string; state: "done" | "failed" | "cancelled"; result?: unknown; error?: string };
}

/** A long piece of work in the sidecar (docs/PROTOCOL.md, "Jobs"). */
export interface JobInfo {
  id: string;
  kind: string;
  state: "running" | "done" | "failed" | "cancelled";
  done: number;
  total: number;
  message: string;
  cancellable: boolean;
  seconds: number;
  result?: unknown;
  error?: string;
}

export interface ApplyEditParams {
  path: string;
  old_hash: string;
  new_text: string;
}

export interface ApplyEditResult {
  applied: boolean;
  reason?: string;
}

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
