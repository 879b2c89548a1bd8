#!/usr/bin/env python3
"""Benchmark the sidecar (`palinode-vault serve`) on a vault: save-to-findings and save-to-write
latency, idle CPU, resident memory.

    python bench/bench_sidecar.py VAULT [--saves 30] [--quiet-seconds 0.5] [--idle-seconds 30] [--in-place]

VAULT is copied to a temp folder first (without `.palinode/`, so the start is cold) unless
`--in-place`: the sidecar writes footers and cross_refs, and the benchmark saves notes.

1. First start, `palinode-vault serve --vault COPY --quiet-seconds Q` (the CLI next to this
   Python; cold parse cache): time to its ready lines, then the automatic fixes of every stale
   note until `status` shows nothing pending or busy and no write for 2 s; memory after that.
   Then stop it and start it again (warm cache, consistent vault): the measured run.
2. Pick N memory notes without findings; for each, save it with one line added that mentions
   another memory note (so its `cross_refs:` must change) and measure, on a connected client,
   the time from the save to (a) a `findings.changed` naming the note and (b) a `wrote` naming it.
   (b) is reported minus the quiet period Q. Saves are sequential, each after the last write.
3. Idle CPU of the sidecar over `--idle-seconds` with nothing happening (utime+stime from
   /proc/PID/stat), and VmRSS / VmHWM from /proc/PID/status (no models are loaded).

Prints a markdown table and one JSON line. Issue 3's targets: median (b) <= 50 ms beyond the quiet
period, idle CPU near zero, RSS <= 300 MB. The machine's load average is printed with the numbers:
other work on the machine shows up in them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from sidecar_helpers import SidecarClient  # noqa: E402 - the tests' client: one source

TARGETS = {"write_beyond_quiet_median_ms": 50.0, "idle_cpu_percent": 1.0, "rss_mb": 300.0}
NOTE_FOLDERS = ("people", "projects", "decisions", "insights")
HARMLESS = {"stale", "core_review", "orphan"}
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchError(Exception):
    pass


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_mb(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def start(vault: Path, quiet: float) -> tuple[subprocess.Popen, float, list[str]]:
    exe = Path(sys.executable).with_name("palinode-vault")
    cmd = [
        str(exe) if exe.exists() else sys.executable,
        *([] if exe.exists() else ["-m", "palinode_vault.cli"]),
        "serve",
        "--vault",
        str(vault),
        "--quiet-seconds",
        str(quiet),
    ]
    began = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    while True:
        line = proc.stdout.readline()
        if not line:
            raise BenchError(f"`{shlex.join(cmd)}` exited before it was ready: {proc.stderr.read()[-2000:]}")
        lines.append(line.rstrip())
        if line.strip().startswith("stop with"):
            return proc, time.monotonic() - began, lines


async def wait_settled(client: SidecarClient, calm: float = 2.0, timeout: float = 900) -> dict:
    """Until nothing is pending, nothing is busy and `writes` has not moved for `calm` seconds."""
    deadline = time.monotonic() + timeout
    last_writes, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        status = await client.call("status", timeout=60)
        if status["pending"] or status["busy"] or status["writes"] != last_writes:
            last_writes, since = status["writes"], time.monotonic()
        elif time.monotonic() - since >= calm:
            return status
        await asyncio.sleep(0.25)
    raise BenchError("the sidecar did not settle")


async def pick_notes(client: SidecarClient, root: Path, count: int) -> list[tuple[str, str]]:
    """(note, ref of another memory note it does not mention yet) for `count` clean notes."""
    lint = await client.call("lint", timeout=120)
    # date-driven findings (`stale`, `core_review`) and `orphan` do not stop a fix
    dirty = {f["path"] for f in lint["findings"] if f["check"] not in HARMLESS}
    by_folder: dict[str, list[str]] = {f: [] for f in NOTE_FOLDERS}
    for path in sorted(p.relative_to(root).as_posix() for p in root.glob("*/*.md")):
        folder = path.split("/", 1)[0]
        if folder in by_folder and path not in dirty:
            by_folder[folder].append(path)
    pool = [p for group in zip(*by_folder.values()) for p in group]  # interleave the folders
    if len(pool) < 2 * count:
        raise BenchError(f"only {len(pool)} clean memory notes; need {2 * count}")
    notes, targets = pool[:count], pool[count:]
    kinds = {"people": "person", "projects": "project", "decisions": "decision", "insights": "insight"}
    out = []
    for note, target in zip(notes, targets):
        folder, name = target.split("/", 1)
        out.append((note, f"{kinds[folder]}/{name[:-3]}"))
    return out


async def measure_saves(client: SidecarClient, root: Path, quiet: float, count: int) -> list[dict]:
    rows = []
    for note, ref in await pick_notes(client, root, count):
        path = root / note
        text = path.read_text(encoding="utf-8")
        if text.endswith("\n"):
            text = text[:-1]
        # a line before the footer (or at the end) that names another memory by its ref
        marker = "\n<!-- palinode:see-also -->"
        line = f"\nBenchmark note: see {ref} for the background.\n"
        new = text.replace(marker, line + marker, 1) if marker in text else text + "\n" + line
        await asyncio.sleep(0.05)
        saved = time.monotonic()
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(new)
        found = await client.wait_for("findings.changed", note, since=saved, timeout=30)
        wrote = await client.wait_for("wrote", note, since=saved, timeout=30 + quiet)
        after = path.read_text(encoding="utf-8")
        rows.append(
            {
                "note": note,
                "findings_ms": (found.at - saved) * 1000,
                "wrote_ms": (wrote.at - saved) * 1000,
                "wrote_beyond_quiet_ms": (wrote.at - saved - quiet) * 1000,
                "cross_refs_written": ref in after.split("\n---", 1)[0],
            }
        )
    return rows


async def adopt(vault: Path, quiet: float) -> dict:
    """First start on the vault (cold parse cache): the automatic fixes of every stale note."""
    proc, ready_s, _ = start(vault, quiet)
    try:
        async with await SidecarClient.open(vault) as client:
            t0 = time.monotonic()
            status = await wait_settled(client)
            fix_s = time.monotonic() - t0 - 2.0
            mem = memory_mb(proc.pid)
    finally:
        stop(proc)
    return {
        "cold_ready_s": round(ready_s, 2),
        "start_writes": status["writes"],
        "start_fixes_s": round(max(0.0, fix_s), 1),
        "adopt_rss_mb": round(mem["VmRSS"], 1),
        "adopt_hwm_mb": round(mem["VmHWM"], 1),
    }


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def bench(vault: Path, args: argparse.Namespace, command: str) -> dict:
    load_before = os.getloadavg()
    adoption = await adopt(vault, args.quiet_seconds)
    # The measured run: a restart on the now consistent vault, warm parse cache.
    proc, ready_s, _ = start(vault, args.quiet_seconds)
    try:
        async with await SidecarClient.open(vault) as client:
            settled = await wait_settled(client)
            mem_after_load = memory_mb(proc.pid)
            rows = await measure_saves(client, vault, args.quiet_seconds, args.saves)
            await asyncio.sleep(max(1.0, args.quiet_seconds * 2))
            before_idle = len(client.notifications)
            cpu0, w0 = cpu_seconds(proc.pid), time.monotonic()
            await asyncio.sleep(args.idle_seconds)
            cpu1, w1 = cpu_seconds(proc.pid), time.monotonic()
            idle = [n.method for n in client.notifications[before_idle:]]
            mem = memory_mb(proc.pid)
            status = await client.call("status")
    finally:
        stop(proc)
    found = [r["findings_ms"] for r in rows]
    beyond = [r["wrote_beyond_quiet_ms"] for r in rows]
    return {
        "command": command,
        "vault": str(vault),
        "notes": status["counts"]["markdown_files"],
        "quiet_seconds": args.quiet_seconds,
        **adoption,
        "ready_s": round(ready_s, 2),
        "restart_writes": settled["writes"],
        "saves": len(rows),
        "findings_median_ms": round(statistics.median(found), 1),
        "findings_p95_ms": round(percentile(found, 95), 1),
        "write_beyond_quiet_median_ms": round(statistics.median(beyond), 1),
        "write_beyond_quiet_p95_ms": round(percentile(beyond, 95), 1),
        "write_beyond_quiet_max_ms": round(max(beyond), 1),
        "cross_refs_written": sum(r["cross_refs_written"] for r in rows),
        "idle_seconds": round(w1 - w0, 1),
        "idle_cpu_percent": round(100 * (cpu1 - cpu0) / (w1 - w0), 3),
        "idle_notifications": {m: idle.count(m) for m in sorted(set(idle))},
        "rss_after_load_mb": round(mem_after_load["VmRSS"], 1),
        "rss_mb": round(mem["VmRSS"], 1),
        "hwm_mb": round(mem["VmHWM"], 1),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "rows": [{k: (round(v, 1) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
    }


def report(r: dict) -> str:
    ok = lambda good: "yes" if good else "**no**"  # noqa: E731
    idle_notes = sum(r["idle_notifications"].values())
    lines = [
        "| measure | value | target | met |",
        "|---|---|---|---|",
        f"| first start: to ready ({r['notes']} notes, cold parse cache) | {r['cold_ready_s']} s | | |",
        f"| first start: automatic fixes of stale notes | {r['start_writes']} files in {r['start_fixes_s']} s | | |",
        f"| first start: VmRSS / VmHWM after those fixes | {r['adopt_rss_mb']} / {r['adopt_hwm_mb']} MB | <= {TARGETS['rss_mb']:.0f} MB | "
        f"{ok(r['adopt_hwm_mb'] <= TARGETS['rss_mb'])} |",
        f"| restart: to ready (warm cache), writes at start | {r['ready_s']} s, {r['restart_writes']} | | |",
        f"| save to `findings.changed`, median / p95 ({r['saves']} saves) | {r['findings_median_ms']} / {r['findings_p95_ms']} ms | | |",
        f"| save to `wrote`, beyond the quiet period ({r['quiet_seconds']} s), median / p95 / max | "
        f"{r['write_beyond_quiet_median_ms']} / {r['write_beyond_quiet_p95_ms']} / {r['write_beyond_quiet_max_ms']} ms | "
        f"median <= {TARGETS['write_beyond_quiet_median_ms']:.0f} ms | {ok(r['write_beyond_quiet_median_ms'] <= TARGETS['write_beyond_quiet_median_ms'])} |",
        f"| idle CPU over {r['idle_seconds']} s ({idle_notes} notifications meanwhile) | {r['idle_cpu_percent']} % | near 0 | "
        f"{ok(r['idle_cpu_percent'] <= TARGETS['idle_cpu_percent'])} |",
        f"| restart: VmRSS after load / after the saves and idle, VmHWM | {r['rss_after_load_mb']} / {r['rss_mb']} MB, {r['hwm_mb']} MB | "
        f"<= {TARGETS['rss_mb']:.0f} MB | {ok(max(r['rss_mb'], r['hwm_mb']) <= TARGETS['rss_mb'])} |",
        f"| load average before / after (1, 5, 15 min; {r['cpus']} CPUs) | {r['loadavg_before']} / {r['loadavg_after']} | | |",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--quiet-seconds", type=float, default=0.5)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--in-place", action="store_true", help="benchmark VAULT itself (it gets written)")
    args = parser.parse_args()
    command = shlex.join([Path(sys.executable).name, "bench/bench_sidecar.py", *sys.argv[1:]])
    source = args.vault.resolve()
    if not source.is_dir():
        print(f"bench_sidecar: {source} is not a folder; make one with bench/make_vault.py", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-sidecar-") as tmp:
        vault = source
        if not args.in_place:
            vault = Path(tmp) / source.name
            shutil.copytree(source, vault, ignore=shutil.ignore_patterns(".palinode"))
        try:
            results = asyncio.run(bench(vault, args, command))
        except BenchError as exc:
            print(f"bench_sidecar: {exc}", file=sys.stderr)
            return 1
    results["vault"] = str(source)
    print(f"Command: `{command}`\n")
    print(report(results))
    print(json.dumps({k: v for k, v in results.items() if k != "rows"}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
