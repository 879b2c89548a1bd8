"""The plugin's protocol types and the docs' params and results tables are generated from the
sidecar's own models (scripts/gen_protocol.py); a change to a model without regenerating fails
here. That the handlers answer what the result models say is checked on every answer the test
suite gets (PALINODE_CHECK_RESULTS=1, tests/conftest.py) and shown failing below."""

from __future__ import annotations

from script_helpers import load_script


def _generator():
    return load_script("scripts/gen_protocol.py")


def test_generated_params_are_what_the_models_say():
    assert _generator().main(["--check"]) == 0, "run .venv/bin/python scripts/gen_protocol.py and commit"


def test_every_method_is_generated_with_its_checks():
    gen = _generator()
    params = gen.method_params(gen._dispatcher())
    assert {"status", "lint", "fix", "search", "agent.save", "job.cancel", "editor.state"} <= set(params)
    ts = gen.typescript(params)
    assert "  search: {\n    query: string;\n    limit?: number;" in ts
    assert '"session.turn": {' in ts and 'role: "user" | "assistant" | "system";' in ts
    assert "| `status` | `{}` |" in gen.doc_table(params)
    assert '| `undo` | `{"run"?: string \\| null}` |' in gen.doc_table(params)


def test_every_method_states_its_result_and_the_plugin_types_name_them():
    gen = _generator()
    methods, notifications, defs = gen.method_results(gen._dispatcher())
    assert set(methods) == set(gen.method_params(gen._dispatcher()))  # none without a result model
    assert methods["lint"] == "LintResult" and methods["job.get"] == "JobInfo"
    ts = gen.typescript_results(methods, notifications, defs)
    assert "export interface Finding {" in ts and '  "job.done": JobDone;' in ts
    # an absent member is `?:`, never null on the wire; a nullable one says so
    assert "  truncated?: number;" in ts and "  last_write: LastWrite | null;" in ts


def test_an_answer_outside_its_result_model_is_an_internal_error_naming_the_model(monkeypatch):
    import asyncio

    from pydantic import BaseModel

    from palinode_vault.server import rpc

    class Answer(BaseModel):
        count: int

    dispatcher = rpc.Dispatcher()

    async def drifted(params, conn):
        return {"count": "many"}

    dispatcher.register("drifted", drifted, None, Answer)
    monkeypatch.setattr(rpc, "CHECK_RESULTS", True)
    text = asyncio.run(dispatcher.handle_text('{"jsonrpc": "2.0", "id": 1, "method": "drifted", "params": {}}', None))
    assert text is not None and '"code": -32603' in text and "outside its result model Answer" in text
    monkeypatch.setattr(rpc, "CHECK_RESULTS", False)  # off: answered as is
    text = asyncio.run(dispatcher.handle_text('{"jsonrpc": "2.0", "id": 2, "method": "drifted", "params": {}}', None))
    assert text is not None and '"many"' in text
