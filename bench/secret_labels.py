#!/usr/bin/env python3
"""How the redaction layers do on every set's labelled secrets, before any model sees a word.

    python bench/secret_labels.py                       # every set in extraction-eval/
    python bench/secret_labels.py test60.json --list

Runs `secrets.redact_conversation` (the provider rules, the value rules and the credential net,
with the conversation as context) over each transcript and counts the labelled secrets (`secret`)
no longer in the redacted text, and the conversations without a labelled secret where something
was withheld (false alarms). The later layers (a sentence about credentials is never a memory's
words, the last check on what is written) are not counted here: `bench_extract.py` measures the
whole pass. No model is loaded.
"""

from __future__ import annotations

import json

from pasted_labels import chosen_sets  # bench/, beside this script

from palinode_vault.memory.extraction.secrets import redact_conversation
from palinode_vault.memory.extraction.transcript import parse_transcript


def main(argv: list[str] | None = None) -> int:
    files, listed, _ = chosen_sets(__doc__, "print the secrets kept and the false alarms", argv)
    caught = secrets = alarms = clean = 0
    kept: list[str] = []
    alarmed: list[str] = []
    for path in files:
        for case in json.loads(path.read_text(encoding="utf-8")):
            turns = [(t.role, t.content) for t in parse_transcript(case["transcript"])]
            out = redact_conversation(turns)
            if case.get("secret"):
                secrets += 1
                if case["secret"] in "\n".join(text for text, _ in out):
                    kept.append(case["id"])
                else:
                    caught += 1
            else:
                clean += 1
                if any(kinds for _, kinds in out):
                    alarms += 1
                    alarmed.append(case["id"])
    print(f"secrets withheld {caught} of {secrets}; conversations without one where something was withheld {alarms} of {clean}")
    if listed:
        print("kept:", " ".join(kept))
        print("false alarms:", " ".join(alarmed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
