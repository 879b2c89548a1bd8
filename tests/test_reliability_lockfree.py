"""No model work holds the vault lock (issue 17, issue 19 item 3): the real sidecar and socket, and
the real MCP server in-process (the SDK's in-memory client).

A consolidation job asks the model (the scripted generator, registered like the real one, held on
an event as a model that takes minutes would be) whether a new decision replaces an old one.
While the model "thinks": a person's save gets its automatic fix, `undo` and `status` answer at
once, and the person edits the very decision the pass has read and will write. When the model
answers, the stale plan is not written: the pass plans again from the disk, keeps the person's
edit, and undoing the pass gives back the person's bytes exactly. The MCP server's session end
likewise runs its model beside the server's vault thread: reads answer meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Implementation
from mcp_helpers import call, copy_sample
from sidecar_helpers import SidecarClient, age_files, run, running_sidecar, write

from palinode_vault.models.generator import ScriptedGenerator, register_generator

pytestmark = pytest.mark.timeout(240)

OLD = """---
id: decision-nightly-cron-reminders
category: decision
type: Decision
status: active
entities: [project/harbor-app]
supersedes: []
superseded_by: ""
confidence: 0.9
created: 2026-10-01T10:00:00Z
last_updated: 2026-11-25T10:00:00Z
---
# Decision: Nightly cron sends the reminders

## Statement
A nightly cron job sends every reminder for the next day.
"""

NEW = """---
id: decision-queue-worker-reminders
category: decision
type: Decision
status: active
entities: [project/harbor-app, decision/nightly-cron-reminders]
supersedes: []
superseded_by: ""
confidence: 0.9
created: 2026-11-28T10:00:00Z
last_updated: 2026-11-28T10:00:00Z
---
# Decision: A queue worker sends the reminders

## Statement
A queue worker sends each reminder an hour ahead. It replaces [[nightly-cron-reminders]].
"""

ZOE = """---
id: person-zoe-park
category: person
type: PersonMemory
name: Zoe Park
entities: [project/harbor-app]
last_updated: 2026-12-01T09:00:00Z
---
# Zoe Park

## Context
Zoe tests [[harbor-app]] with the pilot clinics.
"""


class HeldGenerator(ScriptedGenerator):
    """The scripted generator, but each answer waits until the test releases it."""

    def __init__(self, outputs, default=...):
        super().__init__(outputs, default=default, check_schema=False)
        self.entered = threading.Event()
        self.release = threading.Event()

    def generate_json(self, *args, **kwargs):
        self.entered.set()
        assert self.release.wait(90), "the test never released the model"
        return super().generate_json(*args, **kwargs)


async def quiet(client: SidecarClient, seconds: float = 0.6, timeout: float = 30.0) -> None:
    """Until the sidecar has nothing pending and wrote nothing for `seconds`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        since = time.monotonic()
        await asyncio.sleep(seconds)
        status = await client.call("status")
        if status["pending"] == 0 and not client.seen("wrote", since=since):
            return
    raise AssertionError("the sidecar did not settle")


