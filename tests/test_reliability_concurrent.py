"""Concurrent writers (issue 7, item 2): a person's autosave, the sidecar and the CLI at once.

An Obsidian-like autosave writes 20 notes in place every 300 ms (often the same note twice in a
row, so saves land inside the sidecar's quiet period and during its writes) while the real
`palinode-vault serve` keeps footers and cross_refs current. At the end each note must be exactly
the person's last text plus the machine-owned surfaces, computed independently; every sidecar
write must have changed only machine-owned surfaces of a text the person wrote. Quick: a few
seconds. Long: one minute.
"""

from __future__ import annotations

import base64
import random
import re
import shutil
import time
from pathlib import Path

import pytest
from reliability_helpers import (
    Rpc,
    age_notes,
    bench_template,
    cli,
    copy_vault,
    diff_states,
    journal_entries,
    scale,
    snapshot,
    start_serve,
    stop,
    temp_files,
    wait_settled,
    wait_until,
)

FILES = 20
TICK = 0.3


def person_text(i: int, rev: int, rng: random.Random) -> str:
    others = [j for j in range(FILES) if j != i]
    entities = sorted(rng.sample(others, rng.randint(1, 3)))
    linked = [j for j in entities if rng.random() < 0.4]
    mentioned = rng.sample(others, rng.randint(0, 2))
    body = [f"rev {rev}: notes from the week."]
    body += [f"Worked with [[p{j:02d}]] on the plan." for j in linked]
    body += [f"Person {j:02d} asked about the budget." for j in mentioned]
    ents = ", ".join(f"person/p{j:02d}" for j in entities)
    return (
        f"---\nid: person-p{i:02d}\ncategory: person\ntype: PersonMemory\nname: Person {i:02d}\n"
        f"entities: [{ents}]\nlast_updated: 2026-11-20T10:00:00Z\n---\n# Person {i:02d}\n\n## Context\n" + "\n".join(body) + "\n"
    )


def save_in_place(path: Path, text: str) -> None:
    """Like an editor's save: truncate and write the same inode."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


_FOOTER = re.compile(r"\n*<!-- palinode:see-also -->.*?<!-- /palinode:see-also -->\n?", re.S)
_CROSS = re.compile(r"^cross_refs:.*\n(?:[ \t]*- .*\n)*", re.M)


def person_part(text: str) -> str:
    """The text without the machine-owned surfaces (footer block, cross_refs key)."""
    return _CROSS.sub("", _FOOTER.sub("\n", text)).rstrip("\n")


def expected_final(root: Path, scratch: Path, last: dict[str, str]) -> dict[str, bytes]:
    """The person's last texts with machine-owned surfaces, computed by the core independently."""
    from palinode_vault.maintenance import fix
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    shutil.rmtree(scratch, ignore_errors=True)
    copy_vault(root, scratch)
    for rel, text in last.items():
        save_in_place(scratch / rel, text)
    vault = Vault(Settings(vault=scratch, workers=1))
    vault.load()
    fix(vault, allow={"footer", "cross_refs"})
    return snapshot(scratch)


def test_autosave_writer_and_sidecar_lose_nothing(tmp_path):
    seconds = scale(6, 60)
    rng = random.Random(300)
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "daily").mkdir()
    (root / "daily" / "2026-11-20.md").write_text("# 2026-11-20\n\nMet [[p00]] and [[p01]].\n")
    last: dict[str, str] = {}
    for i in range(FILES):
        rel = f"people/p{i:02d}.md"
        last[rel] = person_text(i, 0, rng)
        save_in_place(root / rel, last[rel])
    age_notes(root)
    written_by_person: dict[str, set[str]] = {rel: {t} for rel, t in last.items()}
    proc = start_serve(root, "--quiet-seconds", "0.25", stderr_path=tmp_path / "serve.err")
    try:
        # The sidecar fixes the starting notes; then the person starts typing.
        wait_until(
            lambda: all(
                "palinode:see-also" in (root / r).read_text() or "[[p" in person_part((root / r).read_text()) for r in last
            ),
            60,
            "the first automatic fixes",
        )
        rev, current = 0, 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rev += 1
            if rng.random() < 0.5:
                current = rng.randrange(FILES)  # otherwise the same note again, 300 ms later
            rel = f"people/p{current:02d}.md"
            last[rel] = person_text(current, rev, rng)
            written_by_person[rel].add(last[rel])
            save_in_place(root / rel, last[rel])
            time.sleep(TICK)
        expected = expected_final(root, tmp_path / "expected", last)

        # Wait on the condition itself: the sidecar catches up after its quiet period.
        def caught_up() -> bool:
            return diff_states(expected, snapshot(root)) == []

        try:
            wait_until(caught_up, 60, "the sidecar to bring every note to the person's text plus machine surfaces")
        except AssertionError:
            wrong = diff_states(expected, snapshot(root))
            detail = {rel: ((root / rel).read_text(), expected[rel].decode()) for rel in wrong[:2]}
            raise AssertionError(f"{len(wrong)} notes differ: {detail}") from None
        with Rpc(root) as rpc:
            status = wait_settled(root, 60, rpc)
        assert status["last_error"] is None, status["last_error"]
    finally:
        stop(proc)
    # Every sidecar write changed only machine-owned surfaces of a text the person wrote.
    entries = [e for e in journal_entries(root) if e["path"] in last]
    assert entries, "the sidecar never wrote"
    for entry in entries:
        before = base64.b64decode(entry["before"]).decode()
        assert person_part(before) in {person_part(t) for t in written_by_person[entry["path"]]}, entry["path"]
    assert temp_files(root) == []
    print(f"{rev} autosaves, {len(entries)} sidecar writes")


@pytest.fixture(scope="module")
def bench_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench")


def test_cli_fix_while_the_sidecar_fixes(tmp_path, bench_cache):
    """`fix` from the CLI races the sidecar's automatic fixes; both converge, nothing is lost."""
    notes = scale(250, 2000)
    template = bench_template(bench_cache, notes)
    ref = copy_vault(template, tmp_path / "ref")
    assert cli("fix", "--vault", ref, "--now", "2026-04-01").returncode == 0
    after = snapshot(ref)
    root = copy_vault(template, tmp_path / "vault")
    age_notes(root)
    proc = start_serve(root, "--quiet-seconds", "0", stderr_path=tmp_path / "serve.err")
    try:
        rounds = 0
        while True:  # the CLI says "run again" for a file the sidecar wrote meanwhile
            rounds += 1
            result = cli("fix", "--vault", root, "--now", "2026-04-01", "--json")
            assert result.returncode == 0, result.stderr
            if '"written": []' in result.stdout and '"skipped": []' in result.stdout:
                break
            assert rounds < 10, result.stdout[-2000:]
        with Rpc(root) as rpc:
            status = wait_settled(root, 120, rpc)
        assert status["last_error"] is None, status["last_error"]
    finally:
        stop(proc)
    assert diff_states(after, snapshot(root)) == []
    assert temp_files(root) == []
