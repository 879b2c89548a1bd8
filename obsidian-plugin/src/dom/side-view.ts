/** Draws the side view model into a container with the standard DOM. */
import { basename, type EntityRow, type FindingRow, type InboxRow, type Listing, type NoteGroup, type NoteRow, type SideViewModel } from "../side-view-model";
import { actionButton, clear, dot, el } from "./element";

/** What the inbox section's links and buttons do. */
export interface InboxHandlers {
  /** Open a note by vault path. */
  openPath(path: string): void;
  /** Approve the inbox note, asking whom it is about when it names nobody (the view refreshes afterwards). */
  approve(row: InboxRow): unknown;
  /** Approve it as a memory type the person picks, when the one it waits as is wrong. */
  approveAs(row: InboxRow): unknown;
  /** Reject the inbox note (the view refreshes afterwards). */
  reject(row: InboxRow): unknown;
}

export interface SideViewHandlers extends InboxHandlers {
  /** Open an entity by link text (Obsidian resolves it). */
  openLink(linktext: string): void;
  /** One-click fix of the note the finding is on. */
  fix(row: FindingRow): unknown;
  /** Repair the finding's link to point at `candidatePath`. */
  repair(row: FindingRow, candidatePath: string): unknown;
}

/** Replaces `root`'s content with a one-line message (not connected, no active note). */
export function renderSideViewMessage(root: HTMLElement, message: string, detail?: string): void {
  clear(root);
  root.classList.add("palinode-view");
  const box = el(root, "div", { cls: "palinode-empty" });
  el(box, "p", { cls: "palinode-empty-title", text: message });
  if (detail) el(box, "p", { cls: "palinode-muted", text: detail });
}

function section(root: HTMLElement, name: string, title: string, count?: number): HTMLElement {
  const s = el(root, "section", { cls: "palinode-section", attrs: { "data-section": name } });
  const h = el(s, "h5", { cls: "palinode-section-title", text: title });
  if (count !== undefined) el(h, "span", { cls: "palinode-count", text: String(count) });
  return s;
}

function noteLink(parent: HTMLElement, row: NoteRow, handlers: SideViewHandlers): HTMLElement {
  const li = el(parent, "li", { cls: ["palinode-note", row.strong ? "palinode-strong" : ""] });
  dot(li, row.colour, row.categoryLabel);
  const a = el(li, "a", { cls: "palinode-note-link", text: row.title, title: row.path, attrs: { href: "#", "data-path": row.path } });
  a.addEventListener("click", (ev) => {
    ev.preventDefault();
    handlers.openPath(row.path);
  });
  if (row.detail) el(li, "span", { cls: "palinode-muted palinode-detail", text: row.detail });
  return li;
}

function notListed(parent: HTMLElement, listing: Exclude<Listing<unknown>, { state: "ok" }>): void {
  el(parent, "p", {
    cls: listing.state === "unavailable" ? ["palinode-muted", "palinode-unavailable"] : ["palinode-error"],
    text: listing.message,
  });
}

function renderFindings(root: HTMLElement, listing: Listing<FindingRow>, handlers: SideViewHandlers): void {
  const s = section(root, "findings", "Findings", listing.state === "ok" ? listing.items.length : undefined);
  if (listing.state !== "ok") return notListed(s, listing);
  if (!listing.items.length) {
    el(s, "p", { cls: "palinode-muted palinode-clean", text: listing.empty });
    return;
  }
  const ul = el(s, "ul", { cls: "palinode-findings" });
  for (const row of listing.items) {
    const li = el(ul, "li", { cls: ["palinode-finding", `palinode-severity-${row.severity}`], attrs: { "data-check": row.check } });
    const head = el(li, "div", { cls: "palinode-finding-head" });
    el(head, "span", { cls: "palinode-check", text: row.checkLabel });
    if (row.target) el(head, "code", { cls: "palinode-target", text: row.target });
    el(head, "span", { cls: "palinode-muted palinode-where", text: row.where });
    el(li, "div", { cls: "palinode-message", text: row.message });
    const actions = el(li, "div", { cls: "palinode-actions" });
    if (row.fixable) actionButton(actions, "Fix", () => handlers.fix(row), { cls: ["palinode-fix", "mod-cta"] });
    if (row.candidates.length) {
      el(actions, "span", { cls: "palinode-muted", text: "Link to:" });
      for (const c of row.candidates) {
        const b = actionButton(actions, "", () => handlers.repair(row, c.path), {
          cls: "palinode-candidate",
          title: `${c.path} — ${c.why}`,
          attrs: { "data-path": c.path },
        });
        el(b, "span", { text: c.label });
        el(b, "small", { cls: "palinode-muted", text: ` ${c.score}` });
      }
    }
  }
}

function renderBacklinks(root: HTMLElement, listing: Listing<NoteGroup>, handlers: SideViewHandlers): void {
  const total = listing.state === "ok" ? listing.items.reduce((n, g) => n + g.items.length, 0) : undefined;
  const s = section(root, "backlinks", "Backlinks", total);
  if (listing.state !== "ok") return notListed(s, listing);
  if (!listing.items.length) {
    el(s, "p", { cls: "palinode-muted", text: listing.empty });
    return;
  }
  for (const group of listing.items) {
    const g = el(s, "div", { cls: "palinode-group", attrs: { "data-group": group.key } });
    const h = el(g, "h6", { cls: "palinode-group-title" });
    dot(h, group.colour);
    el(h, "span", { text: `${group.label} (${group.items.length})` });
    const ul = el(g, "ul", { cls: "palinode-notes" });
    for (const row of group.items) noteLink(ul, row, handlers);
  }
}

