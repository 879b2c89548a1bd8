/** The plugin's wiring, loaded against the hand-written `obsidian` mock and a fake sidecar. */
import { createHash } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
// The same module the plugin gets for `obsidian` (vitest alias), imported by path for its test helpers.
import { App, MarkdownView, TFile, WorkspaceLeaf, notices } from "../__mocks__/obsidian";
import PalinodePlugin from "../../src/main";
import { FakeSidecar, until } from "../helpers/fake-sidecar";

beforeAll(() => {
  Object.assign(window, { WebSocket });
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function loaded(withSidecar = true) {
  const app = new App() as any;
  const sidecar = await new FakeSidecar().listen();
  cleanups.push(() => sidecar.close());
  sidecar.on("status", () => ({ findings: { broken_link: 4 } })).on("editor.state", () => ({ ok: true }));
  sidecar.on("rename", () => ({ written: ["b.md"], refs_updated: 1 }));
  if (withSidecar) app.vault.files.set(".palinode/sidecar.json", sidecar.discovery());
  const plugin = new PalinodePlugin(app, { id: "palinode-vault", version: "0.1.0" } as any);
  // These tests drive the wiring against a fake sidecar; starting a real one is tests/integration/lifecycle.
  (plugin as any).saved = { manageSidecar: false };
  await plugin.onload();
  cleanups.push(() => plugin.onunload());
  return { app, plugin: plugin as any, sidecar };
}

describe("PalinodePlugin wiring", () => {
  it("registers every palette command and both views", async () => {
    const { plugin } = await loaded();
    expect(plugin.commands.map((c: any) => c.id)).toEqual([
      "lint-vault",
      "fix-note",
      "repair-link",
      "find-duplicates",
      "show-related",
      "extract-memories",
      "consolidate",
      "search-memory",
      "approve-inbox-note",
      "approve-inbox-note-about",
      "approve-inbox-note-as",
      "approve-inbox-note-superseding",
      "approve-inbox-note-keep-active",
      "reject-inbox-note",
      "undo-last-fix",
      "open-view",
      "open-graph",
    ]);
    expect([...plugin.views.keys()]).toEqual(["palinode-view", "palinode-graph"]);
    expect(plugin.settingTabs).toHaveLength(1);
  });

  it("connects through the discovery file and shows the findings count", async () => {
    const { plugin } = await loaded();
    const bar = plugin.statusBarItems[0];
    await until(() => bar.text === "Palinode · 4 findings", 3000, "status bar");
    expect(bar.dataset.tone).toBe("connected");
  });

  it("shows how to start the sidecar when it is not running", async () => {
    const { plugin } = await loaded(false);
    const bar = plugin.statusBarItems[0];
    await until(() => bar.text === "Palinode: offline", 3000, "offline");
    expect(bar.attrs.title).toBe("Palinode sidecar not running — start it with `palinode-vault serve --vault /vault`");
  });

  it("reports the open note, forwards renames, and applies edits only on a matching hash", async () => {
    const { app, plugin, sidecar } = await loaded();
    await until(() => plugin.client.state === "connected", 3000, "connected");
    app.vault.files.set("people/alice.md", "Alice\n");
    app.workspace.activeFile = new TFile("people/alice.md");
    const leaf = new WorkspaceLeaf();
    const view = new MarkdownView(leaf);
    view.file = app.workspace.activeFile;
    leaf.view = { ...view, getViewType: () => "markdown" };
    Object.setPrototypeOf(leaf.view, MarkdownView.prototype);
    app.workspace.leaves.push(leaf);
    app.workspace.trigger("active-leaf-change", leaf);
    await until(() => sidecar.calls.some((c) => c.method === "editor.state" && c.params.active === "people/alice.md"), 3000, "editor.state");
    expect(sidecar.calls.find((c) => c.params?.active === "people/alice.md")!.params.open).toEqual(["people/alice.md"]);

    app.vault.trigger("rename", new TFile("people/alice-smith.md"), "people/alice.md");
    await until(() => sidecar.calls.some((c) => c.method === "rename"), 3000, "rename");
    expect(sidecar.calls.find((c) => c.method === "rename")!.params).toEqual({ old_path: "people/alice.md", new_path: "people/alice-smith.md" });

    const hash = createHash("sha256").update("Alice\n").digest("hex");
    const stale = await sidecar.request("apply_edit", { path: "people/alice.md", old_hash: "0".repeat(64), new_text: "X" });
    expect(stale.result).toEqual({ applied: false, reason: "hash mismatch" });
    const ok = await sidecar.request("apply_edit", { path: "people/alice.md", old_hash: hash, new_text: "Alice Smith\n" });
    expect(ok.result).toEqual({ applied: true });
    expect(app.vault.files.get("people/alice.md")).toBe("Alice Smith\n");
  });

  it("offers note commands only while a note is open (checkCallback)", async () => {
    const { app, plugin } = await loaded();
    const command = (id: string) => plugin.commands.find((c: any) => c.id === id);
    for (const id of ["fix-note", "find-duplicates", "show-related", "approve-inbox-note", "approve-inbox-note-as", "approve-inbox-note-superseding", "approve-inbox-note-keep-active", "approve-inbox-note-about", "reject-inbox-note"]) {
      expect(command(id).callback).toBeUndefined();
      expect(command(id).checkCallback(true)).toBe(false);
    }
    app.workspace.activeFile = new TFile("people/alice.md");
    expect(command("fix-note").checkCallback(true)).toBe(true);
    expect(command("approve-inbox-note").checkCallback(true)).toBe(false); // not an inbox note
    expect(command("approve-inbox-note-as").checkCallback(true)).toBe(false);
    app.workspace.activeFile = new TFile("inbox/x.md");
    expect(command("approve-inbox-note").checkCallback(true)).toBe(true);
    expect(command("approve-inbox-note-as").checkCallback(true)).toBe(true);
  });

  it("approves and rejects the active inbox note through the sidecar, and opens the approved note", async () => {
    const { app, plugin, sidecar } = await loaded();
    sidecar.on("inbox.approve", (p) => ({ path: "decisions/x.md", written: [p.path, "decisions/x.md"], run: "r1" }));
    sidecar.on("inbox.reject", (p) => ({ path: `archive/${p.path}`, written: [p.path, `archive/${p.path}`], run: "r2" }));
    await until(() => plugin.client.state === "connected", 3000, "connected");
    const command = (id: string) => plugin.commands.find((c: any) => c.id === id);
    expect(command("approve-inbox-note").name).toBe("Approve this inbox note");
    expect(command("reject-inbox-note").name).toBe("Reject this inbox note");
    notices.length = 0;

    app.workspace.activeFile = new TFile("inbox/x.md");
    command("approve-inbox-note").checkCallback(false);
    await until(() => notices.length > 0, 3000, "approve notice");
    expect(sidecar.calls.find((c) => c.method === "inbox.approve")!.params).toEqual({ path: "inbox/x.md" });
    expect(notices).toEqual(['Palinode: approved: moved to decisions/x.md. "Undo the last fix" reverts it.']);
    // the vault picks up the moved note a moment later; only then is it opened
    expect(app.workspace.opened).toEqual([]);
    app.vault.files.set("decisions/x.md", "---\nstatus: active\n---\n");
    await until(() => app.workspace.opened.length > 0, 3000, "opened");
    expect(app.workspace.opened).toEqual([{ linktext: "decisions/x.md", sourcePath: "" }]);

    app.workspace.activeFile = new TFile("inbox/y.md");
    command("reject-inbox-note").checkCallback(false);
    await until(() => notices.length > 1, 3000, "reject notice");
    expect(sidecar.calls.find((c) => c.method === "inbox.reject")!.params).toEqual({ path: "inbox/y.md" });
    expect(notices[1]).toBe('Palinode: rejected: archived to archive/inbox/y.md. "Undo the last fix" reverts it.');

    app.workspace.activeFile = new TFile("people/alice.md");
    expect(command("approve-inbox-note").checkCallback(false)).toBe(false); // not offered outside inbox/
    expect(sidecar.calls.filter((c) => c.method.startsWith("inbox.")).map((c) => c.method)).toEqual(["inbox.approve", "inbox.reject"]);
  });
});
