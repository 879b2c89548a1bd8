"""Vault-relative path validation: every path a client sends passes through here.

A client (the Obsidian plugin, an agent) names notes by vault-relative paths such as
`people/alice-smith.md`. Anything that could reach a file outside the vault is refused with
`PathOutsideVault`, which the RPC layer answers with error -32010.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["PathOutsideVault", "vault_relative", "vault_path"]

_DRIVE = re.compile(r"^[A-Za-z]:")


class PathOutsideVault(ValueError):
    """A path that is not a safe vault-relative path; `path` is the value as given."""

    def __init__(self, path: object, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"path {path!r} refused: {reason}")


def vault_relative(root: Path, path: str, *, allow_root: bool = False) -> str:
    """Return `path` as a normalised vault-relative posix path, or raise `PathOutsideVault`.

    Rules, in order:

    - `path` must be a string without NUL bytes or backslashes (`\\` is a Windows separator
      here, never part of a name; send `/`).
    - It must be relative: no leading `/`, no drive letter such as `C:`.
    - It is normalised lexically: empty and `.` segments are dropped, `a/../b` becomes `b`,
      a trailing `/` is dropped. A `..` that climbs above the vault root is refused.
    - The result must be non-empty (it must name something inside the vault), unless
      `allow_root` is true, in which case `""` means the vault itself.
    - The real path of `root / result`, with symlinks resolved as far as the path exists, must
      stay inside the real path of `root`: a symlink (or a symlinked folder) that points
      outside the vault is refused, even when the file does not exist yet.

    The returned path keeps the names as given (a symlink inside the vault that points to
    another place inside the vault is accepted and not replaced by its target).
    """
    if not isinstance(path, str):
        raise PathOutsideVault(path, f"expected a string, got {type(path).__name__}")
    if "\x00" in path:
        raise PathOutsideVault(path, "contains a NUL byte")
    if "\\" in path:
        raise PathOutsideVault(path, "contains a backslash; use '/' between folders")
    if path.startswith("/") or _DRIVE.match(path):
        raise PathOutsideVault(path, "absolute paths are not accepted; give it relative to the vault root")

    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not parts:
                raise PathOutsideVault(path, "'..' leaves the vault")
            parts.pop()
            continue
        parts.append(segment)
    relative = "/".join(parts)
    if not relative and not allow_root:
        raise PathOutsideVault(path, "names the vault root, not a file or folder in it")

    real_root = Path(os.path.realpath(root))
    # realpath resolves symlinks as far as the path exists, so a new file under a symlinked
    # folder that points outside is caught too.
    real = Path(os.path.realpath(real_root.joinpath(*parts))) if parts else real_root
    if real != real_root and not real.is_relative_to(real_root):
        raise PathOutsideVault(path, "reaches outside the vault through a symlink")
    return relative


def vault_path(root: Path, path: str, *, allow_root: bool = False) -> Path:
    """Return the absolute `Path` in `root` for a client-given path, validated by `vault_relative`."""
    relative = vault_relative(root, path, allow_root=allow_root)
    return Path(root) / relative if relative else Path(root)
