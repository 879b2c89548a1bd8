"""The MCP server's session end runs the model beside its vault worker, not on it (issue 17, issue 19
item 3): while the extraction model reads the transcript, reads still answer at once, and a note
the person edits meanwhile keeps its bytes. The real MCP server in-process (the SDK's in-memory
client), the scripted generator held on an event as a slow model, a copy of sample-vault/."""

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
from palinode_vault.models.generator import ScriptedGenerator

pytestmark = pytest.mark.timeout(240)

ITEM = {"type": "Decision", "title": "Redis for the waiting list cache", "text": "We keep the waiting list cache in Redis.",
        "rationale": "", "alternatives": "", "entities": [], "due": "", "replaces": "", "confidence": 0.9}


class HeldGenerator(ScriptedGenerator):
    def __init__(self, outputs):
        super().__init__(outputs, default={"items": []})
        self.entered = threading.Event()
        self.release = threading.Event()

    def generate_json(self, *args, **kwargs):
        self.entered.set()
        assert self.release.wait(120), "the test never released the model"
        return super().generate_json(*args, **kwargs)


def test_session_end_model_does_not_hold_the_vault_worker(tmp_path: Path, monkeypatch) -> None:
    from palinode_vault.mcp.server import build_server

    monkeypatch.setenv("PALINODE_NO_INDEX", "1")
    root = copy_sample(tmp_path)
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("\n".join(json.dumps(t) for t in [
        {"role": "user", "content": f"{ITEM['title']}. {ITEM['text']}"},
        {"role": "assistant", "content": "Noted."}]) + "\n")
    gen = HeldGenerator([{"items": [ITEM]}])
    server = build_server(root, embedding_model=str(tmp_path / "no-such-model.gguf"), generator=gen)
    person_note = root / "people/tariq-benali.md"

    async def body():
        async with Client(server, client_info=Implementation(name="lockfree-test", version="1.0"),
                          read_timeout_seconds=200) as client:
            ending = asyncio.create_task(call(client, "palinode_session_end", {
                "summary": "Picked Redis for the waiting list cache.", "transcript_path": str(transcript)}))
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
