/**
 * The Palinode plugin: wires the sidecar client, the status bar, the views, the commands, the
 * editor-safety events and the settings tab into Obsidian. The logic lives in the modules it imports.
 */
import { spawn } from "child_process";
import { stat } from "fs/promises";
import { homedir } from "os";
import { FileSystemAdapter, MarkdownView, Notice, Platform, Plugin, TFile, requestUrl, type Editor, type WorkspaceLeaf } from "obsidian";
import {
  approveInboxNote,
  approveInboxNoteAbout,
  approveInboxNoteAs,
  approveInboxNoteMayReplace,
  approveInboxNoteSuperseding,
  activeDecisionRows,
  entityRows,
  extractMemories,
  findDuplicates,
  fixNote,
  lintVault,
  mayReplaceOf,
  rejectInboxNote,
  repairLink,
  runConsolidation,
  showRelated,
  undoLastFix,
  type PalinodeUI,
} from "./actions";
import { applyEdit, type EditableVault } from "./apply-edit";
import { SidecarClient, type SocketConstructor } from "./client";
import { EditorStateReporter } from "./editor-state";
import { linkAtCursor, repairTargetFor } from "./link-at-cursor";
import { SidecarSession } from "./session";
import { SidecarProcess, executableCandidates, type SpawnFn } from "./sidecar-process";
import { DEFAULT_SETTINGS, IGNORE_PATH, cleanFolders, locateSidecar, normaliseSettings, type PalinodeSettings } from "./settings";
import type { Rpc } from "./side-view-model";
import type { PalinodeContext } from "./obsidian/context";
import { GRAPH_VIEW, PalinodeGraphView } from "./obsidian/graph-view";
import { SearchModal, obsidianUI } from "./obsidian/modals";
import { PALINODE_VIEW, PalinodeView } from "./obsidian/palinode-view";
import { PalinodeSettingTab } from "./obsidian/settings-tab";

/** Notes waiting for review live in inbox/ (the kinds table's INBOX_FOLDER). */
const inInbox = (path: string) => path.startsWith("inbox/");

export default class PalinodePlugin extends Plugin implements PalinodeContext {
  settings: PalinodeSettings = { ...DEFAULT_SETTINGS };
  client!: SidecarClient;
  session!: SidecarSession;
  ui!: PalinodeUI;
  reviewUI!: PalinodeUI;
  rpc!: Rpc;
  /** Starts and stops the sidecar with Obsidian; null on mobile, or when the setting is off. */
  sidecarProcess: SidecarProcess | null = null;
  private editorState!: EditorStateReporter;

  async onload(): Promise<void> {
    this.settings = normaliseSettings(await this.loadData());
    const adapter = this.app.vault.adapter;
    const vaultPath = adapter instanceof FileSystemAdapter ? adapter.getBasePath() : undefined;
    this.client = new SidecarClient({
      WebSocket: window.WebSocket as unknown as SocketConstructor,
      locate: () => locateSidecar(this.settings, (p) => adapter.read(p)),
      health: (port) => this.health(port),
      vaultPath,
      timeoutMs: this.settings.timeoutSeconds * 1000,
    });
    this.rpc = (method, params) => this.client.call(method, params);
    this.session = new SidecarSession(this.client);
    this.ui = obsidianUI(this.app, (p) => this.openPath(p));
    // The moved note is opened once Obsidian has seen it (see openWhenPresent).
    this.reviewUI = { ...this.ui, openPath: (p) => void this.openWhenPresent(p) };

    this.wireStatusBar();
    this.wireEditorSafety();
    this.registerView(PALINODE_VIEW, (leaf) => new PalinodeView(leaf, this));
    this.registerView(GRAPH_VIEW, (leaf) => new PalinodeGraphView(leaf, this));
    this.addRibbonIcon("brain-circuit", "Open the memory side view", () => void this.revealView(PALINODE_VIEW));
    this.wireCommands();
    this.addSettingTab(new PalinodeSettingTab(this.app, this, this));
    this.app.workspace.onLayoutReady(() => {
      this.client.start();
      if (vaultPath) this.startSidecarProcess(vaultPath);
    });
  }

  onunload(): void {
    this.editorState?.dispose();
    this.session?.dispose();
    this.client?.stop();
    this.sidecarProcess?.stopNow();
  }

