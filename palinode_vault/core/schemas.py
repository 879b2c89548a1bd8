"""The five memory schemas of PROGRAM.md as pydantic models.

`category` says which schema a file follows; `type:` (the schema's name) is optional and, where
present, only has to agree. They validate what a memory file must carry; extra keys (the
person's, or Palinode's `summary`, `canonical_question`, provenance...) are allowed and kept.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

DateLike = dt.datetime | dt.date | str


def _date_ok(value: Any) -> Any:
    if value is None or isinstance(value, (dt.date, dt.datetime)):
        return value
    text = str(value).strip()
    try:
        dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"'{text}' is not a date (use YYYY-MM-DD or an ISO timestamp)") from exc
    return value


class Memory(BaseModel):
    """Keys every memory file carries."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    category: str
    type: Any = None  # optional: category decides the schema (lint warns on disagreement)
    entities: list[str] = Field(default_factory=list)
    last_updated: DateLike | None = None
    core: bool = False
    status: str | None = None

    @field_validator("entities", mode="before")
    @classmethod
    def _entities_list(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str) or not isinstance(value, list):  # `entities: 7` is not iterable
            raise ValueError("entities must be a list, e.g. [person/alice-smith]")
        return [str(v) for v in value]

    @field_validator("last_updated", mode="before")
    @classmethod
    def _dates(cls, value: Any) -> Any:
        return _date_ok(value)


class PersonMemory(Memory):
    category: Literal["person"]
    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    role: str | None = None
    last_contact: DateLike | None = None

    @field_validator("last_contact", mode="before")
    @classmethod
    def _contact(cls, value: Any) -> Any:
        return _date_ok(value)


class ProjectSnapshot(Memory):
    category: Literal["project"]
    name: str = Field(min_length=1)
    # "review": an inbox item waiting for the person (PROGRAM.md "Confidence")
    status: Literal["active", "paused", "completed", "archived", "review"] = "active"


class Decision(Memory):
    category: Literal["decision"]
    status: Literal["active", "archived", "review"] = "active"  # review: inbox items only
    supersedes: list[str] = Field(default_factory=list)
    superseded_by: str | None = ""
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    created: DateLike | None = None


class Insight(Memory):
    category: Literal["insight"]
    recurrence_count: int = Field(default=1, ge=1)
    evidence_refs: list[str] = Field(default_factory=list)


class ResearchRef(Memory):
    category: Literal["research"]
    source_url: str | None = None
    source_file: str | None = None
    date: DateLike | None = None
    tags: list[str] = Field(default_factory=list)


SCHEMAS: dict[str, type[Memory]] = {m.__name__: m for m in (PersonMemory, ProjectSnapshot, Decision, Insight, ResearchRef)}


def schema_of_category(category: object) -> str | None:
    """The schema a memory file follows, by its `category` ('person' -> 'PersonMemory')."""
    from palinode_vault.kinds import BY_NAME

    kind = BY_NAME.get(category) if isinstance(category, str) else None
    return kind.schema if kind is not None else None


def validate_memory(data: dict[str, Any], schema_name: str) -> list[str]:
    """Problems with a memory file's frontmatter against its schema, as readable sentences."""
    model = SCHEMAS[schema_name]
    try:
        model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "frontmatter"
            if err["type"] == "missing":
                problems.append(f"missing required key '{where}'")
            else:
                got = err.get("input")
                problems.append(f"'{where}': {err['msg']} (got {got!r})")
        return problems
    return []
