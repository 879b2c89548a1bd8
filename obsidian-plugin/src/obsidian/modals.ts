/** Obsidian modals for the commands: diff preview, row preview, note picker, type picker, memory search. */
import { App, Modal, Notice, SuggestModal } from "obsidian";
import { jobProgressText, type JobDisplay } from "../jobs";
import { describeError, searchRows, type PalinodeUI, type PickRow, type PreviewRow, type TypeChoice } from "../actions";
import type { Rpc } from "../side-view-model";
import { renderDiff } from "../dom/diff";
import { el } from "../dom/element";

/** A modal that resolves a promise once, whichever way it closes. */
abstract class AnswerModal<T> extends Modal {
  private done = false;
  constructor(
    app: App,
    private readonly resolve: (value: T) => void,
    private readonly dismissed: T,
  ) {
    super(app);
  }
  protected answer(value: T): void {
    if (!this.done) {
      this.done = true;
      this.resolve(value);
    }
    this.close();
  }
  onClose(): void {
    this.contentEl.empty();
    if (!this.done) {
      this.done = true;
      this.resolve(this.dismissed);
    }
  }
}

function buttons(parent: HTMLElement, applyLabel: string, onApply: () => void, onCancel: () => void): void {
  const row = el(parent, "div", { cls: "modal-button-container" });
  el(row, "button", { text: "Cancel" }).addEventListener("click", onCancel);
  el(row, "button", { cls: "mod-cta", text: applyLabel }).addEventListener("click", onApply);
}

class DiffModal extends AnswerModal<boolean> {
  constructor(app: App, private title: string, private diff: string, private applyLabel: string, resolve: (v: boolean) => void) {
    super(app, resolve, false);
  }
  onOpen(): void {
    this.titleEl.textContent = this.title;
    this.modalEl.addClass("palinode-modal");
    renderDiff(this.contentEl, this.diff);
    buttons(this.contentEl, this.applyLabel, () => this.answer(true), () => this.answer(false));
  }
}

class RowsModal extends AnswerModal<boolean> {
  constructor(app: App, private title: string, private rows: PreviewRow[], private applyLabel: string, private note: string | undefined, resolve: (v: boolean) => void) {
    super(app, resolve, false);
  }
  onOpen(): void {
    this.titleEl.textContent = this.title;
    this.modalEl.addClass("palinode-modal");
    const ul = el(this.contentEl, "ul", { cls: "palinode-rows" });
    for (const r of this.rows) {
      const li = el(ul, "li", { cls: "palinode-row" });
      el(li, "div", { cls: "palinode-row-primary", text: r.primary });
      if (r.badge) el(li, "span", { cls: "palinode-badge", text: r.badge });
      el(li, "div", { cls: "palinode-muted", text: r.secondary });
    }
    if (this.note) el(this.contentEl, "p", { cls: "palinode-muted", text: this.note });
    buttons(this.contentEl, this.applyLabel, () => this.answer(true), () => this.answer(false));
  }
}

function renderPickRows(parent: HTMLElement, rows: PickRow[], emptyText: string, pick: (path: string) => void): void {
  parent.empty();
  if (!rows.length) {
    el(parent, "p", { cls: "palinode-muted", text: emptyText });
    return;
  }
  const ul = el(parent, "ul", { cls: "palinode-rows palinode-pick" });
  for (const r of rows) {
    const li = el(ul, "li", { cls: "palinode-row palinode-clickable", attrs: { "data-path": r.path } });
    el(li, "div", { cls: "palinode-row-primary", text: r.title });
    el(li, "div", { cls: "palinode-muted", text: `${r.path}${r.detail ? ` — ${r.detail}` : ""}` });
    li.addEventListener("click", () => pick(r.path));
  }
}

class PickNoteModal extends AnswerModal<string | null> {
  constructor(app: App, private title: string, private rows: PickRow[], private emptyText: string, resolve: (v: string | null) => void) {
    super(app, resolve, null);
  }
  onOpen(): void {
    this.titleEl.textContent = this.title;
    this.modalEl.addClass("palinode-modal");
    renderPickRows(this.contentEl.createDiv(), this.rows, this.emptyText, (p) => this.answer(p));
  }
}

/** Pick a memory type ("Approve as…"): type to narrow the list, ↑↓ and ↵ to choose, esc to dismiss. */
export class TypeModal extends SuggestModal<TypeChoice> {
  constructor(
    app: App,
    title: string,
    private choices: TypeChoice[],
    private resolve: (type: string | null) => void,
  ) {
    super(app);
    this.setPlaceholder(title);
    this.emptyStateText = "No memory type by that name.";
  }

  getSuggestions(query: string): TypeChoice[] {
    const q = query.trim().toLowerCase();
    return this.choices.filter((c) => c.type.toLowerCase().includes(q));
  }

  renderSuggestion(choice: TypeChoice, item: HTMLElement): void {
    el(item, "div", { cls: "palinode-search-title", text: choice.type });
    el(item, "div", { cls: "palinode-muted", text: choice.detail });
  }

  onChooseSuggestion(choice: TypeChoice): void {
    this.resolve(choice.type);
  }

  onClose(): void {
    // Obsidian closes a SuggestModal before it calls onChooseSuggestion: answer null only after
    // that had its turn (a promise keeps the first answer).
    window.setTimeout(() => this.resolve(null), 0);
  }
}

/** One answer to "about whom?": an existing note (`path`) or, with `path` "", a new name (`title`). */
export type AboutChoice = PickRow;

/**
 * Say who or what a memory is about: the people's (or projects') notes narrowed as the person
 * types, and the typed text itself as a new name; answers once (a path, a name, or null).
 */
