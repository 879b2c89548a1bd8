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
    if (parts and parts[0] in NOT_NOTES) or (real != real_root and real.relative_to(real_root).parts[0] in NOT_NOTES):
        # The sidecar's token, the journal and git's files are not notes, even through a link.
        raise PathOutsideVault(path, "names something in .palinode/, .obsidian/, .git/ or .trash/, not a note")
    return relative


def vault_path(root: Path, path: str, *, allow_root: bool = False) -> Path:
    """Return the absolute `Path` in `root` for a client-given path, validated by `vault_relative`."""
    relative = vault_relative(root, path, allow_root=allow_root)
    return Path(root) / relative if relative else Path(root)


# --- VAULT/.palinode/: private, and never followed through a symlink -----------------------------
#
# `.palinode/` lives inside the vault, so git, a sync tool or a downloaded vault can carry a
# crafted one. Everything we create there is private (folders 0700, files 0600: the journal
# holds whole notes), and nothing there is opened through a symlink, which could point at any
# file the person can write.

PRIVATE_DIR = ".palinode"
# Folders whose content is never a note, even when reached through a symlink.
NOT_NOTES = (".palinode", ".obsidian", ".git", ".trash")

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted here must not hang the open
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


class UnsafePrivatePath(OSError):
    """A path in `.palinode/` that is a symlink or not what it should be; nothing was opened."""


def private_dir(root: Path, *parts: str, create: bool = True) -> Path:
    """`VAULT/.palinode` (or a folder inside it), checked: no symlink on the way, created 0700.

    Raises `UnsafePrivatePath` for a symlink or a non-folder, `FileNotFoundError` when it does
    not exist and `create` is false (and `OSError` when it cannot be created).
    """
    import stat as st

    path = Path(root)
    for i, name in enumerate((PRIVATE_DIR, *parts)):
        path = path / name
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            info = os.lstat(path)
        if st.S_ISLNK(info.st_mode) or not st.S_ISDIR(info.st_mode):
            raise UnsafePrivatePath(
                f"{path} is a symlink or not a folder; palinode-vault does not follow it (delete it; it is rebuilt)"
            )
        if i == 0 and info.st_mode & 0o077 and hasattr(os, "getuid") and info.st_uid == os.getuid():
            try:
                os.chmod(path, 0o700)  # made by an older version, or by the umask: narrow it
            except OSError:
                pass
    return path


def open_private(path: Path, flags: int, mode: int = 0o600) -> int:
    """`os.open` for a file in `.palinode/`: never through a symlink, only a regular file, 0600.

    Where the platform has no `O_NOFOLLOW` (Windows) a symlink is refused after `lstat`.
    Raises `UnsafePrivatePath` (a symlink, FIFO, device or folder) or `OSError`.
    """
    import errno
    import stat as st

    if not _NOFOLLOW and os.path.islink(path):
        raise UnsafePrivatePath(f"{path} is a symlink; palinode-vault does not follow it (delete it)")
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _BINARY, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) or (exc.errno == errno.ENXIO and os.path.islink(path)):
            raise UnsafePrivatePath(f"{path} is a symlink; palinode-vault does not follow it (delete it)") from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader
            raise UnsafePrivatePath(f"{path} is not a regular file (delete it)") from None
        raise
    try:
        info = os.fstat(fd)
        if not st.S_ISREG(info.st_mode):
            raise UnsafePrivatePath(f"{path} is not a regular file (delete it)")
        if info.st_mode & 0o077 and hasattr(os, "fchmod") and (flags & (os.O_WRONLY | os.O_RDWR)):
            try:
                os.fchmod(fd, 0o600)
            except OSError:
                pass
    except BaseException:
        os.close(fd)
        raise
    return fd


def private_database(root: Path, name: str) -> Path:
    """`VAULT/.palinode/{name}`, checked for SQLite to open: SQLite follows symlinks, so the file
    and its side files (`-wal`, `-shm`, `-journal`) must not be symlinks, and the file is created
    0600 as a regular file before SQLite sees it. Raises `UnsafePrivatePath` naming the file."""
    folder = private_dir(root)
    for suffix in ("", "-wal", "-shm", "-journal"):
        side = folder / f"{name}{suffix}"
        if os.path.islink(side):
            raise UnsafePrivatePath(
                f"{side} is a symlink; palinode-vault does not follow it (delete it; it is rebuilt from the notes)"
            )
    target = folder / name
    os.close(open_private(target, os.O_RDWR | os.O_CREAT))
    return target


def read_private(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file in `.palinode/`, read without following a symlink."""
    fd = open_private(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


def inside_private(root: Path, real: str) -> bool:
    """True when the real path `real` lies in one of the vault's non-note folders
    (`.palinode/`, `.obsidian/`, `.git/`, `.trash/`): never read or written as a note."""
    real_root = os.path.realpath(root)
    try:
        rel = os.path.relpath(real, real_root)
    except ValueError:  # another drive on Windows
        return False
    first = rel.replace(os.sep, "/").split("/", 1)[0]
    return first in NOT_NOTES
