"""Load (issue 7, item 7): a burst of changed files reaches the sidecar's findings, memory bounded.

The real `palinode-vault serve` on a bench vault; once it has settled, a burst of files changes
at once (edits, new notes, deletions). Every change must show in its findings (nothing dropped),
the person's edits must all still be on disk, and the process's peak memory (VmHWM) stays under
a bound. Quick: 1,000 notes and a 200-file burst. Long: 10,000 notes and a 1,000-file burst.
(20 clients at once: tests/test_reliability_socket.py::test_twenty_clients_at_once.)
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from reliability_helpers import (
    Rpc,
    age_notes,
    bench_template,
    copy_vault,
    scale,
    start_serve,
    stop,
    vm_hwm_kb,
    wait_settled,
    wait_until,
)


@pytest.fixture(scope="module")
def bench_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench")


def test_burst_of_changes_is_caught_up_without_drops(tmp_path, bench_cache):
    notes, burst = scale(1000, 10_000), scale(200, 1000)
    root = copy_vault(bench_template(bench_cache, notes), tmp_path / "vault")
    age_notes(root)
    started = time.monotonic()
    proc = start_serve(root, "--quiet-seconds", "1", stderr_path=tmp_path / "serve.err")
    try:
        ready_s = time.monotonic() - started
        with Rpc(root, timeout=300) as rpc:
            before = wait_settled(root, 600, rpc)
            hwm_settled = vm_hwm_kb(proc.pid)
            memory = sorted(
                p.relative_to(root).as_posix()
                for p in root.glob("*/*.md")
                if p.parts[-2] in ("people", "projects", "decisions", "insights", "research")
            )
            edited = memory[:burst]
            deleted = memory[burst : burst + burst // 10]
            added = [f"inbox/burst-{i:04d}.md" for i in range(burst // 10)]
            t0 = time.monotonic()
            for i, rel in enumerate(edited):
                with open(root / rel, "a", encoding="utf-8") as handle:
                    handle.write(f"\nBurst edit {i}: see [[burst-missing-{i}]].\n")
            for rel in deleted:
                (root / rel).unlink()
            for i, rel in enumerate(added):
                (root / rel).write_text(f"# Burst {i}\n\nA new note pointing at [[burst-new-missing-{i}]].\n")

            def caught_up() -> bool:
                found = rpc.result("lint", {"checks": ["broken_link", "missing_frontmatter"]})["findings"]
                targets = {(f["path"], f.get("target")) for f in found if f["check"] == "broken_link"}
                missing = [rel for i, rel in enumerate(edited) if (rel, f"burst-missing-{i}") not in targets]
                missing += [rel for i, rel in enumerate(added) if (rel, f"burst-new-missing-{i}") not in targets]
                ghosts = [f for f in found if f["path"] in set(deleted)]
                return not missing and not ghosts

            wait_until(
                caught_up,
                600,
                f"all {burst} edits, {len(added)} additions and {len(deleted)} deletions in the findings",
                step=0.5,
            )
            caught_s = time.monotonic() - t0
            status = wait_settled(root, 600, rpc)
            hwm = vm_hwm_kb(proc.pid)
        assert status["last_error"] is None, status["last_error"]
        # The person's edits all survived the sidecar's automatic writes during the burst.
        for i, rel in enumerate(edited):
            assert f"Burst edit {i}: see [[burst-missing-{i}]]." in (root / rel).read_text(), rel
        assert status["counts"]["markdown_files"] == before["counts"]["markdown_files"] - len(deleted) + len(added)
    finally:
        stop(proc)
    limit_mb = scale(600, 1500)
    assert hwm is not None and hwm / 1024 < limit_mb, f"VmHWM {hwm / 1024:.0f} MB over {limit_mb} MB"
    print(
        f"\n{notes} notes: ready in {ready_s:.1f} s; burst of {burst}+{len(added)}+{len(deleted)} caught up in "
        f"{caught_s:.1f} s; VmHWM {hwm_settled / 1024:.0f} MB settled, {hwm / 1024:.0f} MB after the burst"
    )
