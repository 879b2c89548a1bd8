import { describe, expect, it } from "vitest";
import { CATEGORIES, categoryOf, categoryOfRef, colourOf, OTHER_COLOUR } from "../../src/categories";

describe("categories", () => {
  it("has the vault's seven categories", () => {
    expect(CATEGORIES.map((c) => c.folder)).toEqual(["people", "projects", "decisions", "insights", "research", "daily", "inbox"]);
  });
  it("finds a category by kind, folder or path", () => {
    expect(categoryOf("person")?.folder).toBe("people");
    expect(categoryOf("Projects")?.kind).toBe("project");
    expect(categoryOf(null, "research/2026-01-01-x.md")?.label).toBe("Research");
    expect(categoryOf("unknown", "notes/x.md")).toBeNull();
    expect(categoryOfRef("decision/use-sqlite")?.label).toBe("Decisions");
    expect(colourOf(null, "top.md")).toBe(OTHER_COLOUR);
  });
});
