"""Which memories sessions were handed or found: `VAULT/.palinode/access.jsonl`.

The weekly review's core-drift check (PROGRAM.md "What the weekly pass checks": core notes
nothing touched this week, non-core notes that turned up in search every session) needs to know
what was read, and the operations log only records writes. So reads are recorded here, one JSON
line per event:

    {"time": "2026-12-04T09:12:03Z", "event": "core" | "search", "session": "...", "paths": [...]}

- `core`: the socket's `core` method and the `palinode-vault core` command. A `core` call starts
  a session (PROGRAM.md: the core set is handed to every session at its start).
- `search`: the socket's `search` method and the `palinode-vault search` command, with the paths
  of the results (never the query: a query may carry anything the person typed). Searches belong
  to the session their connection last started with `core`; a connection that never called
  `core` gets a session of its own. The CLI has no connection, so a command joins the session
  named by `PALINODE_SESSION` when set, else the last session the CLI's `core` started within
  `CLI_SESSION_HOURS` (an agent that shells out calls `core` once, then searches), else a new one.

It is a record of reads, not a memory operation: it lives beside the index in `.palinode/`, is
not journaled (undo has nothing to revert) and never goes into `logs/operations.jsonl`, whose
hashes `undo` checks. It is kept small: past `MAX_BYTES` the oldest half is dropped.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets as _random
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palinode_vault.memory.weekly.oplog import json_lines
from palinode_vault.pathsafe import open_private, private_dir, read_private

ACCESS_PATH = ".palinode/access.jsonl"
MAX_BYTES = 2_000_000
#: A CLI search joins the CLI session `core` started at most this long ago.
CLI_SESSION_HOURS = 4
SESSION_ENV = "PALINODE_SESSION"
_LOCK = threading.Lock()


def _stamp(now: dt.datetime | None = None) -> str:
    value = now or dt.datetime.now(dt.UTC)
    return value.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def new_session(origin: str, now: dt.datetime | None = None) -> str:
    """A session id: the start time, where it came from and a few random characters."""
    return f"{_stamp(now)}-{origin}-{_random.token_hex(2)}"


def record(
    root: Path, event: str, session: str, paths: Iterable[str], now: dt.datetime | None = None, max_bytes: int = MAX_BYTES
) -> None:
    """Append one access line (errors are swallowed: a read must never fail because of this)."""
    line = (
        json.dumps(
            {
                "time": _stamp(now),
                "event": event,
                "session": session,
                "paths": sorted(dict.fromkeys(p for p in paths if isinstance(p, str))),
            }
        )
        + "\n"
    )
    target = Path(root) / ACCESS_PATH
    try:
        with _LOCK:
            private_dir(Path(root))  # no symlinked .palinode/, created 0700
            fd = open_private(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND)  # never through a symlink
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
            if target.stat().st_size > max_bytes:
                _trim(target)
    except OSError:
        pass


def _trim(target: Path) -> None:
    lines = read_private(target).splitlines(keepends=True)
    keep = b"".join(lines[len(lines) // 2 :])
    tmp = target.with_name(target.name + ".tmp")
    if os.path.islink(tmp):
        os.unlink(tmp)
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(keep)
    os.replace(tmp, target)


def read(root: Path) -> list[dict[str, Any]]:
    """Every readable access line, oldest first."""
    target = Path(root) / ACCESS_PATH
    try:
        raw = read_private(target).decode("utf-8", errors="replace")
    except OSError:
        return []
    return [entry for entry in json_lines(raw) if isinstance(entry.get("paths"), list)]


@dataclass
class Session:
    id: str
    started: bool = False  # began with a core call (an agent session)
    core: set[str] = field(default_factory=set)
    found: set[str] = field(default_factory=set)  # paths in its search results


def week(entries: list[dict[str, Any]], today: dt.date, window_days: int) -> dict[str, Session]:
    """The sessions with accesses in the `window_days` up to `today`, by id."""
    out: dict[str, Session] = {}
    for entry in entries:
        try:
            day = dt.date.fromisoformat(str(entry.get("time", ""))[:10])
        except ValueError:
            continue
        if not 0 <= (today - day).days <= window_days:
            continue
        sid = str(entry.get("session") or "")
        session = out.setdefault(sid, Session(sid))
        if entry.get("event") == "core":
            session.started = True
            session.core |= set(entry["paths"])
        elif entry.get("event") == "search":
            session.found |= set(entry["paths"])
    return out


def cli_session(root: Path, start: bool = False, now: dt.datetime | None = None) -> str:
    """The session of one CLI command (see the module docstring): `start` for `core`."""
    named = os.environ.get(SESSION_ENV, "").strip()
    if named:
        return named[:200]
    if not start:
        when = now or dt.datetime.now(dt.UTC)
        for entry in reversed(_tail(Path(root) / ACCESS_PATH)):
            sid = str(entry.get("session") or "")
            if entry.get("event") != "core" or "-cli-" not in sid:
                continue
            try:
                began = dt.datetime.fromisoformat(str(entry.get("time", "")).replace("Z", "+00:00"))
            except ValueError:
                break
            if dt.timedelta(0) <= when - began <= dt.timedelta(hours=CLI_SESSION_HOURS):
                return sid
            break
    return new_session("cli", now)


def _tail(target: Path, size: int = 65536) -> list[dict[str, Any]]:
    """The readable lines in the last `size` bytes of the access log (the recent sessions)."""
    try:
        with os.fdopen(open_private(target, os.O_RDONLY), "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - size))
            raw = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return json_lines(raw.split("\n", 1)[-1] if len(raw) >= size else raw)  # a cut first line is dropped


def connection_session(state: dict[str, Any], conn_id: int, start: bool = False) -> str:
    """The session of a socket connection (`Connection.state`): a new one when `start` (a core
    call) or when the connection has none yet."""
    if start or "access_session" not in state:
        state["access_session"] = new_session(f"c{conn_id}")
    return state["access_session"]
