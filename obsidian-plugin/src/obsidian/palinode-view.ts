/** The side view "Palinode": findings, backlinks by kind, related notes, duplicates, entities. */
import { ItemView, WorkspaceLeaf } from "obsidian";
import { fixNote, repairLink } from "../actions";
import { renderSideView, renderSideViewMessage } from "../dom/side-view";
import { loadSideView, sideViewModel } from "../side-view-model";
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
      this.ctx.session.onPathsChanged((paths) => {
        if (this.path && paths.includes(this.path)) void this.refresh();
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
  async refresh(): Promise<void> {
    const seq = ++this.seq;
    if (this.ctx.client.state !== "connected") return this.showConnection();
    const path = this.path;
    if (!path) return renderSideViewMessage(this.contentEl, "Open a note to see what Palinode knows about it.");
    const data = await loadSideView(this.ctx.rpc, path);
    if (seq !== this.seq) return; // a newer refresh is under way
    renderSideView(this.contentEl, sideViewModel(data), {
      openPath: (p) => this.ctx.openPath(p),
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
