"""Crash safety: kill -9 the CLI `fix` and the sidecar while they write (issue 7, item 1).

After every kill each note is byte-identical to its state before or after the fix (never
partial), the next start removes the temp files a killed writer left, and the journal undoes
everything that landed. Quick: a few rounds on a bench vault of a few hundred notes. Long
(`bench/reliability.py --long`): 30 CLI rounds and 25 sidecar rounds on 10,000 notes.
"""

from __future__ import annotations

import base64
import json
import random
import time
from pathlib import Path

import pytest
from reliability_helpers import (
    TEMP_MARK,
    age_notes,
    bench_template,
    cli,
    copy_vault,
    diff_states,
    journal_entries,
    kill9,
    popen_cli,
    scale,
    sha,
    snapshot,
    spawn_serve_nowait,
    start_serve,
    stop,
    temp_files,
    undo_everything,
    wait_until,
)

NOW = "2026-04-01"  # the bench vault's "today" is 2026-03-31


@pytest.fixture(scope="module")
def bench_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench")


def _journal_files(root: Path) -> list[Path]:
    folder = root / ".palinode" / "journal"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def _assert_before_or_after(before: dict[str, bytes], after: dict[str, bytes], now: dict[str, bytes]) -> tuple[int, int]:
    """Every file is exactly its before or its after bytes; returns (#after, #before) among changed."""
    assert set(now) == set(before), f"files appeared or vanished: {sorted(set(now) ^ set(before))[:5]}"
    landed = kept = 0
    partial = []
    for rel, data in now.items():
        if data == after[rel]:
            landed += before[rel] != after[rel]
        elif data == before[rel]:
            kept += 1
        else:
            partial.append(rel)
    assert not partial, f"{len(partial)} files are neither before nor after: {partial[:5]}"
    return landed, kept


def test_kill9_cli_fix_leaves_before_or_after_and_undo_restores(tmp_path, bench_cache):
    notes, rounds = scale(250, 10_000), scale(3, 30)
    rng = random.Random(20261202)
    template = bench_template(bench_cache, notes)
    # The reference: one uninterrupted fix gives the "after" state.
    ref = copy_vault(template, tmp_path / "ref")
    before = snapshot(ref)
    started = time.monotonic()
    done = cli("fix", "--vault", ref, "--now", NOW, "--json")
    duration = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    after = snapshot(ref)
    changed = diff_states(before, after)
    assert len(changed) > notes // 10, "the bench vault should give fix plenty to write"

    work = copy_vault(template, tmp_path / "work")
    cli("lint", "--vault", work, "--now", NOW, "--json")  # warm the parse cache like a used vault
    totals = {"landed": 0, "kept": 0, "temps": 0, "cut_lines": 0}
    for round_no in range(rounds):
        proc = popen_cli(
            "fix",
            "--vault",
            work,
            "--now",
            NOW,
            "--json",
            stdout=open(tmp_path / "fix.out", "wb"),
            stderr=open(tmp_path / "fix.err", "wb"),
        )
        if round_no % 2 == 0:
            # kill anywhere in the run, loading included
            time.sleep(rng.uniform(0, duration))
        else:
            # kill while writing: wait for the run's journal to appear, then a random moment
            runs_before = len(_journal_files(work))
            deadline = time.monotonic() + 120
            while len(_journal_files(work)) == runs_before and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(rng.uniform(0, duration / 2))
        kill9(proc)
        now = snapshot(work)
        landed, kept = _assert_before_or_after(before, after, now)
        totals["landed"] += landed
        totals["temps"] += len(temp_files(work))
        # The journal names every file that landed, with its before bytes.
        journaled = {e["path"] for e in journal_entries(work)}
        assert {rel for rel in changed if now[rel] == after[rel]} <= journaled
        for entry in journal_entries(work):
            if entry["before"] is not None:
                assert base64.b64decode(entry["before"]) == before[entry["path"]]
        if round_no % 2 == 1 or round_no == rounds - 1:
            # The next start finishes the job and cleans temp files: the same after state.
            again = cli("fix", "--vault", work, "--now", NOW, "--json")
            assert again.returncode == 0, again.stderr
            assert temp_files(work) == [], "the next fix left temp files"
            assert diff_states(after, snapshot(work)) == []
        # Undo everything the journal holds: back to the exact before state.
        undo_everything(work)
        assert diff_states(before, snapshot(work)) == [], f"round {round_no}: undo did not restore the vault"
        # leftover temp files of the killed run are cleaned by the next fix (checked above) or here
        for leftover in work.rglob(f"*{TEMP_MARK}*"):
            leftover.unlink()
    # Some kills must have landed mid-run for this to prove anything.
    assert totals["landed"] > 0, totals


