"""The link graph: typed edges with counts, backlinks, neighbourhoods, orphans, dead ends, export."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from palinode_vault.core.graph import backlinks, build_graph, dead_ends, graph_orphans, neighbourhood, to_json

FILES = {
    "people/alice-smith.md": (
        "---\nid: person-alice-smith\ncategory: person\ntype: PersonMemory\nname: Alice Smith\n"
        'entities: [project/checkout]\ncross_refs: [project/checkout]\nrelated: "[[checkout]]"\n---\n'
        "Works on [[checkout]] and [[checkout#Status]]; see [c](../projects/checkout.md).\n![[pic.png]]\n"
    ),
    "projects/checkout.md": (
        "---\nid: project-checkout\ncategory: project\ntype: ProjectSnapshot\nname: Checkout\n"
        "entities: [person/alice-smith, person/ghost]\n---\n## Status\nLed by [[alice-smith]]. [[Missing Note]]\n"
    ),
    "daily/2026-11-30.md": "Talked to [[alice-smith]].\n",
    "Lonely.md": "No links.\n",
    "Sink.md": "Nothing out.\n",
    "Source.md": "[[Sink]]\n",
    "attachments/pic.png": b"\x89PNG",
}


@pytest.fixture
def graph(make_vault, load_vault):
    return build_graph(load_vault(make_vault(FILES)).state)


def _edges(graph):
    return {(u, v, d["kind"]): d["count"] for u, v, d in graph.edges(data=True)}


def test_nodes_and_typed_edges_with_counts(graph):
    types = {n: d["type"] for n, d in graph.nodes(data=True)}
    assert types["attachments/pic.png"] == "attachment"
    assert types["people/alice-smith.md"] == "note"
    assert types["unresolved:missing note"] == "unresolved"
    assert types["unresolved:person/ghost"] == "unresolved"
    assert graph.nodes["people/alice-smith.md"]["category"] == "person"
    assert graph.nodes["people/alice-smith.md"]["title"] == "Alice Smith"
    assert _edges(graph) == {
        ("people/alice-smith.md", "projects/checkout.md", "link"): 3,  # two wikilinks, one markdown link
        ("people/alice-smith.md", "projects/checkout.md", "property"): 1,
        ("people/alice-smith.md", "projects/checkout.md", "entity"): 1,
        ("people/alice-smith.md", "projects/checkout.md", "cross_ref"): 1,
        ("people/alice-smith.md", "attachments/pic.png", "embed"): 1,
        ("projects/checkout.md", "people/alice-smith.md", "link"): 1,
        ("projects/checkout.md", "people/alice-smith.md", "entity"): 1,
        ("projects/checkout.md", "unresolved:person/ghost", "entity"): 1,
        ("projects/checkout.md", "unresolved:missing note", "link"): 1,
        ("daily/2026-11-30.md", "people/alice-smith.md", "link"): 1,
        ("Source.md", "Sink.md", "link"): 1,
    }


def test_backlinks(graph):
    back = backlinks(graph, "people/alice-smith.md")
    assert [(b["path"], b["kinds"]) for b in back] == [
        ("daily/2026-11-30.md", {"link": 1}),
        ("projects/checkout.md", {"link": 1, "entity": 1}),
    ]
    assert backlinks(graph, "nope.md") == []


def test_neighbourhood(graph):
    hood = neighbourhood(graph, "daily/2026-11-30.md", depth=1)
    assert {n["id"] for n in hood["nodes"]} == {"daily/2026-11-30.md", "people/alice-smith.md"}
    deeper = neighbourhood(graph, "daily/2026-11-30.md", depth=2)
    ids = {n["id"] for n in deeper["nodes"]}
    assert {"projects/checkout.md", "attachments/pic.png"} <= ids
    assert "Lonely.md" not in ids
    ghost = next(n for n in neighbourhood(graph, "projects/checkout.md")["nodes"] if n["id"] == "unresolved:person/ghost")
    assert ghost["resolved"] is False and ghost["path"] is None


def test_orphans_and_dead_ends(graph):
    assert graph_orphans(graph) == ["Lonely.md"]
    assert dead_ends(graph) == ["Sink.md"]


def test_cli_graph_json_and_graphml(make_vault, run_cli):
    root = make_vault(FILES)
    result = run_cli("graph", "--vault", root, "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert {"nodes", "edges"} == set(data)
    kinds = {}
    for e in data["edges"]:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + e["count"]
    assert kinds == {"link": 7, "property": 1, "entity": 3, "cross_ref": 1, "embed": 1}
    assert len(data["nodes"]) == 9  # 6 notes, 1 attachment, 2 unresolved
    ml = run_cli("graph", "--vault", root, "--format", "graphml")
    assert ml.exit_code == 0
    tree = ET.fromstring(ml.stdout)
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(tree.findall(".//g:node", ns)) == 9
    assert len(tree.findall(".//g:edge", ns)) == len(data["edges"])


def test_to_json_round_trips_the_graph(graph):
    data = to_json(graph)
    assert len(data["edges"]) == graph.number_of_edges()
