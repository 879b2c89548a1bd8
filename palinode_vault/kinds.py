"""The one table of kinds, folders and tiers (PROGRAM.md "Schemas" and "File tiers").

Everything that needs to know which folder holds which kind of memory imports it from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str  # canonical kind in entity refs: person, project, ...
    folder: str  # vault folder that holds its files
    memory: bool  # True: memory tier (needs id and category); False: structural
    schema: str | None  # pydantic model name in core.schemas, if any
    dated_files: bool = False  # research files are named {date}-{slug}.md


KINDS: tuple[Kind, ...] = (
    Kind("person", "people", True, "PersonMemory"),
    Kind("project", "projects", True, "ProjectSnapshot"),
    Kind("decision", "decisions", True, "Decision"),
    Kind("insight", "insights", True, "Insight"),
    Kind("research", "research", True, "ResearchRef", dated_files=True),
    Kind("daily", "daily", False, None),
)

BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
BY_FOLDER: dict[str, Kind] = {k.folder: k for k in KINDS}
# Schema name -> kind name ('PersonMemory' -> 'person').
TYPE_KIND: dict[str, str] = {k.schema: k.name for k in KINDS if k.schema}
# The memory types a memory can be filed as, in the table's order ('PersonMemory', ... 'ResearchRef').
MEMORY_TYPES: tuple[str, ...] = tuple(TYPE_KIND)

# inbox/ is memory tier (one remembered thing per file, awaiting review) but not an entity kind.
INBOX_FOLDER = "inbox"
MEMORY_FOLDERS: frozenset[str] = frozenset([k.folder for k in KINDS if k.memory] + [INBOX_FOLDER])
# Named structural folders; any other folder and every top-level file is structural too.
STRUCTURAL_FOLDERS: frozenset[str] = frozenset(["daily", "archive", "logs", "prompts", "specs"])

# Dot-folders that are never part of the vault's notes.
IGNORED_DIRS: frozenset[str] = frozenset([".palinode", ".obsidian", ".trash", ".git"])

# `type:` is optional: `category` decides the schema (Palinode's own files carry no type)
REQUIRED_MEMORY_KEYS: tuple[str, ...] = ("id", "category")


def top_folder(path: str) -> str:
    """First path segment of a vault-relative path ('' for top-level files)."""
    head, sep, _ = path.partition("/")
    return head if sep else ""


def is_memory_path(path: str) -> bool:
    """True when a vault-relative markdown path is in the memory tier."""
    return path.endswith(".md") and top_folder(path) in MEMORY_FOLDERS


def kind_of_path(path: str) -> Kind | None:
    """The entity kind a vault-relative path belongs to, by its top folder."""
    return BY_FOLDER.get(top_folder(path))


def memory_type(frontmatter: dict) -> str | None:
    """The schema a memory file follows ('Insight', ...). `category` decides; a `type:` is only
    read where there is no usable category (Palinode's own files carry no `type:`)."""
    category = frontmatter.get("category")
    kind = BY_NAME.get(category) if isinstance(category, str) else None
    if kind is not None and kind.schema:
        return kind.schema
    written = frontmatter.get("type")
    return written if isinstance(written, str) and written in TYPE_KIND else None


def type_named(name: str) -> str | None:
    """The memory type a person named, ignoring case: 'decision' -> 'Decision', and a kind's name
    for its type ('person' -> 'PersonMemory'); None when `name` is neither."""
    wanted = name.strip().lower()
    for kind in KINDS:
        if kind.schema and wanted in (kind.schema.lower(), kind.name):
            return kind.schema
    return None
