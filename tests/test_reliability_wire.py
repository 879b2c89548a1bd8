"""Hostile requests and odd values (issue 17, medium and low): ids JSON cannot answer, batches
and answers without bounds, YAML bombs, GraphML with control characters, odd `entities:`.

Requests go over the real socket to the real server; files through the real CLI.
"""

from __future__ import annotations

import asyncio
import json
import time
import xml.dom.minidom
from pathlib import Path

import pytest
from reliability_helpers import cli
from websockets.asyncio.client import connect

from palinode_vault.server import Dispatcher, open_server, read_discovery, rpc


def _dispatcher(ran: list) -> Dispatcher:
    dispatcher = Dispatcher()

    @dispatcher.method("touch")
    async def touch(params, conn):
        ran.append(params)
        return "ok"

    @dispatcher.method("big")
    async def big(params, conn):
        return "x" * int(params.get("n", 10))

    return dispatcher


async def _exchange(vault: Path, raw: list[str], expect: int, ran: list) -> list:
    async with open_server(vault, _dispatcher(ran), max_message_bytes=8 * 1024 * 1024):
        async with connect(read_discovery(vault).url, max_size=64 * 1024 * 1024) as ws:
            for text in raw:
                await ws.send(text)
            return [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in range(expect)]


@pytest.mark.parametrize("request_id", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_ids_json_cannot_carry_back_are_refused_without_running(tmp_path, request_id):
    ran: list = []
    text = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "touch", "params": {{}}}}'
    [reply] = asyncio.run(_exchange(tmp_path, [text], 1, ran))
    assert reply["error"]["code"] == -32600 and reply["id"] is None
    assert ran == []


def test_a_long_batch_is_refused_whole(tmp_path):
    ran: list = []
    batch = [{"jsonrpc": "2.0", "id": i, "method": "touch", "params": {}} for i in range(rpc.MAX_BATCH + 1)]
    [reply] = asyncio.run(_exchange(tmp_path, [json.dumps(batch)], 1, ran))
    assert reply["error"]["code"] == -32600 and "at most" in reply["error"]["message"]
    assert ran == []


def test_a_batch_answer_is_bounded(tmp_path, monkeypatch):
    """A 0.39 MB batch once produced a 107 MB answer: the members after the budget do not run."""
    monkeypatch.setattr(rpc, "MAX_ANSWER_CHARS", 100_000)
    ran: list = []
    batch = [{"jsonrpc": "2.0", "id": i, "method": "big", "params": {"n": 30_000}} for i in range(10)]
    batch.append({"jsonrpc": "2.0", "id": 99, "method": "touch", "params": {}})
    [reply] = asyncio.run(_exchange(tmp_path, [json.dumps(batch)], 1, ran))
    assert len(json.dumps(reply)) < 200_000
    assert len(reply) == 11  # every request is answered, some with an error saying why
    assert sum(1 for r in reply if "result" in r) <= 4
    assert {r["id"] for r in reply if "error" in r} >= {99}
    assert ran == []


def test_one_oversized_answer_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(rpc, "MAX_ANSWER_CHARS", 1000)
    ran: list = []
    [reply] = asyncio.run(
        _exchange(tmp_path, [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "big", "params": {"n": 5000}})], 1, ran)
    )
    assert reply["error"]["code"] == rpc.BUSY and "ask for less" in reply["error"]["message"]


# --- YAML: merge-key and alias bombs are refused before they are built ------------------------------


def _merge_bomb(levels: int = 12, width: int = 6) -> str:
    lines = ["l0: &l0 {" + ", ".join(f"k{i}: {i}" for i in range(width)) + "}"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level}\n  <<: [" + ", ".join([f"*l{level - 1}"] * width) + "]\n  m: 1")
    return "\n".join(lines) + "\n"


def test_merge_key_bomb_is_refused_quickly(tmp_path):
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "bomb.md").write_text("---\n" + _merge_bomb() + "---\n# Bomb\n")
    started = time.monotonic()
    done = cli("lint", "--vault", root, "--json", timeout=120)
    assert time.monotonic() - started < 60
    findings = json.loads(done.stdout)["findings"]
    assert any(
        f["path"] == "people/bomb.md" and f["check"] == "invalid_frontmatter" and "alias" in f["message"] for f in findings
    )


# --- GraphML: well-formed whatever titles hold -----------------------------------------------------


def test_graphml_with_control_characters_is_well_formed(tmp_path):
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "ana.md").write_text("# Ana\x01\x0b\x1f end\n\nSee [[bo\x02]] and [[bo]].\n")
    (root / "people" / "bo.md").write_text("# Bo\n")
    tmp_path / "graph.graphml"
    done = cli("graph", "--vault", root, "--format", "graphml", timeout=120)
    assert done.returncode == 0, done.stderr
    xml.dom.minidom.parseString(done.stdout.encode("utf-8"))  # raises on a character XML cannot hold
    assert "Ana\\u0001\\u000b\\u001f end" in done.stdout


# --- odd entities: values left as written, and said why ------------------------------------------


@pytest.mark.parametrize("value", ["{a: 1}", "[1, null, true]", "[person/bo, 3]", "7"])
def test_odd_entities_values_are_left_and_reported(tmp_path, value):
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    text = (
        f"---\nid: person-ana\ncategory: person\ntype: PersonMemory\nname: Ana\nentities: {value}\n---\n"
        "# Ana\n\nAna works with [[bo]].\n"
    )
    (root / "people" / "ana.md").write_text(text)
    (root / "people" / "bo.md").write_text(
        "---\nid: person-bo\ncategory: person\ntype: PersonMemory\nname: Bo\nentities: []\n---\n# Bo\n"
    )
    linted = cli("lint", "--vault", root, "--json")
    assert "Traceback" not in linted.stderr, linted.stderr
    assert any(f["path"] == "people/ana.md" for f in json.loads(linted.stdout)["findings"])
    done = cli("fix", "--vault", root, "--json")
    assert "Traceback" not in done.stderr, done.stderr
    result = json.loads(done.stdout)
    assert (root / "people" / "ana.md").read_text() == text
    assert any(s["path"] == "people/ana.md" and "entities:" in s["reason"] for s in result["skipped"])
