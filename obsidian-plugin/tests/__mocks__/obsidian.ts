/**
 * A small hand-written stand-in for the `obsidian` module: just what src/ uses, enough to load the
 * plugin in Node and drive its wiring (commands, events, status bar, settings) from tests.
 */

import { readFile } from "node:fs/promises";
import { join } from "node:path";

type Listener = (...args: any[]) => any;

export class Events {
  private handlers = new Map<string, Set<Listener>>();
  on(name: string, cb: Listener): { name: string; cb: Listener } {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name)!.add(cb);
    return { name, cb };
  }
  offref(ref: { name: string; cb: Listener }): void {
    this.handlers.get(ref.name)?.delete(ref.cb);
  }
  trigger(name: string, ...args: any[]): void {
    for (const cb of [...(this.handlers.get(name) ?? [])]) cb(...args);
  }
}

export class TAbstractFile {
  constructor(public path: string) {}
  get name(): string {
    return this.path.split("/").pop() ?? this.path;
  }
}

export class TFile extends TAbstractFile {
  get extension(): string {
    const dot = this.name.lastIndexOf(".");
    return dot >= 0 ? this.name.slice(dot + 1) : "";
  }
  get basename(): string {
    return this.name.replace(/\.[^.]*$/, "");
  }
}

export class TFolder extends TAbstractFile {}

/** An in-memory vault: files by path, `read`, `process`, `adapter.read`, events. */
export class Vault extends Events {
  files = new Map<string, string>();
  adapter = new FileSystemAdapter(this);
  getAbstractFileByPath(path: string): TAbstractFile | null {
    return this.files.has(path) ? new TFile(path) : null;
  }
  getMarkdownFiles(): TFile[] {
    return [...this.files.keys()].filter((p) => p.endsWith(".md")).map((p) => new TFile(p));
  }
  async read(file: TFile): Promise<string> {
    const text = this.files.get(file.path);
    if (text === undefined) throw new Error(`ENOENT: ${file.path}`);
    return text;
  }
  async process(file: TFile, fn: (data: string) => string): Promise<string> {
    const next = fn(await this.read(file));
    this.files.set(file.path, next);
    return next;
  }
}

export class FileSystemAdapter {
  /** `basePath`: "/vault" (in memory only) or a real folder, read when a path is not in memory. */
  constructor(private vault: Vault, public basePath = "/vault") {}
  getBasePath(): string {
    return this.basePath;
  }
  async read(path: string): Promise<string> {
    const text = this.vault.files.get(path);
    if (text !== undefined) return text;
    if (this.basePath !== "/vault") return readFile(join(this.basePath, path), "utf8");
    throw new Error(`ENOENT: no such file, open '${path}'`);
  }
  async write(path: string, data: string): Promise<void> {
    this.vault.files.set(path, data);
  }
  async exists(path: string): Promise<boolean> {
    return this.vault.files.has(path) || [...this.vault.files.keys()].some((p) => p.startsWith(path + "/"));
  }
  async mkdir(_path: string): Promise<void> {}
}

export class WorkspaceLeaf {
  view: any = null;
  async setViewState(state: { type: string }): Promise<void> {
    this.view = { getViewType: () => state.type };
  }
}

export class Workspace extends Events {
  activeFile: TFile | null = null;
  leaves: WorkspaceLeaf[] = [];
  opened: { linktext: string; sourcePath: string }[] = [];
  getActiveFile(): TFile | null {
    return this.activeFile;
  }
  getLeavesOfType(type: string): WorkspaceLeaf[] {
    return this.leaves.filter((l) => l.view?.getViewType?.() === type);
  }
  getRightLeaf(): WorkspaceLeaf {
    const leaf = new WorkspaceLeaf();
    this.leaves.push(leaf);
    return leaf;
  }
  getLeaf(): WorkspaceLeaf {
    return this.getRightLeaf();
  }
  async revealLeaf(): Promise<void> {}
  async openLinkText(linktext: string, sourcePath: string): Promise<void> {
    this.opened.push({ linktext, sourcePath });
  }
  onLayoutReady(cb: () => void): void {
    cb();
  }
}

