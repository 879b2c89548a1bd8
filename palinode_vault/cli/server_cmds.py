"""Sidecar commands: serve and status."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

from palinode_vault.cli.group import main
from palinode_vault.cli.options import resolve_vault, vault_option


@main.command()
@vault_option
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port on 127.0.0.1 (0 picks a free one)."
)
@click.option(
    "--quiet-seconds",
    type=click.FloatRange(0, 3600),
    default=3.0,
    show_default=True,
    help="Leave a file alone this long after it changed before fixing it.",
)
@click.option("--no-auto-fix", is_flag=True, help="Report findings only; never write on its own.")
@click.option("--verbose", "-v", is_flag=True, help="Log every batch of changes.")
def serve(vault: Path, port: int, quiet_seconds: float, no_auto_fix: bool, verbose: bool) -> None:
    """Run the sidecar: watch the vault, keep it consistent, serve the Obsidian plugin."""
    import asyncio

    from palinode_vault.server import VaultLocked
    from palinode_vault.settings import Settings
    from palinode_vault.sidecar.serve import run_sidecar

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    root = resolve_vault(vault)
    settings = Settings(
        vault=root, quiet_seconds=quiet_seconds, auto_fix_footer=not no_auto_fix, auto_fix_cross_refs=not no_auto_fix
    )

    def ready(server, sidecar) -> None:
        status = sidecar.status(server.port)
        counts = status["counts"]
        click.echo(f"palinode-vault sidecar for {root}")
        click.echo(f"  listening on ws://127.0.0.1:{server.port}/rpc (token in .palinode/sidecar.json; GET /health)")
        click.echo(
            f"  {counts['markdown_files']} notes ({counts['memory_files']} memory), {counts['links']} links, "
            f"{counts['unresolved']} unresolved, {counts['orphans']} orphans"
        )
        findings = ", ".join(f"{k} {v}" for k, v in status["findings"].items()) or "none"
        click.echo(f"  findings: {findings}")
        click.echo(
            f"  automatic fixes: {'off' if no_auto_fix else 'See also footers and cross_refs, after ' + str(quiet_seconds) + ' s of quiet'}"
        )
        click.echo("  stop with Ctrl-C")
        sys.stdout.flush()

    try:
        asyncio.run(run_sidecar(settings, port=port, on_ready=ready))
    except VaultLocked as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot start the sidecar: {exc}") from exc


@main.command()
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def status(vault: Path, as_json: bool) -> None:
    """Is the sidecar running for this vault? Its pid, port, counts, findings, last write."""
    from websockets.sync.client import connect

    from palinode_vault.server import holder, read_discovery

    root = resolve_vault(vault)
    info = read_discovery(root)
    pid = holder(root)
    if info is None:
        data = {
            "running": False,
            "pid": pid or None,
            "message": f"not running; start it with: palinode-vault serve --vault {root}",
        }
        click.echo(json.dumps(data, indent=2) if as_json else data["message"])
        sys.exit(1)
    try:
        with connect(info.url, open_timeout=5, close_timeout=2) as ws:
            ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "status"}))
            reply: dict = {}
            while reply.get("id") != 1:  # notifications (progress, findings.changed) may come first
                reply = json.loads(ws.recv(timeout=10))
    except Exception as exc:  # noqa: BLE001
        data = {
            "running": False,
            "pid": info.pid,
            "message": f"sidecar.json names pid {info.pid} on port {info.port}, but it does not answer ({exc})",
        }
        click.echo(json.dumps(data, indent=2) if as_json else data["message"])
        sys.exit(1)
    if "error" in reply:
        message = reply["error"].get("message", "unknown error")
        click.echo(
            json.dumps({"running": True, "error": message}, indent=2) if as_json else f"running, but status failed: {message}"
        )
        sys.exit(1)
    result = reply.get("result") or {}
    result["running"] = True
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"running: pid {result.get('pid')}, ws://127.0.0.1:{result.get('port')}/rpc, vault {result.get('vault')}")
    counts = result.get("counts", {})
    click.echo("  " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items()))
    click.echo("  findings: " + (", ".join(f"{k} {v}" for k, v in result.get("findings", {}).items()) or "none"))
    lw = result.get("last_write")
    click.echo(f"  last write: {lw['time']} {', '.join(lw['paths'][:5])}" if lw else "  last write: none")
    click.echo(f"  last error: {result.get('last_error') or 'none'}")
