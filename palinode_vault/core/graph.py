"""The link graph (networkx): notes, attachments and unresolved targets, with typed edges.

Edge kinds: `link` (body wikilinks and markdown links), `embed`, `property` (links in
frontmatter values), `entity` (entities: refs) and `cross_ref` (cross_refs: refs). Parallel
links of one kind between two nodes are one edge with a `count`.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from typing import Any

import networkx as nx

from palinode_vault.core.entities import canonical_ref
from palinode_vault.core.vault_state import VaultState
from palinode_vault.kinds import kind_of_path

EDGE_KINDS = ("link", "embed", "property", "entity", "cross_ref")
UNRESOLVED = "unresolved:"


def _edge_kind(link_kind: str) -> str:
    return {"wiki": "link", "md": "link", "embed": "embed", "md_embed": "embed", "property": "property"}[link_kind]


def _category(path: str) -> str | None:
    kind = kind_of_path(path)
    return kind.name if kind else None


def _refs(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in value or [] if v is not None]


def build_graph(state: VaultState) -> nx.MultiDiGraph:
    """The whole vault as a graph. Node ids are vault paths, or 'unresolved:<target>'."""
    graph = nx.MultiDiGraph()
    for path in state.files():
        is_note = path.lower().endswith(".md")
        note = state.notes.get(path)
        graph.add_node(
            path,
            type="note" if is_note else "attachment",
            title=note.title if note else path.rsplit("/", 1)[-1],
            category=_category(path) if is_note else None,
        )
    for source, note in state.notes.items():
        counts: Counter[tuple[str, str]] = Counter()
        for link, target in zip(note.links, state.resolved.get(source) or []):
            if target is None:
                target = UNRESOLVED + link.target.lower()
                if target not in graph:
                    graph.add_node(target, type="unresolved", title=link.target, category=None)
            counts[(target, _edge_kind(link.kind))] += 1
        data = note.frontmatter or {}
        for key, kind in (("entities", "entity"), ("cross_refs", "cross_ref")):
            for entry in _refs(data.get(key)):
                ref = canonical_ref(entry)
                target = state.entity_path(ref) if ref else None
                if target is None:
                    target = UNRESOLVED + (ref or entry)
                    if target not in graph:
                        graph.add_node(target, type="unresolved", title=ref or entry, category=None)
                counts[(target, kind)] += 1
        for (target, kind), count in counts.items():
            if target != source:
                graph.add_edge(source, target, key=kind, kind=kind, count=count)
    return graph


def dead_ends(graph: nx.MultiDiGraph) -> list[str]:
    """Notes with links in but none out."""
    return sorted(
        n for n, d in graph.nodes(data=True) if d["type"] == "note" and graph.out_degree(n) == 0 and graph.in_degree(n) > 0
    )


def graph_orphans(graph: nx.MultiDiGraph) -> list[str]:
    """Notes with no edges at all."""
    return sorted(n for n, d in graph.nodes(data=True) if d["type"] == "note" and graph.degree(n) == 0)


def backlinks(graph: nx.MultiDiGraph, path: str) -> list[dict[str, Any]]:
    """Who links to `path`, with edge kinds and counts, grouped per source."""
    if path not in graph:
        return []
    by_source: dict[str, dict[str, int]] = {}
    for source, _, data in graph.in_edges(path, data=True):
        by_source.setdefault(source, {})[data["kind"]] = data["count"]
    return [
        {"path": s, "title": graph.nodes[s]["title"], "category": graph.nodes[s]["category"], "kinds": kinds}
        for s, kinds in sorted(by_source.items())
    ]


def neighbourhood(graph: nx.MultiDiGraph, path: str, depth: int = 1, max_nodes: int | None = None) -> dict[str, Any]:
    """The typed neighbourhood of a note to `depth` hops, in and out, for browsing. With
    `max_nodes`, the nearest nodes (by hop, then name) up to that many, and `truncated` counts
    the rest (a note of half a million links has that many neighbours)."""
    if path not in graph:
        return {"center": path, "nodes": [], "edges": []}
    undirected = graph.to_undirected(as_view=True)
    seen = {path}
    order = [path]  # nearest first
    frontier = {path}
    for _ in range(max(1, min(depth, 3))):
        nxt = set()
        for node in frontier:
            nxt |= set(undirected.neighbors(node))
        frontier = nxt - seen
        seen |= nxt
        room = None if max_nodes is None else max(0, max_nodes - len(order))
        # with a bound, only the first names are sorted (half a million in one sort holds the GIL)
        order += sorted(frontier) if room is None or room >= len(frontier) else heapq.nsmallest(room, frontier)
    left_out = len(seen) - len(order)
    if max_nodes is not None and len(order) > max_nodes:
        left_out += len(order) - max_nodes
        order = order[:max_nodes]
    seen = set(order)
    nodes = [
        {
            "id": n,
            "path": None if graph.nodes[n]["type"] == "unresolved" else n,
            "title": graph.nodes[n]["title"],
            "category": graph.nodes[n]["category"],
            "resolved": graph.nodes[n]["type"] != "unresolved",
        }
        for n in sorted(seen)
    ]
    edges = [
        {"source": u, "target": v, "kind": d["kind"], "count": d["count"]} for u, v, d in graph.subgraph(seen).edges(data=True)
    ]
    out: dict[str, Any] = {"center": path, "nodes": nodes, "edges": edges}
    if left_out:
        out["truncated"] = left_out
    return out


def to_json(graph: nx.MultiDiGraph) -> dict[str, Any]:
    return {
        "nodes": [{"id": n, **d} for n, d in graph.nodes(data=True)],
        "edges": [{"source": u, "target": v, "kind": d["kind"], "count": d["count"]} for u, v, d in graph.edges(data=True)],
    }


# Characters XML 1.0 cannot carry at all, not even as &#..; references (control characters,
# lone surrogates, U+FFFE/U+FFFF). A title or file name may hold them; the export must still parse.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_safe(value: Any) -> Any:
    """`value` with each character XML cannot carry written as `\\uXXXX` (ids stay distinct)."""
    if isinstance(value, str) and _NOT_XML.search(value):
        return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    return value


def to_graphml(graph: nx.MultiDiGraph) -> str:
    """The graph as GraphML: well-formed XML whatever the titles and names hold."""
    clean = nx.MultiDiGraph()
    for n, d in graph.nodes(data=True):
        clean.add_node(_xml_safe(n), **{k: ("" if v is None else _xml_safe(v)) for k, v in d.items()})
    for u, v, k, d in graph.edges(keys=True, data=True):
        clean.add_edge(_xml_safe(u), _xml_safe(v), key=_xml_safe(k), **{a: _xml_safe(b) for a, b in d.items()})
    return "\n".join(nx.generate_graphml(clean))
