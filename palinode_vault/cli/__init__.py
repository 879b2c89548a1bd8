"""The `palinode-vault` command line: thin commands that call into the library.

Each group of commands lives in its own module and registers itself on `main`.
Heavy imports happen inside the commands so that `--help` and quick commands start fast.
"""

from __future__ import annotations

import click

from palinode_vault import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="palinode-vault")
def main() -> None:
    """Keep an Obsidian vault used as durable memory clean, linked and searchable, offline."""


# Registration: importing a module adds its commands to `main`.
from palinode_vault.cli import vault_cmds  # noqa: E402,F401

for _optional in ("model_cmds", "server_cmds", "memory_cmds", "plugin_cmds", "index_cmds", "agent_cmds"):
    try:
        __import__(f"palinode_vault.cli.{_optional}")
    except ModuleNotFoundError as exc:  # a command group not built yet
        if exc.name != f"palinode_vault.cli.{_optional}":
            raise
