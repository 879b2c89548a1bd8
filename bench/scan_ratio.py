#!/usr/bin/env python3
"""Cold `scan` CPU against the floor (bench/scan_floor.py), interleaved, for one or more builds.

    python bench/scan_ratio.py VAULT [--runs 3] [--binary NAME=PATH ...] [--env NAME=VAR=VALUE ...]

Copies VAULT once per binary (so caches never mix; the original is only read), then runs, round
after round, the floor script and each binary's cold scan (`.palinode/` removed first), then a
warm scan and a scan after one note changed. CPU is user + sys of the child (`os.wait4`), so a
scan's parse workers count; wall time is also printed. Interleaving keeps a loaded machine's
drift out of the ratios. Prints one line per run and a summary of medians and ratios.

    python bench/scan_ratio.py ../shared/corpora/obsidian-help-all --runs 3 \\
        --binary before=/path/to/old/venv/bin/palinode-vault --binary after=.venv/bin/palinode-vault
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = Path(__file__).with_name("scan_floor.py")


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall s, user + sys CPU s) of one child process, its output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({status}): {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime


def first_note(vault: Path) -> Path:
    for path in sorted(vault.rglob("*.md")):
        if not any(part.startswith(".") for part in path.relative_to(vault).parts):
            return path
    raise SystemExit(f"no note in {vault}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vault", type=Path)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument(
        "--binary",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a palinode-vault executable to measure (default: the one next to this Python)",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VAR=VALUE",
        help="an environment variable for one binary's runs (e.g. before=PYTHONPATH=/src)",
    )
    args = p.parse_args(argv)
    binaries = [b.split("=", 1) for b in args.binary] or [["scan", str(Path(sys.executable).parent / "palinode-vault")]]
    envs: dict[str, dict[str, str]] = {name: dict(os.environ) for name, _ in binaries}
    for item in args.env:
        name, var, value = item.split("=", 2)
        envs[name][var] = value
    work = Path(tempfile.mkdtemp(prefix="scan-ratio-"))
    try:
        copies = {}
        for name, _ in binaries:
            copies[name] = work / name
            shutil.copytree(args.vault, copies[name], symlinks=True)
            for folder in [copies[name], *copies[name].rglob("*")]:
                folder.chmod(folder.stat().st_mode | 0o200)  # the shared corpora are read-only
        results: dict[str, list[tuple[float, float]]] = {}
        for r in range(args.runs):
            w, c = run([sys.executable, str(FLOOR), str(args.vault)])
            results.setdefault("floor", []).append((w, c))
            print(f"round {r + 1}: floor cpu {c:.2f} s wall {w:.2f} s", flush=True)
            for name, binary in binaries:
                shutil.rmtree(copies[name] / ".palinode", ignore_errors=True)
                w, c = run([binary, "scan", "--vault", str(copies[name]), "--json"], envs[name])
                results.setdefault(f"{name} cold", []).append((w, c))
                print(f"round {r + 1}: {name} cold cpu {c:.2f} s wall {w:.2f} s", flush=True)
        for r in range(args.runs):
            for name, binary in binaries:
                w, c = run([binary, "scan", "--vault", str(copies[name]), "--json"], envs[name])
                results.setdefault(f"{name} warm", []).append((w, c))
                note = first_note(copies[name])
                with open(note, "a", encoding="utf-8") as handle:
                    handle.write(f"\nchanged {r}\n")
                w, c = run([binary, "scan", "--vault", str(copies[name]), "--json"], envs[name])
                results.setdefault(f"{name} one changed", []).append((w, c))
        floor_cpu = statistics.median(c for _, c in results["floor"])
        print("\n| measure | CPU s, median (runs) | wall s, median | CPU / floor |\n|---|---:|---:|---:|")
        for key, values in results.items():
            cpu = statistics.median(c for _, c in values)
            wall = statistics.median(w for w, _ in values)
            runs = ", ".join(f"{c:.2f}" for _, c in values)
            print(f"| {key} | {cpu:.2f} ({runs}) | {wall:.2f} | {cpu / floor_cpu:.1f}x |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
