/** Draws a unified diff with added and removed lines coloured. */
import { parseUnifiedDiff } from "../diff";
import { el } from "./element";

/** Appends the diff preview to `parent`; returns the number of changed lines. */
export function renderDiff(parent: HTMLElement, diff: string): number {
  const summary = parseUnifiedDiff(diff);
  el(parent, "p", {
    cls: "palinode-muted palinode-diff-summary",
    text: `${summary.files.length || 1} file(s): +${summary.added} −${summary.removed}`,
  });
  const pre = el(parent, "pre", { cls: "palinode-diff" });
  for (const line of summary.lines) el(pre, "div", { cls: `palinode-diff-${line.type}`, text: line.text || " " });
  return summary.added + summary.removed;
}
