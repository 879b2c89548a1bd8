/** What the side view and the graph view share: they follow the active note, refresh on the
 * sidecar's pushes (never per keystroke), show the connection state while disconnected, and drop
 * an answer when a newer refresh has started. */
import { ItemView, WorkspaceLeaf } from "obsidian";
import { renderSideViewMessage } from "../dom/side-view";
import type { PalinodeContext } from "./context";

export abstract class NoteFollowingView extends ItemView {
  protected path: string | null = null;
  private seq = 0;
  private offs: (() => void)[] = [];

  constructor(leaf: WorkspaceLeaf, protected readonly ctx: PalinodeContext) {
    super(leaf);
  }
  /** Whether a push that changed `paths` changes what this view shows. */
  protected abstract shows(paths: string[]): boolean;
  /** Draw the view for `path`; `current()` turns false once a newer refresh has started. */
  protected abstract draw(path: string | null, current: () => boolean): Promise<void>;

  async onOpen(): Promise<void> {
    this.offs.push(
      this.ctx.client.onState((state) => (state === "connected" ? void this.refresh() : this.showConnection())),
      this.ctx.session.onPathsChanged((paths) => {
        if (this.shows(paths)) void this.refresh();
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
  async refresh(): Promise<void> {
    const seq = ++this.seq;
    if (this.ctx.client.state !== "connected") return this.showConnection();
    await this.draw(this.path, () => seq === this.seq);
  }
  private showConnection(): void {
    renderSideViewMessage(this.contentEl, this.ctx.client.statusMessage);
  }
}
