/** Unified diffs from `fix`/`link.repair` turned into lines the preview can colour. */

export type DiffLineType = "file" | "hunk" | "add" | "del" | "context";

export interface DiffLine {
  type: DiffLineType;
  text: string;
}

export interface DiffSummary {
  files: string[];
  added: number;
  removed: number;
  lines: DiffLine[];
}

/** Splits a unified diff into typed lines and counts what it adds and removes. */
export function parseUnifiedDiff(diff: string): DiffSummary {
  const lines: DiffLine[] = [];
  const files: string[] = [];
  let added = 0;
  let removed = 0;
  for (const text of diff.replace(/\r\n/g, "\n").split("\n")) {
    if (text.startsWith("+++ ")) {
      const name = text.slice(4).replace(/^b\//, "").trim();
      if (name !== "/dev/null") files.push(name);
      lines.push({ type: "file", text });
    } else if (text.startsWith("--- ") || text.startsWith("diff ") || text.startsWith("index ")) {
      lines.push({ type: "file", text });
    } else if (text.startsWith("@@")) {
      lines.push({ type: "hunk", text });
    } else if (text.startsWith("+")) {
      added++;
      lines.push({ type: "add", text });
    } else if (text.startsWith("-")) {
      removed++;
      lines.push({ type: "del", text });
    } else if (text.length > 0 || lines.length > 0) {
      lines.push({ type: "context", text });
    }
  }
  while (lines.length && lines[lines.length - 1].type === "context" && lines[lines.length - 1].text === "") lines.pop();
  return { files, added, removed, lines };
}
