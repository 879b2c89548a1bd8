"""Shared fixtures for the vault tests: real files in tmp_path, no mocks."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

# Every socket answer is validated against its method's result model (palinode_vault/sidecar/
# results.py), here and in every sidecar a test starts (they inherit the environment).
os.environ["PALINODE_CHECK_RESULTS"] = "1"
# Sidecars started by tests keep to the real calendar, and on PROGRAM.md's consolidation day
# (Sunday) every one of them would start the weekly consolidation and write into the vault its
# test compares (seen on a Sunday's CI run). It is off here; the test of the schedule turns it on.
os.environ["PALINODE_WEEKLY_CONSOLIDATION"] = "0"

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
HELP_CORPUS = SHARED / "corpora" / "obsidian-help-en"
SAMPLE_VAULT = REPO / "sample-vault"
TODAY = dt.date(2026, 12, 1)  # the sample vault's "today"


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        full = root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            full.write_bytes(content)
        else:
            # newline="" so "\r\n" in a test string reaches the disk as written
            with open(full, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[..., Path]:
    """`make_vault({"people/a.md": "...", ...})` writes the files and returns the vault root.

    Calling it again with the same `name` adds or overwrites files in that vault.
    """

    def make(files: dict[str, str | bytes], name: str = "vault") -> Path:
        root = tmp_path / name
        root.mkdir(exist_ok=True)
        _write(root, files)
        return root

    return make


@pytest.fixture
def load_vault() -> Callable[..., object]:
    """`load_vault(root, now=TODAY)` -> a loaded `palinode_vault.vault.Vault`."""
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    def load(root: Path, now: dt.date | None = TODAY, workers: int = 1):
        vault = Vault(Settings(vault=root, now=now, workers=workers))
        vault.load()
        return vault

    return load


def finding_pairs(report_or_findings) -> set[tuple[str, str]]:
    findings = getattr(report_or_findings, "findings", report_or_findings)
    return {(f.check, f.path) for f in findings}


@pytest.fixture
def pairs() -> Callable[..., set[tuple[str, str]]]:
    """`pairs(findings_or_report)` -> {(check, path)}."""
    return finding_pairs


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under root, outside `.palinode/` (what a write would change)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".palinode/"):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def digest() -> Callable[[Path], dict[str, str]]:
    return tree_digest


def copy_corpus(src: Path, dest: Path) -> Path:
    """A writable copy of a vault (the shared corpora are read-only, as a person's own copy is not)."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".palinode"), symlinks=True, copy_function=shutil.copyfile)
    for dirpath, _dirs, _files in os.walk(dest):
        os.chmod(dirpath, 0o755)
    return dest


@pytest.fixture
def help_corpus(tmp_path: Path) -> Path:
    """A copy of ../shared/corpora/obsidian-help-en (skips when ../shared is absent)."""
    if not HELP_CORPUS.is_dir():
        pytest.skip(f"corpus not available: {HELP_CORPUS} (needs the shared folder beside the repo)")
    return copy_corpus(HELP_CORPUS, tmp_path / "obsidian-help-en")


@pytest.fixture
def sample_vault(tmp_path: Path) -> Path:
    """A copy of the repo's sample-vault/."""
    if not SAMPLE_VAULT.is_dir():
        pytest.skip(f"sample vault not found at {SAMPLE_VAULT}")
    dest = tmp_path / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, dest, ignore=shutil.ignore_patterns(".palinode"))
    return dest


@pytest.fixture
def run_cli(monkeypatch):
    """`run_cli("lint", "--vault", p, "--json")` -> click Result (exit_code, stdout, stderr)."""
    from click.testing import CliRunner

    from palinode_vault.cli import main

    monkeypatch.delenv("PALINODE_VAULT", raising=False)

    def run(*args: str | Path):
        import gc

        runner = CliRunner()
        try:
            return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)
        finally:
            gc.enable()  # one-shot vault commands turn the cyclic collector off for their process

    return run


def _models_missing() -> str | None:
    """Why the local models cannot run here (None when llama-cpp-python imports)."""
    try:
        import llama_cpp  # noqa: F401
    except ModuleNotFoundError:
        return "llama-cpp-python is not installed (pip install 'palinode-vault[models]')"
    return None


def pytest_collection_modifyitems(config, items):
    """Tests that need a real model carry `requires_models` (explicitly, or by using the
    `embedder` fixture); where llama.cpp is missing they skip with the reason instead of failing."""
    reason = _models_missing()
    for item in items:
        if "embedder" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.requires_models)
        if reason and item.get_closest_marker("requires_models"):
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def embedder():
    """The default embedding model (MiniLM GGUF) as a person gets it (bulk calls on OpenVINO where
    it is installed, the rest on llama.cpp), loaded once for the session."""
    from palinode_vault.models import Embedder, ModelUnavailable

    try:
        return Embedder()
    except ModelUnavailable as exc:
        pytest.skip(f"the default embedding model is not available: {exc}")


@pytest.fixture(scope="session")
def indexed_sample(tmp_path_factory, embedder) -> Path:
    """sample-vault with its search index built once (copy it before writing)."""
    from palinode_vault.index import open_index, refresh
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    root = tmp_path_factory.mktemp("indexed") / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".palinode"))
    index = open_index(root, embedder=embedder)
    report = refresh(index, Vault(Settings(vault=root)))
    assert report.mode == "hybrid" and report.pending == 0
    index.close()
    return root
