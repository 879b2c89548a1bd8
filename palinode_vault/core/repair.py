"""Repair candidates for a broken link, by name: file names, titles and aliases.

The local-model index adds meaning to this ranking (see `palinode_vault.index`); names alone
already find typos (`[[mira-okonkow]]`) and renamed notes.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process

from palinode_vault.core.entities import slugify
from palinode_vault.core.vault_state import VaultState


@dataclass(frozen=True)
class Candidate:
    path: str
    score: float  # 0..1
    why: str


def name_candidates(state: VaultState, target: str, limit: int = 5) -> list[Candidate]:
    """Notes whose file name, title or aliases look like the link text, best first."""
    name = target.split("#", 1)[0].split("|", 1)[0].rsplit("/", 1)[-1]
    if name.lower().endswith(".md"):
        name = name[:-3]
    wanted = slugify(name)
    if not wanted:
        return []
    choices: dict[str, tuple[str, str]] = {}  # key text -> (path, what it is)
    for path, note in state.notes.items():
        stem = path.rsplit("/", 1)[-1][:-3]
        choices.setdefault(f"{slugify(stem)}\x00{path}", (path, f"file name '{stem}'"))
        if note.title and note.title != stem:
            choices.setdefault(f"{slugify(note.title)}\x00{path}#t", (path, f"title '{note.title}'"))
        for alias in (note.frontmatter or {}).get("aliases") or []:
            if isinstance(alias, str) and alias.strip():
                choices.setdefault(f"{slugify(alias)}\x00{path}#a{alias}", (path, f"alias '{alias}'"))
    keys = list(choices)
    texts = [k.split("\x00", 1)[0] for k in keys]
    best: dict[str, Candidate] = {}
    for _, score, idx in process.extract(wanted, texts, scorer=fuzz.ratio, limit=limit * 4):
        path, what = choices[keys[idx]]
        cand = Candidate(path, round(score / 100.0, 3), f"{what} is {score:.0f}% similar to '{name}'")
        if path not in best or best[path].score < cand.score:
            best[path] = cand
    ranked = sorted(best.values(), key=lambda c: (-c.score, c.path))
    return [c for c in ranked if c.score >= 0.5][:limit]