def test_a_slow_model_blocks_nobody_and_an_edit_made_meanwhile_survives(sample_vault: Path):
    (sample_vault / "decisions/nightly-cron-reminders.md").write_text(OLD)
    (sample_vault / "decisions/queue-worker-reminders.md").write_text(NEW)
    age_files(sample_vault)
    gen = HeldGenerator([{"relation": "replaces"}, {"relation": "replaces"}])
    register_generator("lockfree-held", lambda **options: gen)
    line = b"It replaces [[nightly-cron-reminders]].\n"
    edited = b""

    async def body():
        async with running_sidecar(sample_vault, quiet=0.3, generation_model="lockfree-held"):
            async with await SidecarClient.open(sample_vault) as client:
                await quiet(client)
                since = time.monotonic()
                job = await client.call("consolidate.start", {"now": "2026-12-01"})
                assert job["cancellable"]
                assert await asyncio.to_thread(gen.entered.wait, 60), "the pass never asked the model"
                nonlocal edited
                # as the pass read it (the sidecar's start kept its footer and cross_refs current)
                new_bytes_read = (sample_vault / "decisions/queue-worker-reminders.md").read_bytes()
                edited = new_bytes_read.replace(line, line + b"Ops signed off on Tuesday; keep this line.\n")
                assert edited != new_bytes_read

                # 1. a person's save gets its automatic fix while the model is still busy
                saved = time.monotonic()
                write(sample_vault, "people/zoe-park.md", ZOE)
                fixed = await client.wait_for("wrote", "people/zoe-park.md", since=saved, timeout=10)
                assert (sample_vault / "people/zoe-park.md").read_text() != ZOE
                # 2. undo and status answer at once (undo reverts that fix)
                t0 = time.monotonic()
                undone = await client.call("undo", timeout=5)
                status = await client.call("status", timeout=5)
                answered = time.monotonic() - t0
                assert "people/zoe-park.md" in undone["restored"]
                assert (sample_vault / "people/zoe-park.md").read_text() == ZOE
                # 3. the person edits the decision the pass has read and means to write
                write(sample_vault, "decisions/queue-worker-reminders.md", edited.decode())
                await asyncio.sleep(0.5)
                still = await client.call("job.get", {"id": job["id"]})
                assert not gen.release.is_set() and still["state"] == "running"
                gen.release.set()
                for _ in range(600):
                    done = [n.params for n in client.seen("job.done", since=since) if n.params["id"] == job["id"]]
                    if done:
                        break
                    await asyncio.sleep(0.05)
                assert done, "the job never ended"
                await quiet(client)
                after = (sample_vault / "decisions/queue-worker-reminders.md").read_bytes()
                old_after = (sample_vault / "decisions/nightly-cron-reminders.md").read_text()
                final_undo = await client.call("undo", timeout=10)
                return (
                    fixed,
                    answered,
                    status,
                    new_bytes_read,
                    done[0],
                    after,
                    old_after,
                    final_undo,
                    (sample_vault / "decisions/queue-worker-reminders.md").read_bytes(),
                )

    fixed, answered, status, new_bytes_read, done, after, old_after, final_undo, undone_bytes = run(body(), timeout=170)
    assert answered < 3.0, f"undo and status took {answered:.1f} s while the model ran"
    assert status["busy"] in (None, "consolidate")
    assert done["state"] == "done", done
    assert "decisions/queue-worker-reminders.md" in done["result"]["written"]
    # the person's edit is kept: the pass planned again from it (the model was asked about the new text)
    assert b"Ops signed off on Tuesday; keep this line.\n" in after
    assert b"supersedes: [decision-nightly-cron-reminders]" in after
    assert "status: archived" in old_after and "superseded_by: decision-queue-worker-reminders" in old_after
    assert len(gen.calls) == 2, [c["user"][:80] for c in gen.calls]  # once per distinct prompt
    # undoing the pass gives back exactly the bytes the person had saved
    assert "decisions/queue-worker-reminders.md" in final_undo["restored"]
    assert undone_bytes == edited


SAID = "We decided to keep the waiting list cache in Redis."
# the model's answer: it chooses statement 1 (memory/extraction/selection.py)
ITEM = {"statement": 1, "type": "Decision", "about": "", "replaces": "", "because": [], "rejected": [], "confidence": 0.9}


def test_session_end_model_does_not_hold_the_vault_worker(tmp_path: Path, monkeypatch) -> None:
    from palinode_vault.mcp.server import build_server

    monkeypatch.setenv("PALINODE_NO_INDEX", "1")
    root = copy_sample(tmp_path)
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        "\n".join(json.dumps(t) for t in [{"role": "user", "content": SAID}, {"role": "assistant", "content": "Noted."}]) + "\n"
    )
    gen = HeldGenerator([{"items": [ITEM]}], default={"items": []})
    server = build_server(root, embedding_model=str(tmp_path / "no-such-model.gguf"), generator=gen)
    person_note = root / "people/tariq-benali.md"

    async def body():
        async with Client(
            server, client_info=Implementation(name="lockfree-test", version="1.0"), read_timeout_seconds=200
        ) as client:
            ending = asyncio.create_task(
                call(
                    client,
                    "palinode_session_end",
                    {"summary": "Picked Redis for the waiting list cache.", "transcript_path": str(transcript)},
                )
            )
            assert await asyncio.to_thread(gen.entered.wait, 120), "the model was never asked"
            t0 = time.monotonic()
            read = await call(client, "palinode_read", {"path": "people/tariq-benali.md"})
            listed = await call(client, "palinode_list", {"category": "decision"})
            answered = time.monotonic() - t0
            edited = person_note.read_text() + "\nAdded by the person while the model ran.\n"
            person_note.write_text(edited)
            gen.release.set()
            ended = await ending
            return read, listed, answered, ended, edited

    read, listed, answered, ended, edited = asyncio.run(body())
    server.palinode_service.close()
    assert read["path"] == "people/tariq-benali.md" and listed["notes"]
    assert answered < 5.0, f"reads took {answered:.1f} s while the model ran"
    assert ended["via"] == "local" and ended["written"], ended
    assert any("Redis" in (root / p).read_text() for p in ended["written"] if p.endswith(".md"))
    assert person_note.read_text() == edited  # the person's edit, byte for byte
