"""The parser's hot modules compiled by mypyc (setup.py `COMPILED`) behave as their .py files do.

The rest of the suite runs the pure-Python modules of the checkout (an editable install never
compiles). Here the same sources are compiled into a copy of the package and the tests of the
compiled modules run again against it, in a fresh process; without mypyc or a C compiler the
build says so and the test skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(1200)

# The tests that exercise the compiled modules: the parser against markdown-it (property tests
# and the help corpora), the resolver, the vault state, lint, fix, the cache and the warm scan.
SUITE = [
    "tests/test_core_parse.py",
    "tests/test_core_line_scan_c.py",
    "tests/test_core_resolve.py",
    "tests/test_core_incremental.py",
    "tests/test_core_lint.py",
    "tests/test_core_fix.py",
    "tests/test_core_cache.py",
    "tests/test_core_graph.py",
    "tests/test_corpus_help.py",
    "tests/test_quick_scan.py",
]


def _compiled_modules() -> list[str]:
    """setup.py's `COMPILED`, read from its text (setup.py runs setup() when imported)."""
    text = (REPO / "setup.py").read_text()
    start = text.index("COMPILED = [")
    block = text[start : text.index("]", start)]
    return [line.strip().strip('",') for line in block.splitlines()[1:] if line.strip()]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    pytest.importorskip("mypyc.build", reason="mypyc (from mypy) is not installed")
    src = tmp_path_factory.mktemp("compiled")
    shutil.copytree(REPO / "palinode_vault", src / "palinode_vault", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, src / name)
    done = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"], cwd=src, capture_output=True, text=True, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    if "stays pure Python" in done.stderr:  # no C compiler, say
        pytest.skip(done.stderr.strip().splitlines()[-1])
    return src


def test_every_listed_module_is_compiled(compiled: Path):
    code = (
        "import importlib, sys; sys.path.insert(0, sys.argv[1]); "
        "[print(importlib.import_module(m).__file__) for m in sys.argv[2:]]"
    )
    modules = [m.removesuffix(".py").replace("/", ".") for m in _compiled_modules()]
    assert modules, "setup.py lists no compiled module"
    run = subprocess.run([sys.executable, "-c", code, str(compiled), *modules], capture_output=True, text=True, cwd=compiled)
    assert run.returncode == 0, run.stderr
    files = run.stdout.split()
    assert len(files) == len(modules)
    for path in files:
        assert path.startswith(str(compiled)) and not path.endswith(".py"), path


def test_the_compiled_modules_pass_their_tests(compiled: Path):
    # The compiled copy first on the path (a .so shadows the .py beside it); the tests, the
    # sample vault and the corpora from the checkout.
    code = (
        "import sys; sys.path.insert(0, sys.argv.pop(1)); import pytest; "
        "import palinode_vault.core.line_scan as m; assert not m.__file__.endswith('.py'), m.__file__; "
        "sys.exit(pytest.main(sys.argv[1:]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(compiled), "-q", "-x", "-p", "no:cacheprovider", *SUITE],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-3000:]
