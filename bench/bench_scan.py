#!/usr/bin/env python3
"""Benchmark `palinode-vault scan --vault VAULT --json`: cold, warm, one changed note, peak memory.

    python bench/bench_scan.py VAULT [--runs 5] [--note people/x.md] [--binary PATH]

Measures, on the CLI installed next to this Python (`Path(sys.executable).parent / "palinode-vault"`):

- cold: `VAULT/.palinode/` deleted before each run (no cache), median wall time;
- warm: cache present, nothing changed, median wall time;
- changed: one line appended to one note before each run, median wall time;
- in-process re-check of that one note (read, parse, update the in-memory vault state), median,
  when the library exposes the pieces (see `recheck_in_process`);
- peak RSS of the scan process (`os.wait4` rusage of that child, so each run is measured alone).

Prints a markdown table, then one JSON line with every number and the exact command. The note
that was changed is restored byte for byte at the end. Issue 2's targets (2-core machine):
cold <= 3 s, warm <= 0.5 s, one changed note <= 10 ms, peak memory <= 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CACHE_DIR = ".palinode"
TARGETS = {"cold_s": 3.0, "warm_s": 0.5, "recheck_one_ms": 10.0, "peak_rss_mb": 300.0}
# Folders whose notes make good "changed note" candidates, in order of preference.
NOTE_FOLDERS = ("projects", "people", "decisions", "insights", "research", "inbox")


class BenchError(Exception):
    """A problem worth a one-line message, not a traceback."""


@dataclass
class Run:
    wall_s: float
    peak_rss_mb: float
    exit_code: int
    result: dict


def default_binary() -> Path:
    return Path(sys.executable).parent / "palinode-vault"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vault", type=Path, metavar="VAULT", help="the vault to scan (e.g. from make_vault.py)")
    p.add_argument("--runs", type=int, default=5, help="runs per measurement; medians are reported (default 5)")
    p.add_argument(
        "--note", default=None, help="vault-relative note to change for the re-check (default: first note in projects/)"
    )
    p.add_argument("--binary", type=Path, default=None, help="palinode-vault executable (default: next to this Python)")
    p.add_argument(
        "--no-in-process",
        action="store_true",
        help="skip the in-process one-note re-check (it loads the whole vault in this process)",
    )
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if not args.vault.is_dir():
        p.error(f"vault folder not found: {args.vault}")
    args.vault = args.vault.resolve()
    args.binary = args.binary or default_binary()
    if not (args.binary.is_file() and os.access(args.binary, os.X_OK)):
        p.error(
            f"palinode-vault not found at {args.binary}; install the package into this Python (pip install -e .) or pass --binary"
        )
    if args.note is not None:
        note = (args.vault / args.note).resolve()
        if not note.is_file() or args.vault not in note.parents or note.suffix != ".md":
            p.error(f"--note must be a markdown file inside the vault: {args.note}")
    return args


def pick_note(vault: Path) -> str:
    """A deterministic memory note to change: the first, by name, in the first folder that has one."""
    for folder in NOTE_FOLDERS:
        notes = sorted((vault / folder).glob("*.md"))
        if notes:
            return notes[0].relative_to(vault).as_posix()
    notes = sorted(p for p in vault.rglob("*.md") if CACHE_DIR not in p.parts)
    if not notes:
        raise BenchError(f"no markdown notes in {vault}")
    return notes[0].relative_to(vault).as_posix()


def scan_command(binary: Path, vault: Path) -> list[str]:
    return [str(binary), "scan", "--vault", str(vault), "--json"]


def run_scan(cmd: list[str]) -> Run:
    """Run one scan; wall time from spawn to exit, peak RSS of that process alone (Linux: KiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    # Like lint, scan may exit 1 when it reports error findings; anything else is a failure.
    if code not in (0, 1):
        raise BenchError(f"`{shlex.join(cmd)}` exited {code}:\n{stderr.strip()[-2000:]}")
    try:
        result = json.loads(stdout)
    except json.JSONDecodeError as exc:
        raise BenchError(
            f"`{shlex.join(cmd)}` did not print JSON ({exc}); stdout starts: {stdout[:300]!r}; stderr: {stderr.strip()[-500:]}"
        ) from None
    return Run(wall, usage.ru_maxrss / 1024, code, result if isinstance(result, dict) else {"value": result})


def drop_cache(vault: Path) -> None:
    cache = vault / CACHE_DIR
    if cache.is_symlink() or (cache.exists() and not cache.is_dir()):
        raise BenchError(f"{cache} is not a plain folder; refusing to delete it")
    if cache.is_dir():
        shutil.rmtree(cache)


def append_line(path: Path, n: int) -> None:
    data = path.read_bytes()
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    sep = b"" if data.endswith(newline) or not data else newline
    path.write_bytes(data + sep + f"Benchmark edit {n}.".encode() + newline)


def recheck_in_process(vault: Path, rel: str, runs: int) -> tuple[float | None, str]:
    """Median ms to re-check one changed note inside the library, or (None, why not).

    Times what the sidecar does per save (Sidecar._recheck): read the file, parse it, update
    the in-memory vault state, and re-run every check on the notes the change affects. Like the
    sidecar, it keeps the new parse in memory; the parse cache is written later, when idle.
    """
    try:
        from palinode_vault.core.lint import analysis_for, lint_note
        from palinode_vault.maintenance import lint_context
        from palinode_vault.settings import Settings
        from palinode_vault.vault import Vault
    except ImportError as exc:
        return None, f"library pieces missing ({exc})"

    try:
        v = Vault(Settings(vault=vault))
        v.load()
        ctx = lint_context(v)
        analysis = analysis_for(v.state)
        times = []
        for i in range(runs):
            append_line(vault / rel, 1000 + i)
            start = time.perf_counter()
            affected = v.refresh({rel}, store=False) | {rel}  # the sidecar stores parses when idle
            analysis = analysis_for(v.state, analysis)
            for path in affected:
                lint_note(v.state, path, ctx, analysis)
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times), "read + parse + state update + lint of the affected notes"
    except Exception as exc:  # report, do not crash the benchmark
        return None, f"{type(exc).__name__}: {exc}"


