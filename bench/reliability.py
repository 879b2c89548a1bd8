#!/usr/bin/env python3
"""Run every reliability test: crash safety, concurrent writers, bad input, fuzzing, socket
security, secrets and prompt injection, load (docs/RELIABILITY.md).

    .venv/bin/python bench/reliability.py            # quick variants (also part of the normal suite)
    .venv/bin/python bench/reliability.py --long     # 10,000-note vault, 55 kill -9 rounds, a one-minute
                                                     # autosave writer, 1,000-file burst, minutes of fuzzing,
                                                     # a real-model extraction
    .venv/bin/python bench/reliability.py -k socket  # extra arguments go to pytest

Exit status is pytest's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="the long variants (an hour or more on two cores)")
    parser.add_argument(
        "--fuzz-seconds",
        type=int,
        default=None,
        help="seconds per atheris target, from a random seed (default: quick runs 20,000 inputs from a fixed seed; --long 300 s)",
    )
    args, rest = parser.parse_known_args()
    env = dict(os.environ)
    tests = sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").glob("test_reliability_*.py")) + ["tests/fuzz"]
    cmd = [sys.executable, "-m", "pytest", *tests, "-p", "no:cacheprovider", "-rs"]
    if args.long:
        env["PALINODE_RELIABILITY_LONG"] = "1"
        env.setdefault("PALINODE_FUZZ_SECONDS", str(args.fuzz_seconds or 300))
        env.setdefault("PALINODE_FUZZ_EXAMPLES", "5000")
        cmd += ["-m", "slow or not slow", "-s", "--timeout", "14400"]
    elif args.fuzz_seconds:
        env["PALINODE_FUZZ_SECONDS"] = str(args.fuzz_seconds)
    return subprocess.call(cmd + rest, cwd=REPO, env=env)


if __name__ == "__main__":
    sys.exit(main())
