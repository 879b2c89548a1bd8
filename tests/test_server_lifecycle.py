"""sidecar.json, the single-instance lock and shutdown, with real processes and signals."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from palinode_vault.server import (
    Dispatcher,
    VaultLock,
    VaultLocked,
    holder,
    open_server,
    read_discovery,
    serve_forever,
)
from palinode_vault.server.discovery import DiscoveryError, discovery_path, write_discovery

REPO = Path(__file__).resolve().parents[1]


def run(coro, timeout: float = 20.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def spawn(code: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


def test_sidecar_json_is_0600_complete_and_removed_on_stop(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, Dispatcher()) as server:
            path = discovery_path(tmp_path)
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            data = json.loads(path.read_text())
            assert set(data) == {"port", "token", "pid", "version", "vault", "started"}
            assert data["port"] == server.port and data["token"] == server.token
            assert data["pid"] == os.getpid() and data["vault"] == str(tmp_path.resolve())
            assert len(data["token"]) == 43
            assert data["started"].endswith("Z")
            assert holder(tmp_path) == os.getpid()
        assert not discovery_path(tmp_path).exists()
        assert read_discovery(tmp_path) is None
        assert holder(tmp_path) is None

    old = os.umask(0)  # a permissive umask must not widen the file
    try:
        run(body())
    finally:
        os.umask(old)


def test_discovery_replaces_leftover_and_reports_garbage(tmp_path: Path):
    path = discovery_path(tmp_path)
    path.parent.mkdir()
    path.write_text("{not json")
    path.chmod(0o644)
    with pytest.raises(DiscoveryError, match="sidecar.json"):
        read_discovery(tmp_path)
    info = write_discovery(tmp_path, port=1, token="t", version="0")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_discovery(tmp_path) == info
    assert [p.name for p in path.parent.iterdir()] == ["sidecar.json"]  # no temp file left


def test_second_instance_names_the_pid(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, Dispatcher()):
            with pytest.raises(VaultLocked, match=f"pid {os.getpid()}") as locked:
                async with open_server(tmp_path, Dispatcher()):
                    pass
            assert locked.value.pid == os.getpid()
            assert read_discovery(tmp_path) is not None  # the failed start did not remove ours

    run(body())


def test_lock_held_by_another_process_then_freed_by_sigkill(tmp_path: Path):
    child = spawn(
        "import sys, time\n"
        "from palinode_vault.server.lock import VaultLock\n"
        f"lock = VaultLock({str(tmp_path)!r}); lock.acquire()\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        with pytest.raises(VaultLocked) as locked:
            VaultLock(tmp_path).acquire()
        assert locked.value.pid == child.pid
        assert f"pid {child.pid}" in str(locked.value) and f"kill {child.pid}" in str(locked.value)
        assert holder(tmp_path) == child.pid
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(5)
    with VaultLock(tmp_path) as lock:  # the stale file does not block
        assert lock.held
        assert (tmp_path / ".palinode" / "sidecar.pid").read_text().strip() == str(
            os.getpid()
        )  # the lock file holds no pid: filelock truncates it
    assert holder(tmp_path) is None


def test_serve_forever_sigterm_cleans_up(tmp_path: Path):
    child = spawn(
        "import asyncio\n"
        "from palinode_vault.server import Dispatcher, serve_forever\n"
        "d = Dispatcher()\n"
        "async def ping(p, c): return 'pong'\n"
        "d.register('ping', ping)\n"
        "def ready(server): print('ready', server.port, flush=True)\n"
        f"asyncio.run(serve_forever({str(tmp_path)!r}, d, on_ready=ready))\n"
        "print('exited', flush=True)\n"
    )
    try:
        line = child.stdout.readline().split()
        assert line[0] == "ready", child.stderr.read()
        info = read_discovery(tmp_path)
        assert info.pid == child.pid and info.port == int(line[1])
        with urllib.request.urlopen(info.health_url, timeout=5) as response:
            assert json.load(response)["ok"] is True
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert "exited" in out
    assert not discovery_path(tmp_path).exists()
    assert holder(tmp_path) is None


def test_serve_forever_stop_event_and_async_on_ready(tmp_path: Path):
    async def body():
        stop = asyncio.Event()
        ports = []

        async def ready(server):
            ports.append(server.port)
            assert read_discovery(tmp_path).port == server.port
            asyncio.get_running_loop().call_later(0.05, stop.set)

        await serve_forever(tmp_path, Dispatcher(), on_ready=ready, stop_event=stop)
        assert ports and not discovery_path(tmp_path).exists()

    run(body())


def test_open_server_refuses_missing_vault(tmp_path: Path):
    with pytest.raises(NotADirectoryError, match="not a folder"):
        run(open_server(tmp_path / "nope", Dispatcher()).__aenter__())