def verdict(value: float | None, target: float) -> str:
    if value is None:
        return "n/a"
    return "ok" if value <= target else "OVER"


def report(results: dict) -> str:
    rows = [
        ("cold scan (no cache)", results["cold_s"], "s", TARGETS["cold_s"]),
        ("warm scan (nothing changed)", results["warm_s"], "s", TARGETS["warm_s"]),
        ("scan after one note changed", results["changed_s"], "s", None),
        ("re-check one note in process", results["recheck_one_ms"], "ms", TARGETS["recheck_one_ms"]),
        ("peak RSS of scan", results["peak_rss_mb"], "MB", TARGETS["peak_rss_mb"]),
    ]
    lines = ["| measure | median | target | |", "| --- | ---: | ---: | --- |"]
    for name, value, unit, target in rows:
        shown = "n/a" if value is None else (f"{value:.3f} {unit}" if unit == "s" else f"{value:.1f} {unit}")
        lines.append(
            f"| {name} | {shown} | {'' if target is None else f'{target:g} {unit}'} | "
            f"{'' if target is None else verdict(value, target)} |"
        )
    return "\n".join(lines)


def bench(args: argparse.Namespace) -> dict:
    vault, runs = args.vault, args.runs
    cmd = scan_command(args.binary, vault)
    note_rel = args.note or pick_note(vault)
    note_path = vault / note_rel
    original = note_path.read_bytes()
    all_runs: list[Run] = []
    try:
        cold = []
        for _ in range(runs):
            drop_cache(vault)
            cold.append(run_scan(cmd))
        warm = [run_scan(cmd) for _ in range(runs)]
        changed = []
        for i in range(runs):
            append_line(note_path, i)
            changed.append(run_scan(cmd))
        all_runs = cold + warm + changed
        if args.no_in_process:
            recheck_ms, recheck_how = None, "skipped (--no-in-process)"
        else:
            recheck_ms, recheck_how = recheck_in_process(vault, note_rel, runs)
    finally:
        note_path.write_bytes(original)
    counts = {k: v for k, v in warm[-1].result.items() if not isinstance(v, list)}  # no long lists
    return {
        "command": shlex.join(cmd),
        "vault": str(vault),
        "runs": runs,
        "note": note_rel,
        "cold_s": statistics.median(r.wall_s for r in cold),
        "warm_s": statistics.median(r.wall_s for r in warm),
        "changed_s": statistics.median(r.wall_s for r in changed),
        "recheck_one_ms": recheck_ms,
        "recheck_how": recheck_how,
        "peak_rss_mb": max(r.peak_rss_mb for r in all_runs),
        "cold_all_s": [round(r.wall_s, 4) for r in cold],
        "warm_all_s": [round(r.wall_s, 4) for r in warm],
        "changed_all_s": [round(r.wall_s, 4) for r in changed],
        "exit_codes": sorted({r.exit_code for r in all_runs}),
        "scan": counts,
        "cpus": os.cpu_count(),
        "targets": TARGETS,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        results = bench(args)
    except BenchError as exc:
        print(f"bench_scan: {exc}", file=sys.stderr)
        return 2
    print(f"Command: `{results['command']}` ({results['runs']} runs, changed note {results['note']})\n")
    print(report(results))
    print(f"\nIn-process re-check: {results['recheck_how']}")
    print(json.dumps(results, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
