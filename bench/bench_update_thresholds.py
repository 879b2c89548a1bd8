#!/usr/bin/env python3
"""Calibration of the update logic's "same fact" thresholds against labelled pairs.

    .venv/bin/python bench/bench_update_thresholds.py [--pairs bench/update-calibration/pairs.json]
                                                    [--model PATH.gguf] [--json]

Each pair in bench/update-calibration/pairs.json is a candidate memory (title + text, as
extraction produces it) against a note of sample-vault/, labelled `same` (the note already
states it), `new_info` (same subject, a fact the note lacks) or `unrelated` (same folder,
another subject). The sample vault is indexed once on a temporary copy, with the default
embedding model or `--model`, and for every pair the similarities the update flow can use are
computed:

- `chunk`: the index's dedup (cosine of the candidate against the note's best chunk), which the
  flow used alone before, against PROGRAM.md's 0.95 / 0.90 / 0.75;
- `closest`: cosine of the whole candidate against the note's closest statement (sentence or
  list item, embedded on the fly, palinode_vault/memory/update/statements.py);
- `coverage`: per sentence of the candidate text the closest statement, the least of those
  (what the update flow now uses for NOOP);
- `novelty`: share of the candidate's content words the note lacks (lexical, no model).

Prints per label the distribution (min / quartiles / max) of each score as the flow sees it,
for the labelled note and for the best of the top notes dedup returns, then for a grid of
thresholds how many of each label fall at/above and below, and the best cut for
same | new_info and new_info | unrelated. To recalibrate for another embedding model, run this
with `--model` and copy the chosen cuts into PROGRAM.md's `update.*` statement keys.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from palinode_vault.core.entities import ref_of_path
from palinode_vault.core.program import parse_program
from palinode_vault.index import dedup, open_index, refresh
from palinode_vault.kinds import (
    BY_NAME,
    TYPE_KIND,
)
from palinode_vault.memory.update.logic import Item, Updater, line_novelty, novelty, similar_for
from palinode_vault.memory.update.workspace import Workspace, body_of
from palinode_vault.program import SHIPPED
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

LABELS = ("same", "new_info", "unrelated")
OPS = ("NOOP", "UPDATE", "ADD", "SUPERSEDE", "INBOX")
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
# Each number varied alone around PROGRAM.md's, the others as PROGRAM.md has them.
SWEEP = {
    "statement_novelty": [0.2, 0.25, 0.3, 0.34, 0.4],
    "statement_related": [0.4, 0.45, 0.5, 0.55, 0.6],
    "statement_same": [0.85, 0.9, 0.95],
    "statement_window": [3, 5, 8],
    "statement_notes": [1, 3, 5],
}


def quartiles(xs: list[float]) -> tuple[float, float, float, float, float]:
    xs = sorted(xs)
    if len(xs) < 2:
        v = xs[0] if xs else float("nan")
        return v, v, v, v, v
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return xs[0], q[0], q[1], q[2], xs[-1]


def best_cut(pos: list[float], neg: list[float]) -> tuple[float, int, int]:
    """The threshold t (pos >= t, neg < t) with the fewest errors; ties: the middle of the gap."""
    values = sorted(set(pos + neg))
    best = (len(pos) + len(neg) + 1, 0.0)
    cuts = [values[0] - 1e-3] + [(a + b) / 2 for a, b in zip(values, values[1:])] + [values[-1] + 1e-3]
    for t in cuts:
        errors = sum(p < t for p in pos) + sum(n >= t for n in neg)
        if errors < best[0]:
            best = (errors, t)
    t = best[1]
    return round(t, 3), sum(p < t for p in pos), sum(n >= t for n in neg)


def measure(pairs: list[dict], model: str | None, settings: Any, overrides: dict[str, float]) -> tuple[list[dict], float]:
    """Scores of every pair, and the update flow's real outcome before (whole-note similarity
    against update.same_fact / strong_duplicate) and now (statements, PROGRAM.md's numbers)."""
    started = time.monotonic()
    now_settings = settings.model_copy(update={"update": settings.update.model_copy(update=overrides)})
    before = settings.model_copy(
        update={
            "update": settings.update.model_copy(
                update={
                    "statement_notes": None,
                    "statement_window": None,
                    "statement_related": None,
                    "statement_same": None,
                    "statement_novelty": None,
                }
            )
        }
    )
    u = now_settings.update
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(REPO / "sample-vault", root, ignore=shutil.ignore_patterns(".palinode"))
        vault = Vault(Settings(vault=root, embedding_model=model, now=NOW.date()))
        index = open_index(root, model_path=model)
        try:
            refresh(index, vault)
            assert index.vectors_usable, index.reason
            similar, how = similar_for(vault, index)
            assert similar.matcher is not None, how
            matcher = similar.matcher
            built = time.monotonic() - started
            for pair in pairs:
                kind = TYPE_KIND[pair["type"]]
                folder = BY_NAME[kind].folder
                collection = kind in ("person", "project")
                candidate = f"{pair['title']}\n{pair['text']}"
                found = [
                    s
                    for s in dedup(index, candidate, category=kind, limit=50)
                    if s.path.split("/", 1)[0] == folder and s.path.count("/") == 1
                ]
                by_path = {s.path: s.similarity for s in found}
                note_text = (root / pair["note"]).read_text(encoding="utf-8")
                j = matcher.judge(pair["text"], note_text, u.statement_window)
                row = {
                    "id": pair["id"],
                    "label": pair["label"],
                    "note": pair["note"],
                    "type": pair["type"],
                    "collection": collection,
                    "chars": len(pair["text"]),
                    "chunk": by_path.get(pair["note"], 0.0),
                    "closest": matcher.closest(candidate, note_text)[0],
                    "coverage": j.coverage,
                    "statement_novelty": j.novelty,
                    "novelty": novelty(f"{pair['title']} {pair['text']}", note_text),
                    "line_novelty": line_novelty(pair["text"], body_of(note_text)),
                }
                # what the flow compares: a person/project note found by its entity; for the other
                # types the best-covering of the notes dedup ranks first in the folder
                if collection:
                    row["flow_chunk"], row["flow_path"] = row["chunk"], pair["note"]
                    row["flow_coverage"], row["flow_novelty"] = j.coverage, j.novelty
                else:
                    row["flow_chunk"] = found[0].similarity if found else 0.0
                    judged = [
                        (matcher.judge(pair["text"], (root / s.path).read_text(encoding="utf-8"), u.statement_window), s.path)
                        for s in found[: u.statement_notes]
                    ]
                    best, row["flow_path"] = max(judged, key=lambda x: x[0].coverage)
                    row["flow_coverage"], row["flow_novelty"] = best.coverage, best.novelty
                for name, cfg in (("op_before", before), ("op_now", now_settings)):
                    outcome = run_flow(vault, pair, cfg, similar)
                    row[name] = outcome.op
                    row[name.replace("op", "path")] = outcome.path
                row["sweep"] = {}
                for key, values in SWEEP.items():
                    for value in values:
                        cfg = now_settings.model_copy(update={"update": u.model_copy(update={key: value})})
                        row["sweep"][f"{key}={value}"] = run_flow(vault, pair, cfg, similar).op
                rows.append(row)
        finally:
            index.close()
    return rows, built


def run_flow(vault: Vault, pair: dict, settings: Any, similar: Any) -> Any:
    """The real update flow on one candidate, staged in a workspace that is never committed."""
    kind = TYPE_KIND[pair["type"]]
    entities = []
    if kind in ("person", "project") and pair["label"] != "unrelated":
        data = vault.state.notes[pair["note"]].frontmatter or {}
        entities = [(ref_of_path(pair["note"]), str(data.get("name") or ""))]  # as extraction resolves names
    ws = Workspace(vault)
    updater = Updater(vault, ws, settings, similar, "calibration", NOW)
    return updater.apply(Item(pair["type"], pair["title"], pair["text"], 0.9, entities))


def table(rows: list[dict], keys: list[str]) -> list[str]:
    out = ["| score | label | n | min | q1 | median | q3 | max |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for key in keys:
        for label in LABELS:
            xs = [r[key] for r in rows if r["label"] == label]
            if xs:
                lo, q1, med, q3, hi = quartiles(xs)
                out.append(f"| {key} | {label} | {len(xs)} | {lo:.2f} | {q1:.2f} | {med:.2f} | {q3:.2f} | {hi:.2f} |")
    return out


def grid(rows: list[dict], key: str, thresholds: list[float]) -> list[str]:
    out = [f"| {key} ≥ t | " + " | ".join(f"{lab} ≥ / <" for lab in LABELS) + " |", "|---:|" + "---:|" * len(LABELS)]
    for t in thresholds:
        cells = []
        for label in LABELS:
            xs = [r[key] for r in rows if r["label"] == label]
            cells.append(f"{sum(x >= t for x in xs)} / {sum(x < t for x in xs)}")
        out.append(f"| {t:.2f} | " + " | ".join(cells) + " |")
    return out


def confusion(rows: list[dict], key: str) -> list[str]:
    out = [f"| {key.replace('op_', '')}: label | n | " + " | ".join(OPS) + " |", "|---|---:|" + "---:|" * len(OPS)]
    for label in LABELS:
        for collection in (False, True):
            part = [r for r in rows if r["label"] == label and r["collection"] == collection]
            if part:
                what = "person/project" if collection else "decision/insight/research"
                out.append(
                    f"| {label} ({what}) | {len(part)} | " + " | ".join(str(sum(r[key] == op for r in part)) for op in OPS) + " |"
                )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", default=str(REPO / "bench" / "update-calibration" / "pairs.json"))
    parser.add_argument("--model", default=None, help="an embedding GGUF (default: the packaged MiniLM)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="try another update.* number than PROGRAM.md's (statement_related=0.5); repeatable",
    )
    parser.add_argument("--json", action="store_true", help="also print every pair's scores as JSON")
    args = parser.parse_args(argv)
    pairs = json.loads(Path(args.pairs).read_text(encoding="utf-8"))
    settings = parse_program(SHIPPED.read_text(encoding="utf-8"), str(SHIPPED))
    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key.removeprefix("update.")] = int(value) if value.isdigit() else float(value)
    print("command: .venv/bin/python " + " ".join([sys.argv[0]] + (argv if argv is not None else sys.argv[1:])))
    started = time.monotonic()
    rows, built = measure(pairs, args.model, settings, overrides)
    u = settings.update.model_copy(update=overrides)
    counts = {lab: sum(r["label"] == lab for r in rows) for lab in LABELS}
    print(
        f"pairs: {len(rows)} ({', '.join(f'{k} {v}' for k, v in counts.items())}); index built in {built:.1f} s, "
        f"total {time.monotonic() - started:.1f} s"
    )
    print(
        f"update: statement_notes {u.statement_notes}, statement_window {u.statement_window}, statement_related "
        f"{u.statement_related}, statement_same {u.statement_same}, statement_novelty {u.statement_novelty}, "
        f"novelty_new {u.novelty_new}; "
        f"before: same_fact {u.same_fact}, strong_duplicate {u.strong_duplicate}, related {u.related}"
    )
    print()
    keys = [
        "chunk",
        "flow_chunk",
        "closest",
        "coverage",
        "flow_coverage",
        "novelty",
        "line_novelty",
        "statement_novelty",
        "flow_novelty",
    ]
    print("\n".join(table(rows, keys)))
    print()
    print("\n".join(grid(rows, "flow_chunk", [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.9, 0.95])))
    print()
    print("\n".join(grid(rows, "flow_coverage", [0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.85, 0.9])))
    print()
    print("| score | split | best t | pos below t | neg at/above t |")
    print("|---|---|---:|---:|---:|")
    for key in ["chunk", "flow_chunk", "closest", "coverage", "flow_coverage"]:
        for pos, neg in (("same", "new_info"), ("new_info", "unrelated")):
            t, fn, fp = best_cut([r[key] for r in rows if r["label"] == pos], [r[key] for r in rows if r["label"] == neg])
            print(f"| {key} | {pos} / {neg} | {t:.3f} | {fn}/{counts[pos]} | {fp}/{counts[neg]} |")
    for key in ["novelty", "line_novelty", "statement_novelty", "flow_novelty"]:
        t, fn, fp = best_cut([-r[key] for r in rows if r["label"] == "same"], [-r[key] for r in rows if r["label"] == "new_info"])
        print(
            f"| {key} (lower = same) | same / new_info | {-t:.3f} | {fn}/{counts['same']} (at/above) | {fp}/{counts['new_info']} (below) |"
        )
    for key in ("op_before", "op_now"):
        print()
        print("\n".join(confusion(rows, key)))
    print()
    print(
        "| setting (others as PROGRAM.md) | same NOOP | new_info NOOP (lost) | new_info UPDATE | new_info ADD | unrelated UPDATE | errors |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in rows[0]["sweep"]:
        ops = {lab: [r["sweep"][name] for r in rows if r["label"] == lab] for lab in LABELS}
        same, lost = ops["same"].count("NOOP"), ops["new_info"].count("NOOP")
        wrong_update = ops["unrelated"].count("UPDATE")
        print(
            f"| {name} | {same}/{counts['same']} | {lost}/{counts['new_info']} | {ops['new_info'].count('UPDATE')} | "
            f"{ops['new_info'].count('ADD')} | {wrong_update}/{counts['unrelated']} | {counts['same'] - same + lost + wrong_update} |"
        )
    print()
    for key in ("op_before", "op_now"):
        wrong = [
            r["id"]
            for r in rows
            if (r["label"] == "same") != (r[key] == "NOOP") or (r["label"] == "unrelated" and r[key] == "UPDATE")
        ]
        print(f"{key.replace('op_', '')}: wrong (same not NOOP, a NOOP that is not same, unrelated UPDATEd): {wrong}")
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
