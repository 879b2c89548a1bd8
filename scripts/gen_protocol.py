"""Generate the socket protocol's types and tables from the Python models that state it (issue 21).

The sidecar's methods validate their params with pydantic models and state their results with
the models of palinode_vault/results.py (checked against every answer in the tests). This
script registers every method on a real dispatcher, reads each model's JSON schema and writes:

- obsidian-plugin/src/protocol-params.generated.ts: `MethodParams`, one entry per method, which
  the plugin's `rpc()` is typed with (obsidian-plugin/src/protocol.ts);
- obsidian-plugin/src/protocol-results.generated.ts: one interface per result model, `MethodResults`
  and `Notifications`;
- the params table, and the results table with the result types, in docs/PROTOCOL.md, between
  their `generated:` markers.

    .venv/bin/python scripts/gen_protocol.py          # write both
    .venv/bin/python scripts/gen_protocol.py --check  # exit 1 naming what differs (tests, CI)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TS_FILE = REPO / "obsidian-plugin" / "src" / "protocol-params.generated.ts"
TS_RESULTS_FILE = REPO / "obsidian-plugin" / "src" / "protocol-results.generated.ts"
DOC_FILE = REPO / "docs" / "PROTOCOL.md"
DOC_START = "<!-- generated: params (scripts/gen_protocol.py); do not edit by hand -->"
DOC_END = "<!-- end of generated params -->"
RESULTS_START = "<!-- generated: results (scripts/gen_protocol.py); do not edit by hand -->"
RESULTS_END = "<!-- end of generated results -->"
TOOLS_START = "<!-- generated: MCP tools (scripts/gen_protocol.py); do not edit by hand -->"
TOOLS_END = "<!-- end of generated MCP tools -->"


def _dispatcher():
    """A dispatcher with every socket method registered as the sidecar registers them."""
    from palinode_vault.server.rpc import Dispatcher
    from palinode_vault.settings import Settings
    from palinode_vault.sidecar.app import Sidecar
    from palinode_vault.sidecar.methods import register

    with tempfile.TemporaryDirectory() as empty:
        dispatcher = Dispatcher()
        register(dispatcher, Sidecar(Settings(vault=Path(empty))), lambda: None)
    return dispatcher


def method_params(dispatcher) -> dict[str, dict[str, Any]]:
    """Every socket method's params as JSON schema."""
    models = dispatcher.params_models()
    return {
        name: (model.model_json_schema() if model is not None else {"type": "object", "properties": {}})
        for name, model in sorted(models.items())
    }


def mcp_tools() -> list[tuple[str, dict[str, Any], str]]:
    """Every MCP tool as the server publishes it: (name, input schema, result model name)."""
    import asyncio

    from palinode_vault.mcp.server import build_server

    with tempfile.TemporaryDirectory() as empty:
        tools = asyncio.run(build_server(Path(empty)).list_tools())
    missing = [t.name for t in tools if not (t.output_schema or {}).get("title")]
    if missing:
        raise SystemExit(f"MCP tools without a result model (palinode_vault/results.py): {', '.join(missing)}")
    return [(t.name, t.input_schema, t.output_schema["title"]) for t in tools]  # type: ignore[index]


def method_results(
    dispatcher, tools: list[tuple[str, dict[str, Any], str]] = ()
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, Any]]]:
    """(method -> result model name, notification -> model name, every model's schema by name,
    the MCP tools' result models included)."""
    from pydantic.json_schema import models_json_schema

    from palinode_vault import results

    by_method = dispatcher.result_models()
    missing = sorted(name for name, model in by_method.items() if model is None)
    if missing:
        raise SystemExit(f"methods without a result model (palinode_vault/results.py): {', '.join(missing)}")
    extra = [results.ApplyEditParams, results.ApplyEditResult, *(getattr(results, model) for _, _, model in tools)]
    models = list(dict.fromkeys([*by_method.values(), *results.NOTIFICATIONS.values(), *extra]))
    _, schema = models_json_schema([(m, "validation") for m in models], ref_template="#/$defs/{model}")
    methods = {name: model.__name__ for name, model in sorted(by_method.items())}  # type: ignore[union-attr]
    notes = {name: model.__name__ for name, model in results.NOTIFICATIONS.items()}
    return methods, notes, schema["$defs"]


# --- JSON schema to TypeScript and to the docs' notation ----------------------------------------


def _ts(schema: dict[str, Any], defs: dict[str, Any], indent: str = "", named: bool = False) -> str:
    """The TypeScript type of `schema`; with `named`, a `$ref` is the referenced type's name."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return name if named else _ts(defs[name], defs, indent)
    if "anyOf" in schema:
        return " | ".join(dict.fromkeys(_ts(s, defs, indent, named) for s in schema["anyOf"]))
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type")
    if kind == "string":
        return "string"
    if kind in ("integer", "number"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return "null"
    if kind == "array":
        item = _ts(schema.get("items", {}), defs, indent, named)
        return f"({item})[]" if "|" in item else f"{item}[]"
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if not props:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                return f"Record<string, {_ts(extra, defs, indent, named)}>"
            if "propertyNames" in schema:
                keys = _ts(schema["propertyNames"], defs, indent)
                return f"Partial<Record<{keys}, {_ts(extra or {}, defs, indent) if isinstance(extra, dict) else 'unknown'}>>"
            return "Record<string, never>"
        required = set(schema.get("required", []))
        inner = indent + "  "
        lines = []
        for k, v in props.items():
            v = _absent_not_null(v) if named and k not in required else v
            if v.get("description") and named:
                lines.append(f"{inner}/** {v['description']} */")
            lines.append(f"{inner}{_key(k)}{'' if k in required else '?'}: {_ts(v, defs, inner, named)};")
        if schema.get("additionalProperties") is True:
            lines.append(f"{inner}[key: string]: unknown;")
        return "{\n" + "\n".join(lines) + f"\n{indent}}}"
    return "unknown"


def _absent_not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional member whose default is None is left out of an answer, never sent as null: in
    TypeScript `x?: T`, not `x?: T | null` (the handlers omit it; the model says None for absent)."""
    if schema.get("default", ...) is None and "anyOf" in schema:
        kept = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return {**schema, "anyOf": kept} if kept else schema
    return schema


