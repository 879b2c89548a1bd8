import { describe, expect, it } from "vitest";
import { linkAtCursor, repairTargetFor } from "../../src/link-at-cursor";

describe("linkAtCursor", () => {
  const line = "Met [[Bob Smiht#Role|Bob]] and [[alice-smith]] about [plan](projects/Check%20out.md#goals).";
  it("finds the wikilink around the cursor, target without alias or heading", () => {
    expect(linkAtCursor(line, 8)).toMatchObject({ kind: "wiki", target: "Bob Smiht", inner: "Bob Smiht#Role|Bob", from: 4 });
    expect(linkAtCursor(line, 4)?.target).toBe("Bob Smiht"); // on the first bracket
    expect(linkAtCursor(line, 36)?.target).toBe("alice-smith");
  });
  it("finds markdown links and decodes them", () => {
    expect(linkAtCursor(line, 60)).toMatchObject({ kind: "markdown", target: "projects/Check out.md" });
  });
  it("returns null outside links", () => {
    expect(linkAtCursor(line, 1)).toBeNull();
    expect(linkAtCursor("no links", 3)).toBeNull();
  });
  it("handles embeds", () => {
    expect(linkAtCursor("![[diagram.png]]", 5)?.target).toBe("diagram.png");
  });
});

describe("repairTargetFor", () => {
  const link = linkAtCursor("See [[Bob Smiht|Bob]]", 8)!;
  it("prefers the finding's own target on the same line", () => {
    expect(repairTargetFor(link, [{ line: 3, target: "Bob Smiht", check: "broken_link" }], 3)).toBe("Bob Smiht");
  });
  it("falls back to the parsed target", () => {
    expect(repairTargetFor(link, [{ line: 9, target: "Other", check: "broken_link" }], 3)).toBe("Bob Smiht");
  });
});