  applySidecarSetting(): void {
    const vaultPath = this.app.vault.adapter instanceof FileSystemAdapter ? this.app.vault.adapter.getBasePath() : undefined;
    if (this.settings.manageSidecar && vaultPath) {
      this.startSidecarProcess(vaultPath);
    } else if (this.sidecarProcess) {
      const proc = this.sidecarProcess;
      this.sidecarProcess = null;
      void proc.stop();
    }
  }

  async readIgnoredFolders(): Promise<string[]> {
    try {
      return cleanFolders((await this.app.vault.adapter.read(IGNORE_PATH)).split("\n"));
    } catch {
      return []; // no file yet
    }
  }

  async writeIgnoredFolders(lines: string[]): Promise<void> {
    const adapter = this.app.vault.adapter;
    const folders = cleanFolders(lines);
    if (!(await adapter.exists(".palinode"))) await adapter.mkdir(".palinode");
    await adapter.write(IGNORE_PATH, folders.map((f) => `${f}\n`).join(""));
  }

  sidecarProcessMessage(): string | null {
    return this.sidecarProcess?.message || null;
  }

  private async health(port: number): Promise<boolean> {
    try {
      return (await requestUrl({ url: `http://127.0.0.1:${port}/health`, throw: false })).status === 200;
    } catch {
      return false;
    }
  }

  /**
   * Desktop only: adopt or start the vault's sidecar (settings: manageSidecar, executablePath).
   * The client keeps finding it through the discovery file; this only makes sure one runs.
   */
  startSidecarProcess(vaultPath: string): void {
    if (!Platform.isDesktopApp || !this.settings.manageSidecar || this.settings.connection !== "file" || this.sidecarProcess) return;
    const adapter = this.app.vault.adapter;
    const proc = new SidecarProcess({
      vaultPath,
      spawn: spawn as unknown as SpawnFn,
      env: process.env,
      candidates: () =>
        executableCandidates({ setting: this.settings.executablePath, vaultPath, platform: process.platform, env: process.env, home: homedir() }),
      isFile: async (p) => (await stat(p)).isFile(),
      alive: async () => {
        const found = await locateSidecar(this.settings, (p) => adapter.read(p));
        return found.ok && (await this.health(found.info.port));
      },
    });
    this.sidecarProcess = proc;
    let noticed = false;
    this.register(
      proc.onState((state, message) => {
        this.session.setSidecarProcess(state, message);
        // Connect at once rather than after the client's backoff.
        if ((state === "running" || state === "adopted") && this.client.state !== "connected") this.client.restart();
        if (state === "failed" && !noticed) {
          noticed = true;
          new Notice(message, 0);
        }
      }),
    );
    // An adopted sidecar that goes away is replaced by one of ours.
    this.register(
      this.client.onState((state) => {
        if (state === "not-running" && proc.state === "adopted") void proc.ensure();
      }),
    );
    // Obsidian may quit without unloading plugins: end our child with the window.
    this.registerDomEvent(window, "beforeunload", () => proc.stopNow());
    void proc.start();
  }

  async saveSettings(): Promise<void> {
    await this.saveData(this.settings);
  }

  activePath(): string | null {
    const file = this.app.workspace.getActiveFile();
    return file && file.extension === "md" ? file.path : null;
  }

  openPath(path: string): void {
    void this.app.workspace.openLinkText(path, "", false);
  }

  /**
   * Opens a note the sidecar has just written, once Obsidian's vault has picked it up: opening a
   * path Obsidian does not know yet would create an empty note there. Gives up quietly after
   * `timeoutMs` (the notice already said where the note is).
   */
  async openWhenPresent(path: string, timeoutMs = 3000): Promise<void> {
    const start = Date.now();
    while (!(this.app.vault.getAbstractFileByPath(path) instanceof TFile)) {
      if (Date.now() - start > timeoutMs) return;
      await new Promise((resolve) => window.setTimeout(resolve, 100));
    }
    this.openPath(path);
  }

  openLink(linktext: string, sourcePath: string): void {
    void this.app.workspace.openLinkText(linktext, sourcePath, false);
  }

  private wireStatusBar(): void {
    const item = this.addStatusBarItem();
    item.addClass("palinode-status");
    const draw = () => {
      const m = this.session.statusBar;
      item.setText(m.text);
      item.setAttr("aria-label", m.title);
      item.setAttr("title", m.title);
      item.dataset.tone = m.tone;
    };
    this.register(this.session.onChange(draw));
    item.addEventListener("click", () => void this.revealView(PALINODE_VIEW));
    draw();
  }

