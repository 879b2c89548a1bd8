"""A small client for the real sidecar, for tests and the benchmark.

It connects with the token from `VAULT/.palinode/sidecar.json`, calls methods, keeps every
notification with the time it arrived, and answers the sidecar's `apply_edit` requests the way
the Obsidian plugin does (apply only when the hash of the current text still matches).
Nothing here replaces our code: the sidecar, the server and the watcher under test are real.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "palinode_vault.cli"]

ApplyEdit = Callable[[dict], Any]


class RpcError(Exception):
    """The sidecar answered a JSON-RPC error."""

    def __init__(self, code: int, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def run(coro: Awaitable[Any], timeout: float = 30.0) -> Any:
    """Run one async test body with a hard bound, so a hang fails instead of stalling."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def text_hash(text: str) -> str:
    """The protocol's hash: SHA-256 of the normalised text (no BOM, LF line endings) as UTF-8."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def discovery(root: Path) -> dict:
    return json.loads((Path(root) / ".palinode" / "sidecar.json").read_text())


@dataclass
class Notification:
    at: float  # time.monotonic() when it arrived
    method: str
    params: dict


@dataclass
class ApplyEditCall:
    at: float
    params: dict
    answer: dict


def plugin_apply_edit(root: Path) -> ApplyEdit:
    """An `apply_edit` answer like the plugin's `app.vault.process`: write only on a hash match."""

    def apply(params: dict) -> dict:
        full = Path(root) / params["path"]
        try:
            current = full.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {"applied": False, "reason": "not open"}
        if text_hash(current) != params["old_hash"]:
            return {"applied": False, "reason": "hash mismatch"}
        full.write_text(params["new_text"], encoding="utf-8")
        return {"applied": True}

    return apply


