/** The graph view: the active note's typed neighbourhood (depth 1 or 2), coloured by category. */
import { ItemView, WorkspaceLeaf } from "obsidian";
import { describeError } from "../actions";
import { clear, el } from "../dom/element";
import { renderGraph } from "../dom/graph";
import { renderSideViewMessage } from "../dom/side-view";
import { layoutNeighbourhood } from "../graph-layout";
import type { PalinodeContext } from "./context";

export const GRAPH_VIEW = "palinode-graph";

export class PalinodeGraphView extends ItemView {
  private path: string | null = null;
  private seq = 0;
  private offs: (() => void)[] = [];

  constructor(leaf: WorkspaceLeaf, private readonly ctx: PalinodeContext) {
    super(leaf);
  }
  getViewType(): string {
    return GRAPH_VIEW;
  }
  getDisplayText(): string {
    return "Palinode graph";
  }
  getIcon(): string {
    return "git-fork";
  }
  async onOpen(): Promise<void> {
    this.offs.push(
      this.ctx.client.onState((state) => (state === "connected" ? void this.refresh() : this.showConnection())),
      this.ctx.session.onPathsChanged(() => void this.refresh()),
    );
    this.path = this.ctx.activePath();
    await this.refresh();
  }
  async onClose(): Promise<void> {
    for (const off of this.offs) off();
    this.offs = [];
  }
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
    if (!path) return renderSideViewMessage(this.contentEl, "Open a note to see its neighbourhood.");
    const depth = this.ctx.settings.graphDepth;
    let hood;
    try {
      hood = await this.ctx.rpc("graph.neighbourhood", { path, depth });
    } catch (err) {
      if (seq === this.seq) renderSideViewMessage(this.contentEl, describeError(err, "graph"));
      return;
    }
    if (seq !== this.seq) return;
    const root = this.contentEl;
    clear(root);
    const bar = el(root, "div", { cls: "palinode-graph-bar" });
    for (const d of [1, 2] as const) {
      const b = el(bar, "button", { text: `Depth ${d}`, cls: d === depth ? "mod-cta" : "" });
      b.addEventListener("click", () => {
        this.ctx.settings.graphDepth = d;
        void this.ctx.saveSettings().then(() => this.refresh());
      });
    }
    const box = el(root, "div");
    const width = Math.max(320, Math.min(900, root.clientWidth || 480));
    renderGraph(box, layoutNeighbourhood(hood, { width, height: Math.round(width * 0.8) }), {
      openNode: (node) => (node.path ? this.ctx.openPath(node.path) : this.ctx.openLink(node.title, path)),
    });
  }
}
