#!/usr/bin/env python3
"""Would a fitted score tell the person's lines from brought-in ones better than the shapes do?

    python bench/provenance_fit.py                 # cross-validated by set, 10 folds
    python bench/provenance_fit.py --held test58   # trained on every other set, judged on one
    python bench/provenance_fit.py --held test61+test62   # two sets judged together

The brought-in shapes of `pasted.py` (a paragraph of lines after the first, the line under a colon,
a question or a line left open) decide by shape alone, and a person's own list and a pasted one
can have the same shape. This script measures the alternative: a logistic regression over each
line's shape (and those of the lines around it), where it stands in its message, the shapes'
own mark, and three MiniLM embeddings (the line, its paragraph's mean, the line above).

Lines are those of the person's turns that the sure marks (fences, quotes, chats, mail, letters,
hidden text, labels) leave, over every set of `extraction-eval/`. A line is labelled **pasted**
when its words lie inside a labelled pasted passage (or hold one of three words or more), **own**
when it holds an expected keyword, and is left unlabelled otherwise. The table gives, for the
shapes and for the score at each threshold, the pasted lines marked and the own lines marked (an
own line marked is a memory the model never sees). Embedding the ~6,800 lines takes about 40 s
with the default model; the numbers of docs/BENCHMARKS.md (session 30) come from this script.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from palinode_vault.core.prose import list_item
from palinode_vault.memory.extraction import pasted as P
from palinode_vault.memory.extraction.transcript import USER, parse_transcript

SETS = Path(__file__).resolve().parent / "extraction-eval"
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def surely_marked(text: str) -> list[str]:
    """The message's lines after the sure marks, before the brought-in shapes."""
    shapes = P._without_brought_in
    P._without_brought_in = lambda lines, announced=False: lines
    try:
        return P.own_words(text).split("\n")
    finally:
        P._without_brought_in = shapes


def shape(line: str) -> list[float]:
    s = line.strip()
    n = len(s) or 1
    end, start = s[-1:], s[:1]
    flags = (
        end == ":", end == "?", end == ".", end.isalnum(), end in ",;", end in ")]\"'”",
        start.isupper(), start.isdigit(), start.islower(), not start.isalnum(),
        list_item(line), P._speaker(line) is not None,
        s.count("|") >= 2, "@" in s, "http" in s, s.startswith("#"), line[:1] in " \t", P.PASTED in s,
    )  # fmt: skip
    counts = (
        min(len(s), 300) / 100,
        min(len(s.split()), 60) / 20,
        sum(c.isdigit() for c in s) / n,
        sum(c.isupper() for c in s) / n,
    )
    return [*counts, *map(float, flags)]


BLANK = [0.0] * len(shape("x"))


def lines_of(files: list[Path]) -> list[dict]:
    """Every line the brought-in shapes judge, with its features, the shapes' mark and its label."""
    rows: list[dict] = []
    for path in files:
        for case in json.loads(path.read_text(encoding="utf-8")):
            turns = [(t.role, t.content) for t in parse_transcript(case["transcript"])]
            passages = [words(p) for p in case.get("pasted") or [] if words(p)]
            keywords = [words(k) for e in case.get("expected") or [] for k in e["keywords"] if words(k)]
            seen: list[str] = []
            for k, (role, text) in enumerate(turns):
                if role != USER:
                    seen.append(text)
                    continue
                announced = k > 0 and turns[k - 1][0] == USER and P.announces(seen[-1])
                lines = surely_marked(text)
                marks = P.brought_in(lines, announced)
                seen.append("\n".join(P._without_brought_in(lines, announced)))
                paragraph = at = 0
                for i, line in enumerate(lines):
                    if not line.strip():
                        paragraph, at = paragraph + (at > 0), 0
                        continue
                    at += 1
                    if line.strip() == P.PASTED:
                        continue
                    above = lines[i - 1] if i and lines[i - 1].strip() else ""
                    below = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].strip() else ""
                    said = words(line)
                    label = None
                    if len(said.split()) >= 2 and any(said in p or len(p.split()) >= 3 and p in said for p in passages):
                        label = 1
                    elif any(kw in said for kw in keywords):
                        label = 0
                    where = (
                        paragraph == 0,
                        min(paragraph, 5) / 5,
                        at == 1,
                        min(at, 10) / 10,
                        announced,
                        k == 0,
                        bool(above),
                        bool(below),
                        marks[i],
                    )
                    feats = (
                        shape(line)
                        + (shape(above) if above else BLANK)
                        + (shape(below) if below else BLANK)
                        + [float(x) for x in where]
                    )
                    rows.append(
                        {
                            "set": path.stem,
                            "key": (case["id"], k),
                            "i": i,
                            "line": line.strip(),
                            "label": label,
                            "mark": marks[i],
                            "feats": feats,
                        }
                    )
    return rows