def test_kill9_sidecar_while_it_writes(tmp_path, bench_cache):
    notes, rounds = scale(250, 10_000), scale(2, 25)
    rng = random.Random(7)
    template = bench_template(bench_cache, notes)
    work = copy_vault(template, tmp_path / "work")
    age_notes(work)
    before = snapshot(work)
    landed_total = 0
    for round_no in range(rounds):
        proc = spawn_serve_nowait(work, "--quiet-seconds", "0", stderr_path=tmp_path / "serve.err")
        runs_before = len(_journal_files(work))
        # Wait until the sidecar has started a write run, then kill it at a random moment.
        wait_until(
            lambda runs_before=runs_before, proc=proc: len(_journal_files(work)) > runs_before or proc.poll() is not None,
            180,
            "the sidecar to start writing",
        )
        time.sleep(rng.uniform(0, scale(1.0, 3.0)))
        kill9(proc)
        now = snapshot(work)
        assert set(now) == set(before)
        # Each file is its before bytes or exactly the bytes some journaled write produced.
        afters: dict[str, set[str]] = {}
        for entry in journal_entries(work):
            afters.setdefault(entry["path"], set()).add(entry["after_hash"])
        partial = [rel for rel, data in now.items() if data != before[rel] and sha(data) not in afters.get(rel, set())]
        assert not partial, f"round {round_no}: partial or unjournaled files {partial[:5]}"
        landed_total += sum(1 for rel, data in now.items() if data != before[rel])
        # A planted temp file of a dead writer, and whatever the kill left, go on the next start.
        planted = work / "people" / f".ghost.md{TEMP_MARK}999999999-abcd"
        planted.write_bytes(b"half a note")
        proc = start_serve(work, "--quiet-seconds", "0", "--no-auto-fix", stderr_path=tmp_path / "serve.err")
        try:
            assert temp_files(work) == [], f"round {round_no}: temp files survived a restart"
            assert (work / ".palinode" / "sidecar.json").exists()
        finally:
            stop(proc)
        undo_everything(work)
        assert diff_states(before, snapshot(work)) == [], f"round {round_no}: undo did not restore the vault"
        age_notes(work)
    assert landed_total > 0


def test_cut_journal_line_is_ignored_by_undo(tmp_path):
    """A kill while appending a journal line leaves a cut line; undo still restores the rest."""
    from palinode_vault.writer import Edit, Run, undo_last

    root = tmp_path / "v"
    (root / "people").mkdir(parents=True)
    a = root / "people" / "a.md"
    a.write_bytes(b"# A\n")
    run = Run(root, "fix")
    assert run.write(Edit("people/a.md", sha(b"# A\n"), b"# A\nmore\n"))
    journal = next((root / ".palinode" / "journal").glob("*.jsonl"))
    cut = json.dumps({"path": "people/b.md", "before": base64.b64encode(b"x" * 9000).decode(), "before_hash": "0"})
    with open(journal, "a") as handle:
        handle.write(cut[: len(cut) // 2])  # no newline: the process died mid-line
    run._lock.release(force=True)  # a dead process holds no lock (the OS lets go of it)
    result = undo_last(root)
    assert result.restored == ["people/a.md"]
    assert a.read_bytes() == b"# A\n"


def test_clean_temp_files_keeps_a_live_writers_file(tmp_path):
    """The next start removes a dead writer's temp file but not one a running process is writing."""
    import os

    from palinode_vault.writer import clean_temp_files

    (tmp_path / "people").mkdir()
    dead = tmp_path / "people" / f".a.md{TEMP_MARK}999999999-0001"
    live = tmp_path / "people" / f".b.md{TEMP_MARK}{os.getpid()}-0002"
    dead.write_text("x")
    live.write_text("y")
    assert clean_temp_files(tmp_path) == [f"people/.a.md{TEMP_MARK}999999999-0001"]
    assert live.exists()
