"""Undo of a named run (`undo --run`, the socket's `undo {run}`): the person's action is reverted
even when runs came after it; the sidecar's upkeep of the same files goes with it; another later
run over its files refuses, and nothing moves. Real files and a real journal in a temp folder."""

from __future__ import annotations

import time
from pathlib import Path

from palinode_vault.writer import UPKEEP_LABEL, Edit, Run, sha256_bytes, undo_last, undo_run


def _write(root: Path, label: str, changes: dict[str, bytes]) -> str:
    """One journaled run writing `changes`; returns its id. (Run ids carry the time in
    microseconds; the short sleep keeps two runs of one test in the order they were made.)"""
    time.sleep(0.002)
    run = Run(root, label)
    for rel, data in changes.items():
        target = root / rel
        before = target.read_bytes() if target.exists() else None
        assert run.write(Edit(rel, sha256_bytes(before), data, label))
    run.close()
    return run.id


def _vault(tmp_path: Path) -> Path:
    for rel in ("inbox/idea.md", "people/alice.md", "people/bob.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(f"{rel} as the person left it\n".encode())
    return tmp_path


def test_the_named_run_is_undone_past_upkeep_of_other_files(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    action = _write(root, "inbox.reject", {"inbox/idea.md": b"rejected\n"})
    _write(root, UPKEEP_LABEL, {"people/alice.md": b"alice with new cross_refs\n"})
    result = undo_run(root, action)
    assert result.refused is None and result.restored == ["inbox/idea.md"]
    assert (root / "inbox/idea.md").read_bytes() == b"inbox/idea.md as the person left it\n"
    # the upkeep of another file stays, and is still the newest run for a plain undo
    assert (root / "people/alice.md").read_bytes() == b"alice with new cross_refs\n"
    assert undo_last(root).restored == ["people/alice.md"]


def test_upkeep_of_the_same_files_is_undone_with_it(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    action = _write(root, "fix", {"people/bob.md": b"bob fixed\n", "inbox/idea.md": b"idea fixed\n"})
    _write(root, UPKEEP_LABEL, {"people/bob.md": b"bob fixed, footer kept current\n", "people/alice.md": b"alice kept current\n"})
    result = undo_run(root, action)
    assert result.refused is None
    assert result.restored == ["inbox/idea.md", "people/alice.md", "people/bob.md"]
    for rel in ("inbox/idea.md", "people/alice.md", "people/bob.md"):
        assert (root / rel).read_bytes() == f"{rel} as the person left it\n".encode()
    assert undo_last(root).run is None  # both runs are used up


def test_a_later_run_of_another_kind_over_its_files_refuses_and_nothing_moves(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    action = _write(root, "fix", {"people/bob.md": b"bob fixed\n"})
    later = _write(root, "link repair", {"people/bob.md": b"bob fixed and repaired\n"})
    result = undo_run(root, action)
    assert result.restored == [] and result.refused is not None
    assert "link repair" in result.refused and later in result.refused
    assert (root / "people/bob.md").read_bytes() == b"bob fixed and repaired\n"


def test_unknown_undone_and_malformed_run_ids_are_refused(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    action = _write(root, "fix", {"people/bob.md": b"bob fixed\n"})
    assert undo_run(root, action).restored == ["people/bob.md"]
    again = undo_run(root, action)
    assert again.restored == [] and "not in the journal" in (again.refused or "")
    for bad in ("../../etc/passwd", "20261205T000000000000Z-zzzzzz", "", "x" * 200):
        refused = undo_run(root, bad)
        assert refused.restored == [] and refused.refused
    assert (root / "people/bob.md").read_bytes() == b"people/bob.md as the person left it\n"
