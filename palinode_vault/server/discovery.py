"""`VAULT/.palinode/sidecar.json`: how the plugin and the CLI find a running sidecar.

The file holds the connection token, so it is created with mode 0600 from its first byte
(never chmod-ed after the fact) and put in place with an atomic rename.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from palinode_vault.pathsafe import open_private, private_dir, read_private

__all__ = ["SidecarInfo", "DiscoveryError", "discovery_path", "write_discovery", "read_discovery", "remove_discovery"]

FILENAME = "sidecar.json"


class DiscoveryError(ValueError):
    """sidecar.json exists but cannot be read as the sidecar's discovery file."""


@dataclass(frozen=True)
class SidecarInfo:
    """The contents of sidecar.json (docs/PROTOCOL.md, "Discovery and connection")."""

    port: int
    token: str
    pid: int
    version: str
    vault: str
    started: str

    @property
    def url(self) -> str:
        """The WebSocket URL with the token, ready to connect to."""
        return f"ws://127.0.0.1:{self.port}/rpc?token={self.token}"

    @property
    def health_url(self) -> str:
        """The /health URL (no token needed)."""
        return f"http://127.0.0.1:{self.port}/health"


def discovery_path(vault: Path) -> Path:
    """Where the discovery file of `vault` lives."""
    return Path(vault) / ".palinode" / FILENAME


def write_discovery(vault: Path, *, port: int, token: str, version: str, pid: int | None = None) -> SidecarInfo:
    """Write sidecar.json atomically with mode 0600 and return what was written."""
    vault = Path(vault).resolve()
    info = SidecarInfo(
        port=port,
        token=token,
        pid=os.getpid() if pid is None else pid,
        version=version,
        vault=str(vault),
        started=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    target = discovery_path(vault)
    private_dir(vault)  # no symlinked .palinode/, created 0700
    temp = target.with_name(f".{FILENAME}.{os.getpid()}.tmp")
    data = (json.dumps(asdict(info), indent=2) + "\n").encode()
    # O_EXCL after removing a leftover: the file we write into is one we just created 0600.
    temp.unlink(missing_ok=True)
    fd = open_private(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)  # the umask can only narrow it; make it exact anyway
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(temp, target)
    except OSError:
        temp.unlink(missing_ok=True)
        raise
    return info


def read_discovery(vault: Path) -> SidecarInfo | None:
    """Read sidecar.json; None when there is none (no sidecar, or it exited cleanly).

    The file may be left over by a sidecar that was killed: check `lock.holder(vault)` or the
    pid before trusting it. Raises `DiscoveryError` when the file is not valid.
    """
    path = discovery_path(vault)
    try:
        raw = read_private(path, 65536).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise DiscoveryError(f"{path}: cannot be read ({exc}); delete it and restart the sidecar") from None
    try:
        data = json.loads(raw)
        return SidecarInfo(
            port=int(data["port"]),
            token=str(data["token"]),
            pid=int(data["pid"]),
            version=str(data["version"]),
            vault=str(data["vault"]),
            started=str(data["started"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise DiscoveryError(f"{path}: not a valid sidecar.json ({exc}); delete it and restart the sidecar") from None


def remove_discovery(vault: Path, pid: int | None = None) -> bool:
    """Remove sidecar.json if it belongs to `pid` (default: this process); True if removed."""
    pid = os.getpid() if pid is None else pid
    try:
        info = read_discovery(vault)
    except DiscoveryError:
        info = None
    if info is None or info.pid != pid:
        return False
    discovery_path(vault).unlink(missing_ok=True)
    return True
