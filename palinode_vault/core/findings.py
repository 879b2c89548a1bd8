"""Lint check names, their severities and the Finding record: the one table of checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ERROR, WARNING, INFO = "error", "warning", "info"

# name -> (default severity, what the check is about)
CHECKS: dict[str, tuple[str, str]] = {
    "unreadable": (ERROR, "a note that cannot be read as text (binary, invalid UTF-8, too large)"),
    "invalid_frontmatter": (ERROR, "frontmatter YAML that does not parse; the file is never rewritten"),
    "missing_frontmatter": (ERROR, "a memory-tier file without frontmatter"),
    "schema": (ERROR, "a memory file that fails its PROGRAM.md schema"),
    "duplicate_id": (ERROR, "two memory files with the same id"),
    "superseded_not_archived": (ERROR, "superseded_by is set but status is not archived"),
    "wiki_drift": (WARNING, "entities: and body [[wikilinks]] disagree"),
    "unresolvable_label": (WARNING, "a label link Obsidian cannot resolve, e.g. [[Alice Smith]]"),
    "broken_link": (WARNING, "a link whose target does not exist"),
    "broken_anchor": (WARNING, "a link to a heading or ^block that does not exist"),
    "footer_stale": (WARNING, "the auto-generated See also footer does not match entities:"),
    "cross_refs_stale": (INFO, "cross_refs: does not match what the body mentions"),
    "inbox_stale": (WARNING, "an inbox item waiting for review longer than PROGRAM.md allows"),
    "stale": (INFO, "a memory not updated for longer than PROGRAM.md allows"),
    "core_review": (INFO, "core: true on something that has gone quiet"),
    "orphan": (INFO, "a note with no links in or out"),
}


@dataclass(slots=True)
class Finding:
    check: str
    path: str
    line: int
    message: str
    severity: str = ""
    column: int = 1
    target: str | None = None  # the link text as written, for link findings
    fixable: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.check not in CHECKS:
            raise ValueError(f"unknown check {self.check!r}")
        if not self.severity:
            self.severity = CHECKS[self.check][0]

    def __reduce__(self):
        # A whole vault's report is cached pickled; a tuple of fields unpickles far faster than
        # the generated state of a slots dataclass.
        return (
            Finding,
            (self.check, self.path, self.line, self.message, self.severity, self.column, self.target, self.fixable, self.extra),
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        extra = data.pop("extra")
        if data["target"] is None:
            del data["target"]
        data.update(extra)
        return data

    def location(self) -> str:
        return f"{self.path}:{self.line}"
