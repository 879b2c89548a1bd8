"""A hostile `.palinode/` and hostile files (issue 17, high and medium): the vault carries it all.

git, Syncthing, Dropbox or a downloaded vault can bring a crafted `.palinode/` and odd files.
Each case is built on disk as an attacker would ship it, then the real CLI (a subprocess) or
the real library runs on it. Nothing outside the vault may change, no code from disk may run,
and nothing may crash or hang.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from reliability_helpers import cli, cli_env

posix_only = pytest.mark.skipif(os.name != "posix", reason="symlinks, FIFOs and modes as POSIX has them")

BROKEN = "---\nid: person-{slug}\ncategory: person\ntype: PersonMemory\nname: {name}\nentities: [person/ana]\n---\n# {name}\n\nNo link here.\n"
NOTE = "---\nid: person-{slug}\ncategory: person\ntype: PersonMemory\nname: {name}\nentities: []\n---\n# {name}\n\nText.\n"


def _vault(tmp_path: Path, name: str = "vault") -> Path:
    root = tmp_path / name
    (root / "people").mkdir(parents=True)
    (root / "people" / "ana.md").write_text(NOTE.format(slug="ana", name="Ana"))
    (root / "people" / "bo.md").write_text(NOTE.format(slug="bo", name="Bo"))
    return root


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the parse cache: no code from disk, a bad row is dropped -----------------------------------


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))  # unpickling creates the marker file


def test_crafted_cache_row_runs_no_code_and_is_reparsed(tmp_path):
    root = _vault(tmp_path)
    assert cli("scan", "--vault", root).returncode == 0  # builds cache.db
    marker = tmp_path / "pwned"
    db = sqlite3.connect(root / ".palinode" / "cache.db")
    versions = [v for (v,) in db.execute("SELECT DISTINCT version FROM notes")]
    with db:
        db.execute("UPDATE notes SET data = ?", (pickle.dumps(_Payload(str(marker))),))
        db.execute("UPDATE results SET data = ?", (pickle.dumps(_Payload(str(marker))),))
    db.close()
    assert versions
    done = cli("lint", "--vault", root, "--json")
    assert done.returncode in (0, 1), done.stderr
    assert not marker.exists(), "a row from disk ran code"
    assert "Traceback" not in done.stderr


def test_corrupt_cache_rows_are_dropped_never_fatal(tmp_path, load_vault):
    root = _vault(tmp_path)
    first = load_vault(root)
    db = sqlite3.connect(root / ".palinode" / "cache.db")
    with db:
        db.execute("UPDATE notes SET data = ?", (os.urandom(64),))
        db.execute("INSERT OR REPLACE INTO notes VALUES ('people/x.md', 'nan', NULL, 5, 1, 'text')")
    db.close()
    again = load_vault(root)
    assert again.state.notes == first.state.notes
    assert again.parsed_last_load == 2  # both parsed afresh, not taken from the bad rows


def test_cache_row_from_another_note_is_not_taken(tmp_path, load_vault):
    """A valid row copied onto another path (or another vault) is refused: a row is for its note."""
    root = _vault(tmp_path)
    load_vault(root)
    db = sqlite3.connect(root / ".palinode" / "cache.db")
    ana = db.execute("SELECT data FROM notes WHERE path = 'people/ana.md'").fetchone()[0]
    with db:
        db.execute("UPDATE notes SET data = ? WHERE path = 'people/bo.md'", (ana,))
    db.close()
    again = load_vault(root)
    assert again.state.notes["people/bo.md"].title == "Bo"


# --- the journal: bound to its vault, every path checked ----------------------------------------


def _journal(root: Path, entries: list[dict], vault: str | None = None, run: str = "20990101T000000000000Z-abcdef") -> Path:
    folder = root / ".palinode" / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    header = {"run": run, "label": "fix", "time": "2099-01-01T00:00:00+00:00"}
    if vault is not None:
        header["vault"] = vault
    path = folder / f"{run}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *entries]))
    return path


def _entry(path: str, before: bytes | None, after: bytes) -> dict:
    return {
        "path": path,
        "before": None if before is None else base64.b64encode(before).decode(),
        "before_hash": None if before is None else _sha(before),
        "after_hash": _sha(after),
        "reason": "x",
    }


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "symlinked-folder"])
def test_crafted_journal_cannot_write_outside_the_vault(tmp_path, kind):
    root = _vault(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_bytes(b"precious")
    if kind == "absolute":
        target = str(victim)
    elif kind == "dotdot":
        target = "../outside/victim.txt"
    else:
        if os.name != "posix":
            pytest.skip("symlinks")
        (root / "linked").symlink_to(outside, target_is_directory=True)
        target = "linked/victim.txt"
    created = outside / "created.txt"
    created_rel = target.replace("victim.txt", "created.txt")
    _journal(root, [_entry(target, b"owned", b"precious"), _entry(created_rel, None, b"")], vault=os.path.realpath(root))
    created.write_bytes(b"")  # "created by the run": undo would move it aside (out of its folder)
    done = cli("undo", "--vault", root)
    assert "Traceback" not in done.stderr
    assert victim.read_bytes() == b"precious"
    assert created.exists()


def test_journal_carried_from_another_vault_is_not_replayed(tmp_path):
    """A `.palinode/` copied with a vault (or crafted for it) holds runs written elsewhere."""
    root = _vault(tmp_path)
    note = root / "people" / "ana.md"
    now = note.read_bytes()
    _journal(root, [_entry("people/ana.md", b"---\nid: evil\n---\n", now)], vault="/somewhere/else")
    done = cli("undo", "--vault", root)
    assert "Traceback" not in done.stderr
    assert note.read_bytes() == now


def test_damaged_journal_entries_do_not_crash_undo(tmp_path):
    root = _vault(tmp_path)
    folder = root / ".palinode" / "journal"
    folder.mkdir(parents=True)
    (folder / "20990101T000000000000Z-abcdef.jsonl").write_text(
        json.dumps({"run": "x", "vault": os.path.realpath(root)})
        + "\n"
        + "[1, 2]\n"
        + '{"path": 5}\n'
        + '{"path": "people/ana.md", "before": "!!!", "before_hash": 1}\n'
    )
    (folder / "20990101T000000000001Z-abcdef.jsonl").write_text('{"path": "people/ana.md"}\n')  # no header
    before = (root / "people" / "ana.md").read_bytes()
    for _ in range(3):
        done = cli("undo", "--vault", root)
        assert "Traceback" not in done.stderr, done.stderr
    assert (root / "people" / "ana.md").read_bytes() == before


# --- files in .palinode/: never through a symlink, private modes ----------------------------------


@posix_only
@pytest.mark.parametrize("name", ["sidecar.lock", "sidecar.pid", "access.jsonl", "cache.db"])
def test_symlinks_in_palinode_are_not_followed(tmp_path, name):
    root = _vault(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    (root / ".palinode").mkdir()
    (root / ".palinode" / name).symlink_to(victim)
    code = textwrap.dedent(f"""
        from pathlib import Path
        from palinode_vault.server.lock import VaultLock, holder
        from palinode_vault.memory.weekly import access
        from palinode_vault.cache import ParseCache
        root = Path({str(root)!r})
        try:
            with VaultLock(root):
                pass
        except OSError as exc:
            print("refused:", exc)
        holder(root)
        access.record(root, "search", "s1", ["people/ana.md"])
        c = ParseCache(root); c.load(); c.close()
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert victim.read_bytes() == b"precious\n"
    assert cli("scan", "--vault", root).returncode in (0, 1)
    assert victim.read_bytes() == b"precious\n"


