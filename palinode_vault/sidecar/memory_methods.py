"""The memory manager's JSON-RPC methods: extract, session.turn, session.end, consolidate, core, and
the review of inbox/ (inbox.list, inbox.approve, inbox.reject).

Registered by `methods.register` through `register_memory(dispatcher, sidecar)`. Vault work runs
under the sidecar's lock in a worker thread; every file written is remembered as the sidecar's
own write and announced with `wrote`, like `fix`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from palinode_vault.server import Connection, Dispatcher, PalinodeError
from palinode_vault.writer import sha256_bytes

log = logging.getLogger(__name__)
NOT_AVAILABLE = -32013


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExtractParams(_Params):
    text: str = Field(max_length=2_000_000)
    source: str | None = Field(default=None, max_length=200)
    dry_run: bool = False


class TurnParams(_Params):
    session: str = Field(min_length=1, max_length=200)
    role: Literal["user", "assistant", "system"]
    content: str = Field(max_length=200_000)


class EndParams(_Params):
    session: str = Field(min_length=1, max_length=200)
    dry_run: bool = False


class ConsolidateParams(_Params):
    dry_run: bool = False
    now: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")


class NoParams(_Params):
    pass


class InboxParams(_Params):
    path: str = Field(min_length=1, max_length=1000)


def register_memory(dispatcher: Dispatcher, sidecar: Any) -> None:
    """Add the memory methods to `dispatcher`, bound to `sidecar`."""
    from palinode_vault.memory.session import Sessions, end_session

    sessions = Sessions()
    state: dict[str, Any] = {"generator": None}

    def generator():
        if state["generator"] is None:
            from palinode_vault.memory.extract import load_generator

            state["generator"] = load_generator(sidecar.settings.generation_model)
        return state["generator"]

    async def after_write(paths: list[str], reason: str) -> None:
        root = sidecar.root
        for path in paths:
            try:
                sidecar.own_writes[path] = sha256_bytes((root / path).read_bytes())
            except OSError:
                sidecar.own_writes.pop(path, None)
        if paths:
            changed = await sidecar.run(sidecar._recheck, set(paths))
            sidecar.notify("wrote", {"paths": paths, "reason": reason})
            sidecar.notify("findings.changed", sidecar._findings_event(sorted(changed)))

    def model_error(exc: Exception) -> PalinodeError:
        return PalinodeError(NOT_AVAILABLE, f"no generation model: {exc}")

    async def extract(params: ExtractParams, conn: Connection) -> dict:
        from palinode_vault.memory.extract import extract_text
        from palinode_vault.models import ModelUnavailable

        try:
            result = await sidecar.run(lambda: extract_text(sidecar.vault, params.text, generator=generator(),
                                                            source=params.source or "socket", dry_run=params.dry_run))
        except ModelUnavailable as exc:
            raise model_error(exc) from exc
        await after_write(result.written, "extract")
        out = result.to_json()
        if params.dry_run:
            out["diff"] = "".join(result.diffs[p] for p in sorted(result.diffs))
        return out

    async def session_turn(params: TurnParams, conn: Connection) -> dict:
        sessions.turn(params.session, params.role, params.content)
        return {"ok": True}

    async def session_end(params: EndParams, conn: Connection) -> dict:
        from palinode_vault.models import ModelUnavailable

        session = sessions.peek(params.session) if params.dry_run else sessions.pop(params.session)
        if session is None:
            raise PalinodeError(-32602, f"no open session {params.session!r}; send session.turn first")
        try:
            result = await sidecar.run(lambda: end_session(sidecar.vault, session, generator=generator(), dry_run=params.dry_run))
        except ModelUnavailable as exc:
            raise model_error(exc) from exc
        await after_write(result.written, "session.end")
        return result.to_json()

    async def consolidate(params: ConsolidateParams, conn: Connection) -> dict:
        result = await run_consolidation(sidecar, params.dry_run, params.now, generator)
        await after_write(result.written, "consolidate")
        return {"operations": result.operations, "written": result.written}

    async def core(params: NoParams, conn: Connection) -> dict:
        from palinode_vault.memory import access
        from palinode_vault.memory.core_memory import core_set

        result = await sidecar.run(core_set, sidecar.vault)
        # a core call starts a session: the weekly core-drift check counts sessions by it
        session = access.connection_session(conn.state, conn.id, start=True)
        await asyncio.to_thread(access.record, sidecar.root, "core", session, [f["path"] for f in result.files])
        return {"files": result.files, "chars": result.chars}

    async def inbox_list(params: NoParams, conn: Connection) -> dict:
        from palinode_vault.memory.review import waiting

        return {"items": await sidecar.run(waiting, sidecar.vault)}

    def reviewer(action: str):
        async def handler(params: InboxParams, conn: Connection) -> dict:
            from palinode_vault.memory import review

            try:
                result = await sidecar.run(getattr(review, action), sidecar.vault, params.path)
            except review.ReviewError as exc:
                raise PalinodeError(-32602, str(exc)) from exc
            await after_write(result.written, f"inbox.{action}")
            return result.to_json()

        return handler

    def when_ready(handler):
        async def wrapped(params, conn):
            await sidecar.ready.wait()
            return await handler(params, conn)

        return wrapped

    dispatcher.register("extract", when_ready(extract), ExtractParams)
    dispatcher.register("session.turn", session_turn, TurnParams)
    dispatcher.register("session.end", when_ready(session_end), EndParams)
    dispatcher.register("consolidate", when_ready(consolidate), ConsolidateParams)
    dispatcher.register("core", when_ready(core), NoParams)
    dispatcher.register("inbox.list", when_ready(inbox_list), NoParams)
    dispatcher.register("inbox.approve", when_ready(reviewer("approve")), InboxParams)
    dispatcher.register("inbox.reject", when_ready(reviewer("reject")), InboxParams)
    sidecar.memory_generator = generator


async def run_consolidation(sidecar: Any, dry_run: bool = False, now: str | None = None, generator=None):
    """A consolidation under the sidecar's lock (the socket method and the weekly schedule)."""
    from palinode_vault.memory.consolidate import consolidate as consolidate_vault

    def work():
        saved = sidecar.vault.settings.now
        if now:
            sidecar.vault.settings.now = dt.date.fromisoformat(now)
        try:
            gen = generator() if callable(generator) else generator
            worker = getattr(sidecar, "index_worker", None)
            # the index's embedding model, shared (loaded once) for the pattern pass
            embedder = worker.model if worker is not None else None
            return consolidate_vault(sidecar.vault, dry_run=dry_run, generator=gen, embedder=embedder)
        finally:
            sidecar.vault.settings.now = saved

    sidecar.busy = "consolidate"
    try:
        return await sidecar.run(work)
    finally:
        sidecar.busy = None


async def weekly_consolidation(sidecar: Any, check_every: float = 3600.0) -> None:
    """Run the consolidation on PROGRAM.md's weekday (Sunday by default), once that day."""
    from palinode_vault.memory.consolidate import is_due

    await sidecar.ready.wait()
    while True:
        try:
            today = sidecar.settings.today()
            if await asyncio.to_thread(is_due, sidecar.root, today):
                result = await run_consolidation(sidecar, generator=getattr(sidecar, "memory_generator", None))
                for path in result.written:
                    try:
                        sidecar.own_writes[path] = sha256_bytes((sidecar.root / path).read_bytes())
                    except OSError:
                        pass
                if result.written:
                    sidecar.notify("wrote", {"paths": result.written, "reason": "weekly consolidation"})
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the schedule keeps going; the error is visible in status
            sidecar.last_error = f"weekly consolidation failed: {exc}"
            log.warning("weekly consolidation failed: %s", exc)
        await asyncio.sleep(check_every)
