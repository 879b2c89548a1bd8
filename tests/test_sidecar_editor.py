"""Editor safety: a file open in Obsidian is edited through the plugin (`apply_edit` with the
hash of the text it was computed from), never behind the editor's back."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from sidecar_helpers import (
    ANA,
    CONSISTENT,
    SidecarClient,
    age_files,
    journal_entries,
    plugin_apply_edit,
    run,
    running_sidecar,
    text_hash,
    write,
)

from palinode_vault.writer import undo_last

pytestmark = pytest.mark.timeout(60)

QUIET = 0.3
REL = "people/ana.md"
EDITED = ANA.replace(
    "She pairs with [[bruno-costa|Bruno]] most mornings.", "She pairs with Bruno most mornings.\n\nThe Atlas app ships in May."
)


def machine_fixed(text: str) -> str:
    """`text` with the cross_refs and footer the sidecar computes for it."""
    return text.replace("cross_refs: [person/bruno-costa]", "cross_refs: [project/atlas-app]").replace(
        "## See also\n- [[atlas-app]]\n", "## See also\n- [[atlas-app]]\n- [[bruno-costa]]\n"
    )


@pytest.fixture
def vault(make_vault) -> Path:
    root = make_vault(CONSISTENT)
    age_files(root)
    return root


def now_ms() -> float:
    return time.time() * 1000


def test_open_file_is_edited_through_the_plugin(vault: Path):
    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with (
                await SidecarClient.open(vault, apply_edit=plugin_apply_edit(vault)) as plugin,
                await SidecarClient.open(vault, apply_edit=plugin_apply_edit(vault)) as other,
            ):
                assert await plugin.call("editor.state", {"active": REL, "open": [REL], "last_keystroke": now_ms()}) == {
                    "ok": True
                }
                saved = time.monotonic()
                write(vault, REL, EDITED)
                wrote = await plugin.wait_for("wrote", REL, since=saved, timeout=5)
                assert "plugin" in wrote.params["reason"]
                [call] = plugin.edits
                assert call.params == {"path": REL, "old_hash": text_hash(EDITED), "new_text": machine_fixed(EDITED)}
                assert call.answer == {"applied": True}
                assert call.at - saved >= QUIET
                assert other.edits == []  # only the connection that reported the editor is asked
                # the plugin's write comes back through the watcher and is recognised
                await asyncio.sleep(1.0)
                assert len(plugin.edits) == 1 and len(plugin.seen("wrote")) == 1
                assert (await plugin.call("note.findings", {"path": REL}))["findings"] == []

    run(body())
    assert (vault / REL).read_text() == machine_fixed(EDITED)
    # the plugin wrote it, but for the sidecar: journaled like its own writes, and undo reverts it
    [entry] = journal_entries(vault)
    assert entry["path"] == REL and entry["label"] == "sidecar"
    assert entry["before_hash"] == text_hash(EDITED) and entry["after_hash"] == text_hash(machine_fixed(EDITED))
    undone = undo_last(vault)
    assert undone.restored == [REL] and (vault / REL).read_text() == EDITED


def test_stale_hash_is_not_written_and_retried_then_written_after_close(vault: Path):
    newer = EDITED.replace("ships in May.", "ships in May, after the beta.")
    answers: list[dict] = []

    def typing_plugin(params: dict) -> dict:
        """The person keeps typing: the first answer finds the text changed, the next ones refuse too."""
        if not answers:
            write(vault, REL, newer)  # a keystroke landed before the edit could be applied
        current = (vault / REL).read_text()
        answer = (
            {"applied": False, "reason": "hash mismatch"}
            if text_hash(current) != params["old_hash"]
            else {"applied": False, "reason": "busy"}
        )
        answers.append(answer)
        return answer

    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with await SidecarClient.open(vault, apply_edit=typing_plugin) as plugin:
                await plugin.call("editor.state", {"active": REL, "open": [REL], "last_keystroke": now_ms()})
                saved = time.monotonic()
                write(vault, REL, EDITED)
                deadline = time.monotonic() + 5
                while len(plugin.edits) < 2 and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                first, second = plugin.edits[:2]
                assert first.params["old_hash"] == text_hash(EDITED)
                assert first.answer["reason"] == "hash mismatch"
                # retried later, from the text now on disk
                assert second.at - first.at >= QUIET - 0.05
                assert second.params["old_hash"] == text_hash(newer)
                assert second.params["new_text"] == machine_fixed(newer)
                assert plugin.seen("wrote") == [] and (vault / REL).read_text() == newer
                # the person closes the file: the sidecar writes it itself
                closed = time.monotonic()
                await plugin.call("editor.state", {"active": None, "open": [], "last_keystroke": None})
                wrote = await plugin.wait_for("wrote", REL, since=closed, timeout=5)
                assert "plugin" not in wrote.params["reason"]
                assert wrote.at - saved >= QUIET

    run(body())
    assert (vault / REL).read_text() == machine_fixed(newer)
    assert [e["path"] for e in journal_entries(vault)] == [REL]


def test_typing_in_the_active_file_postpones_the_fix(vault: Path):
    """Keystrokes reported through editor.state count as changes even before autosave lands."""

    async def body():
        async with running_sidecar(vault, quiet=QUIET):
            async with await SidecarClient.open(vault, apply_edit=plugin_apply_edit(vault)) as plugin:
                write(vault, REL, EDITED)
                start = time.monotonic()
                # keystrokes every 100 ms for 1.5 s, with no save
                while time.monotonic() - start < 1.5:
                    await plugin.call("editor.state", {"active": REL, "open": [REL], "last_keystroke": now_ms()})
                    await asyncio.sleep(0.1)
                assert plugin.edits == [] and plugin.seen("wrote") == []
                last = time.monotonic()
                await plugin.wait_for("wrote", REL, since=start, timeout=5)
                assert plugin.edits[0].at - last >= QUIET - 0.12

    run(body())
    assert (vault / REL).read_text() == machine_fixed(EDITED)
