#!/usr/bin/env python3
"""`parse_note` over every note of a vault, in one process: the least CPU of 7 passes.

    python bench/parse_loop.py VAULT                      # this checkout's code
    PYTHONPATH=/tmp/wt-before python bench/parse_loop.py VAULT   # another tree's, side by side

The texts are read beforehand and the collector is off, so the number is the parser's alone: what
a cold `scan` spends parsing, without its forks, cache or lint (docs/BENCHMARKS.md, issue 18).
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path


def main(root: Path, passes: int = 7) -> float:
    from palinode_vault.core.note import parse_note
    from palinode_vault.files import walk_with_problems
    from palinode_vault.vault import NoteText, read_note_text

    paths = [f.path for f in walk_with_problems(root)[0] if f.path.endswith(".md")]
    texts = [(p, r) for p in paths if isinstance(r := read_note_text(root, p, 10**8), NoteText)]
    gc.disable()
    best = float("inf")
    for _ in range(passes):
        start = time.process_time()
        for path, read in texts:
            parse_note(path, read.text, read.text_hash)
        best = min(best, time.process_time() - start)
    return best


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(f"{main(Path(sys.argv[1])):.3f}")
