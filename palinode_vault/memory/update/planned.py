"""Memory passes that hold no lock while a model works: planned on a snapshot, written under the lock.

A pass (extraction, session end, consolidation, an agent's save) reads notes, asks the generation
model (and the embedding model), and writes. Holding the vault lock through the model call made
the watcher's automatic fixes, other clients and `undo` wait for minutes. So a pass runs as:

1. under the lock: a snapshot of the vault's state (copies of its dicts: about 0.2 s for 10,000 notes);
2. no lock: the whole pass on the snapshot. Files are read from disk (the Workspace keeps the
   bytes it read), the models are called, every write is planned;
3. under the lock again: every file the plan read is compared with the disk. When all are as
   read, the plan is written as one journaled run (the writer checks each hash once more).

A file changed in between (the person saved, the sidecar fixed a footer) makes the plan stale:
it is dropped and the pass planned again from a fresh snapshot, never written over the person's
bytes. The model's answers are remembered by prompt (`MemoGenerator`), so a new plan asks the
model only about text that changed. After `ROUNDS` stale plans nothing is written and
`StalePlan` names the files.

    result = plan_then_write(vault, lambda snap, write: extract_text(snap, text, write=write, ...),
                             locked=run_under_my_lock, check=job_cancelled)

A pass takes `write(ws, label)` in place of `ws.commit(label)`. `locked(fn)` runs `fn` under the
caller's lock: the sidecar's, the MCP server's worker thread, or nothing (the CLI, whose
writer conflict-checks all the same).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from palinode_vault.memory.update.workspace import Workspace
from palinode_vault.vault import Vault

log = logging.getLogger(__name__)
T = TypeVar("T")
ROUNDS = 3  # plans made before giving up on a file that keeps changing
Write = Callable[[Workspace, str], "tuple[list[str], list[str], str | None]"]


class StalePlan(RuntimeError):
    """Files the pass read kept changing while it was planned; nothing was written."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        super().__init__(
            f"nothing written: {shown} changed while the model ran ({ROUNDS} times); "
            "the edits there are kept; run it again when they are quiet"
        )


class _Changed(Exception):
    def __init__(self, paths: list[str]) -> None:
        self.paths = paths


class MemoGenerator:
    """A generator that answers a prompt it answered before from memory (a new plan of the same
    pass asks the model only about what changed). `inner` is a generator or a function that
    loads one; it is loaded at the first prompt not answered yet."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._answers: dict[tuple, Any] = {}
        self._lock = threading.Lock()
        self.calls = 0  # prompts sent to the model

    def _model(self) -> Any:
        if not hasattr(self._inner, "generate_json"):
            from palinode_vault.memory.extraction.extract import load_generator

            self._inner = load_generator(self._inner() if callable(self._inner) else self._inner)
        return self._inner

    def generate_json(self, system: str, user: str, schema: dict, max_tokens: int = 512) -> Any:
        key = (system, user, json.dumps(schema, sort_keys=True), max_tokens)
        with self._lock:
            if key in self._answers:
                return self._answers[key]
        answer = self._model().generate_json(system, user, schema, max_tokens)
        with self._lock:
            self.calls += 1
            self._answers[key] = answer
        return answer


def changed_since_read(ws: Workspace) -> list[str]:
    """The files the plan read (or found missing) whose bytes on disk differ now."""
    changed = []
    for path, item in sorted(ws.pending.items()):
        full = ws.root / path
        try:
            current = full.read_bytes() if full.is_file() else None
        except OSError:
            current = b""  # unreadable now: not what was read
        if current != item.before:
            changed.append(path)
    return changed


def _now(fn: Callable[[], T]) -> T:
    return fn()


def plan_then_write(
    live: Vault,
    run_pass: Callable[[Vault, Write], T],
    *,
    locked: Callable[[Callable[[], Any]], Any] = _now,
    snapshot: Callable[[], Vault] | None = None,
    check: Callable[[], None] | None = None,
    rounds: int = ROUNDS,
) -> T:
    """Run `run_pass(snapshot, write)` with no lock held, its writes under `locked` (see above).

    `snapshot()` (default `live.snapshot`) runs under `locked`. `check()` runs before the write
    and may raise to stop the pass (a cancelled job): then nothing is written. Raises StalePlan."""
    take = snapshot or live.snapshot
    stale: list[str] = []
    for _ in range(rounds):
        if check is not None:
            check()
        snap = locked(take)

        def write(ws: Workspace, label: str):
            if check is not None:
                check()

            def under_lock():
                changed = changed_since_read(ws)
                if changed:
                    return changed, None
                ws.vault = live  # the writes refresh the live state, not the snapshot's
                return [], ws.commit(label)

            changed, out = locked(under_lock)
            if changed:
                raise _Changed(changed)
            return out

        try:
            return run_pass(snap, write)
        except _Changed as exc:
            stale = exc.paths
            log.info("plan stale (%s changed while the model ran); planning again", ", ".join(stale[:5]))
    raise StalePlan(stale)
