"""Mechanical `cross_refs:`: which other memory files a note's body mentions (PROGRAM.md).

A mention is a whole-token match of another memory's `category/slug` ref, of its slug when
the slug is distinctive, or of its title when the title is distinctive. Distinctive means at
least two words (or one word of 8+ characters) and owned by exactly one memory file.
"""

from __future__ import annotations

from collections import defaultdict

from palinode_vault.core.entities import ref_of_path, slug_of_path
from palinode_vault.core.note import Note, tokens

MAX_KEY_TOKENS = 8


def _distinctive(toks: tuple[str, ...]) -> bool:
    return len(toks) >= 2 or (len(toks) == 1 and len(toks[0]) >= 8 and not toks[0].isdigit())


class MentionIndex:
    """Token sequences that name memory files, for matching against note bodies."""

    def __init__(self, notes: dict[str, Note]):
        owners: dict[tuple[str, ...], set[str]] = defaultdict(set)
        explicit: dict[tuple[str, ...], str] = {}
        for path, note in notes.items():
            ref = ref_of_path(path)
            if ref is None:
                continue
            kind, _ = ref.split("/", 1)
            slug_toks = tuple(tokens(slug_of_path(path)))
            if slug_toks:
                explicit[(kind, *slug_toks)[:MAX_KEY_TOKENS]] = ref
                if _distinctive(slug_toks):
                    owners[slug_toks[:MAX_KEY_TOKENS]].add(ref)
            title_toks = tuple(tokens(note.title))
            if _distinctive(title_toks) and len(title_toks) <= MAX_KEY_TOKENS:
                owners[title_toks].add(ref)
        keys: dict[tuple[str, ...], str] = {k: next(iter(v)) for k, v in owners.items() if len(v) == 1}
        keys.update(explicit)
        # One-word keys are found by a set intersection. Longer keys are indexed by their first
        # two tokens; a note is searched (in C) only for the first tokens it contains, and each
        # place one occurs gives the pair to look up, so few Python steps run per note.
        self.singles: dict[str, str] = {}
        self.by_pair: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for key, ref in keys.items():
            if len(key) == 1:
                self.singles[key[0]] = ref
            else:
                self.by_pair[(key[0], key[1])].append((" " + " ".join(key) + " ", ref))
        self.firsts = frozenset(first for first, _ in self.by_pair)

    def mentions(self, text: str) -> set[str]:
        """Refs of the memory files whose names appear in `text` (space-separated tokens)."""
        present = set(text.split())
        found = {self.singles[t] for t in self.singles.keys() & present}
        firsts = self.firsts & present
        if not firsts:
            return found
        padded = " " + text + " "
        for first in firsts:
            needle = " " + first + " "
            at = padded.find(needle)
            while at != -1:
                start = at + len(needle)
                second = padded[start : padded.find(" ", start)]
                for phrase, ref in self.by_pair.get((first, second), ()):
                    if ref not in found and padded.startswith(phrase, at):
                        found.add(ref)
                at = padded.find(needle, start - 1)
        return found


def compute(note: Note, index: MentionIndex) -> list[str]:
    # mention_text is already lowercase tokens joined by spaces (see note.parse_note)
    """The sorted cross_refs a memory note should carry (never itself)."""
    own = ref_of_path(note.path)
    return sorted(r for r in index.mentions(note.mention_text) if r != own)
