"""Finding and reading PROGRAM.md: the vault's own copy wins, else the one shipped with us."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from palinode_vault.core.program import ProgramSettings, parse_program

SHIPPED = Path(__file__).with_name("PROGRAM.md")


@dataclass(frozen=True)
class Program:
    path: Path
    text: str
    settings: ProgramSettings


def program_path(vault: Path) -> Path:
    own = vault / "PROGRAM.md"
    return own if own.is_file() else SHIPPED


def load_program(vault: Path) -> Program:
    """Read PROGRAM.md afresh (it is read before every pass, so edits apply without a restart)."""
    path = program_path(vault)
    text = path.read_text(encoding="utf-8")
    return Program(path, text, parse_program(text, str(path)))