export class AboutModal extends SuggestModal<AboutChoice> {
  constructor(
    app: App,
    title: string,
    private rows: PickRow[],
    private kind: string,
    private resolve: (answer: string | null) => void,
  ) {
    super(app);
    this.setPlaceholder(title);
    this.emptyStateText = `Type a name: a new ${kind} note of that name.`;
  }

  getSuggestions(query: string): AboutChoice[] {
    const q = query.trim().replace(/\s+/g, " ");
    const low = q.toLowerCase();
    const found = this.rows.filter((r) => r.title.toLowerCase().includes(low) || r.path.toLowerCase().includes(low));
    const exact = found.some((r) => r.title.toLowerCase() === low);
    return q && !exact ? [...found, { path: "", title: q, detail: `a new ${this.kind} note named "${q}"` }] : found;
  }

  renderSuggestion(choice: AboutChoice, item: HTMLElement): void {
    el(item, "div", { cls: "palinode-search-title", text: choice.title });
    el(item, "div", { cls: "palinode-muted", text: choice.detail });
  }

  onChooseSuggestion(choice: AboutChoice): void {
    this.resolve(choice.path || choice.title);
  }

  onClose(): void {
    // as TypeModal: Obsidian closes a SuggestModal before it calls onChooseSuggestion
    window.setTimeout(() => this.resolve(null), 0);
  }
}

/**
 * Search memory, keyboard-driven like Omnisearch: results as the person types (debounced), each with
 * its title, path and a preview of the matching text; ↑↓ to move, ↵ to open, ⌘/Ctrl+↵ in a new tab.
 */
export class SearchModal extends SuggestModal<SearchRow> {
  private seq = 0;
  private last: SearchRow[] = [];
  constructor(
    app: App,
    private rpc: Rpc,
    private openNote: (path: string, newTab: boolean) => void,
    private debounceMs = 200,
  ) {
    super(app);
    this.setPlaceholder("What do you remember about…");
    this.emptyStateText = "Type to search your memory.";
    this.limit = 20;
    this.setInstructions([
      { command: "↑↓", purpose: "to move" },
      { command: "↵", purpose: "to open" },
      { command: "ctrl ↵", purpose: "to open in a new tab" },
      { command: "esc", purpose: "to close" },
    ]);
    this.modalEl.addClass("palinode-search-modal");
  }

  async getSuggestions(query: string): Promise<SearchRow[]> {
    const seq = ++this.seq;
    if (!query.trim()) {
      this.emptyStateText = "Type to search your memory.";
      return (this.last = []);
    }
    await new Promise((resolve) => window.setTimeout(resolve, this.debounceMs));
    if (seq !== this.seq) return this.last; // a newer keystroke is on its way
    try {
      const r = await this.rpc("search", { query, limit: 20 });
      if (seq !== this.seq) return this.last;
      this.emptyStateText = `No matches (${r.mode} search${r.note ? ` — ${r.note}` : ""}).`;
      this.last = searchRows(r).map((row) => ({ ...row, mode: r.mode, note: r.note }));
    } catch (err) {
      this.emptyStateText = describeError(err, "search");
      this.last = [];
    }
    return this.last;
  }

  renderSuggestion(row: SearchRow, item: HTMLElement): void {
    item.addClass("palinode-search-row");
    el(item, "div", { cls: "palinode-search-title", text: row.title });
    el(item, "div", { cls: "palinode-search-path palinode-muted", text: row.path });
    if (row.detail) el(item, "div", { cls: "palinode-search-preview", text: row.detail });
  }

  onChooseSuggestion(row: SearchRow, evt: MouseEvent | KeyboardEvent): void {
    this.openNote(row.path, evt.ctrlKey || evt.metaKey);
  }
}

/** One search result as the modal shows it. */
export interface SearchRow extends PickRow {
  mode?: string;
  note?: string;
}

/** A notice that stays while a job runs: its progress, and Cancel when the job can stop. */
export function jobNotice(cancel: (() => void) | null): JobDisplay {
  const notice = new Notice("Palinode: starting…", 0);
  const el: HTMLElement | undefined = (notice as unknown as { noticeEl?: HTMLElement }).noticeEl;
  const text = el?.createDiv ? el.createDiv() : undefined;
  if (el && typeof el.empty === "function") {
    el.empty();
    el.appendChild(text as HTMLElement);
    if (cancel) {
      const button = el.createEl("button", { text: "Cancel", cls: "palinode-job-cancel" });
      button.addEventListener("click", (ev) => {
        ev.stopPropagation();
        button.disabled = true;
        button.setText("Cancelling…");
        cancel();
      });
    }
  }
  return {
    update: (p) => (text ? text.setText(jobProgressText(p)) : notice.setMessage(jobProgressText(p))),
    close: () => notice.hide(),
  };
}

/** The commands' UI in Obsidian: notices and modals. */
export function obsidianUI(app: App, openPath: (path: string) => void): PalinodeUI {
  return {
    notice: (message) => new Notice(message, 8000),
    confirmDiff: (title, diff, applyLabel) => new Promise((resolve) => new DiffModal(app, title, diff, applyLabel, resolve).open()),
    confirmRows: (title, rows, applyLabel, note) =>
      new Promise((resolve) => new RowsModal(app, title, rows, applyLabel, note, resolve).open()),
    pickNote: (title, rows, emptyText) => new Promise((resolve) => new PickNoteModal(app, title, rows, emptyText, resolve).open()),
    pickType: (title, choices) => new Promise((resolve) => new TypeModal(app, title, choices, resolve).open()),
    pickAbout: (title, rows, kind) => new Promise((resolve) => new AboutModal(app, title, rows, kind, resolve).open()),
    openPath,
    jobDisplay: (cancel) => jobNotice(cancel),
  };
}
