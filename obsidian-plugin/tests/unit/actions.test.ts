import { describe, expect, it } from "vitest";
import {
  approveInboxNote,
  approveInboxNoteAbout,
  approveInboxNoteAs,
  approveInboxNoteMayReplace,
  approveInboxNoteSuperseding,
  activeDecisionRows,
  entityRows,
  mayReplaceOf,
  countsText,
  describeError,
  extractMemories,
  findDuplicates,
  fixNote,
  isInboxNote,
  lintVault,
  rejectInboxNote,
  repairLink,
  runConsolidation,
  searchRows,
  undoLastFix,
  type PalinodeUI,
} from "../../src/actions";
import { RpcError, notRunningMessage } from "../../src/client";
import type { Rpc } from "../../src/side-view-model";

/** A scripted UI: records notices and answers confirmations and picks as told. */
function scriptedUI(answers: { confirm?: boolean; pick?: string | null; type?: string | null; about?: string | null } = {}) {
  const log: string[] = [];
  const ui: PalinodeUI = {
    notice: (m) => void log.push(`notice: ${m}`),
    confirmDiff: async (title, diff) => {
      log.push(`diff: ${title} | ${diff.split("\n").length} lines`);
      return answers.confirm ?? true;
    },
    confirmRows: async (title, rows, _apply, note) => {
      log.push(`rows: ${title} | ${rows.map((r) => r.primary).join("; ")}${note ? ` | ${note}` : ""}`);
      return answers.confirm ?? true;
    },
    pickNote: async (title, rows) => {
      log.push(`pick: ${title} | ${rows.map((r) => `${r.title} (${r.detail})`).join("; ")}`);
      return answers.pick === undefined ? (rows[0]?.path ?? null) : answers.pick;
    },
    pickType: async (title, choices) => {
      log.push(`type: ${title} | ${choices.map((c) => `${c.type} (${c.detail})`).join("; ")}`);
      return answers.type ?? null;
    },
    pickAbout: async (title, rows, kind) => {
      log.push(`about: ${title} | ${kind} | ${rows.map((r) => r.title).join("; ")}`);
      return answers.about ?? null;
    },
    openPath: (p) => void log.push(`open: ${p}`),
  };
  return { ui, log };
}

/** A scripted sidecar: method → answer function; records calls. */
function scriptedRpc(script: Record<string, (params: any) => unknown>) {
  const calls: { method: string; params: any }[] = [];
  const rpc = (async (method: string, params: any) => {
    calls.push({ method, params });
    const f = script[method];
    if (!f) throw new RpcError(-32601, `method not found: ${method}`);
    return f(params);
  }) as Rpc;
  return { rpc, calls };
}

const DIFF = "--- a/a.md\n+++ b/a.md\n@@ -1 +1 @@\n-old\n+new\n";

