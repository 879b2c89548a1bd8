/**
 * What each palette command does, written against a small UI interface instead of Obsidian so it
 * can be tested (and reused) without the app: ask the sidecar, preview, apply on confirmation,
 * and always end with a readable notice rather than a thrown error.
 */
import { RpcError, messageOf } from "./client";
import { ErrorCode, type ExtractItem, type FixResult, type LintResult } from "./protocol";
import { JobCancelled, runJob, type JobClient, type JobDisplay } from "./jobs";
import type { ConsolidateResult, ExtractResult, ParamsOf } from "./protocol";
import { MEMORY_TYPES } from "./categories";
import { basename, type Rpc } from "./side-view-model";

export interface PreviewRow {
  primary: string;
  secondary: string;
  badge?: string;
}

export interface PickRow {
  path: string;
  title: string;
  detail: string;
}

/** A memory type the person can approve an inbox note as. */
export interface TypeChoice {
  type: string;
  detail: string;
}

/** What the commands need from the app (Obsidian: Notice, Modals, openLinkText). */
export interface PalinodeUI {
  notice(message: string): void;
  /** Shows a unified diff; resolves true when the person chooses to apply it. */
  confirmDiff(title: string, diff: string, applyLabel: string): Promise<boolean>;
  /** Shows what would happen, row by row; resolves true when the person chooses to apply it. */
  confirmRows(title: string, rows: PreviewRow[], applyLabel: string, note?: string): Promise<boolean>;
  /** Lets the person pick one note; resolves with its path, or null when dismissed. */
  pickNote(title: string, rows: PickRow[], emptyText: string): Promise<string | null>;
  /** Lets the person pick a memory type; resolves with it, or null when dismissed. */
  pickType(title: string, choices: TypeChoice[]): Promise<string | null>;
  /**
   * Lets the person say who or what a memory is about: one of `rows` (resolves with its path) or a
   * new name they type (resolves with the name); null when dismissed. `kind`: "person" or "project".
   */
  pickAbout(title: string, rows: PickRow[], kind: string): Promise<string | null>;
  openPath(path: string): void;
  /** Shows a running job's progress, with Cancel when `cancel` is given (Obsidian: a lasting notice). */
  jobDisplay?(cancel: (() => void) | null): JobDisplay;
}

/**
 * The journaled run of the person's last write through these commands, so "Undo the last fix"
 * reverts that and not the upkeep (footers, cross_refs) the sidecar wrote a moment after it; null
 * when the last write did not say its run (then undo takes the newest run).
 */
let lastRun: string | null = null;

/** Remember the run a write answered with (null: unknown, undo falls back to the newest run). */
function wrote(run: string | null | undefined): void {
  lastRun = run ?? null;
}

/** One line for the person about a failure; never a stack trace. */
export function describeError(err: unknown, doing?: string): string {
  if (err instanceof RpcError) {
    if (err.code === ErrorCode.NOT_CONNECTED || err.code === ErrorCode.TIMEOUT || err.code === ErrorCode.CONNECTION_CLOSED) {
      return err.message;
    }
    if (err.code === ErrorCode.CONFLICT) return `Palinode: the note changed while ${doing ?? "working"}; try again.`;
    if (err.code === ErrorCode.BUSY) return `Palinode is busy (${err.message}); try again in a moment.`;
    return `Palinode: ${doing ? `${doing} failed: ` : ""}${err.message}`;
  }
  return `Palinode: ${doing ? `${doing} failed: ` : ""}${messageOf(err)}`;
}

async function guarded<T>(ui: PalinodeUI, doing: string, work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof JobCancelled) {
      ui.notice(`Palinode: ${err.message}; nothing was written.`);
      return null;
    }
    ui.notice(describeError(err, doing));
    return null;
  }
}

/** "broken_link 3, wiki_drift 9". */
export function countsText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
}

/** What a write did, in one line. */
export function writtenText(r: Pick<FixResult, "written" | "skipped">): string {
  const parts = [r.written.length === 1 ? `wrote ${r.written[0]}` : `wrote ${r.written.length} files`];
  if (r.skipped?.length) parts.push(`skipped ${r.skipped.map((s) => `${s.path} (${s.reason})`).join("; ")}`);
  return `Palinode: ${parts.join(", ")}. "Undo the last fix" restores it.`;
}