@posix_only
def test_symlinked_palinode_folder_is_refused(tmp_path):
    root = _vault(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".palinode").symlink_to(elsewhere, target_is_directory=True)
    (root / "people" / "cy.md").write_text(BROKEN.format(slug="cy", name="Cy"))
    cli("scan", "--vault", root)
    cli("fix", "--vault", root)
    assert list(elsewhere.iterdir()) == []


@posix_only
def test_palinode_is_private(tmp_path):
    root = _vault(tmp_path)
    (root / "people" / "cy.md").write_text(BROKEN.format(slug="cy", name="Cy"))
    (root / "people" / "cy.md").chmod(0o600)
    old = os.umask(0o022)
    try:
        assert cli("fix", "--vault", root).returncode in (0, 1)
    finally:
        os.umask(old)
    private = root / ".palinode"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    files = [p for p in private.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in files)  # the journal, holding the 0600 note's bytes
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


@posix_only
def test_notes_that_resolve_into_private_folders_are_not_notes(tmp_path):
    root = _vault(tmp_path)
    (root / ".palinode").mkdir()
    (root / ".palinode" / "secret.md").write_text("token: hunter2-sidecar-token\n")
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.md").write_text("obsidian settings\n")
    (root / "people" / "leak.md").symlink_to(root / ".palinode" / "secret.md")
    (root / "people" / "leak2.md").symlink_to(root / ".obsidian" / "app.md")
    done = cli("lint", "--vault", root, "--json")
    assert "leak" not in done.stdout
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    vault = Vault(Settings(vault=root))
    vault.load()
    assert "people/leak.md" not in vault.state.notes and "people/leak2.md" not in vault.state.notes
    vault.refresh({"people/leak.md"})
    assert "people/leak.md" not in vault.state.notes


