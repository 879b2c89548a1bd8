"""What a step of the weekly consolidation gets: the pass it runs in (PROGRAM.md "Consolidation").

The steps (patterns.py, improve.py, mentions.py) run inside `consolidate.Consolidation` but must
not import it (it imports them). They see it through this protocol: the vault and the workspace
the pass writes through, PROGRAM.md and its settings, the pass's dates, its operation log, and
the few helpers they share. mypy checks that `Consolidation` provides all of it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any, Protocol

from palinode_vault.core.note import Note
from palinode_vault.core.program import ProgramSettings
from palinode_vault.memory.update.workspace import Workspace
from palinode_vault.program import Program
from palinode_vault.vault import Vault


class WeeklyPass(Protocol):
    vault: Vault
    ws: Workspace  # every write of the pass, committed as one journaled run
    program: Program
    s: ProgramSettings  # program.settings
    today: dt.date
    now: dt.datetime
    source: str  # the pass's name in the operation log
    ops: list[dict[str, Any]]  # the operations so far: {"op", "path", "reason"}

    def op(self, op: str, path: str | None, reason: str, type_name: str | None = None) -> None:
        """Record an operation (and log it)."""
        ...

    def notes_in(self, folder: str) -> Iterator[tuple[str, Note]]:
        """The notes directly in `folder`, by path."""
        ...

    def writable(self, path: str) -> bool:
        """Whether the note's frontmatter parses (a note that does not is never rewritten)."""
        ...

    def setting(self, section: str, key: str) -> Any:
        """A PROGRAM.md setting older copies may lack: None, logged once as a SKIP, when absent."""
        ...

    def embedder_or_none(self) -> Any:
        """The embedding model, or None (logged once as a SKIP, with why)."""
        ...
