/**
 * The plugin's client and view logic against the real sidecar (`palinode-vault serve`) on a temp
 * copy of tests/fixtures/vault. Skips, saying why, while the serve command does not exist.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { approveInboxNote, approveInboxNoteAbout, approveInboxNoteAs, approveInboxNoteMayReplace, fixNote, rejectInboxNote, repairLink, undoLastFix, type PalinodeUI } from "../../src/actions";
import { applyEdit, type EditableVault } from "../../src/apply-edit";
import { SidecarClient, discoverSidecar, type SocketConstructor } from "../../src/client";
import type { ApplyEditResult } from "../../src/protocol";
import { runJob } from "../../src/jobs";
import { SidecarSession } from "../../src/session";
import { loadSideView, sideViewModel, type Rpc } from "../../src/side-view-model";
import { until } from "../helpers/fake-sidecar";
import { answeringUI } from "../helpers/ui";
import { copyVault, serveAvailability, skipNote, startSidecar, type RunningSidecar } from "../helpers/real-sidecar";

const available = serveAvailability();
if (!available.ok) console.warn(`[integration] skipping the real-sidecar tests: ${available.reason}`);

const Socket = WebSocket as unknown as SocketConstructor;

describe.skipIf(!available.ok)(skipNote("plugin client against the real sidecar"), () => {
  let sidecar: RunningSidecar;
  let client: SidecarClient;
  let session: SidecarSession;
  let rpc: Rpc;
  const read = (p: string) => readFile(join(sidecar.vault, p), "utf8");
  /** The inbox rows as the side view loads them, whatever note is open. */
  const inboxRows = async () => {
    const model = sideViewModel(await loadSideView(rpc, "people/alice-smith.md"));
    return model.inbox.state === "ok" ? model.inbox.items : [];
  };

  beforeAll(async () => {
    sidecar = await startSidecar(copyVault());
    client = new SidecarClient({
      WebSocket: Socket,
      locate: () => discoverSidecar(read),
      health: async (port) => (await fetch(`http://127.0.0.1:${port}/health`)).ok,
      vaultPath: sidecar.vault,
      timeoutMs: 15_000,
    });
    session = new SidecarSession(client);
    rpc = (method, params) => client.call(method, params);
    client.start();
    await client.waitConnected(15_000);
  });

  afterAll(async () => {
    session?.dispose();
    client?.stop();
    await sidecar?.stop();
  });

  it("discovers the sidecar through .palinode/sidecar.json and its health answers", async () => {
    const found = await discoverSidecar(read);
    expect(found.ok).toBe(true);
    if (!found.ok) return;
    expect(found.info.port).toBe(sidecar.info.port);
    expect(found.info.token.length).toBeGreaterThanOrEqual(32);
    const health = await (await fetch(`http://127.0.0.1:${found.info.port}/health`)).json();
    expect(health.ok).toBe(true);
    expect(client.state).toBe("connected");
  });

  it("lints the vault and the status bar shows the findings", async () => {
    const r = await rpc("lint", {});
    expect(r.total_files).toBeGreaterThanOrEqual(4);
    const broken = r.findings.find((f) => f.check === "broken_link" && f.target === "Bob Smiht");
    // The line as the note is now: the sidecar may already have added its machine-owned lines
    // (cross_refs:) above it when the machine is slow to get here.
    const lines = (await read("people/alice-smith.md")).split("\n");
    expect(broken).toMatchObject({ path: "people/alice-smith.md", line: lines.findIndex((l) => l.includes("[[Bob Smiht]]")) + 1 });
    expect(broken!.line).toBeGreaterThanOrEqual(18);
    await until(() => session.findingsTotal !== null && session.findingsTotal >= 1, 10_000, "findings count");
    expect(session.statusBar.text).toMatch(/^Palinode · \d+ findings?/);
  });

  it("offers repair candidates for a broken link", async () => {
    const r = await rpc("link.repair_candidates", { path: "people/alice-smith.md", target: "Bob Smiht" });
    expect(r.candidates[0].path).toBe("people/bob-smith.md");
  });

  it("builds the side view of a note from the real answers", async () => {
    const model = sideViewModel(await loadSideView(rpc, "people/alice-smith.md"));
    expect(model.title).toBe("Alice Smith");
    expect(model.category?.label).toBe("People");
    if (model.findings.state !== "ok") throw new Error(model.findings.message);
    const broken = model.findings.items.find((f) => f.target === "Bob Smiht")!;
    expect(broken.candidates[0]?.path).toBe("people/bob-smith.md");
    if (model.backlinks.state !== "ok") throw new Error(model.backlinks.message);
    const groups = Object.fromEntries(model.backlinks.items.map((g) => [g.label, g.items.map((i) => i.path)]));
    expect(groups.People).toEqual(["people/bob-smith.md"]);
    expect(groups.Projects).toEqual(["projects/checkout-redesign.md"]);
    expect(groups.Decisions).toEqual(["decisions/drop-legacy-browser-support.md"]);
    // related notes and duplicates: answers when the index is there, a quiet note when it is not
    expect(model.related.state).not.toBe("error");
    expect(model.duplicates.state).not.toBe("error");
    if (model.entities.state !== "ok") throw new Error(model.entities.message);
    expect(model.entities.items.map((e) => e.ref).sort()).toEqual(["person/bob-smith", "project/checkout-redesign"]);
  });

  it("gets the typed neighbourhood for the graph view", async () => {
    const hood = await rpc("graph.neighbourhood", { path: "people/alice-smith.md", depth: 1 });
    const paths = hood.nodes.map((n) => n.path);
    expect(paths).toContain("people/bob-smith.md");
    expect(paths).toContain("projects/checkout-redesign.md");
    expect(hood.nodes.find((n) => n.id === hood.center)?.path).toBe("people/alice-smith.md");
  });

  it("repairs a broken link through the preview, fixes a note, and undo restores both", async () => {
    const log: string[] = [];
    const ui = answeringUI(log, {
      confirmDiff: async (_title, diff) => {
        log.push(diff);
        return true;
      },
      pickNote: async (_title, rows) => rows[0]?.path ?? null,
    });
    const alice = join(sidecar.vault, "people/alice-smith.md");
    const original = readFileSync(alice, "utf8");
    expect(await repairLink(rpc, ui, "people/alice-smith.md", "Bob Smiht")).toEqual(["people/alice-smith.md"]);
    expect(log[0]).toContain("-- 2026-11-26: Asked [[Bob Smiht]]"); // the previewed diff
    const repaired = readFileSync(alice, "utf8");
    expect(repaired).not.toContain("[[Bob Smiht]]");
    expect(repaired).toContain("bob-smith");
    expect(await undoLastFix(rpc, ui)).toEqual(["people/alice-smith.md"]);
    expect(readFileSync(alice, "utf8")).toBe(original);

    const written = await fixNote(rpc, ui, "people/alice-smith.md");
    expect(written).not.toBeNull();
    if (written!.length) {
      expect(await undoLastFix(rpc, ui)).toEqual(written);
      expect(readFileSync(alice, "utf8")).toBe(original);
    }
  });

  it("pushes findings.changed after a file changes on disk", async () => {
    const got: { paths: string[] }[] = [];
    const off = client.onNotification("findings.changed", (p) => got.push(p));
    appendFileSync(join(sidecar.vault, "projects/checkout-redesign.md"), "\nNext review with [[Carol Nobody]].\n");
    await until(() => got.some((p) => p.paths.includes("projects/checkout-redesign.md")), 20_000, "findings.changed");
    off();
    const r = await rpc("note.findings", { path: "projects/checkout-redesign.md" });
    expect(r.findings.some((f) => f.check === "broken_link" && f.target === "Carol Nobody")).toBe(true);
  });

  it("round-trips apply_edit for an open note: a stale hash is refused, a current one applied", async () => {
    const path = "people/bob-smith.md";
    const disk = join(sidecar.vault, path);
    const replies: ApplyEditResult[] = [];
    let typing = true; // while true, the editor holds an unsaved keystroke the sidecar has not seen
    const vault: EditableVault = {
      read: async (p) => {
        const text = readFileSync(join(sidecar.vault, p), "utf8");
        return typing ? `${text}unsaved keystroke` : text;
      },
      process: async (p, fn) => {
        const file = join(sidecar.vault, p);
        const next = fn(typing ? `${readFileSync(file, "utf8")}unsaved keystroke` : readFileSync(file, "utf8"));
        if (!typing) writeFileSync(file, next);
        return next;
      },
    };
    client.onRequest("apply_edit", async (params) => {
      const r = await applyEdit(params, vault);
      replies.push(r);
      return r;
    });
    await rpc("settings.set", { quiet_seconds: 1 });
    await rpc("editor.state", { active: path, open: [path], last_keystroke: null });

    // The person adds an entity without linking it: the auto-footer must go through the plugin.
    const before = readFileSync(disk, "utf8");
    writeFileSync(disk, before.replace("entities: [project/checkout-redesign, person/alice-smith]", "entities: [project/checkout-redesign, person/alice-smith, decision/drop-legacy-browser-support]"));
    await until(() => replies.length >= 1, 30_000, "an apply_edit request for the open note");
    expect(replies[0]).toEqual({ applied: false, reason: "hash mismatch" });
    expect(readFileSync(disk, "utf8")).not.toContain("palinode:see-also");

    // The person saves; the sidecar sees the change and sends the edit again, now current.
    typing = false;
    appendFileSync(disk, "\n- 2026-11-27: Shipped saved cards.\n");
    await until(() => replies.some((r) => r.applied), 30_000, "an applied apply_edit");
    const after = readFileSync(disk, "utf8");
    expect(after).toContain("<!-- palinode:see-also -->");
    expect(after).toContain("Shipped saved cards."); // the person's text is kept
    await rpc("editor.state", { active: null, open: [], last_keystroke: null });
  });

  it("approves an inbox note into its folder and rejects another into archive/inbox/", async () => {
    const inboxNote = (id: string, type: string, status: string, title: string) =>
      [
        "---",
        `id: ${id}`,
        `category: ${type.toLowerCase()}`,
        `type: ${type}`,
        `status: ${status}`,
        "confidence: 0.5",
        "entities: [project/checkout-redesign, person/alice-smith]",
        "recurrence_count: 1",
        "evidence_refs: [daily/2026-11-26]",
        "last_updated: 2026-11-26T16:00:00Z",
        "---",
        `# ${type}: ${title}`,
        "",
        "[[alice-smith|Alice]] floated this once for [[checkout-redesign]]; not clear it is settled.",
        "",
      ].join("\n");
    mkdirSync(join(sidecar.vault, "inbox"), { recursive: true });
    writeFileSync(join(sidecar.vault, "inbox/weekly-release-train.md"), inboxNote("decision-weekly-release-train", "Decision", "review", "Ship the checkout redesign weekly"));
    writeFileSync(join(sidecar.vault, "inbox/dark-mode-first.md"), inboxNote("insight-dark-mode-first", "Insight", "review", "Customers might want dark mode first"));
    writeFileSync(join(sidecar.vault, "inbox/already-settled.md"), inboxNote("insight-already-settled", "Insight", "active", "Already settled"));
    const waiting = async () => (await rpc("inbox.list", {})).items.map((i) => i.path);
    let listed = await waiting();
    // the sidecar picks the new files up from disk after its quiet period, and may still be indexing
    // the vault on a cold machine: allow for both
    for (const start = Date.now(); listed.length < 2 && Date.now() - start < 60_000; listed = await waiting()) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(listed.sort()).toEqual(["inbox/dark-mode-first.md", "inbox/weekly-release-train.md"]);

    // The side view loads the same list with the rest of the view (whatever note is open).
    const sideViewInbox = async () => {
      const model = sideViewModel(await loadSideView(rpc, "people/alice-smith.md"));
      if (model.inbox.state !== "ok") throw new Error(`inbox ${model.inbox.state}: ${model.inbox.message}`);
      return model.inbox;
    };
    const rows = (await sideViewInbox()).items;
    expect(rows.map((r) => r.path)).toEqual(["inbox/dark-mode-first.md", "inbox/weekly-release-train.md"]); // oldest first, then by path
    expect(rows.find((r) => r.path === "inbox/weekly-release-train.md")).toEqual({
      path: "inbox/weekly-release-train.md",
      title: "Ship the checkout redesign weekly", // the sidecar drops the type prefix of the heading
      type: "Decision",
      colour: "#c2417a",
      confidence: "50%",
      since: "2026-11-26",
      needsAbout: false,
      mayReplace: [],
    });
    const row = rows.find((r) => r.path === "inbox/weekly-release-train.md")!;

    const log: string[] = [];
    const ui = answeringUI(log, {
      pickType: async (_title, choices) => (choices.some((c) => c.type === "Decision") ? "Decision" : null),
      openPath: (p) => void log.push(`open ${p}`),
    });

    // approve, as the side view's button does (the row's path, then the view reloads): moved into
    // decisions/, no longer waiting for review, the notice says where, it is opened
    const approved = await approveInboxNote(rpc, ui, row.path);
    expect((await sideViewInbox()).items.map((r) => r.path)).toEqual(["inbox/dark-mode-first.md"]);
    expect(approved).toMatch(/^decisions\/.*\.md$/);
    expect(log).toEqual([`Palinode: approved: moved to ${approved}. "Undo the last fix" reverts it.`, `open ${approved}`]);
    expect(existsSync(join(sidecar.vault, "inbox/weekly-release-train.md"))).toBe(false);
    const decision = readFileSync(join(sidecar.vault, approved!), "utf8");
    const front = decision.split("---")[1];
    expect(front).toMatch(/^status: active$/m);
    expect(front).not.toMatch(/status: review/);
    expect(front).toMatch(/^type: Decision$/m);
    expect(decision).toContain("# Decision: Ship the checkout redesign weekly");

    // reject: archived under archive/inbox/, never deleted
    log.length = 0;
    const rejected = await rejectInboxNote(rpc, ui, "inbox/dark-mode-first.md");
    expect(rejected).toBe("archive/inbox/dark-mode-first.md");
    expect(log).toEqual([`Palinode: rejected: archived to archive/inbox/dark-mode-first.md. "Undo the last fix" reverts it.`]);
    expect(existsSync(join(sidecar.vault, "inbox/dark-mode-first.md"))).toBe(false);
    const archived = readFileSync(join(sidecar.vault, rejected!), "utf8");
    expect(archived.split("---")[1]).not.toMatch(/status: review/);
    expect(archived).toContain("# Insight: Customers might want dark mode first");
    // nothing is waiting any more (the note with status: active never was)
    expect(await sideViewInbox()).toEqual({ state: "ok", items: [], empty: "Nothing is waiting for review." });

    // a note not waiting for review, and one outside inbox/: refused, saying why
    log.length = 0;
    expect(await approveInboxNote(rpc, ui, "inbox/already-settled.md")).toBeNull();
    expect(log[0]).toMatch(/^Palinode: approving inbox\/already-settled\.md failed: .*inbox\/already-settled\.md.*review/);
    expect(await rejectInboxNote(rpc, ui, "people/alice-smith.md")).toBeNull();
    expect(log[1]).toBe("Palinode: people/alice-smith.md is not in inbox/; only notes waiting for review in inbox/ can be rejected.");
    expect(existsSync(join(sidecar.vault, "people/alice-smith.md"))).toBe(true);

    // both were journaled: "Undo the last fix" brings the rejected note back to inbox/, even when
    // the sidecar rewrote Alice's cross_refs after the reject (the note links her): undo reverts
    // the run the reject answered with, not the newest run
    const restored = await undoLastFix(rpc, ui);
    expect(restored).toContain("inbox/dark-mode-first.md");
    expect(readFileSync(join(sidecar.vault, "inbox/dark-mode-first.md"), "utf8")).toMatch(/^status: review$/m);
    expect(existsSync(join(sidecar.vault, rejected!))).toBe(false);
    // and the side view lists it again (the sidecar picks the restored file up from disk)
    let again = (await sideViewInbox()).items.map((r) => r.path);
    for (const start = Date.now(); !again.length && Date.now() - start < 30_000; again = (await sideViewInbox()).items.map((r) => r.path)) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(again).toEqual(["inbox/dark-mode-first.md"]);

    // "Approve as…": the Insight the person says is a Decision is filed as one, in its sections
    log.length = 0;
    const filed = await approveInboxNoteAs(rpc, ui, "inbox/dark-mode-first.md", "Insight");
    expect(filed).toBe("decisions/dark-mode-first.md");
    expect(log[0]).toBe(`Palinode: approved as Decision: moved to ${filed}. "Undo the last fix" reverts it.`);
    const retyped = readFileSync(join(sidecar.vault, filed!), "utf8");
    expect(retyped.split("---")[1]).toMatch(/^type: Decision$/m);
    expect(retyped.split("---")[1]).toMatch(/^status: active$/m);
    expect(retyped).toContain("# Decision: Customers might want dark mode first\n\n## Statement\n");
    expect(retyped).toContain("floated this once for");
  }, 120_000);

  it("approves a person memory naming nobody only once the person says whom it is about", async () => {
    const waitingNote = (id: string, text: string) =>
      [
        "---",
        `id: ${id}`,
        "category: person",
        "type: PersonMemory",
        `name: ${JSON.stringify(text)}`,
        "status: review",
        'review_reason: "it names no person the vault knows"',
        'review_about: ""',
        "core: false",
        "entities: [project/checkout-redesign]",
        "confidence: 0.5",
        "last_updated: 2026-11-26T16:00:00Z",
        "---",
        `# ${text}`,
        "",
        "## Context",
        `${text}`,
        "",
      ].join("\n");
    mkdirSync(join(sidecar.vault, "inbox"), { recursive: true });
    writeFileSync(join(sidecar.vault, "inbox/she-moved-to-porto.md"), waitingNote("person-she-moved-to-porto", "She moved to Porto in March"));
    writeFileSync(join(sidecar.vault, "inbox/he-runs-the-front-desk.md"), waitingNote("person-he-runs-the-front-desk", "He runs the front desk now"));
    let listed = await inboxRows();
    for (const start = Date.now(); listed.length < 2 && Date.now() - start < 60_000; listed = await inboxRows()) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(listed.map((r) => [r.path, r.needsAbout])).toEqual([
      ["inbox/he-runs-the-front-desk.md", true],
      ["inbox/she-moved-to-porto.md", true],
    ]);
    const log: string[] = [];
    let answer: string | null = null;
    const ui = answeringUI(log, {
      pickAbout: async (title, offered) => {
        log.push(`${title} ${offered.map((r) => r.path).join(", ")}`);
        return answer;
      },
    });
    // Approve alone is refused, saying what to do; nothing moves
    expect(await approveInboxNote(rpc, ui, "inbox/she-moved-to-porto.md")).toBeNull();
    expect(log.pop()).toMatch(/names no person the vault knows: say who or what it is about/);
    expect(existsSync(join(sidecar.vault, "inbox/she-moved-to-porto.md"))).toBe(true);
    // dismissed: nothing asked of the sidecar
    const people = [{ path: "people/alice-smith.md", title: "Alice Smith", detail: "people/alice-smith.md" }];
    expect(await approveInboxNoteAbout(rpc, ui, "inbox/she-moved-to-porto.md", people, "person")).toBeNull();
    expect(log.pop()).toBe("she-moved-to-porto is about whom? people/alice-smith.md");
    // an existing person: merged into her note
    answer = "people/alice-smith.md";
    expect(await approveInboxNoteAbout(rpc, ui, "inbox/she-moved-to-porto.md", people, "person")).toBe("people/alice-smith.md");
    expect(log.pop()).toBe('Palinode: approved as about people/alice-smith.md: filed in people/alice-smith.md (the inbox note is archived). "Undo the last fix" reverts it.');
    expect(readFileSync(join(sidecar.vault, "people/alice-smith.md"), "utf8")).toContain("She moved to Porto in March");
    expect(existsSync(join(sidecar.vault, "archive/inbox/she-moved-to-porto.md"))).toBe(true);
    // a new name: a new person note of that name
    answer = "Rui Duarte";
    expect(await approveInboxNoteAbout(rpc, ui, "inbox/he-runs-the-front-desk.md", people, "person")).toBe("people/rui-duarte.md");
    const rui = readFileSync(join(sidecar.vault, "people/rui-duarte.md"), "utf8");
    expect(rui).toMatch(/^name: "?Rui Duarte"?$/m);
    expect(rui).toContain("He runs the front desk now");
    expect(rui).not.toMatch(/review_about|status: review/);

    // "Approve as…" a person memory: the note's title is no one's name, so the plugin asks whom too
    writeFileSync(
      join(sidecar.vault, "inbox/front-desk-tablets.md"),
      [
        "---",
        "id: insight-front-desk-tablets",
        "category: insight",
        "type: Insight",
        "status: review",
        "confidence: 0.5",
        "entities: []",
        "last_updated: 2026-11-26T16:00:00Z",
        "---",
        "# Insight: Runs the tablets at the front desk",
        "",
        "Knows every front-desk tablet by its scratches.",
        "",
      ].join("\n"),
    );
    for (const start = Date.now(); !(await inboxRows()).some((r) => r.path === "inbox/front-desk-tablets.md") && Date.now() - start < 30_000; ) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const asPerson: PalinodeUI = { ...ui, pickType: async () => "PersonMemory", pickAbout: async () => "Bea Lopes" };
    expect(await approveInboxNoteAs(rpc, asPerson, "inbox/front-desk-tablets.md", "Insight", () => people)).toBe("people/bea-lopes.md");
    const bea = readFileSync(join(sidecar.vault, "people/bea-lopes.md"), "utf8");
    expect(bea).toMatch(/^# Bea Lopes$/m);
    expect(bea).toContain("Knows every front-desk tablet by its scratches.");
    expect(bea.split("---")[1]).toMatch(/^type: PersonMemory$/m);
  }, 120_000);

  it("approves a decision that may replace another only once the person says whether it does", async () => {
    const note = (id: string, status: string, title: string, extra: string[] = []) =>
      ["---", `id: ${id}`, "category: decision", "type: Decision", `status: ${status}`, ...extra, "entities: []", "supersedes: []", 'superseded_by: ""',
        "confidence: 0.5", "last_updated: 2026-11-26T16:00:00Z", "---", `# Decision: ${title}`, "", "## Statement", `${title}.`, ""].join("\n");
    writeFileSync(join(sidecar.vault, "decisions/release-on-fridays.md"), note("decision-release-on-fridays", "active", "Release on Fridays"));
    const waiting = (name: string, title: string) =>
      writeFileSync(join(sidecar.vault, `inbox/${name}.md`), note(`decision-${name}`, "review", title, ["review_may_supersede: [decisions/release-on-fridays.md]"]));
    waiting("release-on-tuesdays", "Release on Tuesdays");
    waiting("release-notes-in-dutch-too", "Release notes in Dutch too");
    let listed = await inboxRows();
    for (const start = Date.now(); listed.filter((r) => r.mayReplace.length).length < 2 && Date.now() - start < 60_000; listed = await inboxRows()) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(listed.filter((r) => r.mayReplace.length).map((r) => [r.path, r.mayReplace])).toEqual([
      ["inbox/release-notes-in-dutch-too.md", ["decisions/release-on-fridays.md"]],
      ["inbox/release-on-tuesdays.md", ["decisions/release-on-fridays.md"]],
    ]);
    const log: string[] = [];
    let answer: string | null = null;
    const ui = answeringUI(log, {
      pickNote: async (_title, offered) => (answer === "adds" ? offered[offered.length - 1].path : answer),
    });
    const status = (p: string) => /^status: (\w+)$/m.exec(readFileSync(join(sidecar.vault, p), "utf8"))?.[1];
    // Approve alone is refused, saying what to do; nothing moves
    expect(await approveInboxNote(rpc, ui, "inbox/release-on-tuesdays.md")).toBeNull();
    expect(log.pop()).toMatch(/may replace decisions\/release-on-fridays.md or add to it: say which/);
    expect(existsSync(join(sidecar.vault, "inbox/release-on-tuesdays.md"))).toBe(true);
    // it adds to it: both active
    answer = "adds";
    expect(await approveInboxNoteMayReplace(rpc, ui, "inbox/release-notes-in-dutch-too.md", ["decisions/release-on-fridays.md"])).toBe(
      "decisions/release-notes-in-dutch-too.md",
    );
    expect([status("decisions/release-notes-in-dutch-too.md"), status("decisions/release-on-fridays.md")]).toEqual(["active", "active"]);
    // it replaces it: the old one retired in the same run
    answer = "decisions/release-on-fridays.md";
    expect(await approveInboxNoteMayReplace(rpc, ui, "inbox/release-on-tuesdays.md", ["decisions/release-on-fridays.md"])).toBe("decisions/release-on-tuesdays.md");
    expect(log.pop()).toBe('Palinode: approved, superseding decisions/release-on-fridays.md: moved to decisions/release-on-tuesdays.md. "Undo the last fix" reverts it.');
    expect(status("decisions/release-on-fridays.md")).toBe("archived");
    expect(readFileSync(join(sidecar.vault, "decisions/release-on-tuesdays.md"), "utf8")).not.toContain("review_may_supersede");
  }, 120_000);

  it("runs a re-index as a job: answers at once, pushes progress, ends with the result", async () => {
    const seen: { done: number; total: number }[] = [];
    let closed = false;
    const started = Date.now();
    const result = await runJob<{ notes: number }>(client, "reindex.start", {}, () => ({
      update: (p) => void seen.push({ done: p.done, total: p.total }),
      close: () => void (closed = true),
    }));
    expect(result.notes).toBeGreaterThanOrEqual(4);
    expect(seen).toContainEqual({ done: 0, total: result.notes });
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(60_000);
    const listed = await client.call("job.list", {});
    expect(listed.jobs.find((j) => j.kind === "reindex")?.state).toBe("done");
  });

  it("forwards a rename so entity refs follow", async () => {
    const { renameSync } = await import("node:fs");
    renameSync(join(sidecar.vault, "decisions/drop-legacy-browser-support.md"), join(sidecar.vault, "decisions/drop-ie11.md"));
    await rpc("rename", { old_path: "decisions/drop-legacy-browser-support.md", new_path: "decisions/drop-ie11.md" }).catch(() => undefined);
    await until(() => readFileSync(join(sidecar.vault, "people/bob-smith.md"), "utf8").includes("decision/drop-ie11"), 20_000, "refs updated");
  });

  it("refuses a wrong token at the handshake, and the client says so", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${sidecar.info.port}/rpc?token=wrong`);
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => reject(new Error("a wrong token was accepted")));
      ws.on("error", () => undefined);
    });
    expect(status).toBe(401);
    const wrong = new SidecarClient({
      WebSocket: Socket,
      locate: async () => ({ ok: true, info: { ...sidecar.info, token: "wrong" } }),
      reconnect: false,
    });
    wrong.start();
    await until(() => wrong.state === "refused", 10_000, "refused");
    expect(wrong.statusMessage).toContain("refused");
    wrong.stop();
  });

  it("says how to start the sidecar once it has stopped", async () => {
    await sidecar.stop();
    await until(() => client.state !== "connected", 10_000, "disconnect");
    await until(() => client.state === "not-running", 15_000, "not-running");
    expect(client.statusMessage).toBe(`Palinode sidecar not running — start it with \`palinode-vault serve --vault ${sidecar.vault}\``);
  });
});