/** Obsidian's metadata cache, reduced to frontmatter: `status: x` lines of the file's text. */
export class MetadataCache {
  constructor(private vault: Vault) {}
  getFileCache(file: TFile): { frontmatter?: Record<string, string> } | null {
    const text = this.vault.files.get(file.path);
    const block = text?.match(/^---\n([\s\S]*?)\n---/);
    if (!block) return null;
    const frontmatter: Record<string, string> = {};
    for (const line of block[1].split("\n")) {
      const kv = line.match(/^(\w+):\s*(.*)$/);
      if (kv) frontmatter[kv[1]] = kv[2];
    }
    return { frontmatter };
  }
}

export class App {
  vault = new Vault();
  workspace = new Workspace();
  metadataCache = new MetadataCache(this.vault);
}

/** A fake element with the few Obsidian DOM helpers the plugin calls on it. */
export class FakeEl {
  text = "";
  attrs: Record<string, string> = {};
  classes = new Set<string>();
  dataset: Record<string, string> = {};
  listeners: Record<string, Listener[]> = {};
  setText(t: string): void {
    this.text = t;
  }
  setAttr(k: string, v: string): void {
    this.attrs[k] = v;
  }
  addClass(c: string): void {
    this.classes.add(c);
  }
  addEventListener(name: string, cb: Listener): void {
    (this.listeners[name] ??= []).push(cb);
  }
  children: FakeEl[] = [];
  empty(): void {
    this.children = [];
  }
  createEl(_tag: string, o: { text?: string; cls?: string } = {}): FakeEl {
    const child = new FakeEl();
    if (o.text) child.text = o.text;
    if (o.cls) child.addClass(o.cls);
    this.children.push(child);
    return child;
  }
  appendChild(child: FakeEl): FakeEl {
    if (!this.children.includes(child)) this.children.push(child);
    return child;
  }
  set textContent(t: string) {
    this.text = t;
  }
  get classList() {
    return { add: (c: string) => this.classes.add(c) };
  }
  get ownerDocument() {
    return {};
  }
}

export class Component {
  private cleanups: (() => void)[] = [];
  register(cb: () => void): void {
    this.cleanups.push(cb);
  }
  registerEvent(_ref: unknown): void {}
  registerDomEvent(el: { addEventListener(n: string, cb: Listener): void; removeEventListener(n: string, cb: Listener): void }, name: string, cb: Listener): void {
    el.addEventListener(name, cb);
    this.register(() => el.removeEventListener(name, cb));
  }
  unload(): void {
    for (const c of this.cleanups.splice(0)) c();
  }
}

export class Plugin extends Component {
  commands: { id: string; name: string; callback?: Listener; editorCallback?: Listener }[] = [];
  views = new Map<string, (leaf: WorkspaceLeaf) => unknown>();
  statusBarItems: FakeEl[] = [];
  settingTabs: unknown[] = [];
  saved: unknown = null;
  constructor(
    public app: App,
    public manifest: { id: string; version: string } = { id: "palinode-vault", version: "0.1.0" },
  ) {
    super();
  }
  addCommand(c: { id: string; name: string }): void {
    this.commands.push(c);
  }
  registerView(type: string, factory: (leaf: WorkspaceLeaf) => unknown): void {
    this.views.set(type, factory);
  }
  addStatusBarItem(): FakeEl {
    const el = new FakeEl();
    this.statusBarItems.push(el);
    return el as unknown as FakeEl;
  }
  addRibbonIcon(): FakeEl {
    return new FakeEl();
  }
  addSettingTab(tab: unknown): void {
    this.settingTabs.push(tab);
  }
  async loadData(): Promise<unknown> {
    return this.saved;
  }
  async saveData(data: unknown): Promise<void> {
    this.saved = JSON.parse(JSON.stringify(data));
  }
}

