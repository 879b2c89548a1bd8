"""The vault as an agent's memory over MCP: the server (server.py), what its tools do to a vault
(ops.py writes, reads.py reads), and the client configurations `agent install` writes (clients.py)."""