  private vaultAccess(): EditableVault {
    const file = (path: string) => {
      const f = this.app.vault.getAbstractFileByPath(path);
      return f instanceof TFile ? f : null;
    };
    return {
      read: async (path) => {
        const f = file(path);
        return f ? this.app.vault.read(f) : null;
      },
      process: (path, fn) => {
        const f = file(path);
        if (!f) return Promise.reject(new Error(`${path} not found`));
        return this.app.vault.process(f, fn);
      },
    };
  }

  private wireEditorSafety(): void {
    this.client.onRequest("apply_edit", (params) => applyEdit(params, this.vaultAccess()));
    this.editorState = new EditorStateReporter((state) => this.client.call("editor.state", state));
    const reportOpen = () => {
      const open = this.app.workspace
        .getLeavesOfType("markdown")
        .map((l) => (l.view instanceof MarkdownView ? l.view.file?.path : undefined))
        .filter((p): p is string => !!p);
      this.editorState.setOpen(this.activePath(), open);
      this.followActive();
    };
    this.registerEvent(this.app.workspace.on("active-leaf-change", reportOpen));
    this.registerEvent(this.app.workspace.on("layout-change", reportOpen));
    this.registerEvent(this.app.workspace.on("file-open", reportOpen));
    this.registerEvent(this.app.workspace.on("editor-change", () => this.editorState.keystroke()));
    this.register(
      this.client.onState((state) => {
        if (state === "connected") this.editorState.flush();
      }),
    );
    this.registerEvent(
      this.app.vault.on("rename", (file, oldPath) => {
        if (!(file instanceof TFile) || file.extension !== "md") return;
        this.client.call("rename", { old_path: oldPath, new_path: file.path }).catch((err) => {
          this.ui.notice(`Palinode could not update links after renaming ${oldPath}: ${err instanceof Error ? err.message : err}`);
        });
      }),
    );
  }

  private followActive(): void {
    const path = this.activePath();
    for (const leaf of this.app.workspace.getLeavesOfType(PALINODE_VIEW)) {
      if (leaf.view instanceof PalinodeView) leaf.view.setPath(path);
    }
    for (const leaf of this.app.workspace.getLeavesOfType(GRAPH_VIEW)) {
      if (leaf.view instanceof PalinodeGraphView) leaf.view.setPath(path);
    }
  }

  private async revealView(type: string): Promise<void> {
    const { workspace } = this.app;
    let leaf: WorkspaceLeaf | null = workspace.getLeavesOfType(type)[0] ?? null;
    if (!leaf) {
      leaf = type === GRAPH_VIEW ? workspace.getLeaf("split") : workspace.getRightLeaf(false);
      if (!leaf) return;
      await leaf.setViewState({ type, active: true });
    }
    await workspace.revealLeaf(leaf);
  }

  /** A note's frontmatter as Obsidian's metadata cache knows it. */
  private frontmatterOf(path: string): Record<string, unknown> | undefined {
    const file = this.app.vault.getAbstractFileByPath(path);
    return file instanceof TFile ? this.app.metadataCache.getFileCache(file)?.frontmatter : undefined;
  }

  /** The vault's active decisions, as Obsidian's metadata cache knows them. */
  private activeDecisions() {
    return activeDecisionRows(this.app.vault.getMarkdownFiles(), (path) => this.frontmatterOf(path)?.status);
  }

  /** The people's (or projects') notes, to say whom a memory is about. */
  aboutRows(kind: string) {
    return entityRows(this.app.vault.getMarkdownFiles(), kind, (path) => this.frontmatterOf(path)?.name);
  }

  /** "project" for a project memory waiting in inbox/ (its category or type), else "person". */
  private kindOf(path: string): string {
    const fm = this.frontmatterOf(path);
    return fm?.category === "project" || fm?.type === "ProjectSnapshot" ? "project" : "person";
  }

  /**
   * Approve an inbox note; one whose `review_about` is empty first asks whom it is about, and a
   * decision that may replace another (`review_may_supersede`) whether it does.
   */
  private approve(path: string) {
    const fm = this.frontmatterOf(path);
    const mayReplace = mayReplaceOf(fm?.review_may_supersede);
    if (mayReplace.length) return approveInboxNoteMayReplace(this.rpc, this.reviewUI, path, mayReplace);
    const about: unknown = fm?.review_about;
    if (fm && "review_about" in fm && !(typeof about === "string" && about.trim())) {
      const kind = this.kindOf(path);
      return approveInboxNoteAbout(this.rpc, this.reviewUI, path, this.aboutRows(kind), kind);
    }
    return approveInboxNote(this.rpc, this.reviewUI, path);
  }