/** Lint the whole vault and report the counts. */
export function lintVault(rpc: Rpc, ui: PalinodeUI): Promise<LintResult | null> {
  return guarded(ui, "lint", async () => {
    const r = await rpc("lint", {});
    const n = r.findings.length;
    ui.notice(
      n === 0
        ? `Palinode: ${r.total_files} files, no findings.`
        : `Palinode: ${n} finding${n === 1 ? "" : "s"} in ${r.total_files} files (${countsText(r.counts)}).`,
    );
    return r;
  });
}

/** Fix one note: preview the diff, then apply if the person agrees. Returns the paths written. */
export function fixNote(rpc: Rpc, ui: PalinodeUI, path: string, preview = true): Promise<string[] | null> {
  return guarded(ui, `fixing ${path}`, async () => {
    if (preview) {
      const dry = await rpc("fix", { path, dry_run: true });
      if (!dry.diff.trim()) {
        const why = dry.skipped?.length ? ` (${dry.skipped.map((s) => s.reason).join("; ")})` : "";
        ui.notice(`Palinode: nothing to fix in ${path}${why}.`);
        return [];
      }
      if (!(await ui.confirmDiff(`Fix ${path}`, dry.diff, "Apply fix"))) return [];
    }
    const r = await rpc("fix", { path });
    if (r.written.length) wrote(r.run);
    ui.notice(r.written.length ? writtenText(r) : `Palinode: nothing to fix in ${path}.`);
    return r.written;
  });
}

/**
 * Repair a broken link: when `newTarget` is not given, let the person pick one of the sidecar's
 * candidates; then preview the change and apply it.
 */
export function repairLink(rpc: Rpc, ui: PalinodeUI, path: string, target: string, newTarget?: string): Promise<string[] | null> {
  return guarded(ui, `repairing [[${target}]]`, async () => {
    let chosen = newTarget ?? null;
    if (!chosen) {
      const r = await rpc("link.repair_candidates", { path, target });
      chosen = await ui.pickNote(
        `Repair [[${target}]] — link to…`,
        r.candidates.map((c) => ({ path: c.path, title: basename(c.path), detail: `${Math.round(c.score * 100)}% · ${c.why}` })),
        `No note looks like "${target}".`,
      );
      if (!chosen) return [];
    }
    const dry = await rpc("link.repair", { path, target, new_target: chosen, dry_run: true });
    if (!dry.diff.trim()) {
      ui.notice(`Palinode: [[${target}]] needs no change.`);
      return [];
    }
    if (!(await ui.confirmDiff(`Repair [[${target}]] → ${basename(chosen)}`, dry.diff, "Repair link"))) return [];
    const r = await rpc("link.repair", { path, target, new_target: chosen });
    if (r.written.length) wrote(r.run);
    ui.notice(writtenText(r));
    return r.written;
  });
}

/** Likely duplicates of a note; picking one opens it. */
export function findDuplicates(rpc: Rpc, ui: PalinodeUI, path: string): Promise<string | null> {
  return guarded(ui, "finding duplicates", async () => {
    const r = await rpc("dedup_suggest", { path });
    const rows = r.results
      .filter((x) => x.path !== path)
      .map((x) => ({
        path: x.path,
        title: basename(x.path),
        detail: `${Math.round(x.similarity * 100)}% similar${x.strong ? " · likely duplicate" : ""}`,
      }));
    const picked = await ui.pickNote(`Likely duplicates of ${basename(path)}`, rows, "No likely duplicates.");
    if (picked) ui.openPath(picked);
    return picked;
  });
}

/** Notes related by meaning; picking one opens it. */
export function showRelated(rpc: Rpc, ui: PalinodeUI, path: string): Promise<string | null> {
  return guarded(ui, "finding related notes", async () => {
    const r = await rpc("related", { path });
    const rows = r.results
      .filter((x) => x.path !== path)
      .map((x) => ({ path: x.path, title: basename(x.path), detail: `${Math.round(x.similarity * 100)}% similar` }));
    const picked = await ui.pickNote(`Related to ${basename(path)}`, rows, "Nothing related found.");
    if (picked) ui.openPath(picked);
    return picked;
  });
}

function itemRow(i: ExtractItem): PreviewRow {
  // SKIP and WITHHELD lines name no file, type or confidence
  const badge = [i.type, i.confidence === null ? null : `${Math.round(i.confidence * 100)}%`].filter((x) => x !== null);
  return { primary: i.path ? `${i.op} ${i.path}` : i.op, secondary: i.reason, badge: badge.join(" · ") || undefined };
}

