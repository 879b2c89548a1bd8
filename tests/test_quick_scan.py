"""A warm `scan` answers from the stored summary without the parser, and never serves it stale."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from palinode_vault import quick_scan
from palinode_vault.cache import seal


def _scan(run_cli, root: Path, *extra: str) -> dict:
    result = run_cli("scan", "--vault", root, "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_warm_scan_imports_neither_the_parser_nor_pydantic(sample_vault):
    """The second run of an unchanged vault prints the first run's summary (parsed 0) from a
    process that never imported markdown-it, PyYAML, pydantic or the linter."""
    probe = (
        "import json, sys\n"
        "from palinode_vault.cli import main\n"
        "main(['scan', '--vault', sys.argv[1], '--json'], standalone_mode=False)\n"
        "heavy = ['markdown_it', 'yaml', 'pydantic', 'asyncio', 'palinode_vault.core.note', 'palinode_vault.core.lint']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]), file=sys.stderr)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cold = subprocess.run([sys.executable, "-c", probe, str(sample_vault)], capture_output=True, text=True, env=env, check=True)
    warm = subprocess.run([sys.executable, "-c", probe, str(sample_vault)], capture_output=True, text=True, env=env, check=True)
    assert "markdown_it" in json.loads(cold.stderr.splitlines()[-1])  # the first run parsed
    assert json.loads(warm.stderr.splitlines()[-1]) == []
    first, second = json.loads(cold.stdout), json.loads(warm.stdout)
    assert first["parsed"] > 0 and second == {**first, "parsed": 0}


def test_every_change_the_summary_depends_on_is_seen(sample_vault, run_cli):
    first = _scan(run_cli, sample_vault, "--now", "2026-12-03")
    assert _scan(run_cli, sample_vault, "--now", "2026-12-03") == {**first, "parsed": 0}

    # a note edited: its links count
    home = sample_vault / "Home.md"
    home.write_text(home.read_text(encoding="utf-8") + "\nSee [[a-new-note-nobody-wrote]].\n", encoding="utf-8")
    edited = _scan(run_cli, sample_vault, "--now", "2026-12-03")
    assert edited["links"] == first["links"] + 1 and edited["unresolved"] == first["unresolved"] + 1

    # a folder excluded in Obsidian's settings: the walk result before exclusions is the same
    (sample_vault / ".obsidian").mkdir(exist_ok=True)
    (sample_vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["daily/"]}), encoding="utf-8")
    excluded = _scan(run_cli, sample_vault, "--now", "2026-12-03")
    assert excluded["markdown_files"] < edited["markdown_files"]

    # another day: date-based checks may differ, so nothing is reused
    assert quick_scan.fingerprint(sample_vault, dt.date(2026, 12, 3)) != quick_scan.fingerprint(sample_vault, dt.date(2027, 1, 1))


def test_a_forged_summary_is_not_served(sample_vault, run_cli):
    """`.palinode/` travels with the vault: a summary row sealed with another key is ignored."""
    honest = _scan(run_cli, sample_vault)
    key = quick_scan.fingerprint(sample_vault, dt.date.today())
    forged = seal(b"\x81\xa5links\xce\x00\x0f\x42\x3f")  # {"links": 999999}, sealed with this key...
    db = sqlite3.connect(sample_vault / ".palinode" / "cache.db")
    with db:
        db.execute("UPDATE results SET data = ? WHERE name = ?", (b"\0" + forged[1:], quick_scan.RESULT_NAME))  # ...then altered
    db.close()
    again = _scan(run_cli, sample_vault)
    assert again["links"] == honest["links"] != 999999
    assert quick_scan.stored_summary(sample_vault, key) is not None  # stored afresh after the recompute
