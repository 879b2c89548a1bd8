"""What every generator promises (generator.py, chat_server.py): `generate_json(system, user,
schema, max_tokens)` answers `(dict | None, finish_reason)`, for a schema whose every array and
string is bounded (a small model can loop in an unbounded one until `max_tokens`).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

#: Fixed so the same prompt gives the same answer (temperature is 0 too).
SEED = 1234

Result = tuple[dict[str, Any] | None, str]

# Keys whose values are data, not sub-schemas.
_DATA_KEYS = frozenset({"default", "examples", "enum", "const"})


class Generator(Protocol):
    """What the memory manager calls; see the module docstring for the contract."""

    name: str

    @property
    def model_id(self) -> str: ...

    def generate_json(self, system: str, user: str, schema: dict[str, Any], max_tokens: int = 512) -> Result: ...

    def close(self) -> None: ...


def unbounded_parts(schema: dict[str, Any]) -> list[str]:
    """JSON pointers of arrays without `maxItems` and strings without `maxLength`.

    Strings limited by `enum` or `const` are bounded already. `$defs` are walked too,
    so pydantic's `model_json_schema()` output can be checked as it is.
    """
    found: list[str] = []

    def walk(node: Any, pointer: str) -> None:
        if isinstance(node, dict):
            declared = node.get("type")
            # A "properties" map may hold a property named "type": only a string or a
            # list of strings is a JSON-schema type.
            if isinstance(declared, str):
                types = {declared}
            elif isinstance(declared, list):
                types = {t for t in declared if isinstance(t, str)}
            else:
                types = set()
            if "array" in types and "maxItems" not in node and "prefixItems" not in node:
                found.append(pointer or "/")
            if "string" in types and "maxLength" not in node and "enum" not in node and "const" not in node:
                found.append(pointer or "/")
            for key, value in node.items():
                if key not in _DATA_KEYS:
                    walk(value, f"{pointer}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{pointer}/{index}")

    walk(schema, "")
    return found


def check_bounded(schema: dict[str, Any]) -> None:
    """Raise ValueError naming every unbounded array or string in `schema`."""
    loose = unbounded_parts(schema)
    if loose:
        raise ValueError(
            "schema has unbounded parts (a small model can loop in them until max_tokens): "
            + ", ".join(loose)
            + "; give each array maxItems and each string maxLength"
        )


def parse_object(text: str, finish: str) -> Result:
    # strict=False: llama.cpp's length-bounded string rule lets raw newlines into strings;
    # the structure is still what the grammar allowed, and callers validate every value.
    try:
        value = json.loads(text, strict=False)
    except ValueError:
        return None, "invalid_json"
    if not isinstance(value, dict):
        return None, "not_object"
    return value, finish
