/**
 * Laying out a note's typed neighbourhood (`graph.neighbourhood`) as a small radial graph: the
 * note in the middle, its direct neighbours on an inner ring, their neighbours on an outer ring
 * next to the neighbour that reaches them. Deterministic: the same answer gives the same picture.
 */
import { categoryOf, CATEGORIES, OTHER_COLOUR, UNRESOLVED_COLOUR } from "./categories";
import type { Neighbourhood } from "./protocol";

export interface LaidOutNode {
  id: string;
  path: string | null;
  /** The full title; `label` is the shown, possibly shortened, form. */
  title: string;
  label: string;
  x: number;
  y: number;
  r: number;
  colour: string;
  categoryLabel: string;
  depth: number;
  resolved: boolean;
  center: boolean;
}

export interface LaidOutEdge {
  source: string;
  target: string;
  kind: string;
  count: number;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  width: number;
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: LaidOutNode[];
  edges: LaidOutEdge[];
  legend: { label: string; colour: string }[];
}

export interface LayoutOptions {
  width?: number;
  height?: number;
  /** Longest label shown; longer titles are cut with an ellipsis. */
  maxLabel?: number;
}

/** Cuts a label to `max` characters with an ellipsis. */
export function shortLabel(text: string, max = 22): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** Distance in hops from the centre, following edges either way. */
export function hopDistances(n: Neighbourhood): Map<string, number> {
  const adj = new Map<string, Set<string>>();
  const link = (a: string, b: string) => {
    if (!adj.has(a)) adj.set(a, new Set());
    adj.get(a)!.add(b);
  };
  for (const e of n.edges) {
    link(e.source, e.target);
    link(e.target, e.source);
  }
  const dist = new Map<string, number>([[n.center, 0]]);
  const queue = [n.center];
  while (queue.length) {
    const id = queue.shift()!;
    for (const next of [...(adj.get(id) ?? [])].sort()) {
      if (!dist.has(next)) {
        dist.set(next, dist.get(id)! + 1);
        queue.push(next);
      }
    }
  }
  return dist;
}

/** Positions every node and edge of a neighbourhood in a `width`×`height` box. */
export function layoutNeighbourhood(n: Neighbourhood, options: LayoutOptions = {}): GraphLayout {
  const width = options.width ?? 640;
  const height = options.height ?? 480;
  const maxLabel = options.maxLabel ?? 22;
  const cx = width / 2;
  const cy = height / 2;
  const dist = hopDistances(n);
  const byId = new Map(n.nodes.map((node) => [node.id, node]));
  if (!byId.has(n.center)) byId.set(n.center, { id: n.center, path: null, title: n.center, category: null, resolved: true });

  const maxDepth = Math.max(1, ...[...byId.keys()].map((id) => dist.get(id) ?? 1));
  const radiusFor = (depth: number) => {
    const outer = Math.min(width, height) / 2 - 46;
    return maxDepth <= 1 ? outer * 0.9 : (outer * depth) / maxDepth;
  };

  const sortKey = (id: string) => {
    const node = byId.get(id)!;
    const c = categoryOf(node.category, node.path);
    const order = c ? CATEGORIES.indexOf(c) : CATEGORIES.length;
    return `${String(order).padStart(2, "0")}|${node.title.toLowerCase()}|${id}`;
  };

  const angle = new Map<string, number>([[n.center, 0]]);
  // Inner ring: evenly spaced, grouped by category so colours cluster.
  const ring1 = [...byId.keys()].filter((id) => id !== n.center && (dist.get(id) ?? 1) === 1).sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
  ring1.forEach((id, i) => angle.set(id, -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, ring1.length)));

  // Outer rings: each node near the neighbour that reaches it, pushed apart just enough to not overlap.
  const parentAngle = (id: string, depth: number) => {
    let best = Infinity;
    for (const e of n.edges) {
      const other = e.source === id ? e.target : e.target === id ? e.source : null;
      if (other !== null && dist.get(other) === depth - 1 && angle.has(other)) best = Math.min(best, angle.get(other)!);
    }
    return best === Infinity ? 0 : best;
  };
  for (let depth = 2; depth <= maxDepth; depth++) {
    const ring = [...byId.keys()].filter((id) => id !== n.center && (dist.get(id) ?? 1) === depth);
    const keyed = ring
      .map((id) => ({ id, a: parentAngle(id, depth) }))
      .sort((p, q) => p.a - q.a || sortKey(p.id).localeCompare(sortKey(q.id)));
    const sep = Math.min((2 * Math.PI) / Math.max(1, keyed.length), 0.32);
    const placed: number[] = [];
    keyed.forEach(({ a }, i) => placed.push(i === 0 ? a : Math.max(a, placed[i - 1] + sep)));
    // Centre each run of pushed nodes on the angles they wanted.
    const drift = keyed.length ? placed.reduce((sum, a, i) => sum + (a - keyed[i].a), 0) / keyed.length : 0;
    keyed.forEach(({ id }, i) => angle.set(id, placed[i] - drift));
  }

  const nodes: LaidOutNode[] = [...byId.values()].map((node) => {
    const depth = node.id === n.center ? 0 : (dist.get(node.id) ?? 1);
    const a = angle.get(node.id) ?? 0;
    const radius = depth === 0 ? 0 : radiusFor(depth);
    const c = categoryOf(node.category, node.path);
    return {
      id: node.id,
      path: node.path,
      title: node.title || node.id,
      label: shortLabel(node.title || node.id, maxLabel),
      x: Math.round((cx + radius * Math.cos(a)) * 10) / 10,
      y: Math.round((cy + radius * Math.sin(a)) * 10) / 10,
      r: depth === 0 ? 14 : depth === 1 ? 9 : 6,
      colour: node.resolved ? (c?.colour ?? OTHER_COLOUR) : UNRESOLVED_COLOUR,
      categoryLabel: node.resolved ? (c?.label ?? "Other") : "Unresolved",
      depth,
      resolved: node.resolved,
      center: node.id === n.center,
    };
  });
  const pos = new Map(nodes.map((p) => [p.id, p]));
  const edges: LaidOutEdge[] = n.edges
    .filter((e) => pos.has(e.source) && pos.has(e.target))
    .map((e) => ({
      source: e.source,
      target: e.target,
      kind: e.kind,
      count: e.count,
      x1: pos.get(e.source)!.x,
      y1: pos.get(e.source)!.y,
      x2: pos.get(e.target)!.x,
      y2: pos.get(e.target)!.y,
      width: Math.min(4, 1 + Math.log2(Math.max(1, e.count))),
    }));

  // Legend in the vault's category order, then Other and Unresolved, only for what is drawn.
  const seen = new Map<string, string>();
  for (const node of nodes) if (!seen.has(node.categoryLabel)) seen.set(node.categoryLabel, node.colour);
  const order = [...CATEGORIES.map((c) => c.label), "Other", "Unresolved"];
  const legend = [...seen.entries()]
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([label, colour]) => ({ label, colour }));
  // Centre last so it is drawn on top.
  nodes.sort((a, b) => b.depth - a.depth);
  return { width, height, nodes, edges, legend };
}
