/** Draws a laid-out neighbourhood as an SVG graph; each node opens its note. */
import type { GraphLayout, LaidOutNode } from "../graph-layout";
import { clear, dot, el } from "./element";

const SVG = "http://www.w3.org/2000/svg";

function svgEl<K extends keyof SVGElementTagNameMap>(parent: Element, tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = parent.ownerDocument.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  parent.appendChild(node);
  return node;
}

export interface GraphHandlers {
  openNode(node: LaidOutNode): void;
}

/** Replaces `root`'s content with the graph and its legend. */
export function renderGraph(root: HTMLElement, layout: GraphLayout, handlers: GraphHandlers): SVGSVGElement {
  clear(root);
  root.classList.add("palinode-graph");
  const svg = svgEl(root, "svg", {
    class: "palinode-graph-svg",
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    width: "100%",
    role: "img",
    "aria-label": "Typed neighbourhood of the note",
  });
  const edges = svgEl(svg, "g", { class: "palinode-edges" });
  for (const e of layout.edges) {
    const line = svgEl(edges, "line", {
      class: `palinode-edge palinode-edge-${e.kind.replace(/[^a-z0-9_-]/gi, "")}`,
      x1: e.x1,
      y1: e.y1,
      x2: e.x2,
      y2: e.y2,
      "stroke-width": e.width,
      "data-kind": e.kind,
    });
    svgEl(line, "title", {}).textContent = `${e.kind}${e.count > 1 ? ` ×${e.count}` : ""}`;
  }
  const nodes = svgEl(svg, "g", { class: "palinode-nodes" });
  for (const n of layout.nodes) {
    const g = svgEl(nodes, "g", {
      class: `palinode-node${n.center ? " palinode-node-center" : ""}${n.resolved ? "" : " palinode-node-unresolved"}`,
      transform: `translate(${n.x},${n.y})`,
      "data-id": n.id,
      "data-path": n.path ?? "",
      tabindex: 0,
      role: "link",
    });
    svgEl(g, "circle", { r: n.r, fill: n.colour });
    const label = svgEl(g, "text", { class: "palinode-node-label", y: n.r + 12, "text-anchor": "middle" });
    label.textContent = n.label;
    svgEl(g, "title", {}).textContent = `${n.path ?? n.id} (${n.categoryLabel})`;
    const open = () => handlers.openNode(n);
    g.addEventListener("click", open);
    g.addEventListener("keydown", (ev) => {
      if ((ev).key === "Enter") open();
    });
  }
  const legend = el(root, "div", { cls: "palinode-legend" });
  for (const item of layout.legend) {
    const span = el(legend, "span", { cls: "palinode-legend-item" });
    dot(span, item.colour);
    el(span, "span", { text: item.label });
  }
  return svg;
}
