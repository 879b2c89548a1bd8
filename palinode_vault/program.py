"""Finding and reading PROGRAM.md: the vault's own copy wins, else the one shipped with us."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from palinode_vault.core.program import ProgramSettings

SHIPPED = Path(__file__).with_name("PROGRAM.md")


@dataclass(frozen=True)
class Program:
    path: Path
    text: str
    settings: ProgramSettings


def program_path(vault: Path) -> Path:
    own = vault / "PROGRAM.md"
    return own if own.is_file() else SHIPPED


_LOADED: dict[Path, tuple[tuple[int, int], Program]] = {}


def load_program(vault: Path) -> Program:
    """PROGRAM.md as it is now: checked before every pass, so edits apply without a restart.

    The file is parsed again only when its size or modification time changed.
    """
    path = program_path(vault)
    st = path.stat()
    key = (st.st_size, st.st_mtime_ns)
    hit = _LOADED.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    from palinode_vault.core.program import parse_program  # pydantic and YAML: not for `program_path`

    text = path.read_text(encoding="utf-8")
    program = Program(path, text, parse_program(text, str(path)))
    _LOADED[path] = (key, program)
    return program