describe("commands", () => {
  it("lint reports counts", async () => {
    const { rpc } = scriptedRpc({ lint: () => ({ total_files: 12, findings: [{}, {}, {}], counts: { wiki_drift: 1, broken_link: 2 } }) });
    const { ui, log } = scriptedUI();
    await lintVault(rpc, ui);
    expect(log).toEqual(["notice: Palinode: 3 findings in 12 files (broken_link 2, wiki_drift 1)."]);
  });

  it("fix previews the diff, then applies", async () => {
    const { rpc, calls } = scriptedRpc({
      fix: (p) => (p.dry_run ? { written: [], unchanged: 0, skipped: [], diff: DIFF } : { written: ["a.md"], unchanged: 0, skipped: [], diff: DIFF }),
    });
    const { ui, log } = scriptedUI();
    expect(await fixNote(rpc, ui, "a.md")).toEqual(["a.md"]);
    expect(calls.map((c) => c.params)).toEqual([{ path: "a.md", dry_run: true }, { path: "a.md" }]);
    expect(log[0]).toBe("diff: Fix a.md | 6 lines");
    expect(log[1]).toContain("wrote a.md");
  });

  it("fix writes nothing when the preview is cancelled or empty", async () => {
    const { rpc, calls } = scriptedRpc({ fix: () => ({ written: [], unchanged: 1, skipped: [], diff: DIFF }) });
    await fixNote(rpc, scriptedUI({ confirm: false }).ui, "a.md");
    expect(calls).toHaveLength(1);
    const empty = scriptedRpc({ fix: () => ({ written: [], unchanged: 1, skipped: [{ path: "a.md", reason: "open in editor" }], diff: "" }) });
    const { ui, log } = scriptedUI();
    await fixNote(empty.rpc, ui, "a.md");
    expect(log).toEqual(["notice: Palinode: nothing to fix in a.md (open in editor)."]);
  });

  it("repair lets the person pick a candidate, previews, applies", async () => {
    const { rpc, calls } = scriptedRpc({
      "link.repair_candidates": () => ({ target: "Bob Smiht", candidates: [{ path: "people/bob-smith.md", score: 0.9, why: "one letter" }] }),
      "link.repair": (p) => ({ written: p.dry_run ? [] : ["a.md"], unchanged: 0, skipped: [], diff: DIFF }),
    });
    const { ui, log } = scriptedUI();
    expect(await repairLink(rpc, ui, "a.md", "Bob Smiht")).toEqual(["a.md"]);
    expect(calls.map((c) => c.method)).toEqual(["link.repair_candidates", "link.repair", "link.repair"]);
    expect(calls[1].params).toEqual({ path: "a.md", target: "Bob Smiht", new_target: "people/bob-smith.md", dry_run: true });
    expect(log[0]).toBe("pick: Repair [[Bob Smiht]] — link to… | bob-smith (90% · one letter)");
  });

  it("repair stops when nothing is picked", async () => {
    const { rpc, calls } = scriptedRpc({ "link.repair_candidates": () => ({ target: "X", candidates: [] }) });
    expect(await repairLink(rpc, scriptedUI({ pick: null }).ui, "a.md", "X")).toEqual([]);
    expect(calls).toHaveLength(1);
  });

  it("duplicates open the picked note, leaving the note itself out", async () => {
    const { rpc } = scriptedRpc({
      dedup_suggest: () => ({ results: [{ path: "a.md", similarity: 1, strong: true }, { path: "b.md", similarity: 0.91, strong: true }] }),
    });
    const { ui, log } = scriptedUI();
    expect(await findDuplicates(rpc, ui, "a.md")).toBe("b.md");
    expect(log).toEqual(["pick: Likely duplicates of a | b (91% similar · likely duplicate)", "open: b.md"]);
  });

  it("extract previews what would be filed, then files it", async () => {
    const item = { op: "create", type: "Decision", path: "decisions/use-sqlite.md", confidence: 0.8, reason: "stated decision" };
    const { rpc, calls } = scriptedRpc({ extract: () => ({ items: [item], withheld_secrets: 1 }) });
    const { ui, log } = scriptedUI();
    expect(await extractMemories(rpc, ui, "We decided to use SQLite.", "daily/2026-03-22.md")).toEqual(["decisions/use-sqlite.md"]);
    expect(calls.map((c) => c.params.dry_run)).toEqual([true, false]);
    expect(log[0]).toBe("rows: Memories to file | create decisions/use-sqlite.md | 1 secret(s) withheld.");
    expect(await extractMemories(rpc, ui, "   ")).toEqual([]);
  });

  it("consolidation runs only after the dry-run preview is accepted", async () => {
    const { rpc, calls } = scriptedRpc({
      consolidate: (p) => ({ operations: [{ op: "archive", path: "inbox/old.md", reason: "stale" }], written: p.dry_run ? [] : ["archive/old.md"] }),
    });
    await runConsolidation(rpc, scriptedUI({ confirm: false }).ui);
    expect(calls).toHaveLength(1);
    expect(await runConsolidation(rpc, scriptedUI().ui)).toEqual(["archive/old.md"]);
  });

  it("undo says what it restored", async () => {
    const { rpc } = scriptedRpc({ undo: () => ({ restored: ["a.md"], run: "r1" }) });
    const { ui, log } = scriptedUI();
    await undoLastFix(rpc, ui);
    expect(log).toEqual(["notice: Palinode: restored a.md."]);
  });

  it("undo reverts the run of the person's last write, then the newest run", async () => {
    const { rpc, calls } = scriptedRpc({
      fix: (p) => ({ written: p.dry_run ? [] : ["a.md"], unchanged: 0, skipped: [], diff: p.dry_run ? DIFF : "", run: p.dry_run ? null : "r2" }),
      "inbox.reject": () => ({ path: "archive/inbox/x.md", written: ["inbox/x.md", "archive/inbox/x.md"], run: "r3" }),
      undo: () => ({ restored: ["a.md"], run: "r2", skipped: [] }),
    });
    const { ui } = scriptedUI();
    await fixNote(rpc, ui, "a.md");
    await undoLastFix(rpc, ui);
    await undoLastFix(rpc, ui);
    await rejectInboxNote(rpc, ui, "inbox/x.md");
    await undoLastFix(rpc, ui);
    expect(calls.filter((c) => c.method === "undo").map((c) => c.params)).toEqual([{ run: "r2" }, {}, { run: "r3" }]);
  });

  it("approve calls inbox.approve with the path, says where the note went, and opens it", async () => {
    const { rpc, calls } = scriptedRpc({
      "inbox.approve": () => ({ path: "decisions/x.md", written: ["inbox/x.md", "decisions/x.md"], run: "r7" }),
    });
    const { ui, log } = scriptedUI();
    expect(await approveInboxNote(rpc, ui, "inbox/x.md")).toBe("decisions/x.md");
    expect(calls).toEqual([{ method: "inbox.approve", params: { path: "inbox/x.md" } }]);
    expect(log).toEqual(['notice: Palinode: approved: moved to decisions/x.md. "Undo the last fix" reverts it.', "open: decisions/x.md"]);
  });

  it("approve says so when the note was merged into an existing one", async () => {
    const { rpc } = scriptedRpc({
      "inbox.approve": () => ({ path: "people/tariq.md", written: ["archive/inbox/tariq.md", "inbox/tariq.md", "people/tariq.md"], run: "r8" }),
    });
    const { ui, log } = scriptedUI();
    expect(await approveInboxNote(rpc, ui, "inbox/tariq.md")).toBe("people/tariq.md");
    expect(log[0]).toBe('notice: Palinode: approved: merged into people/tariq.md (the inbox note is archived). "Undo the last fix" reverts it.');
  });

  it("approve as… offers the other memory types, then approves as the one picked", async () => {
    const { rpc, calls } = scriptedRpc({
      "inbox.approve": () => ({ path: "decisions/x.md", written: ["inbox/x.md", "decisions/x.md"], run: "r10" }),
    });
    const { ui, log } = scriptedUI({ type: "Decision" });
    expect(await approveInboxNoteAs(rpc, ui, "inbox/x.md", "Insight")).toBe("decisions/x.md");
    expect(calls).toEqual([{ method: "inbox.approve", params: { path: "inbox/x.md", as_type: "Decision" } }]);
    expect(log).toEqual([
      "type: Approve x as… | PersonMemory (people/, or merged into the person's note); ProjectSnapshot (projects/, or merged into the project's note); Decision (decisions/); ResearchRef (research/)",
      'notice: Palinode: approved as Decision: moved to decisions/x.md. "Undo the last fix" reverts it.',
      "open: decisions/x.md",
    ]);
  });

  it("approve as a decision replacing… sends the picked active decision and says it was superseded", async () => {
    const { rpc, calls } = scriptedRpc({
      "inbox.approve": () => ({ path: "decisions/x.md", written: ["inbox/x.md", "decisions/x.md", "decisions/old.md"], run: "r11" }),
    });
    const rows = activeDecisionRows(
      [
        { path: "decisions/old.md", basename: "old" },
        { path: "decisions/gone.md", basename: "gone" },
        { path: "decisions/sub/deep.md", basename: "deep" },
        { path: "insights/old.md", basename: "old" },
      ],
      (p) => ({ "decisions/old.md": "active", "decisions/gone.md": "archived", "decisions/sub/deep.md": "active", "insights/old.md": "active" })[p],
    );
    expect(rows).toEqual([{ path: "decisions/old.md", title: "old", detail: "decisions/old.md" }]);
    const { ui, log } = scriptedUI({ pick: "decisions/old.md" });
    expect(await approveInboxNoteSuperseding(rpc, ui, "inbox/x.md", rows)).toBe("decisions/x.md");
    expect(calls).toEqual([{ method: "inbox.approve", params: { path: "inbox/x.md", as_type: "Decision", supersedes: ["decisions/old.md"] } }]);
    expect(log).toEqual([
      "pick: Approve x as a decision replacing… | old (decisions/old.md)",
      'notice: Palinode: approved as Decision, superseding decisions/old.md: moved to decisions/x.md. "Undo the last fix" reverts it.',
      "open: decisions/x.md",
    ]);
    const dismissed = scriptedUI({ pick: null });
    expect(await approveInboxNoteSuperseding(rpc, dismissed.ui, "inbox/x.md", rows)).toBeNull();
    expect(calls).toHaveLength(1);
  });

  it("approve saying whom it is about: the person's note picked, or a new name typed; nothing asked when dismissed", async () => {
    const { rpc, calls } = scriptedRpc({
      "inbox.approve": (p) =>
        p.about === "people/ana.md"
          ? { path: "people/ana.md", written: ["people/ana.md", "archive/inbox/x.md", "inbox/x.md"], run: "r20" }
          : { path: "people/rui-duarte.md", written: ["people/rui-duarte.md", "archive/inbox/x.md", "inbox/x.md"], run: "r21" },
    });
    const rows = entityRows(
      [
        { path: "people/ana.md", basename: "ana" },
        { path: "people/old/bo.md", basename: "bo" },
        { path: "projects/kit.md", basename: "kit" },
        { path: "people/zed.md", basename: "zed" },
      ],
      "person",
      (p) => ({ "people/ana.md": "Ana Costa", "people/zed.md": " " })[p],
    );
    expect(rows).toEqual([
      { path: "people/ana.md", title: "Ana Costa", detail: "people/ana.md" },
      { path: "people/zed.md", title: "zed", detail: "people/zed.md" },
    ]);
    expect(entityRows([{ path: "projects/kit.md", basename: "kit" }], "project", () => undefined).map((r) => r.path)).toEqual(["projects/kit.md"]);

    const picked = scriptedUI({ about: "people/ana.md" });
    expect(await approveInboxNoteAbout(rpc, picked.ui, "inbox/x.md", rows, "person")).toBe("people/ana.md");
    expect(picked.log).toEqual([
      "about: x is about whom? | person | Ana Costa; zed",
      'notice: Palinode: approved as about people/ana.md: filed in people/ana.md (the inbox note is archived). "Undo the last fix" reverts it.',
      "open: people/ana.md",
    ]);
    const typed = scriptedUI({ about: "  Rui Duarte " });
    expect(await approveInboxNoteAbout(rpc, typed.ui, "inbox/x.md", rows, "person")).toBe("people/rui-duarte.md");
    expect(calls.map((c) => c.params)).toEqual([
      { path: "inbox/x.md", about: "people/ana.md" },
      { path: "inbox/x.md", about: "Rui Duarte" },
    ]);
    const project = scriptedUI({ about: null });
    expect(await approveInboxNoteAbout(rpc, project.ui, "inbox/y.md", [], "project")).toBeNull();
    expect(project.log).toEqual(["about: y is about what project? | project | "]);
    expect(await approveInboxNoteAbout(rpc, scriptedUI({ about: "   " }).ui, "inbox/y.md", [], "person")).toBeNull();
    expect(await approveInboxNoteAbout(rpc, scriptedUI({ about: "Ana" }).ui, "people/x.md", rows, "person")).toBeNull();
    expect(calls).toHaveLength(2);
  });

  it("approve as a person or project memory also asks whom it is about; as another type it does not", async () => {
    const { rpc, calls } = scriptedRpc({ "inbox.approve": () => ({ path: "people/rui-duarte.md", written: ["people/rui-duarte.md", "inbox/x.md"], run: "r30" }) });
    const rows = (kind: string) => [{ path: `${kind}/a.md`, title: "A", detail: `${kind}/a.md` }];
    const person = scriptedUI({ type: "PersonMemory", about: "Rui Duarte" });
    expect(await approveInboxNoteAs(rpc, person.ui, "inbox/x.md", "Insight", rows)).toBe("people/rui-duarte.md");
    expect(person.log[1]).toBe("about: x is about whom? | person | A");
    const project = scriptedUI({ type: "ProjectSnapshot", about: null });
    expect(await approveInboxNoteAs(rpc, project.ui, "inbox/x.md", "Insight", rows)).toBeNull(); // dismissed: nothing asked
    expect(project.log[1]).toBe("about: x is about what project? | project | A");
    const decision = scriptedUI({ type: "Decision", about: "never asked" });
    await approveInboxNoteAs(rpc, decision.ui, "inbox/x.md", "Insight", rows);
    expect(decision.log.some((l) => l.startsWith("about:"))).toBe(false);
    expect(calls.map((c) => c.params)).toEqual([
      { path: "inbox/x.md", as_type: "PersonMemory", about: "Rui Duarte" },
      { path: "inbox/x.md", as_type: "Decision" },
    ]);
    expect(person.log[2]).toBe('notice: Palinode: approved as PersonMemory as about Rui Duarte: moved to people/rui-duarte.md. "Undo the last fix" reverts it.');
  });

  it("approve a decision that may replace another: the person says it does (retired) or adds to it (kept); nothing asked when dismissed", async () => {
    const { rpc, calls } = scriptedRpc({
      "inbox.approve": (p) => ({ path: "decisions/x.md", written: ["inbox/x.md", "decisions/x.md", ...(p.supersedes ?? [])], run: "r13" }),
    });
    const replaces = scriptedUI({ pick: "decisions/old.md" });
    expect(await approveInboxNoteMayReplace(rpc, replaces.ui, "inbox/x.md", ["decisions/old.md"])).toBe("decisions/x.md");
    expect(replaces.log[0]).toBe(
      "pick: Does x replace a decision? | It replaces old (decisions/old.md is retired (status: archived)); It does not replace it (decisions/old.md stays active)",
    );
    expect(replaces.log[1]).toBe('notice: Palinode: approved, superseding decisions/old.md: moved to decisions/x.md. "Undo the last fix" reverts it.');
    const adds = scriptedUI({ pick: "\u0000keep" });
    expect(await approveInboxNoteMayReplace(rpc, adds.ui, "inbox/x.md", ["decisions/old.md"])).toBe("decisions/x.md");
    expect(calls.map((c) => c.params)).toEqual([
      { path: "inbox/x.md", supersedes: ["decisions/old.md"] },
      { path: "inbox/x.md", keep_active: true },
    ]);
    expect(await approveInboxNoteMayReplace(rpc, scriptedUI({ pick: null }).ui, "inbox/x.md", ["decisions/old.md"])).toBeNull();
    expect(await approveInboxNoteMayReplace(rpc, scriptedUI({}).ui, "people/x.md", ["decisions/old.md"])).toBeNull();
    expect(calls).toHaveLength(2);
    // what a hand-edited or hostile frontmatter may hold
    expect(mayReplaceOf(["decisions/a.md", 3, null, " ", "decisions/b.md", "../../etc/passwd", "people/x.md", "decisions/sub/c.md", "decisions/...md"])).toEqual([
      "decisions/a.md",
      "decisions/b.md",
    ]);
    expect(mayReplaceOf("decisions/a.md")).toEqual([]);
    expect(mayReplaceOf(undefined)).toEqual([]);
  });

  it("approve keeping active asks the sidecar to retire none of the decisions the note names", async () => {
    const { rpc, calls } = scriptedRpc({
      "inbox.approve": () => ({ path: "decisions/x.md", written: ["inbox/x.md", "decisions/x.md"], run: "r12" }),
    });
    const { ui, log } = scriptedUI({});
    expect(await approveInboxNote(rpc, ui, "inbox/x.md", undefined, [], true)).toBe("decisions/x.md");
    expect(calls).toEqual([{ method: "inbox.approve", params: { path: "inbox/x.md", keep_active: true } }]);
    expect(log[0]).toBe('notice: Palinode: approved, keeping the decisions it named active: moved to decisions/x.md. "Undo the last fix" reverts it.');
  });

  it("approve as… offers every type when the note's is not known, and does nothing when dismissed", async () => {
    const { rpc, calls } = scriptedRpc({ "inbox.approve": () => ({}) });
    const { ui, log } = scriptedUI({ type: null });
    expect(await approveInboxNoteAs(rpc, ui, "inbox/x.md")).toBeNull();
    expect(log[0].split(" | ")[1].split("; ").map((c) => c.split(" ")[0])).toEqual(["PersonMemory", "ProjectSnapshot", "Decision", "Insight", "ResearchRef"]);
    expect(log).toHaveLength(1);
    expect(calls).toEqual([]);
    expect(await approveInboxNoteAs(rpc, ui, "decisions/x.md", "Insight")).toBeNull(); // refused before asking
    expect(log[1]).toBe("notice: Palinode: decisions/x.md is not in inbox/; only notes waiting for review in inbox/ can be approved.");
    expect(calls).toEqual([]);
  });

  it("approve as… shows the sidecar's reason when it refuses the type", async () => {
    const why = "'Meeting' is not a memory type; approve it as one of PersonMemory, ProjectSnapshot, Decision, Insight, ResearchRef";
    const { rpc } = scriptedRpc({
      "inbox.approve": () => {
        throw new RpcError(-32602, why);
      },
    });
    const { ui, log } = scriptedUI({ type: "Meeting" });
    expect(await approveInboxNoteAs(rpc, ui, "inbox/x.md", "Insight")).toBeNull();
    expect(log[1]).toBe(`notice: Palinode: approving inbox/x.md failed: ${why}`);
  });

  it("reject calls inbox.reject with the path and says where it was archived", async () => {
    const { rpc, calls } = scriptedRpc({
      "inbox.reject": () => ({ path: "archive/inbox/x.md", written: ["archive/inbox/x.md", "inbox/x.md"], run: "r9" }),
    });
    const { ui, log } = scriptedUI();
    expect(await rejectInboxNote(rpc, ui, "inbox/x.md")).toBe("archive/inbox/x.md");
    expect(calls).toEqual([{ method: "inbox.reject", params: { path: "inbox/x.md" } }]);
    expect(log).toEqual(['notice: Palinode: rejected: archived to archive/inbox/x.md. "Undo the last fix" reverts it.']);
  });

  it("refuses a note outside inbox/ without asking the sidecar", async () => {
    const { rpc, calls } = scriptedRpc({ "inbox.approve": () => ({}), "inbox.reject": () => ({}) });
    const { ui, log } = scriptedUI();
    expect(await approveInboxNote(rpc, ui, "decisions/x.md")).toBeNull();
    expect(await rejectInboxNote(rpc, ui, "inbox/old/x.md")).toBeNull();
    expect(calls).toEqual([]);
    expect(log).toEqual([
      "notice: Palinode: decisions/x.md is not in inbox/; only notes waiting for review in inbox/ can be approved.",
      "notice: Palinode: inbox/old/x.md is not in inbox/; only notes waiting for review in inbox/ can be rejected.",
    ]);
  });

  it("shows the sidecar's reason when it refuses an approval or rejection", async () => {
    const why = "inbox/x.md is not waiting for review (its status is 'active', not 'review')";
    const { rpc } = scriptedRpc({
      "inbox.approve": () => {
        throw new RpcError(-32602, why);
      },
      "inbox.reject": () => {
        throw new RpcError(-32602, "inbox/y.md does not exist");
      },
    });
    const { ui, log } = scriptedUI();
    expect(await approveInboxNote(rpc, ui, "inbox/x.md")).toBeNull();
    expect(await rejectInboxNote(rpc, ui, "inbox/y.md")).toBeNull();
    expect(log).toEqual([
      `notice: Palinode: approving inbox/x.md failed: ${why}`,
      "notice: Palinode: rejecting inbox/y.md failed: inbox/y.md does not exist",
    ]);
  });

  it("turns every failure into one readable notice", async () => {
    const { ui, log } = scriptedUI();
    const notConnected = (async () => {
      throw new RpcError(-2, notRunningMessage("/v"));
    }) as unknown as Rpc;
    expect(await lintVault(notConnected, ui)).toBeNull();
    const crash = (async () => {
      throw new TypeError("x is undefined");
    }) as unknown as Rpc;
    await undoLastFix(crash, ui);
    expect(log).toEqual([
      "notice: Palinode sidecar not running — start it with `palinode-vault serve --vault /v`",
      "notice: Palinode: undo failed: x is undefined",
    ]);
  });
});

describe("helpers", () => {
  it("describes protocol errors", () => {
    expect(describeError(new RpcError(-32012, "conflict"), "fixing a.md")).toBe("Palinode: the note changed while fixing a.md; try again.");
    expect(describeError(new RpcError(-32013, "no model: run x"), "search")).toBe("Palinode: search failed: no model: run x");
    expect(describeError(new RpcError(-32014, "indexing"))).toBe("Palinode is busy (indexing); try again in a moment.");
  });
  it("knows an inbox note: directly in inbox/, markdown", () => {
    expect(isInboxNote("inbox/x.md")).toBe(true);
    expect(isInboxNote("inbox/sub/x.md")).toBe(false);
    expect(isInboxNote("archive/inbox/x.md")).toBe(false);
    expect(isInboxNote("inbox.md")).toBe(false);
    expect(isInboxNote("inbox/x.png")).toBe(false);
  });
  it("formats counts and search rows", () => {
    expect(countsText({ b: 0, a: 2 })).toBe("a 2");
    expect(searchRows({ results: [{ path: "p/x.md", score: 1, title: "", snippet: "a\n  b" }] })).toEqual([{ path: "p/x.md", title: "x", detail: "a b" }]);
  });
});
