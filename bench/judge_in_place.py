#!/usr/bin/env python3
"""The statement judge in a sentence's place against the same sentence alone, set by set.

    python bench/judge_in_place.py test42 test43 [--at 0.6]

For each conversation, the person's statements as the extraction pass numbers them (secrets out,
pasted text out) are rated twice: by `judge_statements`, as the pass rates them (where each was
said: its place on its line and in its turn, the line's embedding), and by `Judge.rate` on the
sentence alone. Printed per set: of each expected memory's likeliest sentence (the most of its
keywords), how many reach `--at` each way; and of the sentences holding none of the case's
keywords, how many reach it each way. Repeats are skipped. Only a set the judge was not trained
on says how the place generalises (bench/README.md lists the training sets).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVAL = HERE / "extraction-eval"


def main(argv: list[str] | None = None) -> None:
    from train_judge import sample_names  # this script's folder is on the path

    from palinode_vault.memory.extraction.extract import cleaned_turns, judge_statements
    from palinode_vault.memory.extraction.judge import judge_embedder, load_judge
    from palinode_vault.memory.extraction.numbered import number_statements
    from palinode_vault.memory.extraction.transcript import parse_transcript
    from palinode_vault.program import load_program

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sets", nargs="+")
    p.add_argument("--at", type=float, default=0.6, help="the rating counted (PROGRAM.md review_judged)")
    args = p.parse_args(argv)
    program = load_program(HERE.parent / "sample-vault")
    judge, _ = load_judge()
    assert judge is not None, "no judge weights"
    embed_many, _ = judge_embedder(judge.model_id)
    types = ["Decision", "ProjectSnapshot", "Insight", "PersonMemory", "ResearchRef", "ActionItem"]
    print("set\tmemories in place\talone\tof\tothers in place\talone\tof")
    for name in args.sets:
        mem_place = mem_alone = mem_of = other_place = other_alone = other_of = 0
        for case in json.loads((EVAL / f"{name.removesuffix('.json')}.json").read_text()):
            if case.get("repeat"):
                continue
            clean, _, _ = cleaned_turns(
                parse_transcript(case["transcript"]), program.settings.extraction.pasted_judged, None, sample_names()
            )
            statements = number_statements(clean)
            if not statements:
                continue
            in_place, _ = judge_statements(statements, clean, program, None)
            assert in_place is not None, "the judge is off in PROGRAM.md"
            alone = judge.rate([s.text for s in statements], embed_many, types)
            lowered = [s.text.lower() for s in statements]
            keywords = [k.lower() for e in case["expected"] for k in e["keywords"]]
            for expected in case["expected"]:
                kws = [k.lower() for k in expected["keywords"]]
                said = [sum(k in text for k in kws) for text in lowered]
                best = max(range(len(statements)), key=said.__getitem__)
                if said[best]:
                    mem_of += 1
                    mem_place += in_place[statements[best].number].memory >= args.at
                    mem_alone += alone[best].memory >= args.at
            for i, text in enumerate(lowered):
                if not any(k in text for k in keywords):
                    other_of += 1
                    other_place += in_place[statements[i].number].memory >= args.at
                    other_alone += alone[i].memory >= args.at
        print(f"{name}\t{mem_place}\t{mem_alone}\t{mem_of}\t{other_place}\t{other_alone}\t{other_of}")


if __name__ == "__main__":
    main()
