import { describe, expect, it } from "vitest";
import recording from "../fixtures/recorded-alice.json";
import { basename, checkLabel, groupBacklinks, loadSideView, sideViewModel, wantsCandidates } from "../../src/side-view-model";
import { recordedRpc, type Recording } from "../helpers/recorded";

const rec = recording as Recording;

describe("loadSideView", () => {
  it("asks for info, findings, backlinks, related, duplicates, and candidates for unfixable links", async () => {
    const calls: { method: string; params: any }[] = [];
    const data = await loadSideView(recordedRpc(rec, calls), rec.path);
    const methods = calls.map((c) => c.method).sort();
    expect(methods).toEqual(["dedup_suggest", "link.repair_candidates", "note.backlinks", "note.findings", "note.info", "related"]);
    expect(calls.find((c) => c.method === "link.repair_candidates")!.params).toEqual({ path: rec.path, target: "Bob Smiht" });
    expect(data.candidates["Bob Smiht"].map((c) => c.path)).toEqual(["people/bob-smith.md", "people/bob-smithers.md"]);
  });

  it("never throws: a missing index becomes 'unavailable', other failures 'error'", async () => {
    const broken: Recording = {
      path: rec.path,
      answers: {
        ...rec.answers,
        related: { error: { code: -32013, message: "no embedding model: run `palinode-vault models prepare`" } },
        dedup_suggest: { error: { code: -32013, message: "no embedding model" } },
        "note.backlinks": { error: { code: -32603, message: "graph failed" } },
      },
    };
    const model = sideViewModel(await loadSideView(recordedRpc(broken), rec.path));
    expect(model.related).toEqual({
      state: "unavailable",
      message: "No embedding model: run `palinode-vault models prepare`",
    });
    expect(model.duplicates.state).toBe("unavailable");
    expect(model.backlinks).toEqual({ state: "error", message: "graph failed" });
    expect(model.findings.state).toBe("ok");
  });
});

describe("sideViewModel", () => {
  it("turns the recorded answers into the view", async () => {
    const model = sideViewModel(await loadSideView(recordedRpc(rec), rec.path));
    expect(model.title).toBe("Alice Smith");
    expect(model.category).toEqual({ label: "People", colour: "#3b82c4" });

    if (model.findings.state !== "ok") throw new Error("findings");
    // errors first, then by line
    expect(model.findings.items.map((f) => [f.severity, f.checkLabel, f.where])).toEqual([
      ["error", "Broken link", "line 18:18"],
      ["warning", "Drift", "line 4:1"],
      ["warning", "Unresolvable label", "line 16:5"],
    ]);
    const broken = model.findings.items[0];
    expect(broken.fixable).toBe(false);
    expect(broken.candidates).toEqual([
      { path: "people/bob-smith.md", label: "bob-smith", score: "92%", why: "file name differs by one letter" },
      { path: "people/bob-smithers.md", label: "bob-smithers", score: "61%", why: "similar name" },
    ]);
    expect(model.findings.items[1].fixable).toBe(true);

    if (model.backlinks.state !== "ok") throw new Error("backlinks");
    expect(model.backlinks.items.map((g) => [g.label, g.items.map((i) => i.title)])).toEqual([
      ["People", ["Bob Smith"]],
      ["Projects", ["Checkout Redesign"]],
      ["Decisions", ["Decision: Drop legacy browser support"]],
      ["Insights", ["Insight: Small PRs ship faster"]],
      ["Research", ["Checkout UX study"]],
      ["Daily", ["2026-03-22"]],
    ]);
    expect(model.backlinks.items[1].items[0].detail).toBe("entity, wikilink ×2");

    if (model.related.state !== "ok" || model.duplicates.state !== "ok") throw new Error("index");
    expect(model.related.items.map((r) => [r.title, r.detail])).toEqual([
      ["bob-smith", "71% similar"],
      ["checkout-redesign", "64% similar"],
    ]); // the note itself is left out
    expect(model.duplicates.items).toMatchObject([{ path: "inbox/alice-s-notes.md", strong: true, detail: "93% similar · likely duplicate" }]);

    if (model.entities.state !== "ok") throw new Error("entities");
    expect(model.entities.items.map((e) => [e.ref, e.categoryLabel, e.inBody])).toEqual([
      ["project/checkout-redesign", "Projects", true],
      ["decision/drop-legacy-browser-support", "Decisions", false],
      ["person/bob-smith", "People", true],
    ]);
    expect(model.entities.items[0].linktext).toBe("checkout-redesign");
  });

  it("groups unknown categories under Other, last", () => {
    const groups = groupBacklinks([
      { path: "notes/x.md", title: "X", category: null, kinds: { wikilink: 1 } },
      { path: "people/a.md", title: "A", category: "person", kinds: {} },
    ]);
    expect(groups.map((g) => g.label)).toEqual(["People", "Other"]);
  });

  it("labels checks and names notes", () => {
    expect(checkLabel("broken_anchor")).toBe("Broken anchor");
    expect(checkLabel("missing_frontmatter")).toBe("Missing frontmatter");
    expect(basename("research/2026-03-02-study.md")).toBe("2026-03-02-study");
    expect(wantsCandidates({ check: "broken_link", severity: "error", path: "a", line: 1, column: 1, message: "", target: "X", fixable: false })).toBe(true);
    expect(wantsCandidates({ check: "wiki_drift", severity: "error", path: "a", line: 1, column: 1, message: "", target: "X", fixable: false })).toBe(false);
  });
});
