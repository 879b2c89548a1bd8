"""The vault in memory: parsed notes, every file, and links resolved, kept current incrementally.

`VaultState` is pure (it is given file lists and parsed notes; it reads nothing). The sidecar
updates it one file at a time; each update returns the notes whose findings may have changed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

from palinode_vault.core.entities import canonical_ref, ref_of_path, slug_of_path, slugify
from palinode_vault.core.note import Link, Note
from palinode_vault.core.resolve import Resolver, path_key
from palinode_vault.kinds import is_memory_path


@dataclass(frozen=True, slots=True)
class Unreadable:
    path: str
    message: str
    line: int = 1


def _link_keys(link: Link) -> tuple[str, str]:
    """Keys under which a link waits for files: its lowercase file name, and its slug.

    (A label link such as [[Alice Smith]] can come to mean alice-smith.md by slug.)
    """
    return _target_keys(link.target)


@lru_cache(maxsize=65536)  # a vault links the same names over and over (NFC and slugs are not free)
def _target_keys(target: str) -> tuple[str, str]:
    name = path_key(target.replace("\\", "/").rsplit("/", 1)[-1])
    name = name[:-3] if name.endswith(".md") else name
    return name, "slug:" + slugify(name)


class VaultState:
    """Notes, files and resolved links of one vault."""

    def __init__(self) -> None:
        self.resolver = Resolver()
        self.notes: dict[str, Note] = {}
        self.unreadable: dict[str, Unreadable] = {}
        self.resolved: dict[str, list[str | None]] = {}  # path -> target per link (parallel)
        self.incoming: dict[str, Counter[str]] = defaultdict(Counter)  # target -> sources
        self._by_link_key: dict[str, set[str]] = defaultdict(set)  # link file name -> sources
        self._refs: dict[str, str] = {}  # entity ref -> file path
        self._stem_index: dict[str, set[str]] = defaultdict(set)  # slugified stem -> note paths
        self._alias_index: dict[str, set[str]] = defaultdict(set)  # lowercase alias -> note paths
        self.entity_resolved: dict[str, list[str]] = {}  # path -> files its entities: name
        self.generation = 0  # bumped on every change
        # bumped only when names change (files added/removed, a title or id edited): the
        # vault-wide indexes lint needs (mentions, duplicate ids) are rebuilt only then
        self.names_generation = 0

    # --- building -----------------------------------------------------------------------

    @classmethod
    def build(cls, files: list[str], notes: dict[str, Note], unreadable: dict[str, Unreadable] | None = None) -> VaultState:
        state = cls()
        for path in files:
            state._add_file(path)
        state.unreadable = dict(unreadable or {})
        for path, note in notes.items():
            state.notes[path] = note
            state._index_note(note)
        for path in notes:
            state._resolve_note(path)
        return state

    def _add_file(self, path: str) -> None:
        self.resolver.add(path)
        ref = ref_of_path(path)
        if ref is not None:
            self._refs.setdefault(ref, path)
        if path.lower().endswith(".md"):
            self._stem_index[slug_of_path(path)].add(path)
            self._stem_index[slugify(path.rsplit("/", 1)[-1][:-3])].add(path)

    def _remove_file(self, path: str) -> None:
        self.resolver.remove(path)
        ref = ref_of_path(path)
        if ref is not None and self._refs.get(ref) == path:
            del self._refs[ref]
            # another file may carry the same ref (e.g. two research files with one slug)
            for other in self.resolver.files():
                if other != path and ref_of_path(other) == ref:
                    self._refs[ref] = other
                    break
        for key in (slug_of_path(path), slugify(path.rsplit("/", 1)[-1][:-3])):
            self._stem_index.get(key, set()).discard(path)

    def _index_note(self, note: Note) -> None:
        for link in note.links:
            for key in _link_keys(link):
                self._by_link_key[key].add(note.path)
        for entry in entity_entries(note):
            self._by_link_key["slug:" + slugify(entry.rsplit("/", 1)[-1])].add(note.path)
        for alias in _aliases(note):
            self._alias_index[alias.lower()].add(note.path)

    def _unindex_note(self, note: Note) -> None:
        for link in note.links:
            for key in _link_keys(link):
                self._by_link_key.get(key, set()).discard(note.path)
        for entry in entity_entries(note):
            self._by_link_key.get("slug:" + slugify(entry.rsplit("/", 1)[-1]), set()).discard(note.path)
        for alias in _aliases(note):
            self._alias_index.get(alias.lower(), set()).discard(note.path)

    def _resolve_note(self, path: str) -> None:
        """Resolve a note's links and entities, keeping `incoming` (backlinks) in step."""
        old = (self.resolved.get(path) or []) + self.entity_resolved.get(path, [])
        for target in old:
            if target is not None:
                self.incoming[target][path] -= 1
                if self.incoming[target][path] <= 0:
                    del self.incoming[target][path]
        note = self.notes.get(path)
        if note is None:
            self.resolved.pop(path, None)
            self.entity_resolved.pop(path, None)
            return
        targets = [self.resolve_link(link, path) for link in note.links]
        self.resolved[path] = targets
        entity_targets = []
        for entry in entity_entries(note):
            ref = canonical_ref(entry)
            target = self._refs.get(ref) if ref else None
            if target is not None and target != path:
                entity_targets.append(target)
        self.entity_resolved[path] = entity_targets
        for target in targets + entity_targets:
            if target is not None:
                self.incoming[target][path] += 1

    def copy(self) -> VaultState:
        """An independent copy, cheap enough to take under a lock (dicts and sets are copied;
        notes, links and resolved lists are shared: they are replaced, never changed in place)."""
        other = VaultState.__new__(VaultState)
        other.resolver = self.resolver.copy()
        other.notes = dict(self.notes)
        other.unreadable = dict(self.unreadable)
        other.resolved = dict(self.resolved)
        other.incoming = defaultdict(Counter, {k: Counter(v) for k, v in self.incoming.items()})
        other._by_link_key = defaultdict(set, {k: set(v) for k, v in self._by_link_key.items()})
        other._refs = dict(self._refs)
        other._stem_index = defaultdict(set, {k: set(v) for k, v in self._stem_index.items()})
        other._alias_index = defaultdict(set, {k: set(v) for k, v in self._alias_index.items()})
        other.entity_resolved = dict(self.entity_resolved)
        other.generation = self.generation
        other.names_generation = self.names_generation
        return other

    # --- queries ------------------------------------------------------------------------

    def resolve_link(self, link: Link, source: str) -> str | None:
        """The file a link points at, Obsidian's way (None when unresolved)."""
        return self.resolver.resolve(link.target, source)

    def entity_path(self, ref: str) -> str | None:
        """The file of a canonical entity ref, if it exists."""
        return self._refs.get(ref)

    def label_target(self, link: Link) -> str | None:
        """For an unresolved link, the one note it plainly means by name or alias, if any.

        `[[Alice Smith]]` means `people/alice-smith.md` (same slug); `[[Al]]` means the note
        whose `aliases:` contain 'Al'. Ambiguous names give None.
        """
        name = link.target.rsplit("/", 1)[-1]
        if name.lower().endswith(".md"):
            name = name[:-3]
        by_slug = self._stem_index.get(slugify(name), set())
        if len(by_slug) == 1:
            return next(iter(by_slug))
        if len(by_slug) > 1:
            return None
        by_alias = self._alias_index.get(link.target.lower(), set())
        if len(by_alias) == 1:
            return next(iter(by_alias))
        return None

    def link_ref(self, link: Link, target: str | None) -> str | None:
        """The entity ref a body link stands for: its resolved file's, or its label's."""
        if target is None and link.kind in ("wiki", "embed"):
            target = self.label_target(link)
        return ref_of_path(target) if target else None

    def memory_paths(self) -> list[str]:
        return [p for p in self.notes if is_memory_path(p)]

    def files(self) -> list[str]:
        return self.resolver.files()

    # --- incremental updates --------------------------------------------------------------

    def upsert_note(self, note: Note) -> set[str]:
        """Add or replace one parsed note. Returns the notes whose findings may have changed."""
        path = note.path
        affected = {path}
        is_new_file = path not in self.resolver
        old = self.notes.get(path)
        if old is not None:
            self._unindex_note(old)
            affected |= self._anchor_dependents(path, old, note)
            affected |= set(t for t in (self.resolved.get(path) or []) if t)
        if is_new_file:
            self._add_file(path)
            affected |= self._rebind(path)
        if old is None or old.title != note.title or _id(old) != _id(note):
            self.names_generation += 1
        self.unreadable.pop(path, None)
        self.notes[path] = note
        self._index_note(note)
        self._resolve_note(path)
        affected |= set(t for t in self.resolved[path] if t)
        self.generation += 1
        return affected & (set(self.notes) | set(self.unreadable))

    def add_file(self, path: str) -> set[str]:
        """A non-note file (attachment) appeared."""
        if path in self.resolver:
            return set()
        self._add_file(path)
        self.generation += 1
        self.names_generation += 1
        return self._rebind(path)

    def mark_unreadable(self, item: Unreadable) -> set[str]:
        affected = self.remove(item.path) if item.path in self.notes else set()
        if item.path not in self.resolver:
            self._add_file(item.path)
            affected |= self._rebind(item.path)
        self.unreadable[item.path] = item
        self.generation += 1
        return affected | {item.path}

    def remove(self, path: str) -> set[str]:
        """A file was deleted. Returns the notes whose findings may have changed."""
        affected: set[str] = set()
        old = self.notes.pop(path, None)
        self.unreadable.pop(path, None)
        if old is not None:
            self._unindex_note(old)
            affected |= set(t for t in (self.resolved.get(path) or []) if t)
            self._resolve_note(path)  # drops its outgoing counts
        affected |= set(self.incoming.get(path, {}))
        if path in self.resolver:
            self._remove_file(path)
            affected |= self._rebind(path)
        self.incoming.pop(path, None)
        self.generation += 1
        self.names_generation += 1
        return (affected - {path}) & set(self.notes)

    def _rebind(self, path: str) -> set[str]:
        """Re-resolve the notes whose links could point at `path` (its name came or went)."""
        name = path_key(path.rsplit("/", 1)[-1])
        stem = name[:-3] if name.endswith(".md") else name
        sources: set[str] = set()
        for key in (name, stem, "slug:" + slugify(stem), "slug:" + slug_of_path(path)):
            sources |= self._by_link_key.get(key, set())
        sources &= set(self.notes)
        for source in sources:
            self._resolve_note(source)
        return sources

    def _anchor_dependents(self, path: str, old: Note, new: Note) -> set[str]:
        """Notes linking into `path` need rechecking when its headings or block ids change."""
        if old.headings == new.headings and old.block_ids == new.block_ids and old.title == new.title:
            return set()
        return set(self.incoming.get(path, {}))


def entity_entries(note: Note) -> list[str]:
    """The `entities:` list as written (strings only)."""
    raw = (note.frontmatter or {}).get("entities") or []
    if isinstance(raw, str):
        raw = [raw]
    elif not isinstance(raw, list):
        return []  # `entities: 7` or a mapping names no note (fix reports it and leaves it)
    return [str(e) for e in raw if e is not None]


def _id(note: Note) -> object:
    return (note.frontmatter or {}).get("id")


def _aliases(note: Note) -> list[str]:
    data = note.frontmatter or {}
    aliases = data.get("aliases") or []
    if isinstance(aliases, str):
        aliases = [aliases]
    return [str(a) for a in aliases if a is not None and str(a).strip()]
