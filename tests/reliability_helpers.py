"""Shared pieces of the reliability tests (tests/test_reliability_*.py, bench/reliability.py).

Everything here drives the real thing: the `palinode-vault` command as a subprocess, the real
sidecar (`serve`) with its real watcher and socket, the real bench vault generator. Waits are on
conditions with generous deadlines (the machine may be busy with other jobs), never fixed sleeps
used as assertions.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import copy_corpus

REPO = Path(__file__).resolve().parents[1]
TEMP_MARK = ".palinode-tmp-"

# Long variants (bench/reliability.py --long sets this): sizes and round counts go up.
LONG = os.environ.get("PALINODE_RELIABILITY_LONG") == "1"


def scale(quick: int, long: int) -> int:
    return long if LONG else quick


# --- the command line ---------------------------------------------------------------------


def cli_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("PALINODE_VAULT", None)
    return env


def cli_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("palinode-vault")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "palinode_vault.cli"]


def cli(*args: str | Path, timeout: float = 300.0) -> subprocess.CompletedProcess:
    """Run `palinode-vault ARGS` to completion."""
    return subprocess.run([*cli_cmd(), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=cli_env())


def popen_cli(*args: str | Path, **kwargs: Any) -> subprocess.Popen:
    return subprocess.Popen([*cli_cmd(), *map(str, args)], env=cli_env(), **kwargs)


# --- vaults -------------------------------------------------------------------------------


def bench_template(cache: Path, notes: int, seed: int = 7) -> Path:
    """A bench vault generated once per (notes, seed) under `cache` (copy it before use)."""
    out = cache / f"bench-{notes}-{seed}"
    if not (out / "bench-manifest.json").exists():
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run(
            [sys.executable, str(REPO / "bench" / "make_vault.py"), str(out), "--notes", str(notes), "--seed", str(seed)],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return out


def copy_vault(src: Path, dest: Path) -> Path:
    return copy_corpus(src, dest)


def age_notes(root: Path, seconds: float = 600.0) -> None:
    """Make every file look saved a while ago (nothing inside the sidecar's quiet period)."""
    then = time.time() - seconds
    for path in root.rglob("*.md"):
        os.utime(path, (then, then))


def snapshot(root: Path) -> dict[str, bytes]:
    """The bytes of every vault file outside `.palinode/`, temp files excluded."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (dirpath == str(root) and d == ".palinode")]
        for name in filenames:
            if TEMP_MARK in name:
                continue
            full = Path(dirpath) / name
            out[full.relative_to(root).as_posix()] = full.read_bytes()
    return out


def temp_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(f"*{TEMP_MARK}*"))


def sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def journal_entries(root: Path) -> list[dict]:
    """Every journaled write (undone runs included), oldest run first; a cut last line is skipped."""
    folder = root / ".palinode" / "journal"
    out = []
    for run_file in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        for i, line in enumerate(run_file.read_text(errors="replace").splitlines()):
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if i > 0:
                out.append({**item, "file": run_file.name})
    return out


def journal_befores(root: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for entry in journal_entries(root):
        out.setdefault(entry["path"], None if entry["before"] is None else base64.b64decode(entry["before"]))
    return out


def undo_everything(root: Path, limit: int = 10_000) -> int:
    """Undo journaled runs until none is left; returns how many runs were undone."""
    from palinode_vault.writer import undo_last

    for count in range(limit):
        result = undo_last(root)
        if result.run is None:
            return count
        assert not result.skipped, f"undo skipped files: {result.skipped}"
    raise AssertionError("undo did not finish")


def diff_states(expected: dict[str, bytes], actual: dict[str, bytes]) -> list[str]:
    problems = []
    for rel in sorted(set(expected) | set(actual)):
        if expected.get(rel) != actual.get(rel):
            problems.append(rel)
    return problems


# --- the sidecar as a process ---------------------------------------------------------------


def discovery(root: Path) -> dict | None:
    try:
        return json.loads((root / ".palinode" / "sidecar.json").read_text())
    except (OSError, ValueError):
        return None


def wait_until(condition: Callable[[], Any], timeout: float, what: str, step: float = 0.05) -> Any:
    """Poll `condition` until it is truthy; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


def start_serve(root: Path, *args: str, ready_timeout: float = 180.0, stderr_path: Path | None = None) -> subprocess.Popen:
    """Start `palinode-vault serve --vault ROOT ARGS`; wait until it prints that it is ready."""
    err = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL
    proc = popen_cli("serve", "--vault", root, *args, stdout=subprocess.PIPE, stderr=err, text=True)
    deadline = time.monotonic() + ready_timeout
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.strip().startswith("stop with"):
            return proc
    proc.kill()
    proc.wait(10)
    raise AssertionError(f"serve did not become ready: {lines}")


def spawn_serve_nowait(root: Path, *args: str, stderr_path: Path | None = None) -> subprocess.Popen:
    err = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL
    return popen_cli("serve", "--vault", root, *args, stdout=subprocess.DEVNULL, stderr=err)


def stop(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """SIGTERM (a clean stop), then SIGKILL if it does not exit."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def kill9(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)


def vm_hwm_kb(pid: int) -> int | None:
    """Peak resident memory (VmHWM) of a live process, in kB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class Rpc:
    """A blocking JSON-RPC client for a running sidecar (websockets' sync client)."""

    def __init__(self, root: Path, timeout: float = 60.0):
        from websockets.sync.client import connect

        info = discovery(root)
        assert info, "no sidecar.json"
        self.ws = connect(
            f"ws://127.0.0.1:{info['port']}/rpc?token={info['token']}", open_timeout=30, max_size=16 * 1024 * 1024
        ).__enter__()
        self.timeout = timeout
        self.next_id = 1
        self.notifications: list[dict] = []

    def call(self, method: str, params: dict | None = None) -> dict:
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + self.timeout
        while True:
            reply = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if reply.get("id") == request_id and "method" not in reply:
                return reply
            if "method" in reply and "id" not in reply:
                self.notifications.append(reply)
            elif "method" in reply:  # a request to us (apply_edit): we are not the plugin
                self.ws.send(
                    json.dumps({"jsonrpc": "2.0", "id": reply["id"], "error": {"code": -32601, "message": "not a plugin"}})
                )

    def result(self, method: str, params: dict | None = None) -> Any:
        reply = self.call(method, params)
        assert "result" in reply, f"{method} failed: {reply}"
        return reply["result"]

    def close(self) -> None:
        self.ws.close()

    def __enter__(self) -> Rpc:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_settled(root: Path, timeout: float, rpc: Rpc | None = None, quiet_polls: int = 3) -> dict:
    """Wait until the sidecar has nothing pending, is not busy and its write count is stable."""
    own = rpc is None
    rpc = rpc or Rpc(root)
    try:
        last = None
        stable = 0
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = rpc.result("status")
            key = (status.get("writes"), status.get("pending"), status.get("busy"))
            if status.get("pending") == 0 and status.get("busy") is None and key == last:
                stable += 1
                if stable >= quiet_polls:
                    return status
            else:
                stable = 0
            last = key
            time.sleep(0.3)
        raise AssertionError(f"sidecar did not settle within {timeout} s; last status {status}")
    finally:
        if own:
            rpc.close()