@dataclass
class SidecarClient:
    """One WebSocket connection to a running sidecar."""

    ws: ClientConnection
    apply_edit: ApplyEdit | None = None
    notifications: list[Notification] = field(default_factory=list)
    edits: list[ApplyEditCall] = field(default_factory=list)
    _pending: dict[int, asyncio.Future] = field(default_factory=dict)
    _next_id: int = 1
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task | None = None

    @classmethod
    async def open(
        cls, root: Path, *, apply_edit: ApplyEdit | None = None, token: str | None = None, origin: str | None = None
    ) -> SidecarClient:
        info = discovery(root)
        url = f"ws://127.0.0.1:{info['port']}/rpc?token={token or info['token']}"
        headers = {"Origin": origin} if origin else None
        ws = await connect(url, additional_headers=headers, open_timeout=5, max_size=8 * 1024 * 1024)
        client = cls(ws, apply_edit)
        client._reader = asyncio.create_task(client._read())
        return client

    async def close(self) -> None:
        await self.ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def __aenter__(self) -> SidecarClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _read(self) -> None:
        try:
            async for text in self.ws:
                try:
                    message = json.loads(text)
                except ValueError:  # keep reading; a test can look for these
                    self.notifications.append(Notification(time.monotonic(), "<invalid JSON>", {"text": str(text)[:200]}))
                    continue
                if "method" in message and "id" in message:
                    asyncio.create_task(self._answer(message))
                elif "method" in message:
                    self.notifications.append(Notification(time.monotonic(), message["method"], message.get("params") or {}))
                    self._arrived.set()
                else:
                    future = self._pending.pop(message.get("id"), None)
                    if future is not None and not future.done():
                        future.set_result(message)
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection closed"))

    async def _answer(self, message: dict) -> None:
        if message["method"] != "apply_edit" or self.apply_edit is None:
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not handled"}}
        else:
            result = self.apply_edit(message["params"])
            if asyncio.iscoroutine(result):
                result = await result
            self.edits.append(ApplyEditCall(time.monotonic(), message["params"], result))
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        await self.ws.send(json.dumps(reply))

    async def call(self, method: str, params: dict | None = None, timeout: float = 15.0) -> Any:
        """Call a method; return its result or raise RpcError."""
        request_id = self._next_id
        self._next_id += 1
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.ws.send(json.dumps(message))
        reply = await asyncio.wait_for(future, timeout)
        if "error" in reply:
            raise RpcError(reply["error"]["code"], reply["error"]["message"])
        return reply["result"]

    def seen(self, method: str, path: str | None = None, since: float = 0.0) -> list[Notification]:
        """Notifications of `method` (mentioning `path`) that arrived after `since`."""
        return [
            n
            for n in self.notifications
            if n.method == method and n.at >= since and (path is None or path in n.params.get("paths", []))
        ]

    async def wait_for(self, method: str, path: str | None = None, since: float = 0.0, timeout: float = 5.0) -> Notification:
        """The first notification of `method` (mentioning `path`) after `since`; waits for it."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.seen(method, path, since)
            if found:
                return found[0]
            left = deadline - time.monotonic()
            if left <= 0:
                got = [(n.method, n.params.get("paths")) for n in self.notifications if n.at >= since]
                raise AssertionError(f"no {method} for {path} within {timeout} s; got {got}")
            self._arrived.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), left)


@dataclass
class Running:
    root: Path
    server: Any  # palinode_vault.server.RpcServer
    sidecar: Any  # palinode_vault.sidecar.app.Sidecar
    stop: asyncio.Event
    task: asyncio.Task

    @property
    def port(self) -> int:
        return self.server.port


@contextlib.asynccontextmanager
async def running_sidecar(
    root: Path,
    *,
    quiet: float = 0.3,
    auto_fix: bool = True,
    debounce_ms: int = 50,
    step_ms: int = 20,
    ready_timeout: float = 20.0,
    **settings: Any,
) -> AsyncIterator[Running]:
    """The real sidecar in this event loop (real watcher, real server), stopped on exit."""
    from palinode_vault.settings import Settings
    from palinode_vault.sidecar.serve import run_sidecar

    config = Settings(vault=root, quiet_seconds=quiet, auto_fix_footer=auto_fix, auto_fix_cross_refs=auto_fix, **settings)
    stop = asyncio.Event()
    ready: asyncio.Future = asyncio.get_running_loop().create_future()

    def on_ready(server, sidecar) -> None:
        ready.set_result((server, sidecar))

    task = asyncio.create_task(run_sidecar(config, stop_event=stop, on_ready=on_ready, debounce_ms=debounce_ms, step_ms=step_ms))
    done, _ = await asyncio.wait({task, ready}, timeout=ready_timeout, return_when=asyncio.FIRST_COMPLETED)
    if ready not in done:
        if task in done:
            task.result()  # raises what went wrong
        task.cancel()
        raise AssertionError(f"the sidecar did not become ready within {ready_timeout:.0f} s")
    server, sidecar = ready.result()
    running = Running(Path(root), server, sidecar, stop, task)
    try:
        yield running
    finally:
        stop.set()
        # the index thread finishes the embedding batch under way (IndexWorker.stop waits up to
        # 10 s for it); on a loaded 2-core machine that plus the rest of the shutdown passed 15 s
        await asyncio.wait_for(task, 40)


async def settle(seconds: float) -> None:
    await asyncio.sleep(seconds)


# --- the sidecar as a process (`palinode-vault serve`) ---------------------------------------


def cli_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("PALINODE_VAULT", None)
    return env


def palinode_vault_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("palinode-vault")
    return [str(exe)] if exe.exists() else CLI


def spawn_serve(root: Path, *args: str, ready_timeout: float = 60.0) -> tuple[subprocess.Popen, list[str]]:
    """Start `palinode-vault serve --vault ROOT ARGS` and wait for its ready lines."""
    proc = subprocess.Popen(
        [*palinode_vault_cmd(), "serve", "--vault", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    lines: list[str] = []
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.strip().startswith("stop with"):
            return proc, lines
    proc.kill()
    out, err = proc.communicate(timeout=5)
    raise AssertionError(f"serve did not become ready: {lines} {out} {err}")


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def cli(*args: str | Path, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run the real `palinode-vault` command line."""
    return subprocess.run(
        [*palinode_vault_cmd(), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=cli_env()
    )


def mtimes(root: Path) -> dict[str, int]:
    """mtime_ns of every file outside `.palinode/`."""
    out = {}
    for path in sorted(Path(root).rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".palinode/"):
            out[rel] = path.stat().st_mtime_ns
    return out


def journal_entries(root: Path) -> list[dict]:
    """Every write the journal records (not headers), oldest run first."""
    folder = Path(root) / ".palinode" / "journal"
    out = []
    for run_file in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        lines = [json.loads(line) for line in run_file.read_text().splitlines() if line.strip()]
        out.extend({**entry, "run": lines[0]["run"], "label": lines[0].get("label")} for entry in lines[1:])
    return out


# --- a small consistent vault --------------------------------------------------------------

ANA = """---
id: person-ana
category: person
type: PersonMemory
name: Ana Lima
entities: [project/atlas-app, person/bruno-costa]
last_updated: 2026-11-20T10:00:00Z
cross_refs: [person/bruno-costa]
---
# Ana Lima

## Context
Ana leads the mobile work on Atlas. She pairs with [[bruno-costa|Bruno]] most mornings.

<!-- palinode:see-also -->
## See also
- [[atlas-app]]
<!-- /palinode:see-also -->
"""

BRUNO = """---
id: person-bruno-costa
category: person
type: PersonMemory
name: Bruno Costa
entities: [person/ana, project/atlas-app]
last_updated: 2026-11-20T10:00:00Z
cross_refs: [project/atlas-app]
---
# Bruno Costa

## Context
Bruno builds the sync engine for [[atlas-app]].

<!-- palinode:see-also -->
## See also
- [[ana]]
<!-- /palinode:see-also -->
"""

ATLAS = """---
id: project-atlas-app
category: project
type: ProjectSnapshot
name: Atlas app
status: active
entities: [person/ana, person/bruno-costa]
last_updated: 2026-11-20T10:00:00Z
---
# Atlas app

## What This Is
The booking app. [[ana|Ana]] leads it.

<!-- palinode:see-also -->
## See also
- [[bruno-costa]]
<!-- /palinode:see-also -->
"""

DAILY = "# 2026-11-20\n\nMet [[ana]] and [[bruno-costa]] about [[atlas-app]].\n"

CONSISTENT = {
    "people/ana.md": ANA,
    "people/bruno-costa.md": BRUNO,
    "projects/atlas-app.md": ATLAS,
    "daily/2026-11-20.md": DAILY,
}


def write(root: Path, rel: str, text: str) -> None:
    """Save like an editor does: truncate and write in place."""
    with open(root / rel, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def age_files(root: Path, seconds: float = 60.0) -> None:
    """Make every note look saved a while ago, so nothing is inside the quiet period at start."""
    then = time.time() - seconds
    for path in root.rglob("*.md"):
        os.utime(path, (then, then))
