#!/usr/bin/env python3
"""Train the provenance score (memory/extraction/provenance.py) on every labelled set, and measure it.

    python bench/train_provenance.py                          # 10 folds by set, then train on all and write provenance.json
    python bench/train_provenance.py --held test61+test62     # trained on the other sets, judged on those (a+b: together)
    python bench/train_provenance.py --no-write               # measure only

The brought-in shapes of `pasted.py` decide by shape alone; the score reads the same lines by
their shape, place, the shapes' own mark and three MiniLM embeddings (`provenance.SHAPE`,
`PLACE`, `with_embeddings`). Lines are those of the person's turns that the sure marks leave,
over the development sets (`train_judge.DEFAULT_SETS`: never a frozen set before its run). A line is labelled **pasted** when its words lie inside a
labelled pasted passage (or hold one of three words or more), **own** when it holds an expected
keyword, and is left unlabelled otherwise (not trained on). The table gives, for the shapes and
for the score at each threshold, the pasted lines marked and the own lines marked (an own line
marked is a memory the model never sees). Embedding the ~7,000 lines takes about 40 s with the
default model; the numbers of docs/BENCHMARKS.md (session 30) come from this script.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
from train_judge import DEFAULT_SETS, sample_names  # listed once (this script's folder is on the path)

from palinode_vault.memory.extraction import provenance
from palinode_vault.memory.extraction.pasted import Sent, own_turns
from palinode_vault.memory.extraction.transcript import parse_transcript

SETS = Path(__file__).resolve().parent / "extraction-eval"
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
L2 = 1.0  # 1 and 3 gave the same folds within a line (session 30); 1 kept


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def messages_of(files: list[Path]) -> list[dict]:
    """Every person's message with lines the score reads, as a pass reads them (`own_turns` with
    a reader that records and keeps the shapes' marks): its judged lines, their labels and the
    shapes' marks."""
    out: list[dict] = []
    names = sample_names()
    for path in files:
        for case in json.loads(path.read_text(encoding="utf-8")):
            passages = [words(p) for p in case.get("pasted") or [] if words(p)]
            keywords = [words(k) for e in case.get("expected") or [] for k in e["keywords"] if words(k)]
            turns = [(t.role, t.content) for t in parse_transcript(case["transcript"])]
            own_turns(turns, recorder(path.stem, passages, keywords, out, names))
    return out


def recorder(set_name: str, passages: list[str], keywords: list[str], out: list[dict], names: frozenset[str]):
    """A line reader for `own_turns` that appends each message's judged lines to `out`."""

    def record(lines: list[str], marks: list[bool], sent: Sent) -> list[bool]:
        judged = provenance.judged_lines(lines, marks, sent, names)
        if judged:
            texts = [lines[i].strip() for i, _ in judged]
            labels = [label(words(t), passages, keywords) for t in texts]
            out.append(
                {
                    "set": set_name,
                    "judged": judged,
                    "texts": texts,
                    "before": sent.before,
                    "labels": labels,
                    "marks": [marks[i] for i, _ in judged],
                }
            )
        return marks

    return record


def label(said: str, passages: list[str], keywords: list[str]) -> int:
    """1: a pasted line (its words inside a labelled passage, or holding one of three words or
    more); 0: the person's, holding an expected keyword; -1: unlabelled."""
    if len(said.split()) >= 2 and any(said in p or len(p.split()) >= 3 and p in said for p in passages):
        return 1
    return 0 if any(kw in said for kw in keywords) else -1


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 3000, rate: float = 0.5) -> np.ndarray:
    """Logistic regression by gradient descent from zero (the same data gives the same weights),
    the two labels weighted to count alike, L2 on every weight but the bias (the last)."""
    weight = np.where(y == 1, (y == 0).sum() / max((y == 1).sum(), 1), 1.0)
    b = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ b)))
        b -= rate * (x.T @ (weight * (p - y)) + penalty * b) / weight.sum()
    return b


