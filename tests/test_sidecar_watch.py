"""The sidecar live on a temp vault: real watcher (short timings), real server, real client.

Edits are noticed and their machine-owned surfaces kept current after the quiet period; the
sidecar's own writes reach a fixed point; a burst of autosaves loses nothing and is never raced.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from sidecar_helpers import (
    ANA,
    ATLAS,
    BRUNO,
    CONSISTENT,
    DAILY,
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


@pytest.fixture
def vault(make_vault) -> Path:
    root = make_vault(CONSISTENT)
    age_files(root)
    return root


def test_consistent_vault_starts_clean(vault: Path, load_vault):
    """The fixture itself is a fixed point of `fix` (else the tests below prove nothing)."""
    from palinode_vault.maintenance import fix

    result = fix(load_vault(vault), dry_run=True)
    assert result.written == [] and result.diff == ""


def test_edit_reports_findings_then_writes_only_machine_surfaces(vault: Path):
    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with await SidecarClient.open(vault) as client:
                assert await client.call("note.findings", {"path": "people/ana.md"}) == {"path": "people/ana.md", "findings": []}
                # The person adds a paragraph naming the Atlas app and drops the link to Bruno.
                edited = ANA.replace(
                    "She pairs with [[bruno-costa|Bruno]] most mornings.",
                    "She pairs with Bruno most mornings.\n\nThe Atlas app ships in May.",
                )
                saved = time.monotonic()
                write(vault, "people/ana.md", edited)
                changed = await client.wait_for("findings.changed", "people/ana.md", since=saved, timeout=3)
                assert changed.params["total"] >= 1
                found = await client.call("note.findings", {"path": "people/ana.md"})
                checks = {f["check"] for f in found["findings"]}
                assert {"cross_refs_stale", "footer_stale"} <= checks, found
                # nothing is written inside the quiet period
                assert changed.at - saved < QUIET
                assert (vault / "people/ana.md").read_text() == edited
                wrote = await client.wait_for("wrote", "people/ana.md", since=saved, timeout=5)
                assert wrote.at - saved >= QUIET
                after = (vault / "people/ana.md").read_text()
                # Only cross_refs and the footer changed: everything the person wrote is intact.
                expected = edited.replace("cross_refs: [person/bruno-costa]", "cross_refs: [project/atlas-app]").replace(
                    "## See also\n- [[atlas-app]]\n", "## See also\n- [[atlas-app]]\n- [[bruno-costa]]\n"
                )
                assert after == expected
                # and once written, the note is clean again and stays so
                await asyncio.sleep(QUIET + 0.4)
                assert (await client.call("note.findings", {"path": "people/ana.md"}))["findings"] == []
                assert [n.params["paths"] for n in client.seen("wrote")] == [["people/ana.md"]]
        assert [e["path"] for e in journal_entries(vault)] == ["people/ana.md"]

    run(body())


def test_consistent_vault_is_a_fixed_point(vault: Path):
    before = mtimes(vault)

    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with await SidecarClient.open(vault) as client:
                await asyncio.sleep(2.5)
                assert client.seen("wrote") == []
                status = await client.call("status")
                assert status["writes"] == 0 and status["last_write"] is None and status["pending"] == 0

    run(body())
    assert mtimes(vault) == before
    assert journal_entries(vault) == []


def test_own_fix_is_not_a_second_round(make_vault):
    """A vault with stale surfaces everywhere: each file is written once, then nothing more."""
    stale = {
        "people/ana.md": ANA.replace("cross_refs: [person/bruno-costa]\n", "").replace("- [[atlas-app]]\n", "- [[old-thing]]\n"),
        "people/bruno-costa.md": BRUNO.replace("cross_refs: [project/atlas-app]", "cross_refs: [person/nobody]"),
        "projects/atlas-app.md": ATLAS.split("\n<!-- palinode:see-also -->")[0] + "\n",
        "daily/2026-11-20.md": DAILY,
    }
    root = make_vault(stale)
    age_files(root)

    async def body():
        async with running_sidecar(root, quiet=QUIET):
            async with await SidecarClient.open(root) as client:
                for rel in ("people/ana.md", "people/bruno-costa.md", "projects/atlas-app.md"):
                    await client.wait_for("wrote", rel, timeout=5)
                settled = mtimes(root)
                await asyncio.sleep(2.5)
                assert mtimes(root) == settled
                assert (await client.call("status"))["pending"] == 0

    run(body())
    for rel, text in CONSISTENT.items():
        assert (root / rel).read_text() == text, rel
    paths = sorted(e["path"] for e in journal_entries(root))
    assert paths == ["people/ana.md", "people/bruno-costa.md", "projects/atlas-app.md"]


def test_burst_of_autosaves_loses_nothing_and_is_not_raced(vault: Path):
    """200 saves of one note over 10 s, like autosave while typing."""
    rel = "people/ana.md"
    quiet = 0.5
    base = ANA.replace("She pairs with [[bruno-costa|Bruno]] most mornings.", "She pairs with Bruno most mornings.")

    async def body():
        async with running_sidecar(vault, quiet=quiet):
            async with await SidecarClient.open(vault) as client:
                texts = []
                start = time.monotonic()
                for i in range(200):
                    # each save grows the note by one "keystroke" line; some mention the project
                    extra = "".join(f"- typed line {j}{' about the Atlas app' if j % 50 == 49 else ''}\n" for j in range(i + 1))
                    text = base.replace("## Context\n", "## Context\n" + extra)
                    texts.append(text)
                    write(vault, rel, text)
                    await asyncio.sleep(max(0.0, start + (i + 1) * 0.05 - time.monotonic()))
                last_save = time.monotonic()
                assert 9.5 < last_save - start < 12
                assert client.seen("wrote") == [], "the sidecar wrote while the file was changing"
                wrote = await client.wait_for("wrote", rel, since=start, timeout=5)
                assert wrote.at - last_save >= quiet - 0.05
                await asyncio.sleep(1.0)
                assert len(client.seen("wrote", rel)) == 1
                return texts

    texts = run(body(), timeout=45)
    final = (vault / rel).read_text()
    # The final file is the last text saved, plus only the machine-owned surfaces.
    expected = (
        texts[-1]
        .replace("cross_refs: [person/bruno-costa]", "cross_refs: [project/atlas-app]")
        .replace("## See also\n- [[atlas-app]]\n", "## See also\n- [[atlas-app]]\n- [[bruno-costa]]\n")
    )
    assert final == expected
    entries = [e for e in journal_entries(vault) if e["path"] == rel]
    assert len(entries) == 1
    import base64

    assert base64.b64decode(entries[0]["before"]).decode() == texts[-1]


def test_undo_from_the_cli_sticks_while_the_sidecar_runs(vault: Path):
    """A file `palinode-vault undo` restored is left alone, not fixed straight back."""
    from palinode_vault.writer import undo_last

    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with await SidecarClient.open(vault) as client:
                edited = ANA.replace("She pairs with [[bruno-costa|Bruno]] most mornings.", "She pairs with Bruno most mornings.")
                saved = time.monotonic()
                write(vault, "people/ana.md", edited)
                await client.wait_for("wrote", "people/ana.md", since=saved, timeout=5)
                fixed = (vault / "people/ana.md").read_text()
                assert fixed != edited
                undone_at = time.monotonic()
                result = await asyncio.to_thread(undo_last, vault)  # what the CLI's undo runs
                assert result.restored == ["people/ana.md"]
                await client.wait_for("findings.changed", "people/ana.md", since=undone_at, timeout=5)
                await asyncio.sleep(QUIET * 4)
                assert (vault / "people/ana.md").read_text() == edited  # still as undo left it
                assert not [n for n in client.seen("wrote") if n.at > undone_at]
                # the person edits it again: from then on it is kept current as usual
                again = time.monotonic()
                write(vault, "people/ana.md", edited + "\nOne more line.\n")
                await client.wait_for("wrote", "people/ana.md", since=again, timeout=5)

    run(body())


def test_a_folder_moved_in_or_out_and_a_note_in_a_brand_new_folder_are_noticed(vault: Path, tmp_path: Path):
    """A folder moved into the vault is reported by the watcher as the folder alone, and a note
    written into a folder that has just been created can come before the watcher watches it: both
    count as their files. A folder moved out takes its notes with it."""
    outside = tmp_path / "outside" / "research"
    outside.mkdir(parents=True)
    (outside / "moved-in.md").write_text("# Moved in\n\nA note that arrived with its folder.\n")

    async def body():
        async with running_sidecar(vault, quiet=QUIET) as sc:
            async with await SidecarClient.open(vault) as client:
                before = (await client.call("status"))["counts"]["markdown_files"]
                (vault / "inbox").mkdir()
                (vault / "inbox" / "new-one.md").write_text("---\nstatus: review\n---\n# New one\n\nWritten at once.\n")
                outside.rename(vault / "research")
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and not {"inbox/new-one.md", "research/moved-in.md"} <= set(
                    sc.sidecar.vault.state.notes
                ):
                    await asyncio.sleep(0.1)
                assert {"inbox/new-one.md", "research/moved-in.md"} <= set(sc.sidecar.vault.state.notes)
                assert (await client.call("status"))["counts"]["markdown_files"] == before + 2
                (vault / "research").rename(tmp_path / "outside" / "research")
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and "research/moved-in.md" in sc.sidecar.vault.state.notes:
                    await asyncio.sleep(0.1)
                assert "research/moved-in.md" not in sc.sidecar.vault.state.notes
                assert (await client.call("status"))["counts"]["markdown_files"] == before + 1

    run(body())
