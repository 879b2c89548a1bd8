"""The one error the model layer raises to callers."""

from __future__ import annotations


class ModelUnavailable(Exception):
    """A model cannot be used here; the message says which one and how to fix it.

    Callers (CLI, sidecar) catch this and fall back to keyword-only search instead of
    showing a traceback. `fix` holds the command or step that resolves it.
    """

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message if fix is None else f"{message}. Fix: {fix}")
        self.reason = message
        self.fix = fix
