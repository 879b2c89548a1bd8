import { describe, expect, it } from "vitest";
import { parseUnifiedDiff } from "../../src/diff";

describe("parseUnifiedDiff", () => {
  it("types lines and counts changes", () => {
    const diff = [
      "--- a/people/alice.md",
      "+++ b/people/alice.md",
      "@@ -1,3 +1,3 @@",
      " # Alice",
      "-Works with [[Bob Smiht]].",
      "+Works with [[bob-smith|Bob Smith]].",
      "",
    ].join("\n");
    const s = parseUnifiedDiff(diff);
    expect(s.files).toEqual(["people/alice.md"]);
    expect([s.added, s.removed]).toEqual([1, 1]);
    expect(s.lines.map((l) => l.type)).toEqual(["file", "file", "hunk", "context", "del", "add"]);
  });
  it("is empty for an empty diff", () => {
    expect(parseUnifiedDiff("")).toEqual({ files: [], added: 0, removed: 0, lines: [] });
  });
});