/**
 * Runs long work as a sidecar job when a job client is given (progress and cancel shown, no call
 * timeout), else as one call (older sidecars, tests of the flow).
 */
function longCall<T>(
  rpc: Rpc,
  ui: PalinodeUI,
  jobs: JobClient | undefined,
  method: "extract" | "consolidate",
  params: ParamsOf<"extract"> | ParamsOf<"consolidate">,
): Promise<T> {
  if (!jobs) return rpc(method, params as ParamsOf<"extract">) as Promise<T>;
  const display = ui.jobDisplay ? (cancel: (() => void) | null) => ui.jobDisplay!(cancel) : undefined;
  return runJob<T>(jobs, `${method}.start`, params, display);
}

/** Extract memories from text: preview what would be filed, then file it. */
export function extractMemories(rpc: Rpc, ui: PalinodeUI, text: string, source?: string, jobs?: JobClient): Promise<string[] | null> {
  return guarded(ui, "extracting memories", async () => {
    if (!text.trim()) {
      ui.notice("Palinode: nothing to extract: select some text or open a note with content.");
      return [];
    }
    const dry = await longCall<ExtractResult>(rpc, ui, jobs, "extract", { text, source, dry_run: true });
    const secrets = dry.withheld_secrets ? `${dry.withheld_secrets} secret(s) withheld.` : undefined;
    if (!dry.items.length) {
      ui.notice(`Palinode: nothing worth filing found.${secrets ? ` ${secrets}` : ""}`);
      return [];
    }
    if (!(await ui.confirmRows("Memories to file", dry.items.map(itemRow), "File memories", secrets))) return [];
    const r = await longCall<ExtractResult>(rpc, ui, jobs, "extract", { text, source, dry_run: false });
    wrote(null);
    const paths = r.items.map((i) => i.path).filter((p): p is string => p !== null);
    ui.notice(`Palinode: filed ${paths.length} memor${paths.length === 1 ? "y" : "ies"}.`);
    return paths;
  });
}

/** Consolidation: dry run first, show the operations, then run it for real. */
export function runConsolidation(rpc: Rpc, ui: PalinodeUI, jobs?: JobClient): Promise<string[] | null> {
  return guarded(ui, "consolidation", async () => {
    const dry = await longCall<ConsolidateResult>(rpc, ui, jobs, "consolidate", { dry_run: true });
    if (!dry.operations.length) {
      ui.notice("Palinode: nothing to consolidate.");
      return [];
    }
    const rows = dry.operations.map((o) => ({ primary: o.path ? `${o.op} ${o.path}` : o.op, secondary: o.reason }));
    if (!(await ui.confirmRows("Consolidation (dry run)", rows, "Run consolidation"))) return [];
    const r = await longCall<ConsolidateResult>(rpc, ui, jobs, "consolidate", { dry_run: false });
    wrote(null);
    ui.notice(`Palinode: consolidation wrote ${r.written.length} file(s).`);
    return r.written;
  });
}

/**
 * Undo the person's last write through these commands (with the sidecar's upkeep of the same
 * files after it), or, when that is not known, the sidecar's newest run of writes.
 */
export function undoLastFix(rpc: Rpc, ui: PalinodeUI): Promise<string[] | null> {
  return guarded(ui, "undo", async () => {
    const run = lastRun;
    lastRun = null; // once undone (or refused), the next undo takes the newest run
    const r = await rpc("undo", run ? { run } : {});
    ui.notice(
      r.restored.length ? `Palinode: restored ${r.restored.join(", ")}.` : "Palinode: nothing to undo.",
    );
    return r.restored;
  });
}

/** The folder where memories the manager is unsure of wait for the person's review. */
export const INBOX_FOLDER = "inbox";

/** True for a note directly in inbox/: the only notes the sidecar approves or rejects. */
export function isInboxNote(path: string): boolean {
  const prefix = `${INBOX_FOLDER}/`;
  return path.startsWith(prefix) && path.endsWith(".md") && !path.slice(prefix.length).includes("/");
}

function notInInbox(ui: PalinodeUI, path: string, verb: string): null {
  ui.notice(`Palinode: ${path} is not in ${INBOX_FOLDER}/; only notes waiting for review in ${INBOX_FOLDER}/ can be ${verb}.`);
  return null;
}

/**
 * Approve an inbox note: the sidecar moves it into its type's folder and ends its review (or merges
 * it into the person's or project's existing note). With `asType` it is first re-written as that
 * memory type (the person's correction of the type it waited as). Says where it went and opens it
 * there. Returns the note's new path, or null when refused or failed.
 */
