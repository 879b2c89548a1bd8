"""Settings: built once at each entry point (CLI command, sidecar) and passed down."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pydantic import BaseModel, Field

from palinode_vault.files import MAX_NOTE_BYTES


class Settings(BaseModel):
    vault: Path
    now: dt.date | None = None  # "today" for date-based checks; None means the real today
    max_note_bytes: int = Field(default=MAX_NOTE_BYTES, ge=1024)  # larger notes are findings
    workers: int = Field(default=2, ge=1)  # processes for a cold parse of many notes
    quiet_seconds: float = Field(default=3.0, ge=0)  # sidecar: leave a file alone this long after a change
    auto_fix_footer: bool = True  # sidecar: keep See also footers current automatically
    auto_fix_cross_refs: bool = True  # sidecar: keep cross_refs current automatically
    embedding_model: str | None = None  # a GGUF path; None = the default from PyPI
    generation_model: str | None = None

    def today(self) -> dt.date:
        return self.now or dt.date.today()
