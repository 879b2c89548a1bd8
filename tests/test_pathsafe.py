"""Vault-relative path validation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from palinode_vault.pathsafe import PathOutsideVault, vault_path, vault_relative


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "alice.md").write_text("# Alice\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("secret\n")
    return root


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("people/alice.md", "people/alice.md"),
        ("./people//alice.md", "people/alice.md"),
        ("people/../people/alice.md", "people/alice.md"),
        ("people/", "people"),
        ("new folder/new note.md", "new folder/new note.md"),  # need not exist
        ("Ünïcode/Café.md", "Ünïcode/Café.md"),
    ],
)
def test_accepts_and_normalises(vault: Path, given: str, expected: str):
    assert vault_relative(vault, given) == expected


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("../outside/secret.md", "leaves the vault"),
        ("people/../../outside/secret.md", "leaves the vault"),
        ("..", "leaves the vault"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/win.ini", "absolute"),
        ("people\\alice.md", "backslash"),
        ("people/alice.md\x00.png", "NUL"),
        ("", "vault root"),
        (".", "vault root"),
        ("people/..", "vault root"),
    ],
)
def test_refuses(vault: Path, given: str, reason: str):
    with pytest.raises(PathOutsideVault, match=reason) as refused:
        vault_relative(vault, given)
    assert refused.value.path == given


def test_refuses_non_string(vault: Path):
    with pytest.raises(PathOutsideVault, match="expected a string"):
        vault_relative(vault, 5)  # type: ignore[arg-type]


def test_root_allowed_on_request(vault: Path):
    assert vault_relative(vault, ".", allow_root=True) == ""
    assert vault_path(vault, "", allow_root=True) == vault


def test_symlink_out_of_vault_refused(vault: Path, tmp_path: Path):
    os.symlink(tmp_path / "outside" / "secret.md", vault / "people" / "leak.md")
    os.symlink(tmp_path / "outside", vault / "linked")
    with pytest.raises(PathOutsideVault, match="symlink"):
        vault_relative(vault, "people/leak.md")
    with pytest.raises(PathOutsideVault, match="symlink"):
        vault_relative(vault, "linked/secret.md")
    with pytest.raises(PathOutsideVault, match="symlink"):
        vault_relative(vault, "linked/not-yet-written.md")  # a new file through the link


def test_symlink_inside_vault_accepted_under_its_own_name(vault: Path):
    os.symlink(vault / "people", vault / "team")
    assert vault_relative(vault, "team/alice.md") == "team/alice.md"


def test_vault_itself_behind_a_symlink(vault: Path, tmp_path: Path):
    link = tmp_path / "vault-link"
    os.symlink(vault, link)
    assert vault_relative(link, "people/alice.md") == "people/alice.md"
    assert vault_path(link, "people/alice.md") == link / "people" / "alice.md"
