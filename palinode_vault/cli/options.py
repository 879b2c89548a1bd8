"""Options shared by every command."""

from __future__ import annotations

import os
from pathlib import Path

import click


def _default_vault() -> str:
    return os.environ.get("PALINODE_VAULT") or os.getcwd()


def vault_option(func):
    """`--vault PATH`: defaults to $PALINODE_VAULT, then the current folder."""
    return click.option(
        "--vault",
        "vault",
        type=click.Path(file_okay=False, path_type=Path),
        default=_default_vault,
        show_default="$PALINODE_VAULT or the current folder",
        help="The Obsidian vault to work on.",
    )(func)


def resolve_vault(vault: Path) -> Path:
    """The vault folder as an absolute path, or a clear error."""
    path = Path(vault).expanduser()
    if not path.is_dir():
        raise click.ClickException(f"vault folder not found: {vault}")
    return path.resolve()
