"""The sidecar: `palinode-vault serve`. Watches the vault, keeps it consistent, serves the plugin."""
