"""`palinode-vault models ...`: prepare and list the local models."""

from __future__ import annotations

import json

import click

from palinode_vault.cli.group import main

_EMBEDDING_HELP = "A GGUF embedding model to use instead of the default all-MiniLM-L6-v2."
_GENERATION_HELP = "A GGUF chat model (or a registered name) instead of the default smollm2."


def _model_options(func):
    func = click.option("--generation-model", envvar="PALINODE_GENERATION_MODEL", metavar="PATH|NAME", help=_GENERATION_HELP)(
        func
    )
    func = click.option("--embedding-model", envvar="PALINODE_EMBEDDING_MODEL", metavar="PATH", help=_EMBEDDING_HELP)(func)
    return func


@main.group("models")
def models_group() -> None:
    """Local models on llama.cpp: where they are and whether they are ready."""


@models_group.command("prepare")
@_model_options
def prepare_command(embedding_model: str | None, generation_model: str | None) -> None:
    """Make the models ready (converts the default embedding model once) and show where they are.

    Safe to run again: a model that is ready is left as it is.
    """
    from palinode_vault.models import cache_dir, prepare_models

    infos = prepare_models(embedding_model, generation_model)
    click.echo(f"model cache: {cache_dir()}")
    for info in infos:
        click.echo(_line(info))
    problems = [info for info in infos if info.problem]
    if problems:
        raise click.ClickException(
            "some models are not ready (search falls back to keyword-only without an "
            "embedding model):\n" + "\n".join(f"  {i.role}: {i.problem}" for i in problems)
        )


@models_group.command("list")
@_model_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def list_command(embedding_model: str | None, generation_model: str | None, as_json: bool) -> None:
    """List the models in use: role, path, present, size, dimensions."""
    from palinode_vault.models import cache_dir, list_models

    infos = list_models(embedding_model, generation_model)
    if as_json:
        click.echo(json.dumps({"cache": str(cache_dir()), "models": [i.to_dict() for i in infos]}, indent=2))
        return
    for info in infos:
        click.echo(_line(info))


def _line(info) -> str:
    state = "ready" if info.present and not info.problem else "missing"
    size = f"{info.size / 2**20:.1f} MiB" if info.size else "-"
    dims = f"{info.dimensions} dims" if info.dimensions else "-"
    text = f"{info.role:<10} {info.name:<20} {state:<7} {size:>10}  {dims:<9} {info.path or '-'}"
    if info.engine:
        text += f"\n{'':<11}engine: {info.engine}"
    if info.problem:
        text += f"\n{'':<11}{info.problem}"
    return text
