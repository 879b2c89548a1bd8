"""search, dedup_suggest, related and link.repair_candidates through a real running sidecar,
and the background updater keeping the index current as files change."""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from palinode_vault.index import open_index, refresh
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample-vault"


@pytest.fixture(scope="module")
def indexed_template(tmp_path_factory) -> Path:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        pytest.skip("llama-cpp-python is not installed (pip install 'palinode-vault[models]')")
    from palinode_vault.models import Embedder, ModelUnavailable

    try:
        embedder = Embedder()
    except ModelUnavailable as exc:
        pytest.skip(f"the default embedding model is not available: {exc}")
    root = tmp_path_factory.mktemp("sidecar-index") / "vault"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".palinode"))
    index = open_index(root, embedder=embedder)
    refresh(index, Vault(Settings(vault=root)))
    index.close()
    embedder.close()
    return root


class Client:
    def __init__(self, ws) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.notifications: list[dict] = []

    async def call(self, method: str, params: dict | None = None, timeout: float = 30.0) -> dict:
        rid = next(self.ids)
        await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}))
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
            if message.get("id") == rid:
                return message
            if "method" in message:
                self.notifications.append(message)


async def _with_sidecar(root: Path, body) -> None:
    from palinode_vault.sidecar.serve import run_sidecar

    stop = asyncio.Event()
    ready: asyncio.Future = asyncio.get_running_loop().create_future()

    def on_ready(server, sidecar):
        ready.set_result((server, sidecar))

    task = asyncio.create_task(
        run_sidecar(Settings(vault=root, quiet_seconds=0.2), stop_event=stop, on_ready=on_ready, debounce_ms=50, step_ms=20)
    )
    try:
        server, sidecar = await asyncio.wait_for(ready, 30)
        async with connect(f"ws://127.0.0.1:{server.port}/rpc?token={server.token}", max_size=2**22) as ws:
            await body(Client(ws), sidecar)
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def _idle(client: Client, sidecar, timeout: float = 60.0) -> dict:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        status = (await client.call("status"))["result"]
        index = status["index"]
        worker = sidecar.index_worker
        if worker is not None and index["busy"] is None and index["pending"] == 0 and not worker._paths and not worker._full:
            return status
        await asyncio.sleep(0.1)
    raise AssertionError("the index did not become idle")


def test_socket_methods_and_background_updates(tmp_path, indexed_template):
    root = tmp_path / "vault"
    shutil.copytree(indexed_template, root)

    async def body(client: Client, sidecar) -> None:
        status = await _idle(client, sidecar)
        assert status["index"]["mode"] == "hybrid"
        assert status["index"]["driver"] in ("sqlite3", "apsw")
        assert status["index"]["model"].startswith("all-MiniLM-L6-v2")
        assert status["index"]["reason"] is None
        assert status["index"]["coverage"] == {"notes": 44, "with_vectors": 44, "fraction": 1.0}
        assert status["index"]["progress"] is None and status["index"]["threads"]["now"] >= 1

        found = (await client.call("search", {"query": "who tests releases on old android phones", "limit": 5}))["result"]
        assert found["mode"] == "hybrid"
        assert "people/dev-raman.md" in [r["path"] for r in found["results"][:3]]
        assert set(found["results"][0]) == {"path", "score", "title", "snippet"}
        keyword = (await client.call("search", {"query": "Cochrane", "mode": "keyword"}))["result"]
        assert keyword["mode"] == "keyword" and keyword["results"][0]["path"].startswith("research/")
        bad = await client.call("search", {"query": "x", "mode": "telepathy"})
        assert bad["error"]["code"] == -32602

        dup = (await client.call("dedup_suggest", {"path": "insights/estimate-in-ranges.md"}))["result"]
        assert dup["results"] and "insights/estimate-in-ranges.md" not in [r["path"] for r in dup["results"]]
        text = (root / "insights" / "estimate-in-ranges.md").read_text(encoding="utf-8")
        strong = (await client.call("dedup_suggest", {"text": text}))["result"]["results"][0]
        assert strong == {"path": "insights/estimate-in-ranges.md", "similarity": strong["similarity"], "strong": True}
        neither = await client.call("dedup_suggest", {})
        assert neither["error"]["code"] == -32602

        rel = (await client.call("related", {"path": "people/tariq-benali.md"}))["result"]["results"]
        assert rel and "people/mira-okonkwo.md" not in [r["path"] for r in rel]
        assert set(rel[0]) == {"path", "similarity"}

        repair = (await client.call("link.repair_candidates", {"path": "people/tariq-benali.md", "target": "mira-okonkow"}))[
            "result"
        ]
        assert repair["candidates"][0]["path"] == "people/mira-okonkwo.md"
        assert "meaning" in repair["candidates"][0]["why"]

        # a new note is indexed in the background; the socket answers meanwhile
        client.notifications.clear()
        (root / "insights" / "kites.md").write_text(
            "---\nid: insight-kites\ncategory: insight\ntype: Insight\n---\n# Kites\n\n"
            "Kite surfing on the Tagus estuary on Fridays keeps the team happy.\n",
            encoding="utf-8",
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while loop.time() < deadline:
            hits = (await client.call("search", {"query": "kitesurfing on the river", "limit": 3}))["result"]["results"]
            if hits and hits[0]["path"] == "insights/kites.md":
                break
            await asyncio.sleep(0.2)
        else:
            raise AssertionError("the new note never reached the index")
        progress = [n["params"] for n in client.notifications if n["method"] == "progress"]
        assert any(p["phase"] in ("index", "embed") and p["done"] == p["total"] for p in progress)
        assert all({"per_second", "seconds_left"} <= set(p) for p in progress)

        (root / "insights" / "kites.md").unlink()
        deadline = loop.time() + 30
        while loop.time() < deadline:
            hits = (await client.call("search", {"query": "kite surfing Tagus", "mode": "keyword"}))["result"]["results"]
            if "insights/kites.md" not in [h["path"] for h in hits]:
                break
            await asyncio.sleep(0.2)
        else:
            raise AssertionError("the deleted note stayed in the index")

    asyncio.run(asyncio.wait_for(_with_sidecar(root, body), 240))


def test_keyword_only_sidecar_says_why(tmp_path, indexed_template, monkeypatch):
    root = tmp_path / "vault"
    shutil.copytree(indexed_template, root)

    async def body(client: Client, sidecar) -> None:
        status = await _idle(client, sidecar)
        assert status["index"]["mode"] == "keyword"
        assert "missing.gguf" in status["index"]["reason"]
        found = (await client.call("search", {"query": "sms provider"}))["result"]
        assert found["mode"] == "keyword" and found["results"] and "keyword-only" in found["note"]
        dup = await client.call("dedup_suggest", {"text": "anything"})
        assert dup["error"]["code"] == -32013 and "missing.gguf" in dup["error"]["message"]

    from palinode_vault.sidecar import serve

    original = serve.Sidecar

    class MissingModel(original):
        def __init__(self, settings, notify=None):
            super().__init__(settings.model_copy(update={"embedding_model": str(root / "missing.gguf")}), notify)

    monkeypatch.setattr(serve, "Sidecar", MissingModel)
    asyncio.run(asyncio.wait_for(_with_sidecar(root, body), 120))
