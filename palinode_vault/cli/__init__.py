"""The `palinode-vault` command line: thin commands that call into the library.

Each group of commands lives in its own module and registers itself on `main` (cli/group.py);
importing them here is what puts them on it. Heavy imports happen inside the commands so that
`--help` and quick commands start fast.
"""

from __future__ import annotations

from palinode_vault.cli import (  # noqa: F401  (registration)
    agent_cmds,
    index_cmds,
    memory_cmds,
    model_cmds,
    plugin_cmds,
    server_cmds,
    vault_cmds,
)
from palinode_vault.cli.group import main

__all__ = ["main"]
