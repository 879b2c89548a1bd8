"""`palinode-vault serve` and `status` as real processes: handshake security, single instance,
clean shutdown, and a kill -9 in the middle of a batch of writes followed by a restart."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from sidecar_helpers import (
    CONSISTENT,
    RpcError,
    SidecarClient,
    age_files,
    cli,
    discovery,
    journal_entries,
    run,
    spawn_serve,
    stop_process,
)
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def vault(make_vault) -> Path:
    root = make_vault(CONSISTENT)
    age_files(root)
    return root


@pytest.fixture
def served(vault: Path):
    proc, lines = spawn_serve(vault, "--quiet-seconds", "0.3")
    try:
        yield vault, proc, lines
    finally:
        stop_process(proc)


async def handshake_status(url: str, headers: dict | None = None) -> int:
    try:
        async with connect(url, additional_headers=headers, open_timeout=5):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


def test_serve_prints_where_it_listens_and_the_vault_state(served):
    vault, proc, lines = served
    info = discovery(vault)
    text = "\n".join(lines)
    assert f"ws://127.0.0.1:{info['port']}/rpc" in text
    assert "4 notes (3 memory)" in text and "findings: none" in text
    assert info["pid"] == proc.pid and (vault / ".palinode" / "sidecar.json").stat().st_mode & 0o777 == 0o600


def test_handshake_security_and_path_escape(served):
    vault, proc, _ = served
    info = discovery(vault)
    base = f"ws://127.0.0.1:{info['port']}/rpc"

    async def body():
        good = f"{base}?token={info['token']}"
        assert await handshake_status(good) == 101
        assert await handshake_status(good, {"Origin": "app://obsidian.md"}) == 101
        assert await handshake_status(good, {"Origin": "https://evil.example"}) == 403
        assert await handshake_status(good, {"Origin": "http://localhost.evil.example"}) == 403
        assert await handshake_status(f"{base}?token={'x' * 43}") == 401
        assert await handshake_status(base) == 401
        assert await handshake_status(base, {"Authorization": f"Bearer {info['token']}"}) == 101
        with pytest.raises(InvalidStatus):
            await SidecarClient.open(vault, token="wrong")
        async with await SidecarClient.open(vault, origin="app://obsidian.md") as client:
            for path in ("../x", "../x.md", "/etc/passwd", str(vault / "people/ana.md")):
                with pytest.raises(RpcError) as err:
                    await client.call("note.findings", {"path": path})
                assert err.value.code == -32010, path
            # a good path still works on the same connection
            assert (await client.call("note.findings", {"path": "people/ana.md"}))["findings"] == []

    run(body())
    with urllib.request.urlopen(f"http://127.0.0.1:{info['port']}/health", timeout=5) as response:
        assert json.load(response) == {"ok": True, "version": info["version"]}


def test_second_serve_names_the_pid_and_sigterm_cleans_up(served):
    vault, proc, _ = served
    second = subprocess.run([*_serve_cmd(vault)], capture_output=True, text=True, timeout=30, env=_env())
    assert second.returncode != 0
    assert f"pid {proc.pid}" in second.stderr, second.stderr
    assert discovery(vault)["pid"] == proc.pid  # the refused start did not touch ours
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)
    assert proc.returncode == 0, proc.stderr.read()
    assert not (vault / ".palinode" / "sidecar.json").exists()
    from palinode_vault.server import holder

    assert holder(vault) is None
    # and the vault can be served again at once
    again, _ = spawn_serve(vault, "--quiet-seconds", "0.3")
    stop_process(again)
    assert again.returncode == 0


def test_status_command_running_and_not(vault: Path):
    stopped = cli("status", "--vault", vault)
    assert stopped.returncode == 1 and "not running" in stopped.stdout and "palinode-vault serve" in stopped.stdout
    as_json = cli("status", "--vault", vault, "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["running"] is False

    proc, _ = spawn_serve(vault, "--quiet-seconds", "0.3")
    try:
        text = cli("status", "--vault", vault)
        assert text.returncode == 0, text.stderr
        assert f"running: pid {proc.pid}" in text.stdout and "findings: none" in text.stdout
        assert "last write: none" in text.stdout and "last error: none" in text.stdout
        data = json.loads(cli("status", "--vault", vault, "--json").stdout)
        assert data["running"] is True and data["pid"] == proc.pid and data["port"] == discovery(vault)["port"]
        assert data["counts"]["markdown_files"] == 4 and data["counts"]["memory_files"] == 3
    finally:
        stop_process(proc)
    assert cli("status", "--vault", vault).returncode == 1


# --- kill -9 in the middle of a batch ---------------------------------------------------------

PEOPLE = 400


def person(i: int) -> str:
    return (
        f"---\nid: person-p{i:03d}\ncategory: person\ntype: PersonMemory\nname: P{i:03d}\n"
        f"entities: [project/atlas-app]\n---\n# P{i:03d}\n\nWorks on things, day {i}.\n"
    )


def test_kill_9_mid_batch_then_restart_loses_nothing(make_vault, tmp_path: Path):
    """400 notes each need a footer; the sidecar is killed while writing them."""
    from palinode_vault.maintenance import fix
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    files = {f"people/p{i:03d}.md": person(i) for i in range(PEOPLE)}
    files["projects/atlas-app.md"] = (
        CONSISTENT["projects/atlas-app.md"]
        .replace("entities: [person/ana, person/bruno-costa]", "entities: []")
        .split("\n<!-- palinode:see-also -->")[0]
        .replace("[[ana|Ana]]", "Ana")
        + "\n"
    )
    root = make_vault(files)
    age_files(root)
    # The known states of every note: as written, and as the sidecar will fix it.
    before = {rel: (root / rel).read_bytes() for rel in files}
    expected_copy = tmp_path / "expected"
    shutil.copytree(root, expected_copy)
    expected_vault = Vault(Settings(vault=expected_copy))
    expected_vault.load()
    reasons = fix(expected_vault).reasons
    assert set(reasons) == {f"people/p{i:03d}.md" for i in range(PEOPLE)}
    assert {r for rs in reasons.values() for r in rs} == {"See also footer updated"}  # only machine-owned surfaces
    after = {rel: (expected_copy / rel).read_bytes() for rel in files}

    proc, _ = spawn_serve(root, "--quiet-seconds", "0")
    try:
        journal = root / ".palinode" / "journal"
        deadline = time.monotonic() + 30
        landed = 0
        while time.monotonic() < deadline:
            runs = list(journal.glob("*.jsonl")) if journal.is_dir() else []
            landed = sum(len(r.read_bytes().splitlines()) - 1 for r in runs)
            if landed >= 20:
                break
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        stop_process(proc)
    assert 20 <= landed < PEOPLE, f"the batch was not interrupted ({landed} writes journaled)"

    # Right after the kill: every note is whole, either before or after its fix.
    states = {
        rel: (
            "before"
            if (root / rel).read_bytes() == before[rel]
            else "after"
            if (root / rel).read_bytes() == after[rel]
            else "PARTIAL"
        )
        for rel in files
    }
    assert "PARTIAL" not in states.values(), [r for r, s in states.items() if s == "PARTIAL"]
    assert "before" in states.values() and "after" in states.values()
    first_run = journal_entries(root)
    assert len(first_run) >= sum(1 for s in states.values() if s == "after")

    # A temp file as a write cut off before its rename leaves it (the kill may or may not have).
    (root / "people" / f".p000.md.palinode-tmp-{proc.pid}-deadbeef").write_bytes(after["people/p000.md"][:50])
    # Restart: the stale lock does not block, temp files go, the rest is fixed.
    proc, lines = spawn_serve(root, "--quiet-seconds", "0")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any((root / rel).read_bytes() != after[rel] for rel in files):
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        stop_process(proc)
    assert proc.returncode == 0
    assert [p for p in root.rglob("*") if ".palinode-tmp-" in p.name] == []
    assert {rel: (root / rel).read_bytes() for rel in files} == after
    entries = journal_entries(root)
    assert len({e["run"] for e in entries}) == 2
    # each note was written once in all: only a write journaled but cut off before it landed
    # may be journaled again
    from collections import Counter

    assert sum(n - 1 for n in Counter(e["path"] for e in entries).values()) <= 1

    # The journal is intact: undo the restart's run, then the interrupted one.
    for _ in range(2):
        undone = cli("undo", "--vault", root, "--json")
        assert undone.returncode == 0, undone.stderr
        assert json.loads(undone.stdout)["restored"]
    assert {rel: (root / rel).read_bytes() for rel in files} == before
    assert json.loads(cli("undo", "--vault", root, "--json").stdout)["run"] is None


def _serve_cmd(vault: Path) -> list[str]:
    from sidecar_helpers import palinode_vault_cmd

    return [*palinode_vault_cmd(), "serve", "--vault", str(vault)]


def _env() -> dict:
    from sidecar_helpers import cli_env

    return cli_env()


def test_status_command_skips_notifications_that_arrive_first(vault: Path):
    """`palinode-vault status` reads until its own answer: a progress push may come first."""
    from sidecar_helpers import run, running_sidecar

    async def body():
        async with running_sidecar(vault) as sc:

            async def chatter():
                while True:
                    sc.sidecar.notify("progress", {"phase": "index", "done": 1, "total": 2})
                    await asyncio.sleep(0.001)

            noise = asyncio.create_task(chatter())
            try:
                out = await asyncio.to_thread(cli, "status", "--vault", vault, "--json")
            finally:
                noise.cancel()
            data = json.loads(out.stdout)
            assert out.returncode == 0 and data["running"] is True and data["pid"] is not None

    run(body())
