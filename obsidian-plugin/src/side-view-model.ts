/**
 * The side view "Palinode" for one note: what to ask the sidecar (`loadSideView`) and how its
 * answers become what the view shows (`sideViewModel`). The vault's inbox (notes waiting for
 * review) loads with it. No DOM and no Obsidian here.
 */
import { categoryOf, categoryOfRef, CATEGORIES, OTHER_COLOUR } from "./categories";
import { RpcError } from "./client";
import {
  ErrorCode,
  LINK_CHECKS,
  type Backlink,
  type Finding,
  type InboxItem,
  type MethodName,
  type NoteInfo,
  type ParamsOf,
  type RepairCandidate,
  type ResultOf,
  type Severity,
} from "./protocol";

/** A function that calls a sidecar method (the client's `call`, or a recorded answer). */
export type Rpc = <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;

/** One part of the view's data: the answer, or why there is none. */
export type Part<T> = { ok: true; value: T } | { ok: false; unavailable: boolean; message: string };

/** Everything the side view needs about one note, as the sidecar answered it. */
export interface SideViewData {
  path: string;
  info: Part<NoteInfo>;
  findings: Part<Finding[]>;
  backlinks: Part<Backlink[]>;
  related: Part<{ path: string; similarity: number }[]>;
  duplicates: Part<{ path: string; similarity: number; strong: boolean }[]>;
  /** Repair candidates by finding target, for link findings that `fix` cannot repair alone. */
  candidates: Record<string, RepairCandidate[]>;
  /** The vault's inbox notes waiting for review (not about this note; shown with it). */
  inbox: Part<InboxItem[]>;
}

/** How many findings get repair candidates fetched at once (the rest on demand). */
const MAX_CANDIDATE_LOOKUPS = 8;

async function part<T>(promise: Promise<T>): Promise<Part<T>> {
  try {
    return { ok: true, value: await promise };
  } catch (err) {
    const code = err instanceof RpcError ? err.code : ErrorCode.INTERNAL;
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, unavailable: code === ErrorCode.NOT_AVAILABLE, message };
  }
}

/** True for a finding whose link could be repaired by choosing a candidate note. */
export function wantsCandidates(f: Finding): boolean {
  return !f.fixable && !!f.target && LINK_CHECKS.includes(f.check) && f.check !== "wiki_drift";
}

/** Asks the sidecar for the inbox notes waiting for review (oldest first); never throws. */
export function loadInbox(rpc: Rpc): Promise<Part<InboxItem[]>> {
  return part(rpc("inbox.list", {}).then((r) => r.items));
}

/** Asks the sidecar everything the side view shows for `path`, in parallel; never throws. */
export async function loadSideView(rpc: Rpc, path: string): Promise<SideViewData> {
  const [info, findings, backlinks, related, duplicates, inbox] = await Promise.all([
    part(rpc("note.info", { path })),
    part(rpc("note.findings", { path }).then((r) => r.findings)),
    part(rpc("note.backlinks", { path }).then((r) => r.backlinks)),
    part(rpc("related", { path }).then((r) => r.results)),
    part(rpc("dedup_suggest", { path }).then((r) => r.results)),
    loadInbox(rpc),
  ]);
  const candidates: Record<string, RepairCandidate[]> = {};
  if (findings.ok) {
    const targets = [...new Set(findings.value.filter(wantsCandidates).map((f) => f.target!))].slice(
      0,
      MAX_CANDIDATE_LOOKUPS,
    );
    await Promise.all(
      targets.map(async (target) => {
        const r = await part(rpc("link.repair_candidates", { path, target }));
        if (r.ok) candidates[target] = r.value.candidates;
      }),
    );
  }
  return { path, info, findings, backlinks, related, duplicates, candidates, inbox };
}

// ---- view model ---------------------------------------------------------------------------

export interface CandidateRow {
  path: string;
  label: string;
  score: string;
  why: string;
}

export interface FindingRow {
  key: string;
  severity: Severity;
  check: string;
  checkLabel: string;
  where: string;
  message: string;
  target?: string;
  fixable: boolean;
  candidates: CandidateRow[];
  finding: Finding;
}

export interface NoteRow {
  path: string;
  title: string;
  colour: string;
  categoryLabel: string;
  detail: string;
  strong?: boolean;
}

