"""The plugin's params types and the docs' params table are generated from the sidecar's own
models (scripts/gen_protocol.py); a change to a model without regenerating fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "gen_protocol.py"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_protocol", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_params_are_what_the_models_say():
    assert _generator().main(["--check"]) == 0, "run .venv/bin/python scripts/gen_protocol.py and commit"


def test_every_method_is_generated_with_its_checks():
    gen = _generator()
    params = gen.method_params()
    assert {"status", "lint", "fix", "search", "agent.save", "job.cancel", "editor.state"} <= set(params)
    ts = gen.typescript(params)
    assert "  search: {\n    query: string;\n    limit?: number;" in ts
    assert '"session.turn": {' in ts and 'role: "user" | "assistant" | "system";' in ts
    assert "| `undo` | `{}` |" in gen.doc_table(params)
