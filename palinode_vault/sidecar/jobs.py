"""Long work over the socket as jobs: the call answers at once with a job id, progress and the end
are pushed as notifications, and a job can be cancelled.

    jobs = Jobs(notify)                       # notify(method, params): the sidecar's broadcast
    job = jobs.start("extract", work)         # work(ctx) -> awaitable result; returns at once
    ctx.progress(done, total, "message")      # from the work, in any thread; raises Cancelled
    ctx.check()                               # raises Cancelled when cancel was asked
    jobs.cancel(job.id); jobs.get(job.id)     # job.to_json(): id, kind, state, done, total, ...

Notifications (docs/PROTOCOL.md, "Jobs"): `job.progress {id, kind, done, total, message}` and
`job.done {id, kind, state, result | error}` with state `done`, `failed` or `cancelled`.
The module holds no vault state and no lock: what to run, and under which lock, is the caller's.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

Notify = Callable[[str, dict], None]
KEEP_FINISHED = 20  # finished jobs remembered for job.get
PROGRESS_EVERY = 0.25  # seconds between two job.progress notifications of one job


class Cancelled(Exception):
    """Raised inside a job's work when the job was cancelled."""


@dataclass
class Job:
    id: str
    kind: str
    cancellable: bool = True
    state: str = "running"  # running, done, failed, cancelled
    done: int = 0
    total: int = 0
    message: str = ""
    result: Any = None
    error: str | None = None
    started: float = field(default_factory=time.time)
    finished: float | None = None
    cancel_requested: threading.Event = field(default_factory=threading.Event)
    task: asyncio.Task | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "kind": self.kind,
            "state": self.state,
            "done": self.done,
            "total": self.total,
            "message": self.message,
            "cancellable": self.cancellable,
            "seconds": round((self.finished or time.time()) - self.started, 3),
        }
        if self.state == "done":
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        return out


class JobContext:
    """What a job's work gets: progress reports and the cancel check (safe from any thread)."""

    def __init__(self, job: Job, jobs: Jobs):
        self.job = job
        self._jobs = jobs
        self._last = 0.0

    def check(self) -> None:
        if self.job.cancel_requested.is_set():
            raise Cancelled()

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.check()
        self.job.done, self.job.total = int(done), int(total)
        if message:
            self.job.message = message
        now = time.monotonic()
        if done >= total or now - self._last >= PROGRESS_EVERY:
            self._last = now
            self._jobs._push(
                "job.progress",
                {
                    "id": self.job.id,
                    "kind": self.job.kind,
                    "done": self.job.done,
                    "total": self.job.total,
                    "message": self.job.message,
                },
            )


class Jobs:
    """The running and recently finished jobs of one sidecar."""

    def __init__(self, notify: Notify, keep: int = KEEP_FINISHED):
        self._notify = notify
        self._keep = keep
        self._jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, kind: str, work: Callable[[JobContext], Awaitable[Any]], *, cancellable: bool = True) -> Job:
        """Starts `work(ctx)` as a task on the running loop; returns the job at once."""
        self._loop = asyncio.get_running_loop()
        job = Job(id=f"{kind}-{next(self._ids)}", kind=kind, cancellable=cancellable)
        self._jobs[job.id] = job
        ctx = JobContext(job, self)
        job.task = asyncio.create_task(self._run(job, ctx, work), name=f"palinode-job-{job.id}")
        self._forget_old()
        return job

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def list(self) -> list[Job]:
        return list(self._jobs.values())

    def cancel(self, job_id: str) -> Job | None:
        """Asks the job to stop at its next check; None when there is no such job."""
        job = self._jobs.get(job_id)
        if job is not None and job.state == "running" and job.cancellable:
            job.cancel_requested.set()
        return job

    async def wait(self, job_id: str) -> Job:
        """Waits until the job has finished (tests, and callers that want the old blocking call)."""
        job = self._jobs[job_id]
        if job.task is not None:
            await asyncio.shield(job.task)
        return job

    async def _run(self, job: Job, ctx: JobContext, work: Callable[[JobContext], Awaitable[Any]]) -> None:
        try:
            job.result = await work(ctx)
            job.state = "cancelled" if job.cancel_requested.is_set() and job.result is None else "done"
        except Cancelled:
            job.state = "cancelled"
        except asyncio.CancelledError:
            job.state = "cancelled"
        except Exception as exc:  # noqa: BLE001 - the error goes to the person in job.done
            job.state, job.error = "failed", _one_line(exc)
            log.warning("job %s failed: %s", job.id, job.error)
        job.finished = time.time()
        end = {"id": job.id, "kind": job.kind, "state": job.state}
        if job.state == "done":
            end["result"] = job.result
        if job.error:
            end["error"] = job.error
        self._push("job.done", end)

    def _push(self, method: str, params: dict) -> None:
        """Notify from the loop's thread, whichever thread reports."""
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is not None and running is not loop:
            loop.call_soon_threadsafe(self._notify, method, params)
        else:
            self._notify(method, params)

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.state != "running"]
        for job in sorted(finished, key=lambda j: j.finished or 0)[: max(0, len(finished) - self._keep)]:
            self._jobs.pop(job.id, None)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