def _key(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name)


def _doc(schema: dict[str, Any], defs: dict[str, Any], named: bool = False) -> str:
    """`{"path", "depth"?: 1 | 2}`: the notation docs/PROTOCOL.md uses."""
    props = schema.get("properties", {})
    if not props:
        return "`{}`"
    required = set(schema.get("required", []))
    parts = []
    for name, sub in props.items():
        sub = _absent_not_null(sub) if named and name not in required else sub
        typed = _ts(sub, defs, named=named).replace("\n", " ")
        typed = " ".join(typed.split())
        parts.append(f'"{name}"' + ("" if name in required else "?") + f": {typed}")
    if schema.get("additionalProperties") is True:
        parts.append("…")
    return "`{" + ", ".join(parts) + "}`"


def typescript(params: dict[str, dict[str, Any]]) -> str:
    out = [
        "// Generated by scripts/gen_protocol.py from the sidecar's pydantic models; do not edit.",
        "// CI fails when this file differs from what the script writes (tests/test_protocol_generated.py).",
        "",
        "/** Every socket method's params, as the sidecar validates them. */",
        "export interface MethodParams {",
    ]
    for name, schema in params.items():
        out.append(f"  {_key(name)}: {_ts(schema, schema.get('$defs', {}), '  ')};")
    out.append("}")
    return "\n".join(out) + "\n"


def typescript_results(methods: dict[str, str], notifications: dict[str, str], defs: dict[str, Any]) -> str:
    out = [
        "// Generated by scripts/gen_protocol.py from palinode_vault/results.py; do not edit.",
        "// CI fails when this file differs from what the script writes (tests/test_protocol_generated.py).",
        "",
    ]
    for name in sorted(defs):
        schema = defs[name]
        if schema.get("description"):
            out.append("/** " + " ".join(schema["description"].split()) + " */")
        out.append(f"export interface {name} {_ts(schema, defs, '', named=True)}")
        out.append("")
    out.append("/** What every socket method answers. */")
    out.append("export interface MethodResults {")
    out += [f"  {_key(method)}: {model};" for method, model in methods.items()]
    out.append("}")
    out.append("")
    out.append("/** Notifications pushed by the sidecar (no `id`). */")
    out.append("export interface Notifications {")
    out += [f"  {_key(method)}: {model};" for method, model in notifications.items()]
    out.append("}")
    return "\n".join(out) + "\n"


def results_doc(methods: dict[str, str], notifications: dict[str, str], defs: dict[str, Any]) -> str:
    rows = ["| method | result |", "| --- | --- |"]
    rows += [f"| `{method}` | {model} |" for method, model in methods.items()]
    rows += ["", "| notification | params |", "| --- | --- |"]
    rows += [f"| `{method}` | {model} |" for method, model in notifications.items()]
    rows += ["", "The types (`?`: may be absent; `…`: open, more members may come):", ""]
    for name in sorted(defs):
        about = " ".join(defs[name].get("description", "").split())
        rows.append(f"- **{name}** {_doc(defs[name], defs, named=True)}" + (f": {about}" if about else ""))
    return "\n".join(rows)


def tools_doc(tools: list[tuple[str, dict[str, Any], str]]) -> str:
    rows = ["| tool | arguments (`?`: optional) | result |", "| --- | --- | --- |"]
    for name, schema, model in tools:
        args = _doc(schema, schema.get("$defs", {})).replace("|", chr(92) + "|")
        rows.append(f"| `{name}` | {args} | {model} |")
    return "\n".join(rows)


def doc_table(params: dict[str, dict[str, Any]]) -> str:
    rows = ["| method | params (`?`: optional) |", "| --- | --- |"]
    for name, schema in params.items():
        rows.append(f"| `{name}` | {_doc(schema, schema.get('$defs', {})).replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def _with_table(doc: str, table: str, start_mark: str = DOC_START, end_mark: str = DOC_END) -> str:
    start, end = doc.index(start_mark), doc.index(end_mark)
    return doc[: start + len(start_mark)] + "\n\n" + table + "\n\n" + doc[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 when they differ")
    args = parser.parse_args(argv)
    dispatcher = _dispatcher()
    params = method_params(dispatcher)
    tools = mcp_tools()
    methods, notifications, defs = method_results(dispatcher, tools)
    doc = _with_table(DOC_FILE.read_text(encoding="utf-8"), doc_table(params))
    doc = _with_table(doc, results_doc(methods, notifications, defs), RESULTS_START, RESULTS_END)
    doc = _with_table(doc, tools_doc(tools), TOOLS_START, TOOLS_END)
    wanted = {
        TS_FILE: typescript(params),
        TS_RESULTS_FILE: typescript_results(methods, notifications, defs),
        DOC_FILE: doc,
    }
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPO)} is not what scripts/gen_protocol.py generates; run it and commit", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
