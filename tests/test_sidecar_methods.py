"""The sidecar's JSON-RPC methods through the real socket, on a copy of sample-vault/
(docs/SAMPLE_VAULT.md says what every answer must be). Automatic fixes are off here so the
vault only changes when a method changes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import TODAY, tree_digest
from sidecar_helpers import RpcError, SidecarClient, age_files, journal_entries, run, running_sidecar, text_hash

pytestmark = pytest.mark.timeout(60)

# docs/SAMPLE_VAULT.md: what lint reports on a fresh copy
SAMPLE_COUNTS = {
    "broken_anchor": 1,
    "broken_link": 1,
    "core_review": 2,
    "cross_refs_stale": 28,
    "duplicate_id": 2,
    "footer_stale": 2,
    "inbox_stale": 1,
    "invalid_frontmatter": 1,
    "missing_frontmatter": 1,
    "orphan": 1,
    "schema": 1,
    "stale": 1,
    "superseded_not_archived": 1,
    "unresolvable_label": 1,
    "wiki_drift": 2,
}
STATUS_KEYS = {"version", "pid", "port", "vault", "counts", "findings", "last_write", "last_error", "index", "busy"}


@pytest.fixture
def vault(sample_vault: Path) -> Path:
    age_files(sample_vault)
    return sample_vault


def sidecar(root: Path, **kw):
    return running_sidecar(root, quiet=0.3, auto_fix=False, now=TODAY, **kw)


async def code_of(client: SidecarClient, method: str, params: dict | None = None) -> int:
    with pytest.raises(RpcError) as err:
        await client.call(method, params)
    assert err.value.message  # every error says something
    return err.value.code


def test_status_fields(vault: Path):
    async def body():
        async with sidecar(vault) as sc:
            async with await SidecarClient.open(vault) as client:
                status = await client.call("status")
                assert STATUS_KEYS - {"index"} <= set(status)
                assert status["pid"] == os.getpid() and status["port"] == sc.port
                assert status["vault"] == str(vault.resolve())
                assert status["counts"] == {"markdown_files": 44, "memory_files": 34, "links": 142, "unresolved": 2, "orphans": 1}
                assert status["findings"] == SAMPLE_COUNTS
                assert status["last_write"] is None and status["last_error"] is None and status["busy"] is None
                from palinode_vault import __version__

                assert status["version"] == __version__

    run(body())


def test_status_has_index_field(vault: Path):
    async def body():
        async with sidecar(vault):
            async with await SidecarClient.open(vault) as client:
                status = await client.call("status")
                assert set(status["index"]) >= {"mode", "driver", "model", "reason"}  # PROTOCOL.md
                assert status["index"]["mode"] in ("hybrid", "keyword")

    run(body())


def test_lint_and_note_methods(vault: Path):
    async def body():
        async with sidecar(vault):
            async with await SidecarClient.open(vault) as client:
                lint = await client.call("lint")
                assert lint["total_files"] == 34 and lint["counts"] == SAMPLE_COUNTS
                assert len(lint["findings"]) == sum(SAMPLE_COUNTS.values())
                one = await client.call("lint", {"path": "people/tariq-benali.md", "checks": ["broken_link"]})
                [finding] = one["findings"]
                assert finding == {
                    "check": "broken_link",
                    "severity": "warning",
                    "path": "people/tariq-benali.md",
                    "line": 32,
                    "column": 28,
                    "message": finding["message"],
                    "target": "mira-okonkow",
                    "fixable": False,
                }
                assert await code_of(client, "lint", {"checks": ["no_such_check"]}) == -32602

                found = await client.call("note.findings", {"path": "people/tariq-benali.md"})
                assert {f["check"] for f in found["findings"]} == {"broken_link", "cross_refs_stale"}
                assert (await client.call("note.findings", {"path": "insights/agenda-in-the-invite.md"}))["findings"][0][
                    "check"
                ] == "orphan"

                info = await client.call("note.info", {"path": "people/mira-okonkwo.md"})
                assert info["title"] == "Mira Okonkwo" and info["category"] == "person"
                assert "project/harbor-app" in info["entities"]
                assert info["hash"] == text_hash((vault / "people/mira-okonkwo.md").read_text())
                assert (await client.call("note.info", {"path": "decisions/postgres-over-firebase.md"}))["cross_refs"]

                back = await client.call("note.backlinks", {"path": "people/mira-okonkwo.md"})
                by_path = {b["path"]: b for b in back["backlinks"]}
                assert by_path["people/tariq-benali.md"]["kinds"].get("link") == 1  # line 17; the typo on 32 is not one
                assert by_path["projects/harbor-app.md"]["kinds"].get("property") == 1  # owner: "[[mira-okonkwo]]"
                assert "Home.md" in by_path

                one = await client.call("graph.neighbourhood", {"path": "people/dev-raman.md"})
                two = await client.call("graph.neighbourhood", {"path": "people/dev-raman.md", "depth": 2})
                assert one["center"] == two["center"] == "people/dev-raman.md"
                ids1, ids2 = {n["id"] for n in one["nodes"]}, {n["id"] for n in two["nodes"]}
                assert {"people/dev-raman.md", "projects/harbor-app.md", "projects/offline-mode.md"} <= ids1
                assert ids1 < ids2
                for graph, ids in ((one, ids1), (two, ids2)):
                    assert all(e["source"] in ids and e["target"] in ids for e in graph["edges"])
                # depth 1: every node is one edge from the centre
                near = {e["target"] for e in one["edges"] if e["source"] == "people/dev-raman.md"} | {
                    e["source"] for e in one["edges"] if e["target"] == "people/dev-raman.md"
                }
                assert ids1 - {"people/dev-raman.md"} <= near
                assert await code_of(client, "graph.neighbourhood", {"path": "people/dev-raman.md", "depth": 3}) == -32602

                assert await code_of(client, "note.info", {"path": "people/nobody.md"}) == -32011
                assert await code_of(client, "no.such.method") == -32601
                assert await code_of(client, "note.info", {}) == -32602

    run(body())


def test_paths_outside_the_vault_are_refused(vault: Path, tmp_path: Path):
    (tmp_path / "outside.md").write_text("# outside\n")
    (vault / "people" / "link.md").symlink_to(tmp_path / "outside.md")

    async def body():
        async with sidecar(vault):
            async with await SidecarClient.open(vault) as client:
                for path in (
                    "../outside.md",
                    "people/../../outside.md",
                    str(tmp_path / "outside.md"),
                    "/etc/passwd",
                    ".palinode/sidecar.json",
                    "people/link.md",
                ):
                    for method in ("note.findings", "note.info", "note.backlinks", "lint"):
                        assert await code_of(client, method, {"path": path}) == -32010, (method, path)
                assert await code_of(client, "rename", {"old_path": "../x.md", "new_path": "people/x.md"}) == -32010
                assert await code_of(client, "editor.state", {"active": "/etc/passwd", "open": []}) == -32010
                # dot-folders hold our state and Obsidian's, never notes
                assert (
                    await code_of(client, "rename", {"old_path": "people/noor-haddad.md", "new_path": ".palinode/sidecar.json"})
                    == -32010
                )
                assert await code_of(client, "editor.state", {"active": None, "open": [".obsidian/app.json"]}) == -32010
                assert (
                    await code_of(
                        client,
                        "link.repair",
                        {"path": "people/tariq-benali.md", "target": "mira-okonkow", "new_target": "../outside.md"},
                    )
                    == -32010
                )

    run(body())


def test_fix_dry_run_then_apply_then_undo(vault: Path):
    original = tree_digest(vault)

    async def body():
        async with sidecar(vault):
            async with await SidecarClient.open(vault) as client:
                dry = await client.call("fix", {"dry_run": True})
                assert dry["written"] == []
                assert "+cross_refs:" in dry["diff"] and "--- a/insights/demo-with-real-data.md" in dry["diff"]
                assert {s["path"] for s in dry["skipped"]} == {"people/ruth-mbeki.md", "projects/billing-migration.md"}
                assert tree_digest(vault) == original and client.seen("wrote") == []

                applied = await client.call("fix")
                assert len(applied["written"]) == 28 and applied["diff"] == dry["diff"]
                assert {s["path"] for s in applied["skipped"]} == {"people/ruth-mbeki.md", "projects/billing-migration.md"}
                wrote = await client.wait_for("wrote", "insights/demo-with-real-data.md")
                assert sorted(wrote.params["paths"]) == sorted(applied["written"])
                await client.wait_for("findings.changed", "insights/demo-with-real-data.md")
                status = await client.call("status")
                assert status["last_write"]["paths"] == applied["written"]
                for check in ("cross_refs_stale", "footer_stale", "wiki_drift", "unresolvable_label"):
                    assert check not in status["findings"], status["findings"]
                assert (await client.call("fix", {"dry_run": True}))["diff"] == ""
                # fix's writes come back through the watcher: recognised, no second round
                await _sleep(1.0)
                assert len(client.seen("wrote")) == 1

                undone = await client.call("undo")
                assert sorted(undone["restored"]) == sorted(applied["written"]) and undone["run"]
                await _sleep(0.5)
                assert (await client.call("status"))["findings"] == SAMPLE_COUNTS

    run(body())
    assert tree_digest(vault) == original


def test_link_repair_then_undo(vault: Path):
    rel = "people/tariq-benali.md"
    before = (vault / rel).read_bytes()

    async def body():
        async with sidecar(vault):
            async with await SidecarClient.open(vault) as client:
                found = await client.call("link.repair_candidates", {"path": rel, "target": "mira-okonkow"})
                assert found["target"] == "mira-okonkow"
                assert found["candidates"][0]["path"] == "people/mira-okonkwo.md"
                assert 0 < found["candidates"][0]["score"] <= 1 and found["candidates"][0]["why"]

                params = {"path": rel, "target": "mira-okonkow", "new_target": "people/mira-okonkwo.md"}
                dry = await client.call("link.repair", {**params, "dry_run": True})
                assert dry["written"] == [] and "+- 2026-11-26: Pairing with [[mira-okonkwo]]" in dry["diff"]
                assert (vault / rel).read_bytes() == before

                done = await client.call("link.repair", params)
                assert done["written"] == [rel]
                text = (vault / rel).read_text()
                assert text == before.decode().replace("[[mira-okonkow]]", "[[mira-okonkwo]]")
                await client.wait_for("wrote", rel)
                checks = {f["check"] for f in (await client.call("note.findings", {"path": rel}))["findings"]}
                assert "broken_link" not in checks
                assert [e["path"] for e in journal_entries(vault)] == [rel]

                # undo the run the repair answered with (what the plugin's "Undo the last fix" sends)
                assert done["run"]
                undone = await client.call("undo", {"run": done["run"]})
                assert undone["restored"] == [rel] and undone["run"] == done["run"]
                assert (vault / rel).read_bytes() == before
                await _sleep(0.5)
                checks = {f["check"] for f in (await client.call("note.findings", {"path": rel}))["findings"]}
                assert "broken_link" in checks
                assert (await client.call("undo"))["restored"] == []
                with pytest.raises(RpcError) as refused:
                    await client.call("undo", {"run": done["run"]})
                assert "not in the journal" in str(refused.value)

    run(body())


def test_settings_get_and_set(vault: Path):
    async def body():
        async with sidecar(vault) as sc:
            async with await SidecarClient.open(vault) as client:
                got = await client.call("settings.get")
                assert got == {
                    "quiet_seconds": 0.3,
                    "auto_fixes": {"footer": False, "cross_refs": False},
                    "models": {"embedding": None, "generation": None},
                }
                changed = await client.call("settings.set", {"quiet_seconds": 1.5, "auto_fixes": {"footer": True}})
                assert changed["quiet_seconds"] == 1.5 and changed["auto_fixes"] == {"footer": True, "cross_refs": False}
                assert await client.call("settings.get") == changed
                assert sc.sidecar.settings.quiet_seconds == 1.5
                assert await code_of(client, "settings.set", {"quiet_seconds": -1}) == -32602
                assert await code_of(client, "settings.set", {"auto_fixes": {"tags": True}}) == -32602
                assert await code_of(client, "settings.set", {"theme": "dark"}) == -32602

    run(body())


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)