export function approveInboxNote(
  rpc: Rpc,
  ui: PalinodeUI,
  path: string,
  asType?: string,
  supersedes: string[] = [],
  keepActive = false,
  about?: string,
): Promise<string | null> {
  if (!isInboxNote(path)) return Promise.resolve(notInInbox(ui, path, "approved"));
  return guarded(ui, `approving ${path}`, async () => {
    const r = await rpc("inbox.approve", {
      path,
      ...(asType ? { as_type: asType } : {}),
      ...(supersedes.length ? { supersedes } : {}),
      ...(keepActive ? { keep_active: true } : {}),
      ...(about ? { about } : {}),
    });
    wrote(r.run);
    const merged = r.written.some((p) => p.startsWith(`archive/${INBOX_FOLDER}/`));
    const done =
      (asType ? `approved as ${asType}` : "approved") +
      (about ? ` as about ${about}` : "") +
      (supersedes.length ? `, superseding ${supersedes.join(", ")}` : "") +
      (keepActive ? ", keeping the decisions it named active" : "");
    ui.notice(
      merged && about
        ? `Palinode: ${done}: filed in ${r.path} (the inbox note is archived). "Undo the last fix" reverts it.`
        : merged
          ? `Palinode: ${done}: merged into ${r.path} (the inbox note is archived). "Undo the last fix" reverts it.`
          : `Palinode: ${done}: moved to ${r.path}. "Undo the last fix" reverts it.`,
    );
    ui.openPath(r.path);
    return r.path;
  });
}

/** The types an inbox note waiting as `currentType` can be approved as instead (all when unknown). */
export function otherTypes(currentType?: string): TypeChoice[] {
  return MEMORY_TYPES.filter((c) => c.type !== currentType).map((c) => ({
    type: c.type,
    detail: c.kind === "person" || c.kind === "project" ? `${c.folder}/, or merged into the ${c.kind}'s note` : `${c.folder}/`,
  }));
}

/**
 * "Approve as…": the person picks the memory type the inbox note really is, and it is approved as
 * that type; as a person or project memory, once they have also said whom or what it is about
 * (with `aboutRows`). Returns the note's new path, or null when dismissed, refused or failed.
 */
export async function approveInboxNoteAs(
  rpc: Rpc,
  ui: PalinodeUI,
  path: string,
  currentType?: string,
  aboutRows?: (kind: string) => PickRow[],
): Promise<string | null> {
  if (!isInboxNote(path)) return notInInbox(ui, path, "approved");
  const picked = await ui.pickType(`Approve ${basename(path)} as…`, otherTypes(currentType));
  if (!picked) return null;
  const kind = MEMORY_TYPES.find((c) => c.type === picked)?.kind;
  if (aboutRows && (kind === "person" || kind === "project")) {
    // a person or project memory is about someone: the note's title is no one's name
    const about = await ui.pickAbout(`${basename(path)} is about ${kind === "project" ? "what project" : "whom"}?`, aboutRows(kind), kind);
    return about?.trim() ? approveInboxNote(rpc, ui, path, picked, [], false, about.trim()) : null;
  }
  return approveInboxNote(rpc, ui, path, picked);
}

/** The active decisions (notes directly in decisions/ with `status: active`) as rows to pick from. */
export function activeDecisionRows(files: { path: string; basename: string }[], statusOf: (path: string) => unknown): PickRow[] {
  return files
    .filter((f) => /^decisions\/[^/]+\.md$/.test(f.path) && statusOf(f.path) === "active")
    .sort((a, b) => a.path.localeCompare(b.path))
    .map((f) => ({ path: f.path, title: f.basename, detail: f.path }));
}

/**
 * "Approve as a decision replacing…": the person picks the active decision this inbox note
 * replaces; it is approved as a Decision and that one is retired in the same run (the sidecar
 * checks it is an active decision). Returns the note's new path, or null when dismissed or failed.
 */
export async function approveInboxNoteSuperseding(rpc: Rpc, ui: PalinodeUI, path: string, decisions: PickRow[]): Promise<string | null> {
  if (!isInboxNote(path)) return notInInbox(ui, path, "approved");
  const picked = await ui.pickNote(`Approve ${basename(path)} as a decision replacing…`, decisions, "No active decision in decisions/ to replace.");
  return picked ? approveInboxNote(rpc, ui, path, "Decision", [picked]) : null;
}

