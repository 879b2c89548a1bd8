"""The memory manager's JSON-RPC methods: extract, session.turn, session.end, consolidate, core, and
the review of inbox/ (inbox.list, inbox.approve, inbox.reject).

Registered by `methods.register` through `register_memory(dispatcher, sidecar)`. A pass that
calls a model is planned on a snapshot with no vault lock held and written under the lock
(`planned_pass`, memory/update/planned.py); other vault work runs under the lock in a worker thread.
Every file written is remembered as the sidecar's own write and announced with `wrote`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from palinode_vault import results as r
from palinode_vault.server import Connection, Dispatcher, PalinodeError

log = logging.getLogger(__name__)
NOT_AVAILABLE = -32013
BUSY = -32014


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


class ApproveParams(InboxParams):
    # the memory type the person says it is (review.approve: any case; a wrong name is refused)
    as_type: str | None = Field(default=None, min_length=1, max_length=100)
    # the active decisions (vault paths) the person says this decision replaces (review.approve checks each)
    supersedes: list[Annotated[str, Field(min_length=1, max_length=1000)]] = Field(default_factory=list, max_length=20)
    # the person says it replaces none of the decisions its review_supersedes names: they stay active
    keep_active: bool = False
    # who or what a person or project memory is about: a note's path or ref, or a name (review.approve checks it)
    about: str | None = Field(default=None, min_length=1, max_length=200)


class JobParams(_Params):
    id: str = Field(min_length=1, max_length=100)


def planned_pass(sidecar: Any, run_pass: Callable, check: Callable[[], None] | None = None):
    """Run a memory pass with no vault lock held while models work (memory/update/planned.py): the
    snapshot and the writes take the sidecar's lock, briefly. One pass at a time (one model in
    memory; two passes would make each other's plans stale). Awaitable; raises StalePlan."""
    from palinode_vault.memory.update.planned import plan_then_write

    loop = asyncio.get_running_loop()
    if getattr(sidecar, "pass_lock", None) is None:  # agent methods may be registered alone
        sidecar.pass_lock = threading.Lock()

    def locked(fn: Callable) -> Any:
        future = asyncio.run_coroutine_threadsafe(sidecar.run(fn), loop)
        while True:
            try:
                return future.result(timeout=1.0)
            except concurrent.futures.TimeoutError:
                if loop.is_closed() or not loop.is_running():  # the sidecar stopped: do not hang
                    future.cancel()
                    raise RuntimeError("the sidecar is stopping; nothing was written") from None

    def whole() -> Any:
        with sidecar.pass_lock:
            return plan_then_write(sidecar.vault, run_pass, locked=locked, check=check)

    return asyncio.to_thread(whole)


