"""The memory manager's socket methods through a real sidecar: core, consolidate, sessions."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest
from sidecar_helpers import RpcError, SidecarClient, age_files, run, running_sidecar

pytestmark = pytest.mark.timeout(120)


def test_core_consolidate_and_a_session_through_the_socket(sample_vault: Path):
    age_files(sample_vault)
    before = {p: p.read_bytes() for p in sample_vault.rglob("*.md")}

    async def body():
        async with running_sidecar(sample_vault, quiet=0.3, auto_fix=False):
            async with await SidecarClient.open(sample_vault) as client:
                core = await client.call("core")
                assert core["files"] and core["chars"] <= 12000  # PROGRAM.md core.max_chars
                assert all(set(f) >= {"path", "title"} for f in core["files"])

                plan = await client.call("consolidate", {"dry_run": True, "now": "2026-12-01"})
                assert plan["written"] == []
                ops = {(o["op"], o["path"]) for o in plan["operations"]}
                # stripe-for-billing is superseded by paddle-for-billing but still active
                assert any(path == "decisions/stripe-for-billing.md" for _, path in ops), ops

                # small talk is not a memory: the session ends with nothing filed
                await client.call("session.turn", {"session": "s1", "role": "user", "content": "what time is it?"})
                await client.call("session.turn", {"session": "s1", "role": "assistant", "content": "It is 10:42."})
                ended = await client.call("session.end", {"session": "s1", "dry_run": True})
                assert ended["items"] == [] and ended["withheld_secrets"] == 0

                with pytest.raises(RpcError):
                    await client.call("consolidate", {"now": "01/12/2026"})  # not YYYY-MM-DD

    run(body())
    after = {p: p.read_bytes() for p in sample_vault.rglob("*.md")}
    assert after == before  # dry runs wrote nothing


def test_core_and_search_calls_are_recorded_for_the_core_drift_check(sample_vault: Path):
    from palinode_vault.memory.weekly import access

    async def body():
        async with running_sidecar(sample_vault, quiet=0.3, auto_fix=False):
            async with await SidecarClient.open(sample_vault) as client:
                core = await client.call("core")
                found = []
                for _ in range(300):  # the index fills in the background; keyword rows come first
                    try:
                        found = (await client.call("search", {"query": "Cochrane", "mode": "keyword"}))["results"]
                    except Exception:  # noqa: BLE001 - not started yet
                        found = []
                    if found:
                        break
                    await asyncio.sleep(0.2)
                assert found
                return core, found

    core, found = run(body(), timeout=110)
    entries = access.read(sample_vault)
    cores = [e for e in entries if e["event"] == "core"]
    searches = [e for e in entries if e["event"] == "search" and e["paths"]]
    assert len(cores) == 1 and cores[0]["paths"] == sorted(f["path"] for f in core["files"])
    # the search belongs to the session the core call started on that connection
    assert searches[-1]["session"] == cores[0]["session"]
    assert searches[-1]["paths"] == sorted({r["path"] for r in found})
    assert "Cochrane" not in (sample_vault / access.ACCESS_PATH).read_text()  # never the query


SUNDAY = dt.date(2026, 12, 6)  # PROGRAM.md's consolidation weekday; the sample vault's today is a Tuesday


@pytest.mark.parametrize("scheduled", [True, False])
def test_the_sidecar_runs_the_weekly_consolidation_on_its_day_once(sample_vault: Path, monkeypatch, scheduled):
    """On PROGRAM.md's weekday the sidecar runs the consolidation by itself, once that day; with
    PALINODE_WEEKLY_CONSOLIDATION=0 (what every other test's sidecar has, conftest.py) it does not."""
    from palinode_vault.memory.weekly.consolidate import is_due

    monkeypatch.setenv("PALINODE_WEEKLY_CONSOLIDATION", "1" if scheduled else "0")
    assert is_due(sample_vault, SUNDAY)

    async def body():
        async with running_sidecar(sample_vault, quiet=0.3, auto_fix=False, now=SUNDAY):
            for _ in range(300 if scheduled else 20):  # up to 30 s for the run; 2 s to show there is none
                if not is_due(sample_vault, SUNDAY):
                    break
                await asyncio.sleep(0.1)

    run(body())
    assert is_due(sample_vault, SUNDAY) is not scheduled  # a consolidation of that day is logged