/**
 * The frontmatter list `review_may_supersede` as decision notes (`decisions/x.md`), anything else
 * in it left out, as the sidecar does (a hand edit or a hostile note asks nothing about it).
 */
export function mayReplaceOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((x): x is string => typeof x === "string" && /^decisions\/[^/\\]+\.md$/.test(x) && !x.includes("..")) : [];
}

/**
 * Approve a decision that may replace the active decisions `mayReplace` or add to them (its
 * `review_may_supersede`: the sidecar cannot tell which): the person says which, and it is approved
 * retiring the one it replaces, or keeping them all active. Returns the note's new path, or null
 * when dismissed, refused or failed.
 */
export async function approveInboxNoteMayReplace(rpc: Rpc, ui: PalinodeUI, path: string, mayReplace: string[]): Promise<string | null> {
  if (!isInboxNote(path)) return notInInbox(ui, path, "approved");
  const KEEP = "\u0000keep"; // no vault path can be this: the "does not replace it" row
  const rows: PickRow[] = [
    ...mayReplace.map((p) => ({ path: p, title: `It replaces ${basename(p)}`, detail: `${p} is retired (status: archived)` })),
    // an amendment, or a decision on another subject: nothing is retired
    { path: KEEP, title: mayReplace.length > 1 ? "It replaces none of them" : "It does not replace it", detail: `${mayReplace.join(", ")} stays active` },
  ];
  const picked = await ui.pickNote(`Does ${basename(path)} replace a decision?`, rows, "No decision to ask about.");
  if (!picked) return null;
  return picked === KEEP ? approveInboxNote(rpc, ui, path, undefined, [], true) : approveInboxNote(rpc, ui, path, undefined, [picked]);
}

/** The people's or projects' notes (directly in people/ or projects/) as rows to say a memory is about. */
export function entityRows(files: { path: string; basename: string }[], kind: string, nameOf: (path: string) => unknown): PickRow[] {
  const folder = kind === "project" ? "projects" : "people";
  return files
    .filter((f) => f.path.startsWith(`${folder}/`) && f.path.endsWith(".md") && !f.path.slice(folder.length + 1).includes("/"))
    .map((f) => {
      const name = nameOf(f.path);
      return { path: f.path, title: typeof name === "string" && name.trim() ? name.trim() : f.basename, detail: f.path };
    })
    .sort((a, b) => a.title.localeCompare(b.title));
}

/**
 * "Approve, saying who or what it is about…": for a person or project memory that names nobody the
 * vault knows (its `review_about` is empty), the person picks the person's or project's note, or
 * types a new name; the sidecar merges it into that note or files a new one of that name.
 * Returns where it went, or null when dismissed, refused or failed.
 */
export async function approveInboxNoteAbout(rpc: Rpc, ui: PalinodeUI, path: string, rows: PickRow[], kind: string): Promise<string | null> {
  if (!isInboxNote(path)) return notInInbox(ui, path, "approved");
  const who = kind === "project" ? "what project" : "whom";
  const picked = await ui.pickAbout(`${basename(path)} is about ${who}?`, rows, kind);
  return picked?.trim() ? approveInboxNote(rpc, ui, path, undefined, [], false, picked.trim()) : null;
}

/**
 * Reject an inbox note: the sidecar archives it under archive/inbox/ (never deletes it).
 * Returns the archived path, or null when refused or failed.
 */
export function rejectInboxNote(rpc: Rpc, ui: PalinodeUI, path: string): Promise<string | null> {
  if (!isInboxNote(path)) return Promise.resolve(notInInbox(ui, path, "rejected"));
  return guarded(ui, `rejecting ${path}`, async () => {
    const r = await rpc("inbox.reject", { path });
    wrote(r.run);
    ui.notice(`Palinode: rejected: archived to ${r.path}. "Undo the last fix" reverts it.`);
    return r.path;
  });
}

/** Rows for the search modal. */
export function searchRows(r: { results: { path: string; score: number; title: string; snippet: string }[] }): PickRow[] {
  return r.results.map((x) => ({
    path: x.path,
    title: x.title || basename(x.path),
    detail: x.snippet.replace(/\s+/g, " ").trim(),
  }));
}

/** True when an error means "the index or model is not there" (show it quietly). */
export function isNotAvailable(err: unknown): boolean {
  return err instanceof RpcError && err.code === ErrorCode.NOT_AVAILABLE;
}
