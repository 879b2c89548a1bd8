"""The stdio server keeps the vault and index loaded between calls, and still sees every edit the
person makes on disk between two calls: changed, new and deleted notes, and a same-size edit
that leaves the stat as it was (a filesystem with coarse timestamps). Real `palinode-vault mcp`
process, the `mcp` SDK's client, the real index (MiniLM on llama.cpp, sqlite-vec)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from mcp_helpers import call, copy_sample, mcp_client

NEW_DECISION = """---
id: decision-ferry-courier-for-kits
category: decision
type: Decision
status: active
entities: []
supersedes: []
superseded_by: ""
confidence: 0.9
created: 2026-11-30T10:00:00Z
last_updated: 2026-11-30T10:00:00Z
---
# Decision: Ship field kits to the islands by ferry courier

## Statement
Field kits for the island clinics travel by ferry courier on Tuesdays, because air freight refuses the lithium batteries.
"""


def paths(found: dict) -> list[str]:
    return [r["path"] for r in found["results"]]


def test_edits_between_calls_are_seen_by_the_next_call(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)
    person = root / "people/tariq-benali.md"
    gone = "decisions/stripe-for-billing.md"

    async def session():
        out: dict = {}
        async with mcp_client(root) as client:
            out["before"] = await call(client, "palinode_search", {"query": "quokkafjord", "mode": "keyword"})
            listed = await call(client, "palinode_list", {"category": "decision"})
            assert gone in [n["path"] for n in listed["notes"]]

            # the person edits a note, adds one and deletes one while the server runs
            person.write_text(
                person.read_text(encoding="utf-8") + "\nTariq keeps the quokkafjord spreadsheet.\n", encoding="utf-8"
            )
            (root / "decisions/ferry-courier-for-kits.md").write_text(NEW_DECISION, encoding="utf-8")
            (root / gone).unlink()
            out["edited"] = await call(client, "palinode_search", {"query": "quokkafjord", "mode": "keyword"})
            out["read"] = await call(client, "palinode_read", {"path": "people/tariq-benali.md"})
            out["list"] = await call(client, "palinode_list", {"category": "decision"})
            out["gone"] = await call(client, "palinode_search", {"query": "Stripe billing", "mode": "keyword"})
            # the next save compares with the note that appeared: a restatement, not a new file
            out["save"] = await call(
                client,
                "palinode_save",
                {
                    "type": "Decision",
                    "title": "Ship field kits to the islands by ferry courier",
                    "text": "Field kits for the island clinics travel by ferry courier on Tuesdays, because air "
                    "freight refuses the lithium batteries.",
                    "confidence": 0.9,
                },
            )

            # a same-size edit that leaves size and mtime as they were: seen when the file had been
            # stat'ed within the timestamp granularity of its last change (just saved, as here)
            text = person.read_text(encoding="utf-8")
            person.write_text(text, encoding="utf-8")  # saved just now: its mtime is recent
            await call(client, "palinode_list", {"category": "person"})  # the server stats it
            before = person.stat()
            person.write_text(text.replace("quokkafjord", "wombatcove!"), encoding="utf-8")
            os.utime(person, ns=(before.st_atime_ns, before.st_mtime_ns))
            assert person.stat().st_size == before.st_size and person.stat().st_mtime_ns == before.st_mtime_ns
            out["same_size"] = await call(client, "palinode_search", {"query": "wombatcove", "mode": "keyword"})
            out["same_size_read"] = await call(client, "palinode_read", {"path": "people/tariq-benali.md"})
        return out

    out = asyncio.run(session())
    assert "people/tariq-benali.md" not in paths(out["before"])
    assert "people/tariq-benali.md" in paths(out["edited"])
    assert "quokkafjord spreadsheet" in out["read"]["text"]
    listed = [n["path"] for n in out["list"]["notes"]]
    assert "decisions/ferry-courier-for-kits.md" in listed and gone not in listed
    assert gone not in paths(out["gone"])
    assert out["save"]["op"] in ("NOOP", "UPDATE") and out["save"]["path"] == "decisions/ferry-courier-for-kits.md", out["save"]
    assert "people/tariq-benali.md" in paths(out["same_size"])
    assert "wombatcove!" in out["same_size_read"]["text"]
