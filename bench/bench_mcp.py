"""Tool-call latency of `palinode-vault mcp`: search, dedup and save, median and p95.

Drives the real server over stdio with the `mcp` SDK's client (what an agent's host does) and
times each call end to end (JSON-RPC, vault load from the parse cache, index, update logic,
journaled write). The vault is copied first (saves write to it); the index is built once before
timing. Run:

    python bench/bench_mcp.py VAULT [--calls 20] [--json] [--server PROGRAM] [--embedding-model PATH]

`--server` runs another `palinode-vault` program (an older checkout, for before/after side by side).

`save` alternates between a new fact (ADD) and a restatement (NOOP) of two texts, so after the
first rounds a long-lived server has their statements' vectors; `save_new` saves a text never seen
before on every call (its sentences are embedded each time); the update logic still decides, so
some of those are UPDATE or NOOP of an earlier one (`ops` in the result counts what it decided).
Each save is its own journaled run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

QUERIES = [
    "release schedule",
    "SMS provider for reminders",
    "who owns billing",
    "offline sync conflicts",
    "design tokens",
    "pilot clinics feedback",
    "Postgres hosting",
    "onboarding call",
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def run(root: Path, calls: int, server: str | None = None, embedding_model: str | None = None) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    exe = server or Path(sys.executable).with_name("palinode-vault")
    # the SDK passes the server only a few safe variables (HOME, PATH...), so a model is an argument
    extra = ["--embedding-model", embedding_model] if embedding_model else []
    params = StdioServerParameters(command=str(exe), args=["mcp", "--vault", str(root), *extra])
    timings: dict[str, list[float]] = {"search": [], "dedup": [], "save": [], "save_new": []}
    modes: dict[str, str] = {}  # what the answers say they used (hybrid or keyword; meaning or keywords)
    ops: dict[str, dict[str, int]] = {"save": {}, "save_new": {}}  # what the update logic decided
    async with Client(params, read_timeout_seconds=3600) as client:
        started = time.perf_counter()
        await client.call_tool("palinode_search", {"query": "warm up", "limit": 1})  # builds/updates the index
        warm = time.perf_counter() - started
        for i in range(calls):
            q = QUERIES[i % len(QUERIES)]
            for name, tool, args in (
                ("search", "palinode_search", {"query": q, "limit": 10}),
                ("dedup", "palinode_dedup_suggest", {"text": f"A note about {q}.", "limit": 5}),
                (
                    "save",
                    "palinode_save",
                    {
                        "type": "Insight",
                        "title": f"Bench insight {i % 2}",
                        "text": f"Benchmark fact number {i % 2} about {QUERIES[i % 2]}.",
                        "confidence": 0.8,
                    },
                ),
                (
                    "save_new",
                    "palinode_save",
                    {
                        "type": "Insight",
                        "title": f"Bench observation {i}",
                        "text": f"Observation {i}: {QUERIES[(i + 3) % len(QUERIES)]} took {i + 2} days in week {i + 10}.",
                        "confidence": 0.8,
                    },
                ),
            ):
                t0 = time.perf_counter()
                result = await client.call_tool(tool, args)
                timings[name].append(time.perf_counter() - t0)
                if result.is_error:
                    raise SystemExit(f"{tool} failed: {result.content[0].text}")
                answer = result.structured_content or {}
                if name == "search":
                    modes["search_mode"] = answer.get("mode", "?")
                elif name == "dedup":
                    modes["dedup_method"] = answer.get("method", "?").split(" (")[0]
                else:
                    op = str(answer.get("op", "?"))
                    ops[name][op] = ops[name].get(op, 0) + 1
    out = {"notes": sum(1 for _ in root.rglob("*.md")), "calls": calls, "first_call_s": round(warm, 2), **modes, "ops": ops}
    for name, values in timings.items():
        out[name] = {"median_ms": round(statistics.median(values) * 1000, 1), "p95_ms": round(pct(values, 0.95) * 1000, 1)}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vault", type=Path)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--json", action="store_true")
    p.add_argument("--server", help="the palinode-vault program to run (default: this environment's)")
    p.add_argument("--embedding-model", help="passed to the server; a path that does not exist times it keyword-only")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(args.vault, root)
        result = asyncio.run(run(root, args.calls, args.server, args.embedding_model))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['notes']} notes, {result['calls']} calls each; first call (index build) {result['first_call_s']} s")
        print(f"search mode {result.get('search_mode')}; dedup by {result.get('dedup_method')}; operations {result['ops']}")
        for name in ("search", "dedup", "save", "save_new"):
            print(f"{name:7} median {result[name]['median_ms']:8.1f} ms   p95 {result[name]['p95_ms']:8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
