import { describe, expect, it } from "vitest";
import recording from "../fixtures/recorded-alice.json";
import { approveInboxNote, rejectInboxNote } from "../../src/actions";
import {
  basename,
  checkLabel,
  groupBacklinks,
  inboxListing,
  loadInbox,
  loadSideView,
  sideViewModel,
  wantsCandidates,
} from "../../src/side-view-model";
import { recordedRpc, withInbox, type Recording } from "../helpers/recorded";
import { answeringUI } from "../helpers/ui";

const rec = recording as Recording;

describe("loadSideView", () => {
  it("asks for info, findings, backlinks, related, duplicates, and candidates for unfixable links", async () => {
    const calls: { method: string; params: any }[] = [];
    const data = await loadSideView(recordedRpc(rec, calls), rec.path);
    const methods = calls.map((c) => c.method).sort();
    expect(methods).toEqual(["dedup_suggest", "inbox.list", "link.repair_candidates", "note.backlinks", "note.findings", "note.info", "related"]);
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

describe("inbox", () => {
  const item = (path: string, over: Record<string, unknown> = {}) => ({
    path,
    title: "T",
    type: "Decision",
    confidence: 0.5,
    since: "2026-11-26",
    needs_about: false,
    may_replace: [],
    ...over,
  });

  it("loads with the side view: one row per waiting note, in the sidecar's order", async () => {
    const model = sideViewModel(await loadSideView(recordedRpc(rec), rec.path));
    expect(model.inbox).toEqual({
      state: "ok",
      empty: "Nothing is waiting for review.",
      items: [
        { path: "inbox/alice-s-notes.md", title: "Alice S. notes", type: "Person", colour: "#3b82c4", confidence: "55%", since: "2026-03-20", needsAbout: false, mayReplace: [] },
        {
          path: "inbox/weekly-release-train.md",
          title: "Ship the checkout redesign weekly",
          type: "Decision",
          colour: "#c2417a",
          confidence: "50%",
          since: "2026-03-24",
          needsAbout: false,
          // a decision that may replace an active one or add to it: approving it asks which
          mayReplace: ["decisions/biweekly-release-train.md"],
        },
        // no title, no confidence, no date; a type without a folder takes the inbox's colour; a
        // project memory naming no project: approving it asks which
        { path: "inbox/checkout-snapshot.md", title: "checkout-snapshot", type: "ProjectSnapshot", colour: "#c9a227", confidence: "", since: "", needsAbout: true, mayReplace: [] },
      ],
    });
  });

  it("says nothing is waiting when the inbox is empty", () => {
    expect(inboxListing({ ok: true, value: [] })).toEqual({ state: "ok", items: [], empty: "Nothing is waiting for review." });
  });

  it("says so quietly when the sidecar cannot list it, and shows other failures as errors", async () => {
    const answers = (error: { code: number; message: string }): Recording => ({ path: rec.path, answers: { "inbox.list": { error } } });
    const unavailable = await loadInbox(recordedRpc(answers({ code: -32013, message: "inbox review is not there yet" })));
    expect(inboxListing(unavailable)).toEqual({ state: "unavailable", message: "Inbox review is not there yet" });
    const failed = await loadInbox(recordedRpc(answers({ code: -32603, message: "inbox/x.md: bad front matter" })));
    expect(inboxListing(failed)).toEqual({ state: "error", message: "inbox/x.md: bad front matter" });
    // the note's own sections still load when only the inbox fails
    const broken: Recording = { path: rec.path, answers: { ...rec.answers, "inbox.list": { error: { code: -1, message: "Palinode: inbox.list timed out" } } } };
    const model = sideViewModel(await loadSideView(recordedRpc(broken), rec.path));
    expect(model.inbox).toEqual({ state: "error", message: "Palinode: inbox.list timed out" });
    expect(model.findings.state).toBe("ok");
  });

  it("after approve or reject through the actions, the reloaded side view no longer lists the note", async () => {
    const calls: { method: string; params: unknown }[] = [];
    const rpc = withInbox(recordedRpc(rec), [item("inbox/a.md"), item("inbox/b.md", { type: "Insight" }), item("inbox/c.md")], calls);
    const ui = answeringUI(null);
    const listed = async () => {
      const m = sideViewModel(await loadSideView(rpc, rec.path));
      return m.inbox.state === "ok" ? m.inbox.items.map((r) => r.path) : m.inbox.message;
    };
    expect(await listed()).toEqual(["inbox/a.md", "inbox/b.md", "inbox/c.md"]);
    expect(await approveInboxNote(rpc, ui, "inbox/b.md")).toBe("insights/b.md");
    expect(await listed()).toEqual(["inbox/a.md", "inbox/c.md"]);
    expect(await rejectInboxNote(rpc, ui, "inbox/a.md")).toBe("archive/inbox/a.md");
    expect(await rejectInboxNote(rpc, ui, "inbox/c.md")).toBe("archive/inbox/c.md");
    expect(sideViewModel(await loadSideView(rpc, rec.path)).inbox).toMatchObject({ state: "ok", items: [] });
    expect(calls.map((c) => c.method)).toEqual([
      "inbox.list",
      "inbox.approve",
      "inbox.list",
      "inbox.reject",
      "inbox.reject",
      "inbox.list",
    ]);
  });
});