  /**
   * A command that needs the active note (`checkCallback`): offered in the palette only while a
   * note for it is open (`when` narrows which notes).
   */
  private withNote(run: (path: string) => unknown, when: (path: string) => boolean = () => true): (checking: boolean) => boolean {
    return (checking) => {
      const path = this.activePath();
      if (!path || !when(path)) return false;
      if (!checking) void run(path);
      return true;
    };
  }

  private wireCommands(): void {
    const { rpc, ui } = this;
    this.addCommand({
      id: "lint-vault",
      name: "Lint the vault",
      callback: async () => {
        await lintVault(rpc, ui);
        await this.session.refreshStatus();
      },
    });
    this.addCommand({ id: "fix-note", name: "Fix the current note", checkCallback: this.withNote((p) => fixNote(rpc, ui, p)) });
    this.addCommand({
      id: "repair-link",
      name: "Repair the link at the caret",
      editorCallback: async (editor: Editor, ctx) => {
        const path = ctx.file?.path;
        if (!path) return;
        const cursor = editor.getCursor();
        const link = linkAtCursor(editor.getLine(cursor.line), cursor.ch);
        if (!link) return ui.notice("Palinode: put the cursor inside a [[link]] to repair it.");
        const findings = await rpc("note.findings", { path }).then((r) => r.findings, () => []);
        await repairLink(rpc, ui, path, repairTargetFor(link, findings, cursor.line + 1));
      },
    });
    this.addCommand({ id: "find-duplicates", name: "Find duplicates of this note", checkCallback: this.withNote((p) => findDuplicates(rpc, ui, p)) });
    this.addCommand({ id: "show-related", name: "Show related notes", checkCallback: this.withNote((p) => showRelated(rpc, ui, p)) });
    this.addCommand({
      id: "extract-memories",
      name: "Extract memories from the selection or the current note",
      editorCallback: (editor: Editor, ctx) => {
        const text = editor.getSelection() || editor.getValue();
        void extractMemories(rpc, ui, text, ctx.file?.path, this.client);
      },
    });
    this.addCommand({ id: "consolidate", name: "Run consolidation", callback: () => void runConsolidation(rpc, ui, this.client) });
    this.addCommand({ id: "search-memory", name: "Search memory", callback: () => new SearchModal(this.app, rpc, (p, newTab) => void this.app.workspace.openLinkText(p, "", newTab)).open() });
    const { reviewUI } = this;
    this.addCommand({
      id: "approve-inbox-note",
      name: "Approve this inbox note",
      checkCallback: this.withNote((p) => this.approve(p), inInbox),
    });
    this.addCommand({
      // a person or project memory: the person says (or corrects) whom or what it is about
      id: "approve-inbox-note-about",
      name: "Approve this inbox note, saying who or what it is about…",
      checkCallback: this.withNote((p) => approveInboxNoteAbout(rpc, reviewUI, p, this.aboutRows(this.kindOf(p)), this.kindOf(p)), inInbox),
    });
    this.addCommand({
      id: "approve-inbox-note-as",
      name: "Approve this inbox note as another type…",
      checkCallback: this.withNote((p) => approveInboxNoteAs(rpc, reviewUI, p, undefined, (kind) => this.aboutRows(kind)), inInbox),
    });
    this.addCommand({
      id: "approve-inbox-note-superseding",
      name: "Approve this inbox note as a decision replacing another…",
      checkCallback: this.withNote((p) => approveInboxNoteSuperseding(rpc, reviewUI, p, this.activeDecisions()), inInbox),
    });
    this.addCommand({
      // a decision waiting because it may replace another (review_supersedes): the person says it does not
      id: "approve-inbox-note-keep-active",
      name: "Approve this inbox note, keeping the decision it names active",
      checkCallback: this.withNote((p) => approveInboxNote(rpc, reviewUI, p, undefined, [], true), inInbox),
    });
    this.addCommand({
      id: "reject-inbox-note",
      name: "Reject this inbox note",
      checkCallback: this.withNote((p) => rejectInboxNote(rpc, ui, p), inInbox),
    });
    this.addCommand({ id: "undo-last-fix", name: "Undo the last fix", callback: () => void undoLastFix(rpc, ui) });
    this.addCommand({ id: "open-view", name: "Open the side view", callback: () => void this.revealView(PALINODE_VIEW) });
    this.addCommand({ id: "open-graph", name: "Open the graph view", callback: () => void this.revealView(GRAPH_VIEW) });
  }
}
