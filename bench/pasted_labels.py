#!/usr/bin/env python3
"""How the pasted-text shapes do on every set's labels: pasted passages marked, expected keywords lost.

    python bench/pasted_labels.py                       # every set in extraction-eval/
    python bench/pasted_labels.py test58.json test59.json --list
    python bench/pasted_labels.py --score                # with the provenance score, as a pass reads

Reads each conversation the way extraction does (`own_turns` over the parsed transcript) and
counts, over the person's turns only:

- a labelled pasted passage (`pasted`) as **marked** when its words are gone from the person's
  turns as `own_turns` leaves them;
- an expected keyword as **lost** when its words were in the person's turns and are gone.

Words are compared lower-cased, as runs of letters and digits, so punctuation and the `[pasted
text]` mark do not matter. A shape is worth having when it marks more without losing more; the
numbers of docs/BENCHMARKS.md (sessions 28 and 29) come from this script. `--list` prints the
passages left unmarked and the keywords lost. No model is loaded: it takes a few seconds.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from palinode_vault.memory.extraction.pasted import own_turns
from palinode_vault.memory.extraction.transcript import USER, parse_transcript

SETS = Path(__file__).resolve().parent / "extraction-eval"


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def measure(files: list[Path], read=None) -> dict:
    marked = passages = lost = keywords = 0
    unmarked: list[tuple[str, str]] = []
    gone: list[tuple[str, str]] = []
    for path in files:
        for case in json.loads(path.read_text(encoding="utf-8")):
            turns = [(t.role, t.content) for t in parse_transcript(case["transcript"])]
            before = words(" ".join(text for role, text in turns if role == USER))
            after = words(" ".join(own for (role, _), own in zip(turns, own_turns(turns, read)) if role == USER))
            for piece in case.get("pasted") or []:
                passages += 1
                if words(piece) and words(piece) in after:
                    unmarked.append((case["id"], piece))
                else:
                    marked += 1
            for expected in case.get("expected") or []:
                for keyword in expected["keywords"]:
                    keywords += 1
                    if words(keyword) and words(keyword) in before and words(keyword) not in after:
                        lost += 1
                        gone.append((case["id"], keyword))
    return {"marked": marked, "passages": passages, "lost": lost, "keywords": keywords, "unmarked": unmarked, "gone": gone}


def chosen_sets(doc: str, list_help: str, argv: list[str] | None, score: bool = False) -> tuple[list[Path], bool, bool]:
    """The set files named on the command line (all of extraction-eval/ when none), `--list`, and
    (`score`: where the script offers it) `--score`: the arguments of this script and of
    secret_labels.py."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("sets", nargs="*", help="set files in bench/extraction-eval/ (default: all)")
    ap.add_argument("--list", action="store_true", help=list_help)
    if score:
        ap.add_argument("--score", action="store_true", help="read pasted text with the provenance score (loads MiniLM)")
    args = ap.parse_args(argv)
    files = [SETS / name for name in args.sets] if args.sets else sorted(SETS.glob("*.json"))
    return files, args.list, bool(getattr(args, "score", False))


def main(argv: list[str] | None = None) -> int:
    files, listed, scored = chosen_sets(__doc__, "print the passages left unmarked and the keywords lost", argv, score=True)
    read = None
    if scored:  # the provenance score at the shipped PROGRAM.md's pasted_judged, as a pass reads
        from train_judge import sample_names  # this script's folder is on the path

        from palinode_vault.memory.extraction.extract import pasted_reader
        from palinode_vault.program import SHIPPED, load_program

        read, how = pasted_reader(load_program(SHIPPED.parent).settings.extraction.pasted_judged, None, sample_names())
        print(f"pasted text read {how}")
    r = measure(files, read)
    print(
        f"pasted passages marked {r['marked']:,} of {r['passages']:,}; expected keywords lost {r['lost']:,} of {r['keywords']:,}"
    )
    if listed:
        for case_id, piece in r["unmarked"]:
            print(f"unmarked  {case_id}  {piece}")
        for case_id, keyword in r["gone"]:
            print(f"lost      {case_id}  {keyword}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
