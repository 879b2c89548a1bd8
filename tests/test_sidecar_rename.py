"""Renames and deletes with the real watcher: entity refs, ids and footers follow a rename; a
delete only produces findings."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from sidecar_helpers import (
    ANA,
    ATLAS,
    BRUNO,
    CONSISTENT,
    SidecarClient,
    age_files,
    journal_entries,
    mtimes,
    run,
    running_sidecar,
    write,
)

pytestmark = pytest.mark.timeout(60)

QUIET = 0.3

# What a rename of people/ana.md to people/ana-lima.md must leave (links in bodies are
# Obsidian's business on a rename made in Obsidian; a plain `mv` leaves them broken).
ANA_LIMA = ANA.replace("id: person-ana\n", "id: person-ana-lima\n")
BRUNO_AFTER = BRUNO.replace("entities: [person/ana,", "entities: [person/ana-lima,").replace("- [[ana]]\n", "- [[ana-lima]]\n")


@pytest.fixture
def vault(make_vault) -> Path:
    root = make_vault(CONSISTENT)
    age_files(root)
    return root


async def wait_until(predicate, timeout: float = 5.0, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(step)
    assert predicate()


def test_plain_rename_updates_refs_id_and_footers(vault: Path):
    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with await SidecarClient.open(vault) as client:
                moved = time.monotonic()
                os.rename(vault / "people/ana.md", vault / "people/ana-lima.md")
                for rel in ("people/ana-lima.md", "people/bruno-costa.md", "projects/atlas-app.md"):
                    await client.wait_for("wrote", rel, since=moved, timeout=5)
                await asyncio.sleep(1.0)  # and nothing more happens
                assert sorted(p for n in client.seen("wrote") for p in n.params["paths"]) == [
                    "people/ana-lima.md",
                    "people/bruno-costa.md",
                    "projects/atlas-app.md",
                ]
                info = await client.call("note.info", {"path": "people/ana-lima.md"})
                assert info["entities"] == ["project/atlas-app", "person/bruno-costa"]

    run(body())
    assert not (vault / "people/ana.md").exists()
    assert (vault / "people/ana-lima.md").read_text() == ANA_LIMA
    assert (vault / "people/bruno-costa.md").read_text() == BRUNO_AFTER
    atlas = (vault / "projects/atlas-app.md").read_text()
    assert "entities: [person/ana-lima, person/bruno-costa]" in atlas
    # the body link a plain mv broke stays as written (a finding); the footer follows the ref
    assert "The booking app. [[ana|Ana]] leads it." in atlas
    assert "## See also\n- [[ana-lima]]\n- [[bruno-costa]]\n" in atlas
    assert "person/ana\n" not in atlas and "person/ana," not in atlas and "person/ana]" not in atlas
    # the daily note (structural tier) is never written
    assert (vault / "daily/2026-11-20.md").read_text() == CONSISTENT["daily/2026-11-20.md"]
    assert sorted(e["path"] for e in journal_entries(vault)) == [
        "people/ana-lima.md",
        "people/bruno-costa.md",
        "projects/atlas-app.md",
    ]


def test_rename_method_from_the_plugin(vault: Path):
    """Obsidian renamed the note and updated body links (including one in the note itself, so
    the watcher cannot tell it is a rename); the plugin reports it with `rename`."""

    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with await SidecarClient.open(vault) as client:
                moved = time.monotonic()
                os.rename(vault / "people/ana.md", vault / "people/ana-lima.md")
                write(vault, "people/ana-lima.md", ANA + "\nSee [[ana-lima#Context]].\n")
                atlas = ATLAS.replace("[[ana|Ana]]", "[[ana-lima|Ana]]")
                write(vault, "projects/atlas-app.md", atlas)
                result = await client.call("rename", {"old_path": "people/ana.md", "new_path": "people/ana-lima.md"})
                assert result["refs_updated"] == 3  # bruno, atlas, and the renamed note's own id
                for rel in ("people/ana-lima.md", "people/bruno-costa.md", "projects/atlas-app.md"):
                    await client.wait_for("wrote", rel, since=moved, timeout=5)
                await asyncio.sleep(0.8)
                assert len(client.seen("wrote", "people/bruno-costa.md")) == 1
                # the rename left no findings behind
                lint = await client.call("lint")
                assert lint["findings"] == [f for f in lint["findings"] if f["path"].startswith("daily/")]
                return atlas

    atlas = run(body())
    assert (vault / "people/ana-lima.md").read_text() == ANA_LIMA + "\nSee [[ana-lima#Context]].\n"
    assert (vault / "people/bruno-costa.md").read_text() == BRUNO_AFTER
    # the new name is now mentioned in the body (the link Obsidian rewrote), so cross_refs gains it
    assert (vault / "projects/atlas-app.md").read_text() == atlas.replace(
        "entities: [person/ana,", "entities: [person/ana-lima,"
    ).replace("last_updated: 2026-11-20T10:00:00Z\n", "last_updated: 2026-11-20T10:00:00Z\ncross_refs: [person/ana-lima]\n")


def test_delete_gives_findings_and_writes_nothing(vault: Path):
    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with await SidecarClient.open(vault) as client:
                before = mtimes(vault)
                gone = time.monotonic()
                (vault / "people/bruno-costa.md").unlink()
                changed = await client.wait_for("findings.changed", "people/ana.md", since=gone, timeout=3)
                assert "projects/atlas-app.md" in changed.params["paths"]
                ana = await client.call("note.findings", {"path": "people/ana.md"})
                broken = [f for f in ana["findings"] if f["check"] == "broken_link"]
                assert [(f["target"], f["line"]) for f in broken] == [("bruno-costa", 13)]
                atlas = await client.call("note.findings", {"path": "projects/atlas-app.md"})
                assert any(f["check"] == "broken_link" and f["target"] == "bruno-costa" for f in atlas["findings"]), atlas
                daily = await client.call("note.findings", {"path": "daily/2026-11-20.md"})
                assert any(f["check"] == "broken_link" for f in daily["findings"])
                with pytest.raises(Exception, match="-32011"):
                    await client.call("note.findings", {"path": "people/bruno-costa.md"})
                await asyncio.sleep(QUIET + 1.5)
                assert client.seen("wrote") == []
                del before["people/bruno-costa.md"]
                assert mtimes(vault) == before

    run(body())
    assert journal_entries(vault) == []
