"""The update logic: NOOP/UPDATE/ADD/SUPERSEDE/ARCHIVE against the vault, statements, the workspace every write goes through."""