# --- the lock where fcntl does not exist -----------------------------------------------------------

NO_FCNTL = "import sys; sys.modules['fcntl'] = None\n"  # `import fcntl` now fails, as on Windows


def _no_fcntl_cli(*args: str | Path) -> list[str]:
    return [sys.executable, "-c", NO_FCNTL + f"from palinode_vault.cli import main\nmain({[str(a) for a in args]!r})"]


def test_serve_status_and_lock_without_fcntl(tmp_path):
    """issue 19 item 4: `serve` and `status` crashed where `fcntl` does not exist (Windows)."""
    root = _vault(tmp_path)
    env = {**cli_env(), "PALINODE_NO_INDEX": "1"}
    child = subprocess.Popen(
        _no_fcntl_cli("serve", "--vault", root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        deadline = time.monotonic() + 60
        while not (root / ".palinode" / "sidecar.json").exists():
            assert child.poll() is None, child.stderr.read()
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)
        status = subprocess.run(_no_fcntl_cli("status", "--vault", root), capture_output=True, text=True, env=env, timeout=60)
        assert status.returncode == 0, status.stderr
        assert f"running: pid {child.pid}" in status.stdout
        second = subprocess.run(_no_fcntl_cli("serve", "--vault", root), capture_output=True, text=True, env=env, timeout=60)
        assert second.returncode != 0 and f"pid {child.pid}" in second.stderr, second.stderr
        assert "Traceback" not in second.stderr + status.stderr
    finally:
        child.kill()  # no clean exit: the lock must not outlive the process
        child.wait(5)
    take = NO_FCNTL + f"from palinode_vault.server.lock import VaultLock\nVaultLock({str(root)!r}).acquire(); print('acquired')\n"
    done = subprocess.run([sys.executable, "-c", take], capture_output=True, text=True, env=env, timeout=60)
    assert "acquired" in done.stdout, done.stderr


# --- files that are not notes: only regular files are read -------------------------------------------


@posix_only
def test_fifo_device_bad_name_and_unreadable_folder_are_findings(tmp_path):
    root = _vault(tmp_path)
    os.mkfifo(root / "people" / "fifo.md")
    (root / "people" / "zero.md").symlink_to("/dev/zero")
    (root / "people" / "fifo-link.md").symlink_to(root / "people" / "fifo.md")
    bad = os.fsencode(str(root / "people")) + b"/caf\xe9.md"
    with open(bad, "wb") as handle:
        handle.write(NOTE.format(slug="cafe", name="Cafe").encode())
    locked = root / "locked"
    locked.mkdir()
    (locked / "hidden.md").write_text("# Hidden\n")
    locked.chmod(0)
    as_root = os.access(locked, os.R_OK)  # root reads a 000 folder anyway
    try:
        done = cli("lint", "--vault", root, "--json", timeout=60)
    finally:
        locked.chmod(0o755)
    assert "Traceback" not in done.stderr, done.stderr
    findings = json.loads(done.stdout)["findings"]
    unreadable = {f["path"] for f in findings if f["check"] == "unreadable"}
    assert {"people/fifo.md", "people/fifo-link.md"} <= unreadable
    assert "people/zero.md" not in {f["path"] for f in findings if f["check"] != "unreadable"}  # never read
    assert any(
        p.startswith("people/caf") and "UTF-8" in f["message"]
        for f in findings
        for p in [f["path"]]
        if f["check"] == "unreadable"
    )
    if not as_root:
        assert "locked" in unreadable


# --- one note that cannot be written does not fail the others ---------------------------------------


def test_unwritable_notes_are_skipped_with_a_reason(tmp_path):
    root = _vault(tmp_path)
    long_stem = "l" * 246  # 249 bytes with ".md": legal, but too long for a temp name beside it
    (root / "people" / f"{long_stem}.md").write_text(BROKEN.format(slug=long_stem, name="Long"))
    (root / "people" / "ro.md").write_text(BROKEN.format(slug="ro", name="Ro"))
    (root / "people" / "ro.md").chmod(0o444)
    (root / "people" / "ok.md").write_text(BROKEN.format(slug="ok", name="Ok"))
    ro_before = (root / "people" / "ro.md").read_bytes()
    done = cli("fix", "--vault", root, "--json")
    assert "Traceback" not in done.stderr, done.stderr
    result = json.loads(done.stdout)
    assert "people/ok.md" in result["written"]
    assert f"people/{long_stem}.md" in result["written"]
    reasons = {s["path"]: s["reason"] for s in result["skipped"]}
    assert "read-only" in reasons["people/ro.md"]
    assert (root / "people" / "ro.md").read_bytes() == ro_before


def test_a_run_that_wrote_nothing_leaves_no_journal(tmp_path):
    root = _vault(tmp_path)
    (root / "people" / "ro.md").write_text(BROKEN.format(slug="ro", name="Ro"))
    (root / "people" / "ro.md").chmod(0o444)
    cli("fix", "--vault", root)
    journals = list((root / ".palinode" / "journal").glob("*.jsonl")) if (root / ".palinode" / "journal").exists() else []
    assert journals == []


def test_undo_waits_for_a_run_being_written(tmp_path):
    """The sidecar's batch is one run written over time; an undo in between must not cut it in two
    (that left a journal without its header, and files that could no longer be undone)."""
    from palinode_vault.writer import Edit, Run, undo_last

    root = _vault(tmp_path)
    ana, bo = root / "people" / "ana.md", root / "people" / "bo.md"
    a0, b0 = ana.read_bytes(), bo.read_bytes()
    run = Run(root, "sidecar")
    assert run.write(Edit("people/ana.md", _sha(a0), a0 + b"one\n"))
    import palinode_vault.writer as writer

    old_wait, writer.UNDO_WAIT_SECONDS = writer.UNDO_WAIT_SECONDS, 0.2
    try:
        refused = undo_last(root)
    finally:
        writer.UNDO_WAIT_SECONDS = old_wait
    assert refused.restored == [] and refused.refused
    import subprocess as sp

    from reliability_helpers import cli_cmd

    waited = sp.run([*cli_cmd(), "undo", "--vault", str(root)], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert waited.returncode != 0 and "still being written" in waited.stderr  # the CLI says so (after its wait)
    assert run.write(Edit("people/bo.md", _sha(b0), b0 + b"two\n"))
    run.close()
    done = undo_last(root)
    assert sorted(done.restored) == ["people/ana.md", "people/bo.md"]
    assert ana.read_bytes() == a0 and bo.read_bytes() == b0


# --- inbox review through a symlinked inbox/ -----------------------------------------------------


@posix_only
@pytest.mark.parametrize("action", ["approve", "reject", "approve as"])
def test_inbox_review_through_a_symlinked_inbox_touches_nothing_outside(tmp_path, action):
    from palinode_vault.memory import review
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    root = _vault(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "keep.md"
    victim.write_text("---\nid: insight-keep\ncategory: insight\ntype: Insight\nstatus: review\n---\n# Keep\n\nMine.\n")
    (root / "inbox").symlink_to(outside, target_is_directory=True)
    vault = Vault(Settings(vault=root))
    vault.load()
    with pytest.raises(review.ReviewError, match="outside the vault"):
        if action == "approve as":  # re-typed as another type first: still checked before
            review.approve(vault, "inbox/keep.md", as_type="Decision")
        else:
            getattr(review, action)(vault, "inbox/keep.md")
    assert victim.exists() and "status: review" in victim.read_text()
    assert not (root / "archive").exists()


def test_journaled_delete_refuses_a_path_that_escapes(tmp_path):
    """The journal is the one door every pass's write and delete goes through."""
    from palinode_vault.writer import NotWritable, Run

    root = _vault(tmp_path)
    with pytest.raises(NotWritable):
        Run(root, "x")._append({"path": "../outside.md", "before": None, "before_hash": None, "after_hash": None})


@posix_only
@pytest.mark.parametrize("name", ["index.db", "index.db-wal"])
def test_symlinked_index_db_is_refused_and_nothing_outside_is_touched(tmp_path, name):
    """The search index is SQLite too, which follows a symlink: a planted `index.db` (or its
    write-ahead log) pointing at a database outside the vault is refused with a clear message."""
    root = _vault(tmp_path)
    victim = tmp_path / "victim.db"
    db = sqlite3.connect(victim)
    db.execute("create table precious (x)")
    db.execute("insert into precious values ('keep me')")
    db.commit()
    db.close()
    before = victim.read_bytes()
    (root / ".palinode").mkdir()
    (root / ".palinode" / name).symlink_to(victim)
    done = cli("search", "ana", "--mode", "keyword", "--vault", root)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert "symlink" in done.stderr and name in done.stderr, done.stderr
    code = textwrap.dedent(f"""
        from palinode_vault.index import open_index
        from palinode_vault.pathsafe import UnsafePrivatePath
        try:
            open_index({str(root)!r})
        except UnsafePrivatePath as exc:
            print("refused:", exc)
    """)
    lib = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert lib.stdout.startswith("refused:") and "does not follow it" in lib.stdout, lib.stdout + lib.stderr
    assert victim.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vault", "victim.db"]  # no -wal/-shm beside it
