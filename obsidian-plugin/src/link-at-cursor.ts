/** Finding the link under the cursor in one line of markdown (for "repair the link under the cursor"). */

export interface LinkAtCursor {
  /** The link target as written, without alias or heading: `Bob Smiht` in `[[Bob Smiht#Role|Bob]]`. */
  target: string;
  /** The whole inside of the link as written: `Bob Smiht#Role|Bob`. */
  inner: string;
  kind: "wiki" | "markdown";
  from: number;
  to: number;
}

const WIKI = /!?\[\[([^[\]\n]+?)\]\]/g;
const MARKDOWN = /!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

/** The wikilink or markdown link that contains column `ch` of `line`, or null. */
export function linkAtCursor(line: string, ch: number): LinkAtCursor | null {
  for (const m of line.matchAll(WIKI)) {
    const from = m.index ?? 0;
    const to = from + m[0].length;
    if (ch >= from && ch <= to) {
      const inner = m[1];
      const target = inner.split("|")[0].split("#")[0].trim();
      return { target, inner, kind: "wiki", from, to };
    }
  }
  for (const m of line.matchAll(MARKDOWN)) {
    const from = m.index ?? 0;
    const to = from + m[0].length;
    if (ch >= from && ch <= to) {
      const inner = m[1];
      let target = inner.split("#")[0];
      try {
        target = decodeURIComponent(target);
      } catch {
        // keep it as written
      }
      return { target, inner, kind: "markdown", from, to };
    }
  }
  return null;
}

/**
 * The target to repair for the link under the cursor: the target of a link finding on that line
 * (the sidecar's own spelling) when one matches the link, else the target parsed from the text.
 */
export function repairTargetFor(
  link: LinkAtCursor,
  findings: readonly { line: number; target?: string; check: string }[],
  lineNumber: number,
): string {
  for (const f of findings) {
    if (f.line !== lineNumber || !f.target) continue;
    if (f.target === link.target || link.inner.startsWith(f.target) || f.target.startsWith(link.target)) return f.target;
  }
  return link.target;
}
