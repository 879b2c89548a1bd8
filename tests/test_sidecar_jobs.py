"""Long work as jobs over the real socket: extract returns a job id at once, progress and the end
are pushed, cancel works, and the model never holds the vault lock (other calls answer meanwhile).

The generator is the scripted one (registered like the real one) held on an event, standing in
for a model that takes a minute; everything else is real: sidecar, socket, vault, journal.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from sidecar_helpers import RpcError, SidecarClient, run, running_sidecar

from palinode_vault.models.generator import ScriptedGenerator, register_generator
from palinode_vault.sidecar.jobs import Cancelled, Jobs

pytestmark = pytest.mark.timeout(120)

SAID = "We decided to keep the waiting list cache in Redis."
# the model's answer: it chooses statement 1 (memory/extraction/selection.py)
ITEM = {"statement": 1, "type": "Decision", "about": "", "replaces": "", "because": [], "rejected": [], "confidence": 0.9}
TALK = f"User: {SAID}\nAssistant: Noted."


class HeldGenerator(ScriptedGenerator):
    """The scripted generator, but each answer waits until the test releases it."""

    def __init__(self, outputs):
        super().__init__(outputs, default={"items": []})
        self.entered = threading.Event()
        self.release = threading.Event()

    def generate_json(self, *args, **kwargs):
        self.entered.set()
        assert self.release.wait(60), "the test never released the model"
        return super().generate_json(*args, **kwargs)


async def wait_done(client: SidecarClient, job_id: str, since: float, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for n in client.seen("job.done", since=since):
            if n.params["id"] == job_id:
                return n.params
        await asyncio.sleep(0.05)
    raise AssertionError(f"no job.done for {job_id}")


def test_extract_job_answers_at_once_reports_progress_and_leaves_the_vault_free(sample_vault: Path):
    gen = HeldGenerator([{"items": [ITEM]}])
    register_generator("jobtest-held", lambda **options: gen)

    async def body():
        async with running_sidecar(sample_vault, quiet=0.3, auto_fix=False, generation_model="jobtest-held"):
            async with await SidecarClient.open(sample_vault) as client:
                since = time.monotonic()
                started = time.monotonic()
                job = await client.call("extract.start", {"text": TALK, "source": "jobtest"})
                assert time.monotonic() - started < 2.0
                assert job["state"] == "running" and job["kind"] == "extract" and job["cancellable"]
                assert await asyncio.to_thread(gen.entered.wait, 20)
                # The model is busy: vault work (it takes the vault lock) still answers at once.
                t0 = time.monotonic()
                findings = await client.call("note.findings", {"path": "people/elena-vasquez.md"}, timeout=5)
                assert "findings" in findings and time.monotonic() - t0 < 3.0
                assert (await client.call("job.get", {"id": job["id"]}))["state"] == "running"
                gen.release.set()
                done = await wait_done(client, job["id"], since)
                progress = [n.params for n in client.seen("job.progress", since=since) if n.params["id"] == job["id"]]
                return job, done, progress

    job, done, progress = run(body(), timeout=90)
    assert done["state"] == "done", done
    assert done["result"]["model_calls_under_lock"] == 0
    items = done["result"]["items"]
    assert [i["op"] for i in items] in (["ADD"], ["INBOX"]), items
    assert "Redis" in (sample_vault / items[0]["path"]).read_text()
    assert [p["done"] for p in progress][0] == 0 and progress[-1]["done"] == progress[-1]["total"] > 0
    assert any("model" in p["message"] for p in progress)


def test_a_cancelled_extract_job_writes_nothing(sample_vault: Path, digest):
    gen = HeldGenerator([{"items": [ITEM]}])
    register_generator("jobtest-cancel", lambda **options: gen)
    before = digest(sample_vault)

    async def body():
        async with running_sidecar(sample_vault, quiet=0.3, auto_fix=False, generation_model="jobtest-cancel"):
            async with await SidecarClient.open(sample_vault) as client:
                since = time.monotonic()
                job = await client.call("extract.start", {"text": TALK})
                assert await asyncio.to_thread(gen.entered.wait, 20)
                cancelling = await client.call("job.cancel", {"id": job["id"]})
                assert cancelling["id"] == job["id"]
                gen.release.set()
                done = await wait_done(client, job["id"], since)
                with pytest.raises(RpcError):
                    await client.call("job.get", {"id": "extract-999"})
                listed = await client.call("job.list")
                return done, listed

    done, listed = run(body(), timeout=90)
    assert done["state"] == "cancelled" and "result" not in done
    assert [j["state"] for j in listed["jobs"]] == ["cancelled"]
    after = {p: h for p, h in digest(sample_vault).items() if not p.startswith(".palinode/")}
    assert after == {p: h for p, h in before.items() if not p.startswith(".palinode/")}


def test_consolidate_runs_as_a_job(sample_vault: Path):
    register_generator("jobtest-none", lambda **options: ScriptedGenerator(default={"items": []}))

    async def body():
        async with running_sidecar(sample_vault, quiet=0.3, auto_fix=False, generation_model="jobtest-none"):
            async with await SidecarClient.open(sample_vault) as client:
                since = time.monotonic()
                job = await client.call("consolidate.start", {"dry_run": True, "now": "2026-12-01"})
                assert job["cancellable"] is True  # planned, then written in one go: cancellable until the write
                done = await wait_done(client, job["id"], since, timeout=60)
                with pytest.raises(RpcError):
                    await client.call("job.cancel", {"id": job["id"] + "x"})
                return done

    done = run(body(), timeout=90)
    assert done["state"] == "done" and done["result"]["written"] == []
    assert any(o["path"] == "decisions/stripe-for-billing.md" for o in done["result"]["operations"])


def test_jobs_module_on_its_own():
    seen: list[tuple[str, dict]] = []

    async def body():
        jobs = Jobs(lambda m, p: seen.append((m, p)), keep=1)

        async def counting(ctx):
            for i in range(3):
                await asyncio.to_thread(ctx.progress, i + 1, 3, f"step {i + 1}")  # from a worker thread
            return {"n": 3}

        async def failing(ctx):
            raise ValueError("bad input in notes/x.md line 3\nmore detail")

        async def stopping(ctx):
            while True:
                ctx.check()
                await asyncio.sleep(0.01)

        a = jobs.start("count", counting)
        await jobs.wait(a.id)
        b = jobs.start("fail", failing)
        await jobs.wait(b.id)
        c = jobs.start("stop", stopping)
        await asyncio.sleep(0.05)
        jobs.cancel(c.id)
        await jobs.wait(c.id)
        return a, b, c, jobs

    a, b, c, jobs = run(body())
    assert (a.state, a.result) == ("done", {"n": 3})
    assert (b.state, b.error) == ("failed", "bad input in notes/x.md line 3")
    assert c.state == "cancelled"
    assert jobs.get(a.id) is None  # only the last finished job (keep=1) is remembered... and the running ones
    ends = [p for m, p in seen if m == "job.done"]
    assert [e["state"] for e in ends] == ["done", "failed", "cancelled"]
    assert [p["done"] for m, p in seen if m == "job.progress" and p["id"] == a.id][-1] == 3
    with pytest.raises(Cancelled):
        from palinode_vault.sidecar.jobs import Job, JobContext

        job = Job("x-1", "x")
        job.cancel_requested.set()
        JobContext(job, jobs).check()
