"""The CLI never says success when it did nothing: bad paths and read-only vaults give one clear
line and a non-zero exit, never a traceback. Real files; the read-only vault is really read-only
(as root, the command runs as an unprivileged user, since root ignores write permissions)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_cli_vault import CLEAN, WITH_ERROR

BIN = Path(sys.executable).with_name("palinode-vault")


@pytest.mark.parametrize("command", ["lint", "fix"])
def test_a_missing_path_is_an_error(make_vault, run_cli, command):
    root = make_vault(CLEAN)
    result = run_cli(command, "--vault", root, "people/nobody.md")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: {command}: people/nobody.md: no such file or folder (in {Path.cwd()} or the vault {root})"
    ]
    assert "findings" not in result.stdout + result.stderr and "written" not in result.stderr


@pytest.mark.parametrize("command", ["lint", "fix"])
def test_a_file_that_is_not_a_vault_note_is_an_error(make_vault, run_cli, command, tmp_path):
    root = make_vault({**CLEAN, "attachments/photo.txt": "not a note\n"})
    outside = tmp_path / "elsewhere.md"
    outside.write_text("[[x]]\n")
    result = run_cli(command, "--vault", root, "attachments/photo.txt")
    assert result.exit_code == 1
    assert "attachments/photo.txt is not a note palinode-vault reads (not a Markdown note)" in result.stderr
    result = run_cli(command, "--vault", root, outside)
    assert result.exit_code == 1
    assert f"{outside} is not inside the vault {root}" in result.stderr
    (root / ".hidden").mkdir()
    (root / ".hidden" / "n.md").write_text("x\n")
    result = run_cli(command, "--vault", root, ".hidden/n.md")
    assert result.exit_code == 1 and "excluded or hidden" in result.stderr


def test_paths_may_be_folders_or_absolute(make_vault, run_cli):
    root = make_vault(WITH_ERROR)
    by_folder = run_cli("lint", "--vault", root, "--json", "people")
    assert by_folder.exit_code == 1  # people/bare.md has an error
    import json

    paths = {f["path"] for f in json.loads(by_folder.stdout)["findings"]}
    assert paths == {"people/bare.md"}
    absolute = run_cli("lint", "--vault", root, "--json", root / "daily" / "2026-11-30.md")
    assert {f["path"] for f in json.loads(absolute.stdout)["findings"]} == {"daily/2026-11-30.md"}


def _read_only_vault() -> Path:
    """A copy of a small vault nobody but root may write to, in a folder everyone may read."""
    base = Path(tempfile.mkdtemp(prefix="palinode-ro-"))
    base.chmod(0o755)
    root = base / "vault"
    for rel, text in CLEAN.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.replace("cross_refs: [project/checkout]", "cross_refs: []"))
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)
    return root


def _run_unprivileged(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot make a folder read-only for the command")
        prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    env = {k: v for k, v in os.environ.items() if k != "PALINODE_VAULT"}
    env["HOME"] = str(cwd)
    return subprocess.run([*prefix, str(BIN), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.fixture
def read_only_vault():
    root = _read_only_vault()
    yield root
    for dirpath, _dirnames, _filenames in os.walk(root.parent):
        os.chmod(dirpath, stat.S_IRWXU)
    shutil.rmtree(root.parent, ignore_errors=True)


@pytest.mark.parametrize(
    "args,expect",
    [
        (("fix",), "is read-only"),
        (("plugin", "install"), "is read-only"),
        (("init", "--obsidian"), "is read-only"),
    ],
)
def test_a_read_only_vault_gets_a_sentence_not_a_traceback(read_only_vault, args, expect):
    before = {p: p.read_bytes() for p in read_only_vault.rglob("*") if p.is_file()}
    done = _run_unprivileged(*args, "--vault", str(read_only_vault), cwd=read_only_vault.parent)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: cannot write to ") and expect in lines[0], done.stderr
    assert {p: p.read_bytes() for p in read_only_vault.rglob("*") if p.is_file()} == before


def test_lint_and_scan_still_work_on_a_read_only_vault(read_only_vault):
    for args in (("lint",), ("scan",), ("fix", "--dry-run")):
        done = _run_unprivileged(*args, "--vault", str(read_only_vault), cwd=read_only_vault.parent)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