def embeddings(rows: list[dict]) -> np.ndarray:
    """Each line's MiniLM embedding, its paragraph's mean and the one of the line above it."""
    from palinode_vault.models.embedder import Embedder

    embedder = Embedder()
    try:
        vectors = np.array(
            [v for i in range(0, len(rows), 256) for v in embedder.embed_many([r["line"] for r in rows[i : i + 256]])]
        )
    finally:
        embedder.close()
    paragraph, above = np.zeros_like(vectors), np.zeros_like(vectors)
    last = None
    for n, row in enumerate(rows):
        follows = n > 0 and rows[n - 1]["key"] == row["key"] and rows[n - 1]["i"] == row["i"] - 1
        if not follows:
            start = n
            above[n] = vectors[last] if last is not None and rows[last]["key"] == row["key"] else 0.0
        else:
            above[n] = vectors[n - 1]
        end = n + 1
        while end < len(rows) and rows[end]["key"] == row["key"] and rows[end]["i"] == rows[end - 1]["i"] + 1:
            end += 1
        paragraph[n] = vectors[start:end].mean(axis=0)
        last = n
    return np.hstack([vectors, paragraph, above])


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000, rate: float = 0.5) -> np.ndarray:
    """Logistic regression by gradient descent, the two labels weighted to count alike."""
    weight = np.where(y == 1, (y == 0).sum() / max((y == 1).sum(), 1), 1.0)
    b = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ b)))
        b -= rate * (x.T @ (weight * (p - y)) + penalty * b) / weight.sum()
    return b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--held", nargs="*", default=[], help="set names (a+b: judged together) judged by a score trained on the others"
    )
    args = ap.parse_args(argv)
    rows = lines_of(sorted(SETS.glob("*.json")))
    x = np.hstack([np.array([r["feats"] for r in rows]), embeddings(rows), np.ones((len(rows), 1))])
    y = np.array([-1 if r["label"] is None else r["label"] for r in rows])
    marked = np.array([r["mark"] for r in rows])
    sets = np.array([r["set"] for r in rows])
    if args.held:
        folds = [np.isin(sets, names.split("+")) for names in args.held]
    else:
        names = sorted(set(sets))
        fold_of = {name: n % 10 for n, name in enumerate(names)}
        folds = [np.array([fold_of[s] == k for s in sets]) for k in range(10)]
    scores = np.full(len(rows), np.nan)
    for held in folds:
        train = ~held & (y >= 0)
        scores[held] = 1 / (1 + np.exp(-(x[held] @ fit(x[train], y[train].astype(float)))))
        if args.held:
            report(f"held out {' + '.join(sorted(set(sets[held])))}", scores[held], y[held], marked[held])
    if not args.held:
        report("cross-validated by set, 10 folds", scores, y, marked)
    return 0


def report(title: str, p: np.ndarray, y: np.ndarray, marked: np.ndarray) -> None:
    pasted, own, other = y == 1, y == 0, y < 0
    print(f"{title}: {pasted.sum()} pasted lines, {own.sum()} own lines, {other.sum()} unlabelled")
    print(
        f"  shapes:      pasted marked {(marked & pasted).sum():4}  own marked {(marked & own).sum():4}  unlabelled marked {(marked & other).sum():4}"
    )
    for th in THRESHOLDS:
        m = p >= th
        print(
            f"  score >= {th}: pasted marked {(m & pasted).sum():4}  own marked {(m & own).sum():4}  unlabelled marked {(m & other).sum():4}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
