"""palinode-vault: keeps an Obsidian vault used as durable memory clean, linked and searchable."""

__version__ = "0.1.0"
