"""What the tests of memory/ share: a model's choice as it answers under the selection schema."""

from __future__ import annotations


def pick(statement=1, type="Decision", about="", replaces="", because=(), rejected=(), confidence=0.9):
    """One choice of the model's under the selection schema (memory/extraction/selection.py)."""
    return {
        "statement": statement,
        "type": type,
        "about": about,
        "replaces": replaces,
        "because": list(because),
        "rejected": list(rejected),
        "confidence": confidence,
    }
