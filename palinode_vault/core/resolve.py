"""Link resolution the way Obsidian does it, over an in-memory list of vault files.

Obsidian matches case-insensitively. A link path that names a file exactly (vault path, with or
without `.md`) wins; otherwise every file whose path ends with the link path is a candidate, and
the one in the linking note's folder wins, then the shortest path. A link path without an
extension means a markdown note; other files need their extension. Aliases are not targets.
Markdown links may also be relative to the linking note (`../people/x.md`).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict

# Obsidian compares heading anchors after turning this punctuation into spaces.
_HEADING_PUNCT = re.compile(r"[!\"#$%&()*+,.:;<=>?@^`{|}~/\[\]\\]")


def heading_key(heading: str) -> str:
    """The form in which a heading and a `#Heading` link are compared."""
    return " ".join(_HEADING_PUNCT.sub(" ", heading).lower().split())


def anchor_exists(subpath: str, headings: list[tuple[int, str, int]], block_ids: frozenset[str]) -> bool:
    """Whether `#subpath` names a heading (the last of a `#A#B` chain) or a `^block` of a note."""
    if subpath.startswith("^"):
        return subpath[1:].lower() in block_ids
    wanted = heading_key(subpath.split("#")[-1])
    return not wanted or any(heading_key(text) == wanted for _, text, _ in headings)


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


class Resolver:
    """Resolves link paths against a set of vault-relative file paths (all files, not only notes)."""

    def __init__(self, files: set[str] | list[str] = ()):  # type: ignore[assignment]
        self._by_lower: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in files:
            self.add(path)

    def add(self, path: str) -> None:
        lower = path.lower()
        if lower in self._by_lower:
            return
        self._by_lower[lower] = path
        self._by_name[lower.rsplit("/", 1)[-1]].append(path)

    def remove(self, path: str) -> None:
        lower = path.lower()
        if self._by_lower.pop(lower, None) is None:
            return
        name = lower.rsplit("/", 1)[-1]
        bucket = self._by_name.get(name, [])
        self._by_name[name] = [p for p in bucket if p.lower() != lower]
        if not self._by_name[name]:
            del self._by_name[name]

    def __contains__(self, path: str) -> bool:
        return path.lower() in self._by_lower

    def files(self) -> list[str]:
        return list(self._by_lower.values())

    def exact(self, path: str) -> str | None:
        """The stored spelling of a vault path, matched case-insensitively."""
        return self._by_lower.get(path.lower())

    def resolve(self, linkpath: str, source: str, *, markdown_link: bool = False) -> str | None:
        """The file a link path points at from note `source`, or None when unresolved."""
        linkpath = linkpath.strip()
        if not linkpath:
            return source  # [[#Heading]] points into the same note
        if markdown_link and (linkpath.startswith("./") or linkpath.startswith("../")):
            rel = posixpath.normpath(posixpath.join(_folder(source), linkpath))
            if not rel.startswith(".."):
                found = self._exact_or_md(rel)
                if found:
                    return found
        linkpath = linkpath.lstrip("/")
        if not linkpath:
            return None
        found = self._exact_or_md(linkpath)
        if found:
            return found
        lower = linkpath.lower()
        name = lower.rsplit("/", 1)[-1]
        candidates = [(p, lower) for p in self._by_name.get(name, ())]
        candidates += [(p, lower + ".md") for p in self._by_name.get(name + ".md", ())]
        matches = []
        for path, wanted in candidates:
            pl = path.lower()
            if pl == wanted or pl.endswith("/" + wanted):
                matches.append(path)
        if not matches:
            return None
        if len(matches) == 1:
            return matches[0]
        folder = _folder(source).lower()
        return min(
            matches,
            key=lambda p: (_folder(p).lower() != folder, p.count("/"), len(p), p.lower()),
        )

    def _exact_or_md(self, path: str) -> str | None:
        lower = path.lower()
        return self._by_lower.get(lower) or self._by_lower.get(lower + ".md")
