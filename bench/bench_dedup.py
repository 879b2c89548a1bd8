"""Dedup calibration: similarity of drafts that are and are not duplicates of a note, and how
`update.strong_duplicate` splits them (the curve in docs/BENCHMARKS.md).

On a copy of a real vault (default: the help vault), every note is passed back as a draft in
three duplicate forms and one non-duplicate form:

- identical: the note's file as it is;
- body only: without frontmatter and without the machine footer;
- edited: one middle paragraph dropped and a sentence added (a rewrite of the same note);
- other note (non-duplicate): the note's own text with the note itself excluded, so the best
  match is the nearest *other* note: the hardest non-duplicate the vault has.

For each, the similarity of the note (or, for the last, of the best other note) as `dedup`
gives it now, and as the earlier dedup gave it (one vector of the whole draft against the best
chunk of each note).

    .venv/bin/python bench/bench_dedup.py [--corpus DIR] [--notes 173] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "obsidian-help-en"
THRESHOLDS = [0.80, 0.85, 0.88, 0.90, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99]
SENTENCE = "We also wrote down which of these steps took longest the last time."


def edited(text: str) -> str | None:
    """The note with one middle paragraph dropped and one sentence added; None when too short."""
    parts = re.split(r"\n[ \t]*\n", text)
    prose = [i for i, p in enumerate(parts) if len(p) > 80 and not p.lstrip().startswith(("---", "#", "```"))]
    if len(prose) < 3:
        return None
    drop = prose[len(prose) // 2]
    kept = [p for i, p in enumerate(parts) if i != drop]
    return "\n\n".join(kept) + f"\n\n{SENTENCE}\n"


def body_only(text: str) -> str:
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.DOTALL)
    return re.sub(r"<!-- palinode:see-also -->.*?<!-- /palinode:see-also -->\n?", "", text, flags=re.DOTALL)


def old_dedup(index, text: str, exclude: str | None) -> list[tuple[str, float]]:
    """The earlier dedup: one vector of the cleaned draft, each note's best chunk."""
    from palinode_vault.index.chunks import clean_draft
    from palinode_vault.index.hybrid import Filters, vector_hits

    vector = index.model.get().embed(clean_draft(text))
    hits = vector_hits(index, vector, Filters(exclude_paths={exclude} if exclude else set()), [], depth=5)
    return [(h.path, h.similarity or 0.0) for h in hits]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--notes", type=int, default=0, help="a deterministic sample (0: every note)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from palinode_vault.index import dedup, open_index, refresh
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    tmp = Path(tempfile.mkdtemp())
    root = tmp / "vault"
    shutil.copytree(args.corpus, root, ignore=shutil.ignore_patterns(".palinode"))
    v = Vault(Settings(vault=root))
    index = open_index(root)
    started = time.monotonic()
    refresh(index, v)
    print(f"indexed {len(v.state.notes)} notes in {time.monotonic() - started:.1f} s")
    paths = sorted(v.state.notes)
    if args.notes:
        random.Random(7).shuffle(paths)
        paths = sorted(paths[: args.notes])
    kinds = {"identical": [], "body only": [], "edited": [], "other note": []}
    before = {k: [] for k in kinds}
    for path in paths:
        text = (root / path).read_text(encoding="utf-8")
        drafts = {"identical": text, "body only": body_only(text), "edited": edited(text)}
        for kind, draft in drafts.items():
            if draft is None:
                continue
            found = {s.path: s.similarity for s in dedup(index, draft, limit=10)}
            kinds[kind].append(found.get(path, 0.0))
            old = dict(old_dedup(index, draft, None))
            before[kind].append(old.get(path, 0.0))
        other = dedup(index, text, limit=1, exclude_path=path)
        kinds["other note"].append(other[0].similarity if other else 0.0)
        old = old_dedup(index, text, path)
        before["other note"].append(old[0][1] if old else 0.0)
    index.close()
    shutil.rmtree(tmp, ignore_errors=True)

    def row(values: list[float], t: float) -> float:
        return sum(x >= t for x in values) / len(values) if values else float("nan")

    result = {"notes": len(paths), "thresholds": THRESHOLDS, "now": {}, "before": {}}
    for label, data in (("now", kinds), ("before", before)):
        print(f"\n{label}: share of drafts at or above each threshold (duplicates: want 1; other note: want 0)")
        print("| kind | n | min | median | " + " | ".join(f"≥{t:.2f}" for t in THRESHOLDS) + " |")
        print("|---|---:|---:|---:|" + "---:|" * len(THRESHOLDS))
        for kind, values in data.items():
            values = sorted(values)
            median = values[len(values) // 2] if values else float("nan")
            cells = " | ".join(f"{row(values, t):.2f}" for t in THRESHOLDS)
            print(f"| {kind} | {len(values)} | {values[0]:.3f} | {median:.3f} | {cells} |")
            result[label][kind] = {
                "n": len(values),
                "min": values[0],
                "median": median,
                "at_or_above": [round(row(values, t), 4) for t in THRESHOLDS],
            }
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
