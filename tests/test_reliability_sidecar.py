"""The sidecar under hostile use (issue 17, medium): editor state per connection, renames not
remembered past their use. The real sidecar (watcher, socket) on a real vault."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import scale
from sidecar_helpers import CONSISTENT, SidecarClient, age_files, plugin_apply_edit, run, running_sidecar, write

pytestmark = pytest.mark.timeout(90)

REL = "people/ana.md"


@pytest.fixture
def vault(make_vault) -> Path:
    root = make_vault(CONSISTENT)
    age_files(root)
    return root


def test_editor_state_is_per_connection(vault: Path):
    """A second client cannot clear the plugin's open files, and a client's state goes with it."""

    async def body():
        async with running_sidecar(vault, quiet=0.3) as sidecar:
            app = sidecar.sidecar
            async with await SidecarClient.open(vault, apply_edit=plugin_apply_edit(vault)) as plugin:
                async with await SidecarClient.open(vault) as other:
                    await plugin.call("editor.state", {"active": REL, "open": [REL], "last_keystroke": time.time() * 1000})
                    await other.call("editor.state", {"active": None, "open": [], "last_keystroke": None})
                    assert REL in app.editor.open  # the other client did not clear it
                    assert app.editor_with(REL) is not None
                assert REL in app.editor.open
            deadline = time.monotonic() + 5
            while REL in app.editor.open and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert REL not in app.editor.open  # the plugin left: its editor state left with it

    run(body())


CARLA = """---
id: person-carla
category: person
type: PersonMemory
name: Carla
entities: [person/ana]
last_updated: 2026-11-20T10:00:00Z
---
# Carla

## Context
Carla met Ana.
"""

NEW_ANA = """---
id: person-ana
category: person
type: PersonMemory
name: Ana Souza
entities: [person/carla]
last_updated: 2026-11-20T10:00:00Z
---
# Ana Souza

## Context
Another Ana.
"""


def _entities(root: Path, rel: str) -> str:
    return next(line for line in (root / rel).read_text().splitlines() if line.startswith("entities:"))


def test_a_rename_is_forgotten_once_used(vault: Path):
    async def body():
        async with running_sidecar(vault, quiet=0.3):
            async with await SidecarClient.open(vault) as client:
                moved = time.monotonic()
                os.rename(vault / "people/ana.md", vault / "people/ana-lima.md")
                await client.wait_for("wrote", "people/bruno-costa.md", since=moved, timeout=10)
                assert "person/ana-lima" in _entities(vault, "people/bruno-costa.md")
                # Later the person writes notes that use the old name, and a new note under it.
                write(vault, "people/carla.md", CARLA)
                write(vault, "people/ana.md", NEW_ANA)
                await asyncio.sleep(2.5)
                assert _entities(vault, "people/carla.md") == "entities: [person/ana]"
                assert _entities(vault, "people/ana.md") == "entities: [person/carla]"

    run(body())


def test_rename_method_when_nothing_was_renamed_rewrites_nothing(vault: Path):
    async def body():
        async with running_sidecar(vault, quiet=0.3):
            async with await SidecarClient.open(vault) as client:
                before = (vault / "people/bruno-costa.md").read_text()
                answer = await client.call("rename", {"old_path": "people/ana.md", "new_path": "projects/atlas-app.md"})
                assert answer["refs_updated"] == 0
                await asyncio.sleep(1.5)
                assert (vault / "people/bruno-costa.md").read_text() == before

    run(body())


# --- availability ---------------------------------------------------------------------------------


def test_half_open_handshakes_are_capped_and_timed_out(vault: Path):
    """Many unauthenticated sockets that never finish their handshake must not use up the
    process's descriptors: /health and the plugin still get in."""
    import socket
    import urllib.request

    from palinode_vault.server import read_discovery, transport

    async def body():
        async with running_sidecar(vault, quiet=0.3) as sidecar:
            server = sidecar.server
            info = read_discovery(vault)
            count = scale(300, 1100)  # 1,100 exhausted the descriptors before the cap (issue 17)
            if os.name == "posix":
                import resource

                soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                if soft < count + 500 <= hard or (hard == resource.RLIM_INFINITY and soft < count + 500):
                    resource.setrlimit(resource.RLIMIT_NOFILE, (count + 500, hard))

            def open_idle() -> list:
                out = []
                for _ in range(count):  # never send a byte; the loop must accept them meanwhile
                    try:
                        out.append(socket.create_connection(("127.0.0.1", info.port), timeout=2))
                    except OSError:
                        pass  # dropped or backlog full: either way not holding one of ours
                return out

            idle = await asyncio.to_thread(open_idle)
            await asyncio.sleep(0.5)
            assert len(server._sockets) <= server.max_pending + len(server._connections) + 1
            health = await asyncio.to_thread(lambda: urllib.request.urlopen(info.health_url, timeout=5).read())
            assert b'"ok": true' in health
            async with await SidecarClient.open(vault) as client:
                assert (await client.call("status", {}))["vault"]
            deadline = time.monotonic() + transport.HANDSHAKE_TIMEOUT + 5
            while len(server._sockets) > len(server._connections) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert len(server._sockets) == len(server._connections)  # the idle ones were timed out
            for s in idle:
                s.close()

    run(body(), timeout=60)


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_NOFILE")
def test_a_save_read_while_out_of_descriptors_is_not_dropped(vault: Path):
    import hashlib
    import resource

    from palinode_vault.core.text import normalise

    edited = (vault / REL).read_text().replace("most mornings.", "most mornings and some evenings.")

    async def body():
        async with running_sidecar(vault, quiet=0.3) as sidecar:
            app = sidecar.sidecar
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            held = []
            write(vault, REL, edited)
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 4096), hard))
                while True:
                    held.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                pass
            try:
                await asyncio.sleep(1.0)  # the watcher's batch arrives and cannot read the note
            finally:
                for fd in held:
                    os.close(fd)
                resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
            text = normalise(edited)[0]
            hashlib.sha256(text.encode()).hexdigest()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                note = app.vault.state.notes.get(REL)
                if note is not None and REL not in app.vault.state.unreadable and "some evenings" in note.mention_text:
                    break
                await asyncio.sleep(0.1)
            assert REL not in app.vault.state.unreadable
            assert "some evenings" in app.vault.state.notes[REL].mention_text

    run(body(), timeout=60)


@pytest.mark.skipif(os.name != "posix" or sys.platform == "darwin", reason="file names as bytes (macOS forces UTF-8)")
def test_a_name_that_is_not_utf8_does_not_stop_the_sidecar(vault: Path):
    edited = (vault / REL).read_text().replace("most mornings.", "most mornings, and on Fridays.")

    with open(os.fsencode(str(vault / "people")) + b"/caf\xe9.md", "wb") as handle:
        handle.write(b"# Cafe\n")  # there before the start: it once kept the sidecar from starting

    async def body():
        async with running_sidecar(vault, quiet=0.3) as sidecar:
            app = sidecar.sidecar
            assert any(p.startswith("people/caf") for p in app.vault.state.unreadable)
            deadline = time.monotonic() + 10
            write(vault, REL, edited)  # the sidecar still takes the person's saves
            while "fridays" not in app.vault.state.notes[REL].mention_text and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert "fridays" in app.vault.state.notes[REL].mention_text
            async with await SidecarClient.open(vault) as client:
                assert (await client.call("status", {}))["vault"]

    run(body(), timeout=60)