export class View extends Component {
  contentEl: any = new FakeEl();
  constructor(public leaf: WorkspaceLeaf) {
    super();
  }
}
export class ItemView extends View {}
export class MarkdownView extends ItemView {
  file: TFile | null = null;
}

export class Modal {
  titleEl: any = new FakeEl();
  contentEl: any = new FakeEl();
  modalEl: any = new FakeEl();
  constructor(public app: App) {}
  open(): void {
    (this as any).onOpen?.();
  }
  close(): void {
    (this as any).onClose?.();
  }
}

export class SuggestModal<T> extends Modal {
  placeholder = "";
  emptyStateText = "";
  limit = 0;
  instructions: { command: string; purpose: string }[] = [];
  setPlaceholder(p: string): void {
    this.placeholder = p;
  }
  setInstructions(i: { command: string; purpose: string }[]): void {
    this.instructions = i;
  }
  getSuggestions(_query: string): T[] | Promise<T[]> {
    return [];
  }
}

export class PluginSettingTab {
  containerEl: any = new FakeEl();
  constructor(public app: App, public plugin: Plugin) {}
}

/** A form control: records its value and change handler so tests can type into it. */
export class FakeControl {
  value: unknown = undefined;
  placeholder = "";
  disabled = false;
  change: Listener | null = null;
  click: Listener | null = null;
  inputEl: any = Object.assign(new FakeEl(), {
    title: "",
    type: "text",
    toggleClass(this: FakeEl, c: string, on: boolean) {
      if (on) this.classes.add(c);
      else this.classes.delete(c);
    },
    setAttribute(this: FakeEl, k: string, v: string) {
      this.attrs[k] = v;
    },
  });
  setValue(v: unknown): this {
    this.value = v;
    return this;
  }
  setPlaceholder(p: string): this {
    this.placeholder = p;
    return this;
  }
  setDisabled(d: boolean): this {
    this.disabled = d;
    return this;
  }
  setButtonText(t: string): this {
    this.value = t;
    return this;
  }
  addOption(): this {
    return this;
  }
  onChange(cb: Listener): this {
    this.change = cb;
    return this;
  }
  onClick(cb: Listener): this {
    this.click = cb;
    return this;
  }
}

/** Every Setting row created, in order (the settings tab tests read them). */
export const settingRows: Setting[] = [];

export class Setting {
  name = "";
  desc: unknown = "";
  heading = false;
  controls: FakeControl[] = [];
  constructor(public containerEl: unknown) {
    settingRows.push(this);
  }
  setName(n: string): this {
    this.name = n;
    return this;
  }
  setDesc(d: unknown): this {
    this.desc = d;
    return this;
  }
  setHeading(): this {
    this.heading = true;
    return this;
  }
  private add(cb?: (c: FakeControl) => unknown): this {
    const c = new FakeControl();
    this.controls.push(c);
    cb?.(c);
    return this;
  }
  addText(cb?: (c: FakeControl) => unknown): this {
    return this.add(cb);
  }
  addTextArea(cb?: (c: FakeControl) => unknown): this {
    return this.add(cb);
  }
  addToggle(cb?: (c: FakeControl) => unknown): this {
    return this.add(cb);
  }
  addDropdown(cb?: (c: FakeControl) => unknown): this {
    return this.add(cb);
  }
  addButton(cb?: (c: FakeControl) => unknown): this {
    return this.add(cb);
  }
}

export const notices: string[] = [];
export class Notice {
  hidden = false;
  constructor(public message: string, public duration?: number) {
    notices.push(message);
  }
  setMessage(message: string): this {
    this.message = message;
    notices.push(message);
    return this;
  }
  hide(): void {
    this.hidden = true;
  }
}

/** A real request to the loopback (the real sidecar's /health); 404 for anything else. */
export async function requestUrl(req: { url: string }): Promise<{ status: number }> {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(req.url)) return { status: 404 };
  try {
    return { status: (await fetch(req.url)).status };
  } catch {
    return { status: 0 };
  }
}

/** Desktop by default, as the plugin is desktop-only. */
export const Platform = { isDesktopApp: true, isMobile: false };
