/** The graph view: the active note's typed neighbourhood (depth 1 or 2), coloured by category. */
import { describeError } from "../actions";
import { clear, el } from "../dom/element";
import { renderGraph } from "../dom/graph";
import { renderSideViewMessage } from "../dom/side-view";
import { layoutNeighbourhood } from "../graph-layout";
import { NoteFollowingView } from "./note-view";

export const GRAPH_VIEW = "palinode-graph";

export class PalinodeGraphView extends NoteFollowingView {
  getViewType(): string {
    return GRAPH_VIEW;
  }
  getDisplayText(): string {
    return "Palinode graph";
  }
  getIcon(): string {
    return "git-fork";
  }
  protected shows(): boolean {
    return true; // any write may add or remove an edge near the note
  }
  protected async draw(path: string | null, current: () => boolean): Promise<void> {
    if (!path) return renderSideViewMessage(this.contentEl, "Open a note to see its neighbourhood.");
    const depth = this.ctx.settings.graphDepth;
    let hood;
    try {
      hood = await this.ctx.rpc("graph.neighbourhood", { path, depth });
    } catch (err) {
      if (current()) renderSideViewMessage(this.contentEl, describeError(err, "graph"));
      return;
    }
    if (!current()) return;
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
