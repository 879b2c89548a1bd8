"""Canonical entity refs (`kind/slug`) and how they map to files (PROGRAM.md "Canonicalization")."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from palinode_vault.kinds import BY_FOLDER, BY_NAME, kind_of_path

_DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}-")
_NON_SLUG = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=65536)
def slugify(text: str) -> str:
    """Lowercase, hyphens not spaces: 'Alice Smith' -> 'alice-smith', 'alice_smith' -> 'alice-smith'."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return _NON_SLUG.sub("-", text.lower()).strip("-")


def split_ref(ref: str) -> tuple[str | None, str]:
    """'person/alice-smith' -> ('person', 'alice-smith'); 'alice' -> (None, 'alice')."""
    kind, sep, slug = ref.strip().partition("/")
    if not sep:
        return None, kind
    return kind, slug


@lru_cache(maxsize=65536)
def canonical_ref(ref: str) -> str | None:
    """The canonical form of an entity ref, or None when its kind is not one of ours.

    'Person/Alice Smith' -> 'person/alice-smith'. A ref without a kind has no canonical form
    on its own (the caller may infer the kind from a file).
    """
    kind, slug = split_ref(ref)
    if kind is None:
        return None
    kind = slugify(kind)
    if kind in BY_FOLDER:  # 'people/alice' -> 'person/alice'
        kind = BY_FOLDER[kind].name
    if kind not in BY_NAME:
        return None
    slug = slugify(slug)
    return f"{kind}/{slug}" if slug else None


@lru_cache(maxsize=65536)
def slug_of_path(path: str) -> str:
    """The entity slug of a file: its name without `.md`, and without a research file's date."""
    name = path.rsplit("/", 1)[-1]
    if name.lower().endswith(".md"):
        name = name[:-3]
    kind = kind_of_path(path)
    if kind is not None and kind.dated_files:
        name = _DATE_PREFIX.sub("", name)
    return slugify(name)


@lru_cache(maxsize=65536)
def ref_of_path(path: str) -> str | None:
    """'people/alice-smith.md' -> 'person/alice-smith'; None outside the entity folders.

    Only files directly in a kind's folder are entities (`people/archive/x.md` is not).
    """
    if not path.lower().endswith(".md") or path.count("/") != 1:
        return None
    kind = kind_of_path(path)
    if kind is None or kind.name == "daily":
        return None
    return f"{kind.name}/{slug_of_path(path)}"


def expected_id(path: str) -> str | None:
    """The `id` PROGRAM.md gives a memory file: '{kind}-{slug}'."""
    ref = ref_of_path(path)
    return ref.replace("/", "-", 1) if ref else None


def is_linkable_kind(ref: str) -> bool:
    """Kinds whose body links must agree with `entities:` (daily notes are evidence, not entities)."""
    kind, _ = split_ref(ref)
    return kind in BY_NAME and kind != "daily"


def entity_refs(frontmatter: dict | None) -> list[str]:
    """The refs `entities:` lists, as written: a lone string is one ref; items that are not
    strings (numbers, nulls, mappings) and a value that is no list are skipped, never turned into
    text (`str(None)` would read as a ref to "None"). `odd_entities_value` says why."""
    value = (frontmatter or {}).get("entities")
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


def odd_entities_value(frontmatter: dict | None) -> str | None:
    """Why `entities:` must be left as written (a value that is not a ref or a list of refs,
    e.g. `{a: 1}`, `7`, `[1, null, true]`), or None when it is a plain ref list (or absent)."""
    value = (frontmatter or {}).get("entities")
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return None
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:59] + "…"
    return f"entities: holds {shown}, not a list of refs like [person/ana]; left as written (fix it by hand)"
