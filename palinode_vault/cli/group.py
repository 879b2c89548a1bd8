"""The `palinode-vault` command group every command module registers itself on."""

from __future__ import annotations

import click

from palinode_vault import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="palinode-vault")
def main() -> None:
    """Keep an Obsidian vault used as durable memory clean, linked and searchable, offline."""
