"""The numbers of PROGRAM.md, read from its one ```yaml palinode-settings``` block.

PROGRAM.md is the control plane: the thresholds live there and only there. This module parses
the block into a typed object; it has no defaults of its own on purpose.
"""

from __future__ import annotations

import re
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

_BLOCK = re.compile(r"^```+[ \t]*yaml[ \t]+palinode-settings[ \t]*\n(.*?)^```+[ \t]*$", re.MULTILINE | re.DOTALL)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="allow")


class Extraction(_Strict):
    max_items_per_pass: int
    max_items_per_type: int
    confidence_threshold: float
    uncertain_type: str
    # A PROGRAM.md older than review of unoffered statements has no key: they are only logged (SKIP).
    review_unoffered: float | None = Field(None, ge=0.0, le=1.0)
    # Without the key the model's own confidence stands for every item.
    unmarked_confidence: float | None = Field(None, ge=0.0, le=1.0)
    # Without the key the statement judge proposes nothing: only plain wording counts.
    review_judged: float | None = Field(None, ge=0.0, le=1.0)
    # The most items one pass leaves waiting in inbox/, whoever proposed them.
    review_per_pass: int = Field(2, ge=0, le=20)
    # Without the key the judge never files on its own word: only a verified proposal is filed.
    file_judged: float | None = Field(None, ge=0.0, le=1.0)
    # Without the key the brought-in shapes alone say which lines of the person's were pasted.
    pasted_judged: float | None = Field(None, ge=0.0, le=1.0)


class Update(_Strict):
    strong_duplicate: float
    same_fact: float
    related: float
    # A PROGRAM.md older than the statement comparison has none of these: its update flow keeps
    # the whole-note similarity and the novelty share that was built in (0.34).
    novelty_new: float = Field(0.34, ge=0.0, le=1.0)
    statement_notes: int | None = Field(None, ge=1)
    statement_window: int | None = Field(None, ge=1)
    statement_related: float | None = Field(None, ge=-1.0, le=1.0)
    statement_same: float | None = Field(None, ge=-1.0, le=1.0)
    statement_novelty: float | None = Field(None, ge=0.0, le=1.0)
    # Coverage at which a decision the judge's word would file waits instead, asking whether it
    # replaces the active decision it is that close to (none: it is filed as before).
    statement_near: float | None = Field(None, ge=-1.0, le=1.0)
    # Dedup similarity to an active decision at which such a decision waits and asks too, whatever
    # its coverage (a replacement said in new words covers few of the old one's statements).
    decision_near: float | None = Field(None, ge=-1.0, le=1.0)

    @property
    def by_statement(self) -> bool:
        """Whether the settings block has every number the statement comparison needs."""
        return None not in (
            self.statement_notes,
            self.statement_window,
            self.statement_related,
            self.statement_same,
            self.statement_novelty,
        )


class Pruning(_Strict):
    stale_days: int
    inbox_days: int


class Core(_Strict):
    quiet_days: int
    max_chars: int
    review_every_days: int


class Consolidation(_Strict):
    weekday: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    window_days: int
    pattern_min_mentions: int


class SelfImprovement(_Strict):
    schema_gap_min: int


class Search(_Strict):
    # A PROGRAM.md older than weighted fusion has no `fusion` key and describes rrf: it keeps rrf.
    fusion: Literal["weighted", "rrf"] = "rrf"
    vector_weight: float | None = Field(None, ge=0.0, le=1.0)
    rrf_k: int
    daily_penalty: float
    exclude_status: list[str]

    @model_validator(mode="after")
    def _weight_for_weighted(self) -> Search:
        if self.fusion == "weighted" and self.vector_weight is None:
            raise ValueError("fusion: weighted needs vector_weight (0..1, the share of meaning)")
        return self


class Agent(_Strict):
    max_content_chars: int = Field(ge=100)


class ProgramSettings(_Strict):
    extraction: Extraction
    update: Update
    pruning: Pruning
    core: Core
    consolidation: Consolidation
    self_improvement: SelfImprovement
    search: Search
    # A PROGRAM.md older than the MCP server has no `agent:` section: ops.py keeps its own limit.
    agent: Agent | None = None


class ProgramError(ValueError):
    """PROGRAM.md has no usable settings block; the message says where and what to do."""


def parse_program(text: str, source: str = "PROGRAM.md") -> ProgramSettings:
    """The settings block of a PROGRAM.md text."""
    blocks = _BLOCK.findall(text)
    if len(blocks) != 1:
        raise ProgramError(f"{source}: expected exactly one ```yaml palinode-settings block, found {len(blocks)}")
    line = text[: text.find(blocks[0])].count("\n") + 1
    try:
        data = yaml.safe_load(blocks[0])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = line + (mark.line if mark else 0)
        raise ProgramError(f"{source}:{at}: the palinode-settings block does not parse: {exc}") from exc
    try:
        return ProgramSettings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ProgramError(f"{source}:{line}: palinode-settings '{where}': {first['msg']}") from exc