function renderNotes(
  root: HTMLElement,
  name: string,
  title: string,
  listing: Listing<NoteRow>,
  handlers: SideViewHandlers,
): void {
  const s = section(root, name, title, listing.state === "ok" ? listing.items.length : undefined);
  if (listing.state !== "ok") return notListed(s, listing);
  if (!listing.items.length) {
    el(s, "p", { cls: "palinode-muted", text: listing.empty });
    return;
  }
  const ul = el(s, "ul", { cls: "palinode-notes" });
  for (const row of listing.items) noteLink(ul, row, handlers);
}

function renderEntities(root: HTMLElement, listing: Listing<EntityRow>, handlers: SideViewHandlers): void {
  const s = section(root, "entities", "Entities", listing.state === "ok" ? listing.items.length : undefined);
  if (listing.state !== "ok") return notListed(s, listing);
  if (!listing.items.length) {
    el(s, "p", { cls: "palinode-muted", text: listing.empty });
    return;
  }
  const box = el(s, "div", { cls: "palinode-entities" });
  for (const e of listing.items) {
    const chip = el(box, "a", {
      cls: ["palinode-entity", e.inBody ? "" : "palinode-entity-footer-only"],
      title: `${e.ref} (${e.categoryLabel})${e.inBody ? "" : " — not linked in the body"}`,
      attrs: { href: "#", "data-ref": e.ref },
    });
    dot(chip, e.colour);
    el(chip, "span", { text: e.ref });
    chip.addEventListener("click", (ev) => {
      ev.preventDefault();
      handlers.openLink(e.linktext);
    });
  }
}

/**
 * Appends the "Inbox" section: the notes waiting for review, each with Approve, Approve as… and Reject. Drawn
 * last in the side view, and under the message when no note is open (the inbox is the vault's).
 */
export function renderInbox(root: HTMLElement, listing: Listing<InboxRow>, handlers: InboxHandlers): void {
  const s = section(root, "inbox", "Inbox", listing.state === "ok" ? listing.items.length : undefined);
  if (listing.state !== "ok") return notListed(s, listing);
  if (!listing.items.length) {
    el(s, "p", { cls: "palinode-muted palinode-inbox-empty", text: listing.empty });
    return;
  }
  const ul = el(s, "ul", { cls: "palinode-inbox" });
  for (const row of listing.items) {
    const li = el(ul, "li", { cls: "palinode-inbox-item", attrs: { "data-path": row.path } });
    const head = el(li, "div", { cls: "palinode-inbox-head" });
    dot(head, row.colour, row.type);
    const a = el(head, "a", { cls: "palinode-note-link", text: row.title, title: row.path, attrs: { href: "#", "data-path": row.path } });
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      handlers.openPath(row.path);
    });
    const meta = el(li, "div", { cls: "palinode-muted palinode-inbox-meta" });
    el(meta, "span", { cls: "palinode-inbox-type", text: row.type });
    if (row.confidence) el(meta, "span", { cls: "palinode-inbox-confidence", text: `confidence ${row.confidence}` });
    if (row.since) el(meta, "span", { cls: "palinode-inbox-since", text: `waiting since ${row.since}` });
    const actions = el(li, "div", { cls: "palinode-actions" });
    if (row.needsAbout) el(meta, "span", { cls: "palinode-inbox-about", text: "about whom?" });
    const asks = row.mayReplace.length > 0;
    if (asks) el(meta, "span", { cls: "palinode-inbox-may-replace", text: `replaces ${row.mayReplace.map(basename).join(", ")}?` });
    actionButton(actions, row.needsAbout ? "Approve about…" : asks ? "Approve…" : "Approve", () => handlers.approve(row), {
      cls: ["palinode-approve", "mod-cta"],
      title: row.needsAbout
        ? `Approve ${row.path}, saying who or what it is about`
        : asks
          ? `Approve ${row.path}, saying whether it replaces ${row.mayReplace.join(", ")}`
          : `Approve ${row.path}: move it into its folder`,
    });
    actionButton(actions, "Approve as…", () => handlers.approveAs(row), { cls: "palinode-approve-as", title: `Approve ${row.path} as another type than ${row.type}` });
    actionButton(actions, "Reject", () => handlers.reject(row), { cls: "palinode-reject", title: `Reject ${row.path}: archive it in archive/inbox/` });
  }
}

/** Replaces `root`'s content with the side view of one note. */
export function renderSideView(root: HTMLElement, model: SideViewModel, handlers: SideViewHandlers): void {
  clear(root);
  root.classList.add("palinode-view");
  const header = el(root, "div", { cls: "palinode-header" });
  if (model.category) {
    const chip = el(header, "span", { cls: "palinode-chip", text: model.category.label });
    chip.style.setProperty("--palinode-colour", model.category.colour);
  }
  el(header, "h4", { cls: "palinode-title", text: model.title });
  el(header, "div", { cls: "palinode-muted palinode-path", text: model.path });
  renderFindings(root, model.findings, handlers);
  renderBacklinks(root, model.backlinks, handlers);
  renderNotes(root, "related", "Related notes", model.related, handlers);
  renderNotes(root, "duplicates", "Likely duplicates", model.duplicates, handlers);
  renderEntities(root, model.entities, handlers);
  renderInbox(root, model.inbox, handlers);
}