def register_memory(dispatcher: Dispatcher, sidecar: Any) -> None:
    """Add the memory methods to `dispatcher`, bound to `sidecar`."""
    from palinode_vault.memory.extraction.session import Sessions, end_session

    sessions = Sessions()
    state: dict[str, Any] = {"generator": None}

    def generator():
        if state["generator"] is None:
            from palinode_vault.memory.extraction.extract import load_generator

            state["generator"] = load_generator(sidecar.settings.generation_model)
        return state["generator"]

    def model_error(exc: Exception) -> PalinodeError:
        return PalinodeError(NOT_AVAILABLE, f"no generation model: {exc}")

    # ---- jobs: long work answers at once; progress and the end are pushed (sidecar/jobs.py) ----
    from palinode_vault.memory.update.planned import MemoGenerator, StalePlan
    from palinode_vault.sidecar.jobs import Jobs

    jobs: Jobs = getattr(sidecar, "jobs", None) or Jobs(sidecar.notify)
    sidecar.jobs = jobs
    sidecar.pass_lock = getattr(sidecar, "pass_lock", None) or threading.Lock()  # one pass at a time

    def stale_error(exc: StalePlan) -> PalinodeError:
        return PalinodeError(BUSY, str(exc))

    async def extract(params: ExtractParams, conn: Connection) -> dict:
        return await extract_work(params, None)

    async def session_turn(params: TurnParams, conn: Connection) -> dict:
        sessions.turn(params.session, params.role, params.content)
        return {"ok": True}

    async def session_end(params: EndParams, conn: Connection) -> dict:
        from palinode_vault.models import ModelUnavailable

        session = sessions.peek(params.session)
        if session is None:
            raise PalinodeError(-32602, f"no open session {params.session!r}; send session.turn first")
        memo = MemoGenerator(generator)
        try:
            result = await planned_pass(
                sidecar, lambda snap, write: end_session(snap, session, generator=memo, dry_run=params.dry_run, write=write)
            )
        except ModelUnavailable as exc:
            raise model_error(exc) from exc
        except StalePlan as exc:
            raise stale_error(exc) from None  # the session stays open: the client may end it again
        if not params.dry_run:
            sessions.pop(params.session)
        await sidecar.after_write(result.written, "session.end")
        return result.to_json()

    async def consolidate(params: ConsolidateParams, conn: Connection) -> dict:
        try:
            result = await run_consolidation(sidecar, params.dry_run, params.now, generator)
        except StalePlan as exc:
            raise stale_error(exc) from None
        await sidecar.after_write(result.written, "consolidate")
        return {"operations": result.operations, "written": result.written}

    async def core(params: NoParams, conn: Connection) -> dict:
        from palinode_vault.memory.weekly import access
        from palinode_vault.memory.weekly.core_memory import core_set

        result = await sidecar.run(core_set, sidecar.vault)
        # a core call starts a session: the weekly core-drift check counts sessions by it
        session = access.connection_session(conn.state, conn.id, start=True)
        await asyncio.to_thread(access.record, sidecar.root, "core", session, [f["path"] for f in result.files])
        return {"files": result.files, "chars": result.chars}

    async def inbox_list(params: NoParams, conn: Connection) -> dict:
        from palinode_vault.memory.review import waiting

        return {"items": await sidecar.run(waiting, sidecar.vault)}

    async def reviewed(action: str, work: Callable[[], Any]) -> dict:
        from palinode_vault.memory.review import ReviewError

        try:
            result = await sidecar.run(work)
        except ReviewError as exc:
            raise PalinodeError(-32602, str(exc)) from exc
        await sidecar.after_write(result.written, f"inbox.{action}")
        return result.to_json()

    async def inbox_approve(params: ApproveParams, conn: Connection) -> dict:
        from palinode_vault.memory import review

        return await reviewed(
            "approve",
            lambda: review.approve(
                sidecar.vault,
                params.path,
                as_type=params.as_type,
                supersedes=params.supersedes,
                keep_active=params.keep_active,
                about=params.about,
            ),
        )

    async def inbox_reject(params: InboxParams, conn: Connection) -> dict:
        from palinode_vault.memory import review

        return await reviewed("reject", lambda: review.reject(sidecar.vault, params.path))

    def when_ready(handler):
        async def wrapped(params, conn):
            await sidecar.ready.wait()
            return await handler(params, conn)

        return wrapped

    async def extract_work(params: ExtractParams, ctx) -> dict:
        """Extraction planned on a snapshot with no lock while the model reads (memory/update/planned.py),
        then written under the vault lock; a job cancelled before the write writes nothing."""
        from palinode_vault.memory.extraction.extract import extract_text
        from palinode_vault.models import ModelUnavailable

        report = ctx.progress if ctx is not None else (lambda done, total, message="": None)
        report(0, 2, "the model is reading the text")
        memo = MemoGenerator(generator)
        try:
            result = await planned_pass(
                sidecar,
                lambda snap, write: extract_text(
                    snap, params.text, generator=memo, source=params.source or "socket", dry_run=params.dry_run, write=write
                ),
                check=ctx.check if ctx is not None else None,
            )
        except ModelUnavailable as exc:
            raise model_error(exc) from exc
        except StalePlan as exc:
            raise stale_error(exc) from None
        await sidecar.after_write(result.written, "extract")
        report(2, 2, f"{len(result.written)} file(s) written")
        out = result.to_json()
        out["model_calls_under_lock"] = 0  # by construction now; kept for clients that read it
        if result.conflicts:
            out["conflicts"] = result.conflicts
        if params.dry_run:
            out["diff"] = "".join(result.diffs[p] for p in sorted(result.diffs))
        return out

    async def extract_start(params: ExtractParams, conn: Connection) -> dict:
        return jobs.start("extract", lambda ctx: extract_work(params, ctx)).to_json()

    async def consolidate_start(params: ConsolidateParams, conn: Connection) -> dict:
        async def work(ctx) -> dict:
            ctx.progress(0, 1, "consolidating")
            result = await run_consolidation(sidecar, params.dry_run, params.now, generator, check=ctx.check)
            await sidecar.after_write(result.written, "consolidate")
            ctx.progress(1, 1, f"{len(result.written)} file(s) written")
            return {"operations": result.operations, "written": result.written}

        # planned on a snapshot and written in one go: cancelled before the write, nothing is written
        return jobs.start("consolidate", work).to_json()

    async def reindex_start(params: NoParams, conn: Connection) -> dict:
        worker = getattr(sidecar, "index_worker", None)
        if worker is None:
            raise PalinodeError(NOT_AVAILABLE, getattr(sidecar, "index_error", None) or "the search index is not open")

        async def work(ctx) -> dict:
            paths = sorted(sidecar.vault.state.notes)
            ctx.progress(0, len(paths), "re-indexing every note")
            worker.enqueue(paths)  # the index thread embeds; it never takes the vault lock
            await asyncio.sleep(0.05)
            deadline = asyncio.get_running_loop().time() + 3600.0
            while not await asyncio.to_thread(worker.wait_idle, 0.5):
                if ctx.job.cancel_requested.is_set():
                    # what is committed stays (batches); the rest waits for the next change or reindex
                    await asyncio.to_thread(worker.interrupt)
                    ctx.check()
                if asyncio.get_running_loop().time() > deadline:
                    raise RuntimeError("re-indexing did not finish within an hour")
            ctx.progress(len(paths), len(paths), "index up to date")
            return {"notes": len(paths), "report": worker.last_report, "error": worker.last_error}

        return jobs.start("reindex", work).to_json()

    def known_job(job_id: str):
        job = jobs.get(job_id)
        if job is None:
            raise PalinodeError(-32602, f"no job {job_id!r} (finished jobs are kept for a while, then forgotten)")
        return job

    async def job_get(params: JobParams, conn: Connection) -> dict:
        return known_job(params.id).to_json()

    async def job_cancel(params: JobParams, conn: Connection) -> dict:
        job = known_job(params.id)
        if job.state == "running" and not job.cancellable:
            raise PalinodeError(-32602, f"{job.kind} cannot be cancelled once started")
        cancelled = jobs.cancel(params.id)
        assert cancelled is not None, "known_job() raised for an unknown id"
        return cancelled.to_json()

    async def job_list(params: NoParams, conn: Connection) -> dict:
        return {"jobs": [j.to_json() for j in jobs.list()]}

    dispatcher.register("extract.start", when_ready(extract_start), ExtractParams, r.JobInfo)
    dispatcher.register("consolidate.start", when_ready(consolidate_start), ConsolidateParams, r.JobInfo)
    dispatcher.register("reindex.start", when_ready(reindex_start), NoParams, r.JobInfo)
    dispatcher.register("job.get", job_get, JobParams, r.JobInfo)
    dispatcher.register("job.cancel", job_cancel, JobParams, r.JobInfo)
    dispatcher.register("job.list", job_list, NoParams, r.JobList)
    dispatcher.register("extract", when_ready(extract), ExtractParams, r.ExtractResult)
    dispatcher.register("session.turn", session_turn, TurnParams, r.Ok)
    dispatcher.register("session.end", when_ready(session_end), EndParams, r.ExtractResult)
    dispatcher.register("consolidate", when_ready(consolidate), ConsolidateParams, r.ConsolidateResult)
    dispatcher.register("core", when_ready(core), NoParams, r.CoreResult)
    dispatcher.register("inbox.list", when_ready(inbox_list), NoParams, r.InboxList)
    dispatcher.register("inbox.approve", when_ready(inbox_approve), ApproveParams, r.InboxReviewResult)
    dispatcher.register("inbox.reject", when_ready(inbox_reject), InboxParams, r.InboxReviewResult)
    sidecar.memory_generator = generator