export interface NoteGroup {
  key: string;
  label: string;
  colour: string;
  items: NoteRow[];
}

export interface EntityRow {
  ref: string;
  label: string;
  colour: string;
  categoryLabel: string;
  /** What to hand Obsidian's `openLinkText` (the slug: Obsidian resolves it like a link). */
  linktext: string;
  inBody: boolean;
}

export interface InboxRow {
  path: string;
  title: string;
  /** The memory's type as the note says it (`Decision`, `Insight`, …). */
  type: string;
  colour: string;
  /** "55%", or "" when the note gives no confidence. */
  confidence: string;
  /** "2026-11-26", or "" when the note has no date. */
  since: string;
  /** A person or project memory naming nobody the vault knows: approving it asks whom it is about. */
  needsAbout: boolean;
  /** A decision that may replace these active decisions or add to them: approving it asks which. */
  mayReplace: string[];
}

export type Listing<T> =
  | { state: "ok"; items: T[]; empty: string }
  | { state: "unavailable"; message: string }
  | { state: "error"; message: string };

export interface SideViewModel {
  path: string;
  title: string;
  category: { label: string; colour: string } | null;
  findings: Listing<FindingRow>;
  backlinks: Listing<NoteGroup>;
  related: Listing<NoteRow>;
  duplicates: Listing<NoteRow>;
  entities: Listing<EntityRow>;
  inbox: Listing<InboxRow>;
}

const CHECK_LABELS: Record<string, string> = {
  broken_link: "Broken link",
  broken_anchor: "Broken anchor",
  unresolvable_label: "Unresolvable label",
  wiki_drift: "Drift",
};

