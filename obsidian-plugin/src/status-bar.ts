/** What the status bar item shows: connection, findings in the vault, progress of long work. */
import type { ConnectionState } from "./client";
import type { Notifications } from "./protocol";
import type { SidecarProcessState } from "./sidecar-process";

export type Progress = Notifications["progress"];

export interface StatusInput {
  state: ConnectionState;
  message: string;
  findingsTotal: number | null;
  progress: Progress | null;
  /** What the plugin's own sidecar process is doing (absent when the plugin does not manage it). */
  sidecar?: { state: SidecarProcessState; message: string } | null;
}

export interface StatusBarModel {
  text: string;
  /** Tooltip: the full connection message. */
  title: string;
  /** CSS modifier: `connected`, `offline`, `working`. */
  tone: "connected" | "offline" | "working";
}

const PHASE_WORDS: Record<string, string> = {
  scan: "scanning",
  index: "indexing",
  embed: "embedding",
  consolidate: "consolidating",
  extract: "extracting",
  reindex: "re-indexing",
};

/** "indexing 40/120 (33%)". */
export function progressText(p: Progress): string {
  const word = PHASE_WORDS[p.phase] ?? p.phase;
  if (!p.total) return `${word}…`;
  const pct = Math.floor((100 * Math.min(p.done, p.total)) / p.total);
  return `${word} ${p.done}/${p.total} (${pct}%)`;
}

/** The status bar text for the current state. */
export function statusBarModel(input: StatusInput): StatusBarModel {
  if (input.state !== "connected") {
    const proc = input.sidecar?.state;
    if (proc === "searching" || proc === "starting" || proc === "restarting" || proc === "running" || proc === "adopted") {
      return { text: "Palinode: starting…", title: input.sidecar!.message, tone: "working" };
    }
    if (proc === "failed") return { text: "Palinode: sidecar failed", title: input.sidecar!.message, tone: "offline" };
    const text =
      input.state === "connecting"
        ? "Palinode: connecting…"
        : input.state === "refused"
          ? "Palinode: refused"
          : "Palinode: offline";
    return { text, title: input.message, tone: "offline" };
  }
  const parts = ["Palinode"];
  if (input.findingsTotal !== null) {
    parts.push(input.findingsTotal === 1 ? "1 finding" : `${input.findingsTotal} findings`);
  }
  if (input.progress && input.progress.done < input.progress.total) {
    parts.push(progressText(input.progress));
    return { text: parts.join(" · "), title: input.message, tone: "working" };
  }
  return { text: parts.join(" · "), title: input.message, tone: "connected" };
}

/** Sum of the per-check finding counts. */
export function totalOf(counts: Record<string, number> | null | undefined): number {
  let n = 0;
  for (const v of Object.values(counts ?? {})) n += Number(v) || 0;
  return n;
}