def report(title: str, p: np.ndarray, y: np.ndarray, marked: np.ndarray) -> dict:
    pasted, own, other = y == 1, y == 0, y < 0
    print(f"{title}: {pasted.sum()} pasted lines, {own.sum()} own lines, {other.sum()} unlabelled")
    rows = {"shapes": [int((marked & pasted).sum()), int((marked & own).sum()), int((marked & other).sum())]}
    print(
        f"  shapes:      pasted marked {rows['shapes'][0]:4}  own marked {rows['shapes'][1]:4}  unlabelled marked {rows['shapes'][2]:4}"
    )
    for th in THRESHOLDS:
        m = p >= th
        rows[str(th)] = [int((m & pasted).sum()), int((m & own).sum()), int((m & other).sum())]
        print(
            f"  score >= {th}: pasted marked {rows[str(th)][0]:4}  own marked {rows[str(th)][1]:4}  unlabelled marked {rows[str(th)][2]:4}"
        )
    return {"lines": [int(pasted.sum()), int(own.sum()), int(other.sum())], "marked (pasted, own, unlabelled)": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--held", nargs="*", default=[], help="set names (a+b: judged together) judged by a score trained on the others"
    )
    ap.add_argument("--no-write", action="store_true", help="measure only; leave provenance.json as it is")
    ap.add_argument(
        "--sets", default=DEFAULT_SETS, help="comma-separated set names in bench/extraction-eval/ (default: the development sets)"
    )
    args = ap.parse_args(argv)
    files = [SETS / f"{name}.json" for name in args.sets.split(",")]
    messages = messages_of(files)
    from palinode_vault.models.embedder import Embedder

    embedder = Embedder()
    try:
        texts = [t for m in messages for t in m["texts"] + ([m["before"]] if m["before"] else [])]
        vectors = [v for i in range(0, len(texts), 256) for v in embedder.embed_many(texts[i : i + 256])]
        model_id = embedder.model_id
    finally:
        embedder.close()
    rows, at = [], 0
    for m in messages:
        n = len(m["judged"])
        before = vectors[at + n] if m["before"] else ()
        rows += provenance.with_embeddings(m["judged"], vectors[at : at + n], before)
        at += n + (1 if m["before"] else 0)
    x = np.array(rows)
    y = np.array([label for m in messages for label in m["labels"]])
    marked = np.array([mark for m in messages for mark in m["marks"]])
    sets = np.array([m["set"] for m in messages for _ in m["labels"]])
    scores = np.full(len(x), np.nan)
    if args.held:
        for names in args.held:
            held = np.isin(sets, names.split("+"))
            train = ~held & (y >= 0)
            scores[held] = 1 / (1 + np.exp(-(x[held] @ fit(x[train], y[train].astype(float)))))
            report(f"held out {' + '.join(sorted(set(sets[held])))}", scores[held], y[held], marked[held])
        return 0
    names = sorted(set(sets))
    fold_of = {name: n % 10 for n, name in enumerate(names)}
    folds = np.array([fold_of[s] for s in sets])
    for k in range(10):
        train = (folds != k) & (y >= 0)
        scores[folds == k] = 1 / (1 + np.exp(-(x[folds == k] @ fit(x[train], y[train].astype(float)))))
    cv = report("cross-validated by set, 10 folds", scores, y, marked)
    if args.no_write:
        return 0
    weights = fit(x[y >= 0], y[y >= 0].astype(float))
    out = {
        "embedding_model": model_id,
        "shape": list(provenance.SHAPE),
        "place": list(provenance.PLACE),
        "l2": L2,
        "sets": [f.stem for f in files],
        "cross_validation": cv,
        "weights": [round(float(w), 6) for w in weights],
    }
    provenance.WEIGHTS.write_text(json.dumps(out) + "\n", encoding="utf-8")
    print(f"wrote {provenance.WEIGHTS} ({len(weights)} weights, {len(files)} sets)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
