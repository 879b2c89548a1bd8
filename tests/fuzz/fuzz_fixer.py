"""atheris: the fixer (no crash, bytes outside spans kept, idempotent). Run: .venv/bin/python tests/fuzz/fuzz_fixer.py -max_total_time=60"""

import sys

import atheris

with atheris.instrument_imports():
    import targets


def test_one(data: bytes) -> None:
    targets.check_fixer(targets.SEEDS[0] + targets.text_from(data))


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()
