/** The side view "Palinode": findings, backlinks by kind, related notes, duplicates, entities, inbox. */
import { ItemView, WorkspaceLeaf } from "obsidian";
import { approveInboxNote, fixNote, isInboxNote, rejectInboxNote, repairLink } from "../actions";
import { renderInbox, renderSideView, renderSideViewMessage, type InboxHandlers } from "../dom/side-view";
import { inboxListing, loadInbox, loadSideView, sideViewModel } from "../side-view-model";
import type { PalinodeContext } from "./context";

export const PALINODE_VIEW = "palinode-view";

export class PalinodeView extends ItemView {
  private path: string | null = null;
  private seq = 0;
  private offs: (() => void)[] = [];

  constructor(leaf: WorkspaceLeaf, private readonly ctx: PalinodeContext) {
    super(leaf);
  }
  getViewType(): string {
    return PALINODE_VIEW;
  }
  getDisplayText(): string {
    return "Palinode";
  }
  getIcon(): string {
    return "brain-circuit";
  }
  async onOpen(): Promise<void> {
    this.offs.push(
      this.ctx.client.onState((state) => state === "connected" ? void this.refresh() : this.showConnection()),
      // Refresh on the sidecar's pushes only (after a save or a write), never per keystroke: when
      // this note changed, or a note came into or left inbox/ (extract, approve, reject, undo).
      this.ctx.session.onPathsChanged((paths) => {
        if ((this.path && paths.includes(this.path)) || paths.some(isInboxNote)) void this.refresh();
      }),
    );
    this.path = this.ctx.activePath();
    await this.refresh();
  }
  async onClose(): Promise<void> {
    for (const off of this.offs) off();
    this.offs = [];
  }
  /** Follows the active note. */
  setPath(path: string | null): void {
    if (path === this.path) return;
    this.path = path;
    void this.refresh();
  }
  private showConnection(): void {
    renderSideViewMessage(this.contentEl, this.ctx.client.statusMessage);
  }
  /** The inbox section's handlers: review through the same actions as the commands, then refresh. */
  private inboxHandlers(): InboxHandlers {
    return {
      openPath: (p) => this.ctx.openPath(p),
      approve: async (row) => {
        await approveInboxNote(this.ctx.rpc, this.ctx.reviewUI, row.path);
        await this.refresh();
      },
      reject: async (row) => {
        await rejectInboxNote(this.ctx.rpc, this.ctx.ui, row.path);
        await this.refresh();
      },
    };
  }
  async refresh(): Promise<void> {
    const seq = ++this.seq;
    if (this.ctx.client.state !== "connected") return this.showConnection();
    const path = this.path;
    if (!path) {
      // No note open: the inbox is the vault's, so it is still shown under the message.
      const inbox = inboxListing(await loadInbox(this.ctx.rpc));
      if (seq !== this.seq) return;
      renderSideViewMessage(this.contentEl, "Open a note to see what Palinode knows about it.");
      return renderInbox(this.contentEl, inbox, this.inboxHandlers());
    }
    const data = await loadSideView(this.ctx.rpc, path);
    if (seq !== this.seq) return; // a newer refresh is under way
    renderSideView(this.contentEl, sideViewModel(data), {
      ...this.inboxHandlers(),
      openLink: (l) => this.ctx.openLink(l, path),
      fix: async () => {
        await fixNote(this.ctx.rpc, this.ctx.ui, path, false);
        await this.refresh();
      },
      repair: async (row, candidate) => {
        if (row.target) await repairLink(this.ctx.rpc, this.ctx.ui, path, row.target, candidate);
        await this.refresh();
      },
    });
  }
}
