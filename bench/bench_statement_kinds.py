"""Experiment: can the default model judge one statement at a time (what kind of memory, or none)?

The extraction pass asks SmolLM2 for whole memories from a whole conversation and gets little
that is right on independent sets. A smaller question might suit a 135M model better: for each
statement of the person's, "which memory type is this, or none?", under a one-field JSON schema.
Labels come from an extraction set: a statement holding one of an expected memory's keywords is
that memory's type, every other statement of the person's is "none". The wording cues (cues.py)
answer the same question for comparison.

    python bench/bench_statement_kinds.py heldout2.json [more sets]
"""

from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from palinode_vault.memory.extraction.cues import type_by_wording
from palinode_vault.memory.extraction.numbered import number_statements
from palinode_vault.memory.extraction.selection import condense, memory_types, program_sections
from palinode_vault.memory.extraction.transcript import parse_transcript
from palinode_vault.models import get_generator
from palinode_vault.program import load_program


def main(sets: list[str]) -> None:
    program = load_program(ROOT / "sample-vault")
    types = memory_types(program)
    prose = condense(program_sections(program.text, ("What to remember",)))[:3000]
    system = (
        prose + '\n\nYou sort one statement a person made. Answer with JSON {"kind": ...}: the memory type it '
        f'is ({", ".join(types)}), or "none" when a future session would not need it (small talk, questions, '
        "passing context, troubleshooting)."
    )
    schema = {"type": "object", "properties": {"kind": {"type": "string", "enum": types + ["none"]}}, "required": ["kind"]}
    gen = get_generator("smollm2", n_ctx=4096)
    rows = []
    started = time.monotonic()
    for name in sets:
        for case in json.loads((ROOT / "bench" / "extraction-eval" / name).read_text()):
            for s in [x.text for x in number_statements(parse_transcript(case["transcript"]))]:
                label = next((e["type"] for e in case["expected"] if any(k.lower() in s.lower() for k in e["keywords"])), "none")
                answer, _ = gen.generate_json(system, f"Statement: {s}", schema, 16)
                rows.append((label, (answer or {}).get("kind", "?"), type_by_wording(s, types) or "none"))
    print("command: python " + " ".join(sys.argv))
    print(f"{len(rows)} statements, {time.monotonic() - started:.0f} s")
    memories = sum(1 for r in rows if r[0] != "none")
    for name, i in (("model", 1), ("cues", 2)):
        kept = sum(1 for r in rows if r[0] != "none" and r[i] != "none")
        wrong = sum(1 for r in rows if r[0] == "none" and r[i] != "none")
        typed = sum(1 for r in rows if r[0] != "none" and r[i] == r[0])
        print(
            f"{name}: {kept}/{memories} memories kept, {wrong}/{len(rows) - memories} other statements kept, "
            f"right type {typed}/{memories}"
        )
    print("model's answers:", dict(collections.Counter(r[1] for r in rows)))


if __name__ == "__main__":
    main(sys.argv[1:] or ["heldout2.json"])