/** "broken_link" → "Broken link". */
export function checkLabel(check: string): string {
  if (CHECK_LABELS[check]) return CHECK_LABELS[check];
  const words = check.replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The note's name from its path: `people/alice-smith.md` → `alice-smith`. */
export function basename(path: string): string {
  const last = path.split("/").pop() ?? path;
  return last.replace(/\.md$/i, "");
}

const SEVERITY_ORDER: Record<string, number> = { error: 0, warning: 1, info: 2 };

function noteRow(path: string, title: string | null | undefined, category: string | null | undefined, detail: string): NoteRow {
  const c = categoryOf(category, path);
  return {
    path,
    title: title || basename(path),
    colour: c?.colour ?? OTHER_COLOUR,
    categoryLabel: c?.label ?? "Other",
    detail,
  };
}

function percent(x: number): string {
  return `${Math.round(Math.max(0, Math.min(1, x)) * 100)}%`;
}

function kindsText(kinds: Record<string, number>): string {
  return Object.entries(kinds ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => (n > 1 ? `${k.replace(/_/g, " ")} ×${n}` : k.replace(/_/g, " ")))
    .join(", ");
}

function failed<T>(p: { ok: false; unavailable: boolean; message: string }, what: string): Listing<T> {
  if (p.unavailable) {
    // The sidecar's own message says what is missing and how to get it; say it quietly.
    const said = p.message.trim();
    return {
      state: "unavailable",
      message: said ? said.charAt(0).toUpperCase() + said.slice(1) : `The index is not there, so no ${what} yet.`,
    };
  }
  return { state: "error", message: p.message };
}

/** The inbox section: one row per note waiting for review, in the sidecar's order (oldest first). */
export function inboxListing(inbox: Part<InboxItem[]>): Listing<InboxRow> {
  if (!inbox.ok) return failed(inbox, "inbox");
  return {
    state: "ok",
    items: inbox.value.map((item) => ({
      path: item.path,
      title: item.title || basename(item.path),
      type: item.type || "Memory",
      // a type without a folder of its own (ProjectSnapshot) takes the inbox's colour from the path
      colour: categoryOf(item.type, item.path)?.colour ?? OTHER_COLOUR,
      confidence: typeof item.confidence === "number" ? percent(item.confidence) : "",
      since: item.since ?? "",
      needsAbout: item.needs_about === true,
      mayReplace: Array.isArray(item.may_replace) ? item.may_replace : [],
    })),
    empty: "Nothing is waiting for review.",
  };
}

/** Backlinks grouped by the linking note's category, in the vault's category order, "Other" last. */
export function groupBacklinks(backlinks: Backlink[]): NoteGroup[] {
  const groups = new Map<string, NoteGroup>();
  for (const c of CATEGORIES) groups.set(c.folder, { key: c.folder, label: c.label, colour: c.colour, items: [] });
  const other: NoteGroup = { key: "other", label: "Other", colour: OTHER_COLOUR, items: [] };
  for (const b of backlinks) {
    const c = categoryOf(b.category, b.path);
    const row = noteRow(b.path, b.title, b.category, kindsText(b.kinds));
    (c ? groups.get(c.folder)! : other).items.push(row);
  }
  const out = [...groups.values(), other].filter((g) => g.items.length > 0);
  for (const g of out) g.items.sort((a, b) => a.title.localeCompare(b.title));
  return out;
}

/** Turns the sidecar's answers into what the side view shows. */
export function sideViewModel(data: SideViewData): SideViewModel {
  const info = data.info.ok ? data.info.value : null;
  const cat = categoryOf(info?.category, data.path);

  let findings: Listing<FindingRow>;
  if (data.findings.ok) {
    const rows = [...data.findings.value]
      .sort((a, b) => (SEVERITY_ORDER[a.severity] ?? 3) - (SEVERITY_ORDER[b.severity] ?? 3) || a.line - b.line || a.column - b.column)
      .map((f, i) => ({
        key: `${f.check}:${f.line}:${f.column}:${i}`,
        severity: f.severity,
        check: f.check,
        checkLabel: checkLabel(f.check),
        where: f.column ? `line ${f.line}:${f.column}` : `line ${f.line}`,
        message: f.message,
        target: f.target,
        fixable: f.fixable,
        candidates: (f.target ? (data.candidates[f.target] ?? []) : []).map((c) => ({
          path: c.path,
          label: basename(c.path),
          score: percent(c.score),
          why: c.why,
        })),
        finding: f,
      }));
    findings = { state: "ok", items: rows, empty: "No findings: this note is clean." };
  } else {
    findings = failed(data.findings, "findings");
  }

  const backlinks: Listing<NoteGroup> = data.backlinks.ok
    ? { state: "ok", items: groupBacklinks(data.backlinks.value), empty: "No other note links here yet." }
    : failed(data.backlinks, "backlinks");

  const related: Listing<NoteRow> = data.related.ok
    ? {
        state: "ok",
        items: data.related.value
          .filter((r) => r.path !== data.path)
          .map((r) => noteRow(r.path, null, null, `${percent(r.similarity)} similar`)),
        empty: "Nothing related found.",
      }
    : failed(data.related, "related notes");

  const duplicates: Listing<NoteRow> = data.duplicates.ok
    ? {
        state: "ok",
        items: data.duplicates.value
          .filter((r) => r.path !== data.path)
          .map((r) => ({
            ...noteRow(r.path, null, null, `${percent(r.similarity)} similar${r.strong ? " · likely duplicate" : ""}`),
            strong: r.strong,
          })),
        empty: "No likely duplicates.",
      }
    : failed(data.duplicates, "duplicate suggestions");

  let entities: Listing<EntityRow>;
  if (info) {
    const inBody = new Set(info.cross_refs ?? []);
    const refs = [...new Set([...(info.entities ?? []), ...(info.cross_refs ?? [])].map(String))];
    entities = {
      state: "ok",
      items: refs.map((ref) => {
        const c = categoryOfRef(ref);
        const slug = ref.includes("/") ? ref.slice(ref.indexOf("/") + 1) : ref;
        return {
          ref,
          label: slug,
          colour: c?.colour ?? OTHER_COLOUR,
          categoryLabel: c?.label ?? "Other",
          linktext: slug,
          inBody: inBody.has(ref),
        };
      }),
      empty: "No entities.",
    };
  } else {
    entities = failed(data.info as { ok: false; unavailable: boolean; message: string }, "entities");
  }

  return {
    path: data.path,
    title: info?.title || basename(data.path),
    category: cat ? { label: cat.label, colour: cat.colour } : null,
    findings,
    backlinks,
    related,
    duplicates,
    entities,
    inbox: inboxListing(data.inbox),
  };
}