async def run_consolidation(
    sidecar: Any, dry_run: bool = False, now: str | None = None, generator=None, check: Callable[[], None] | None = None
):
    """A consolidation planned with no lock held, written under the sidecar's lock (the socket
    method, its job and the weekly schedule). Raises StalePlan."""
    from palinode_vault.memory.update.planned import MemoGenerator
    from palinode_vault.memory.weekly.consolidate import consolidate as consolidate_vault

    gen = MemoGenerator(generator) if generator not in (None, False) else generator
    worker = getattr(sidecar, "index_worker", None)
    # the index's embedding model, shared (loaded once) for the pattern pass
    embedder = worker.model if worker is not None else None

    def run_pass(snap, write):
        if now:
            snap.settings.now = dt.date.fromisoformat(now)  # the snapshot's own settings
        return consolidate_vault(snap, dry_run=dry_run, generator=gen, embedder=embedder, write=write)

    sidecar.busy = "consolidate"
    try:
        return await planned_pass(sidecar, run_pass, check)
    finally:
        sidecar.busy = None


async def weekly_consolidation(sidecar: Any, check_every: float = 3600.0) -> None:
    """Run the consolidation on PROGRAM.md's weekday (Sunday by default), once that day."""
    from palinode_vault.memory.weekly.consolidate import is_due

    await sidecar.ready.wait()
    while True:
        try:
            today = sidecar.settings.today()
            if await asyncio.to_thread(is_due, sidecar.root, today):
                result = await run_consolidation(sidecar, generator=getattr(sidecar, "memory_generator", None))
                await sidecar.after_write(result.written, "weekly consolidation")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the schedule keeps going; the error is visible in status
            sidecar.last_error = f"weekly consolidation failed: {exc}"
            log.warning("weekly consolidation failed: %s", exc)
        await asyncio.sleep(check_every)
