#!/usr/bin/env python3
"""Search index benchmarks: cold index, unchanged re-index, search latency, retrieval quality.

    .venv/bin/python bench/make_vault.py /tmp/bench-vault --notes 10000
    .venv/bin/python bench/bench_search.py --vault /tmp/bench-vault            # everything
    .venv/bin/python bench/bench_search.py --vault /tmp/bench-vault --phase cold
    .venv/bin/python bench/bench_search.py --phase quality                     # no bench vault needed

Phases:
- cold: `VAULT/.palinode/index.db` deleted, then the whole vault indexed and embedded
  (the parse cache is kept: this measures the index, not the parser). Resumable: `--resume`
  keeps an interrupted index and times only the rest.
- warm: the same call again over the unchanged vault: embedding calls (must be 0) and seconds
  (target 1 s), vault load included.
- latency: in-process hybrid search over the indexed vault, queries drawn from its own titles
  and phrases; median and p95 in milliseconds (targets 20 / 50), model loaded once before.
- quality: the labelled query sets in bench/queries/ over copies of sample-vault/ and the
  Obsidian help corpus; recall@10 and MRR for keyword-only, vector-only, hybrid with reciprocal
  rank fusion (`fusion: rrf`, for comparison) and hybrid as shipped, per set
  (`--set dev|heldout|heldout2|heldout3|heldout4|all`: dev was tuned on, the held-out sets never), per corpus
  and combined.

Prints the exact command, a markdown table, and one JSON line with every number.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from palinode_vault.index import open_index, refresh, search
from palinode_vault.index.store import index_path
from palinode_vault.index.worker import Pace
from palinode_vault.program import SHIPPED, load_program
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

QUERIES = REPO / "bench" / "queries"
CORPORA = {
    "sample-vault": REPO / "sample-vault",
    "obsidian-help-en": REPO.parent / "shared" / "corpora" / "obsidian-help-en",
}


def _progress_printer():
    last = [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] > 5:
            last[0] = now
            print(f"  {phase}: {done}/{total}", file=sys.stderr, flush=True)

    return progress


def phase_cold(vault: Path, resume: bool, threads: int | None = None) -> dict:
    db = index_path(vault)
    if not resume:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    v = Vault(Settings(vault=vault))
    t0 = time.perf_counter()
    v.load()
    load_s = time.perf_counter() - t0
    index = open_index(vault)
    # as `palinode-vault index` does: every core while the machine is otherwise idle
    pace = Pace()
    index.threads_now = (lambda: threads) if threads else pace
    seen: set[int] = set()
    printer = _progress_printer()

    def progress(phase: str, done: int, total: int) -> None:
        seen.add(pace.threads if not threads else threads)
        printer(phase, done, total)

    t1 = time.perf_counter()
    report = refresh(index, v, progress)
    seconds = time.perf_counter() - t1
    counts = index.counts()
    index.close()
    return {
        "load_s": round(load_s, 2),
        "index_s": round(seconds, 1),
        "notes": counts["notes"],
        "chunks": counts["chunks"],
        "embedded": report.embedded,
        "texts_per_s": round(report.embedded / seconds, 1) if seconds else None,
        "pending": report.pending,
        "resumed": resume,
        "threads_used": sorted(seen),
    }


def phase_warm(vault: Path, runs: int = 3) -> dict:
    times, calls = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        v = Vault(Settings(vault=vault))
        index = open_index(vault)
        report = refresh(index, v)
        times.append(time.perf_counter() - t0)
        calls.append(index.embed_calls)
        index.close()
    return {
        "warm_s_median": round(statistics.median(times), 3),
        "warm_s": [round(t, 3) for t in times],
        "embed_calls": calls,
        "unchanged": report.unchanged,
    }


def phase_latency(vault: Path, n: int = 200, seed: int = 11) -> dict:
    index = open_index(vault)
    titles = [t for (t,) in index.conn.fetchall("select title from notes order by path")]
    rng = random.Random(seed)
    queries = []
    for _ in range(n):
        words = rng.choice(titles).split()
        queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(1, 4)))) or "release")
    search(index, "warm up the model")
    modes = {}
    for mode in ("hybrid", "keyword", "vector"):
        times = []
        for q in queries:
            t0 = time.perf_counter()
            search(index, q, limit=10, mode=mode)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        modes[mode] = {"median_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2)}
    index.close()
    return {"queries": n, **modes}


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".palinode", ".obsidian"))
    return dst


SETS = ("dev", "heldout", "heldout2", "heldout3", "heldout4")


def load_queries(corpus: str, query_set: str) -> list[dict]:
    """The labelled queries of one corpus: one of SETS, or `all` (every set, in SETS order).

    `dev` is the set the search was tuned on; `heldout` to `heldout4` are only
    measured, never tuned against (bench/queries/README.md says how often each was looked at).
    """
    names = SETS if query_set == "all" else (query_set,)
    out = []
    for name in names:
        items = json.loads((QUERIES / name / f"{corpus}.json").read_text(encoding="utf-8"))["queries"]
        out += [{**item, "set": name} for item in items]
    return out


def _reciprocal_ranks(index, queries: list[dict], mode: str) -> list[float]:
    """Per query: 1 / rank of the first relevant note in the top 10, or 0.

    Mode `rrf` is hybrid with PROGRAM.md's `search.fusion: rrf` (reciprocal rank fusion, the
    fusion before round 3), from a PROGRAM.md written into the vault copy for these queries.
    """
    if mode == "rrf":
        own = index.root / "PROGRAM.md"
        text = SHIPPED.read_text(encoding="utf-8")
        own.write_text(text.replace("  fusion: weighted ", "  fusion: rrf      ", 1), encoding="utf-8")
        try:
            assert load_program(index.root).settings.search.fusion == "rrf"
            return _reciprocal_ranks(index, queries, "hybrid")
        finally:
            own.unlink()
    out = []
    for item in queries:
        res = search(index, item["query"], limit=10, mode=mode, include_daily=item.get("include_daily", False))
        got = [r["path"] for r in res["results"]]
        ranks = [got.index(p) + 1 for p in item["relevant"] if p in got]
        out.append(1.0 / min(ranks) if ranks else 0.0)
    return out


MODES = ("keyword", "vector", "rrf", "hybrid")


def _bootstrap(diffs: list[float], runs: int = 2000, seed: int = 5) -> list[float]:
    """95 % interval of the mean of paired per-query differences (resampling queries)."""
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(runs))
    return [round(means[int(0.025 * runs)], 3), round(means[int(0.975 * runs) - 1], 3)]


def phase_quality(work: Path, query_set: str = "all") -> dict:
    """{set: {corpus: {"queries", mode: {"recall@10", "mrr"}}}}; with several sets also
    the held-out sets together (e.g. "heldout+heldout2+heldout3") and "all" (every set), corpora combined as "all".
    Each "all" row also has the 95 % bootstrap interval of hybrid's MRR minus each other mode's
    (paired by query): an interval above 0 is a difference the query set can tell apart."""
    per_query: dict[tuple[str, str], dict[str, list[float]]] = {}
    for corpus, src in CORPORA.items():
        queries = load_queries(corpus, query_set)
        vault = _copy(src, work / corpus)
        index = open_index(vault)
        refresh(index, Vault(Settings(vault=vault)))
        for name in sorted({q["set"] for q in queries}, key=SETS.index):
            part = [q for q in queries if q["set"] == name]
            per_query[(name, corpus)] = {m: _reciprocal_ranks(index, part, m) for m in MODES}
        index.close()
    out: dict = {}
    names = [s for s in SETS if any(k[0] == s for k in per_query)]
    groups = {name: [k for k in per_query if k[0] == name] for name in names}
    held_out = [s for s in names if s != "dev"]
    if len(held_out) > 1:
        groups["+".join(held_out)] = [k for k in per_query if k[0] != "dev"]
    if len(names) > 1:
        groups["all"] = list(per_query)
    for name, keys in groups.items():
        table = out.setdefault(name, {})
        cells = [(corpus, [k for k in keys if k[1] == corpus]) for corpus in CORPORA] + [("all", keys)]
        for corpus, part in cells:
            if not part:
                continue
            rr = {m: [x for k in part for x in per_query[k][m]] for m in MODES}
            n = len(rr["hybrid"])
            row: dict = {"queries": n}
            for m in MODES:
                row[m] = {"recall@10": round(sum(x > 0 for x in rr[m]) / n, 3), "mrr": round(sum(rr[m]) / n, 3)}
            if corpus == "all":
                row["hybrid_mrr_minus"] = {
                    m: _bootstrap([h - o for h, o in zip(rr["hybrid"], rr[m])]) for m in ("keyword", "vector", "rrf")
                }
            table[corpus] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vault", type=Path, default=Path("/tmp/bench-vault"))
    parser.add_argument("--phase", action="append", choices=["cold", "warm", "latency", "quality"])
    parser.add_argument("--resume", action="store_true", help="cold: keep an interrupted index")
    parser.add_argument("--threads", type=int, default=None, help="cold: embedding threads (default: paced as `index` is)")
    parser.add_argument(
        "--set",
        dest="query_set",
        choices=[*SETS, "all"],
        default="all",
        help="quality: which labelled queries (dev: tuned on; heldout to heldout4: never tuned on)",
    )
    args = parser.parse_args()
    phases = args.phase or ["cold", "warm", "latency", "quality"]
    print(
        "$ "
        + " ".join(
            [
                os.path.relpath(sys.executable, REPO) if sys.executable.startswith(str(REPO)) else sys.executable,
                "bench/bench_search.py",
                *sys.argv[1:],
            ]
        ),
        flush=True,
    )
    results: dict = {"threads": os.cpu_count()}
    if any(p in phases for p in ("cold", "warm", "latency")) and not args.vault.is_dir():
        sys.exit(f"no bench vault at {args.vault}: .venv/bin/python bench/make_vault.py {args.vault} --notes 10000")
    if "cold" in phases:
        results["cold"] = phase_cold(args.vault, args.resume, args.threads)
        print(f"cold index: {results['cold']}", flush=True)
    if "warm" in phases:
        results["warm"] = phase_warm(args.vault)
        print(f"unchanged re-index: {results['warm']}", flush=True)
    if "latency" in phases:
        results["latency"] = phase_latency(args.vault)
        print(f"latency: {results['latency']}", flush=True)
    if "quality" in phases:
        with tempfile.TemporaryDirectory() as tmp:
            results["quality"] = phase_quality(Path(tmp), args.query_set)
        print(
            "\n| set | corpus | queries | keyword recall@10 / MRR | vector recall@10 / MRR "
            "| hybrid, rrf fusion | hybrid recall@10 / MRR |"
        )
        print("| --- | --- | ---: | --- | --- | --- | --- |")
        for name, table in results["quality"].items():
            for corpus, data in table.items():
                cells = " | ".join(f"{data[m]['recall@10']} / {data[m]['mrr']}" for m in MODES)
                print(f"| {name} | {corpus} | {data['queries']} | {cells} |")
        for name, table in results["quality"].items():
            ci = table["all"].get("hybrid_mrr_minus")
            if ci:
                print(
                    f"{name}: hybrid MRR minus keyword, 95 % interval {ci['keyword']}; minus vector {ci['vector']}; "
                    f"minus rrf {ci['rrf']}"
                )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
