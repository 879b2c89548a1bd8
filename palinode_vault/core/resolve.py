"""Link resolution the way Obsidian does it, over an in-memory list of vault files.

Obsidian's `getFirstLinkpathDest` (docs/ARCHITECTURE.md "Links the Obsidian way"), for every
link kind alike (wikilinks, embeds, markdown links, property links):

- an empty path is the linking note itself;
- `./x` and `../x` resolve against the linking note's folder, then need an exact vault path;
- a leading `/` is stripped and the rest needs an exact vault path (no suffix fallback);
- otherwise an exact vault path wins, then the files with the link's file name whose path ends
  with the link path (a plain string suffix, no `/` boundary): first those whose path starts
  with the linking note's folder (so its subfolders count), then all others; within a group the
  shortest path in characters.

Matching is case-insensitive and on NFC-normalised paths (macOS stores names decomposed). A link
path without an extension means a markdown note; other files need their extension. Aliases and
titles are not targets.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections import defaultdict
from functools import lru_cache

# Obsidian's stripHeading: this punctuation becomes spaces, whitespace collapses, case is ignored.
_HEADING_PUNCT = re.compile(r"[!\"#$%&()*+,.:;<=>?@^`{|}~/\[\]\\]")


@lru_cache(maxsize=1 << 16)  # every link to a heading compares it with the note's headings
def heading_key(heading: str) -> str:
    """The form in which a heading and a `#Heading` link are compared."""
    return " ".join(_HEADING_PUNCT.sub(" ", heading).lower().split())


_KEYS_MAX = 1 << 16
_keys_of_text: dict[str, frozenset[str]] = {}  # a note's text hash -> its headings' keys


def anchor_exists(subpath: str, headings: list[tuple[int, str, int]], block_ids: frozenset[str], text_hash: str = "") -> bool:
    """Whether `#subpath` names a heading chain or a `^block` of a note.

    In `#A#B` each heading must come after the one before it and be deeper (Obsidian's
    resolveSubpath); `#^id` compares lower-cased. `text_hash`: the note's (`Note.text_hash`),
    to look one heading up among its headings' keys, computed once per note text (a vault
    links the same notes' headings many times: 14,532 times on the help vault).
    """
    if subpath.startswith("^"):
        return subpath[1:].lower() in block_ids
    if text_hash and "#" not in subpath:  # one heading: any heading of the note (every level is deeper than none)
        keys = _keys_of_text.get(text_hash)
        if keys is None:
            if len(_keys_of_text) >= _KEYS_MAX:
                _keys_of_text.clear()
            keys = _keys_of_text[text_hash] = frozenset(heading_key(h[1]) for h in headings)
        key = heading_key(subpath)
        return not key or key in keys
    wanted = [k for k in (heading_key(part) for part in subpath.split("#")) if k]
    at, level = 0, 0
    for key in wanted:
        while at < len(headings) and not (headings[at][0] > level and heading_key(headings[at][1]) == key):
            at += 1
        if at == len(headings):
            return False
        level = headings[at][0]
        at += 1
    return True


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def path_key(path: str) -> str:
    """How paths are compared: NFC, lower-case."""
    if not path.isascii():
        path = unicodedata.normalize("NFC", path)
    return path.lower()


class Resolver:
    """Resolves link paths against a set of vault-relative file paths (all files, not only notes)."""

    def __init__(self, files: set[str] | list[str] = ()):  # type: ignore[assignment]
        self._by_lower: dict[str, str] = {}
        self._by_name: dict[str, list[tuple[str, str]]] = defaultdict(list)  # name -> [(key, path)]
        # (link path, linking note's folder) -> result: a vault links the same targets from the
        # same folders over and over. Forgotten whenever a file comes or goes.
        self._memo: dict[tuple[str, str], str | None] = {}
        # link path -> result, for the paths whose result no folder changes (an exact path, a
        # rooted path, one candidate or none): most links, asked from many folders. Forgotten
        # with `_memo`.
        self._anywhere: dict[str, str | None] = {}
        # link path key -> its candidates, shortest path first (rule 4's order within a group);
        # shared by every folder that links it. Forgotten with `_memo`.
        self._ranked: dict[str, list[tuple[str, str]]] = {}
        for path in files:
            self.add(path)

    def add(self, path: str) -> None:
        lower = path_key(path)
        if lower in self._by_lower:
            return
        self._forget()
        self._by_lower[lower] = path
        self._by_name[lower.rsplit("/", 1)[-1]].append((lower, path))

    def remove(self, path: str) -> None:
        lower = path_key(path)
        if self._by_lower.pop(lower, None) is None:
            return
        self._forget()
        name = lower.rsplit("/", 1)[-1]
        bucket = self._by_name.get(name, [])
        self._by_name[name] = [(k, p) for k, p in bucket if k != lower]
        if not self._by_name[name]:
            del self._by_name[name]

    def _forget(self) -> None:
        self._memo.clear()
        self._anywhere.clear()
        self._ranked.clear()

    def copy(self) -> Resolver:
        other = Resolver()
        other._by_lower = dict(self._by_lower)
        other._by_name = defaultdict(list, {k: list(v) for k, v in self._by_name.items()})
        return other

    def __contains__(self, path: str) -> bool:
        return path_key(path) in self._by_lower

    def files(self) -> list[str]:
        return list(self._by_lower.values())

    def exact(self, path: str) -> str | None:
        """The stored spelling of a vault path, matched case-insensitively."""
        return self._by_lower.get(path_key(path))

    def resolve(self, linkpath: str, source: str) -> str | None:
        """The file a link path points at from note `source`, or None when unresolved."""
        linkpath = linkpath.strip()
        if not linkpath:
            return source  # [[#Heading]] points into the same note
        try:
            return self._anywhere[linkpath]
        except KeyError:
            pass
        folder = _folder(source)
        try:
            return self._memo[(linkpath, folder)]
        except KeyError:
            pass
        found, anywhere = self._resolve(linkpath, folder)
        if anywhere:
            self._anywhere[linkpath] = found
        else:
            self._memo[(linkpath, folder)] = found
        return found

    def _resolve(self, linkpath: str, folder: str) -> tuple[str | None, bool]:
        """`resolve` for a non-empty link path from a note in `folder` (it depends on nothing
        else), and whether the answer is the same from every folder."""
        if linkpath.startswith(("./", "../")):
            rel = posixpath.normpath(posixpath.join(folder, linkpath))
            return (None if rel == ".." or rel.startswith("../") else self._exact_or_md(rel)), False
        if linkpath.startswith("/"):
            rooted = linkpath.lstrip("/")
            return (self._exact_or_md(rooted) if rooted else None), True
        found = self._exact_or_md(linkpath)
        if found:
            return found, True
        lower = path_key(linkpath)
        ranked = self._ranked.get(lower)
        if ranked is None:
            name = lower.rsplit("/", 1)[-1]
            matches = [(k, p) for k, p in self._by_name.get(name, ()) if k.endswith(lower)]
            matches += [(k, p) for k, p in self._by_name.get(name + ".md", ()) if k.endswith(lower + ".md")]
            ranked = self._ranked[lower] = sorted(matches, key=lambda kp: (len(kp[1]), kp[0], kp[1]))
        if len(ranked) <= 1:
            return (ranked[0][1] if ranked else None), True
        for _, path in ranked:  # the linking note's folder first, shortest first within it
            if path.startswith(folder):
                return path, False
        return ranked[0][1], False

    def link_path(self, target: str, source: str) -> str:
        """The shortest link path that resolves to `target` from note `source`.

        The file name alone when it lands there, else the shortest tail of the path that does
        (`people/alice-smith`), else the whole vault path. Notes lose their `.md`.
        """
        bare = target[:-3] if target.lower().endswith(".md") else target
        parts = bare.split("/")
        for i in range(len(parts) - 1, -1, -1):
            candidate = "/".join(parts[i:])
            if self.resolve(candidate, source) == target:
                return candidate
        return bare

    def _exact_or_md(self, path: str) -> str | None:
        lower = path_key(path)
        return self._by_lower.get(lower) or self._by_lower.get(lower + ".md")
