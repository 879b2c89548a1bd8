"""JSON-RPC 2.0 semantics over the real server: errors, batches, notifications, params."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, field_validator
from websockets.asyncio.client import connect

from palinode_vault.pathsafe import vault_relative
from palinode_vault.server import (
    CONFLICT,
    NOT_AVAILABLE,
    PATH_OUTSIDE_VAULT,
    Connection,
    Dispatcher,
    PalinodeError,
    open_server,
    read_discovery,
)


def run(coro, timeout: float = 20.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class NeighbourhoodParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    depth: int = 1


class ReadParams(BaseModel):
    path: str


def make_dispatcher(vault: Path, seen: list) -> Dispatcher:
    dispatcher = Dispatcher()

    @dispatcher.method("graph.neighbourhood", NeighbourhoodParams)
    async def neighbourhood(params: NeighbourhoodParams, conn: Connection):
        return {"center": params.path, "depth": params.depth}

    @dispatcher.method("read", ReadParams)
    async def read(params: ReadParams, conn: Connection):
        return {"path": vault_relative(vault, params.path)}

    class SafeParams(BaseModel):
        path: str

        @field_validator("path")
        @classmethod
        def inside(cls, value: str) -> str:
            return vault_relative(vault, value)

    @dispatcher.method("safe", SafeParams)
    async def safe(params, conn):
        return params  # a model result is dumped to JSON

    @dispatcher.method("editor.state")
    async def editor_state(params: dict, conn: Connection):
        seen.append(params)
        conn.state["editor"] = params
        return {"ok": True}

    @dispatcher.method("conflict")
    async def conflict(params, conn):
        raise PalinodeError(CONFLICT, "people/a.md changed since the hash given; re-read it and retry")

    @dispatcher.method("boom")
    async def boom(params, conn):
        raise KeyError("multi\nline secret detail")

    @dispatcher.method("not_json")
    async def not_json(params, conn):
        return {"value": object()}

    @dispatcher.method("nan")
    async def nan(params, conn):
        return {"score": float("nan")}

    dispatcher.register_unavailable("search", "no embedding model; run `palinode-vault models install`")
    return dispatcher


async def exchange(vault: Path, messages: list, expect: int) -> list:
    """Send raw messages on one connection and read `expect` answers."""
    async with open_server(vault, make_dispatcher(vault, [])):
        async with connect(read_discovery(vault).url) as ws:
            for message in messages:
                await ws.send(message if isinstance(message, str) else json.dumps(message))
            return [json.loads(await ws.recv()) for _ in range(expect)]


def one(vault: Path, message) -> dict:
    return run(exchange(vault, [message], 1))[0]


def req(method, params=None, id=1):
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def test_parse_error(tmp_path: Path):
    reply = one(tmp_path, '{"jsonrpc": "2.0", "method": ')
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert "parse error" in reply["error"]["message"]


@pytest.mark.parametrize(
    ("message", "id", "fragment"),
    [
        ({"jsonrpc": "1.0", "id": 1, "method": "read"}, 1, "jsonrpc"),
        ({"id": 2, "method": "read"}, 2, "jsonrpc"),
        ({"jsonrpc": "2.0", "id": 3, "method": 5}, 3, "method"),
        ({"jsonrpc": "2.0", "id": 4, "method": "read", "params": "x"}, 4, "params"),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "read"}, None, "id"),
        ({"jsonrpc": "2.0", "id": True, "method": "read"}, None, "id"),
        (42, None, "object"),
        ([], None, "empty batch"),
    ],
)
def test_invalid_request(tmp_path: Path, message, id, fragment):
    reply = one(tmp_path, message)
    assert reply["error"]["code"] == -32600
    assert reply["id"] == id
    assert fragment in reply["error"]["message"]


def test_unknown_method_lists_known_ones(tmp_path: Path):
    reply = one(tmp_path, req("nope"))
    assert reply["error"]["code"] == -32601
    assert "'nope'" in reply["error"]["message"] and "graph.neighbourhood" in reply["error"]["message"]


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"path": "a.md", "depth": "deep"}, "depth"),
        ({"depth": 1}, "path"),
        ({"path": "a.md", "colour": "red"}, "colour"),
    ],
)
def test_bad_params_name_the_param(tmp_path: Path, params, param):
    reply = one(tmp_path, req("graph.neighbourhood", params))
    assert reply["error"]["code"] == -32602
    assert param in reply["error"]["message"]
    assert param in [p["param"] for p in reply["error"]["data"]["params"]]


def test_positional_params_refused(tmp_path: Path):
    reply = one(tmp_path, req("graph.neighbourhood", ["a.md"]))
    assert reply["error"]["code"] == -32602 and "object" in reply["error"]["message"]


def test_valid_call_and_model_result(tmp_path: Path):
    assert one(tmp_path, req("graph.neighbourhood", {"path": "a.md"}))["result"] == {"center": "a.md", "depth": 1}
    assert one(tmp_path, req("safe", {"path": "people/./a.md"}))["result"] == {"path": "people/a.md"}


@pytest.mark.parametrize("path", ["../etc/passwd", "/etc/passwd", "a/../../x.md", "a\\b.md"])
def test_path_escape_is_32010_from_handler_and_from_validator(tmp_path: Path, path):
    for method in ("read", "safe"):
        reply = one(tmp_path, req(method, {"path": path}))
        assert reply["error"]["code"] == PATH_OUTSIDE_VAULT, (method, reply)
        assert repr(path) in reply["error"]["message"]


def test_protocol_errors_and_internal_errors(tmp_path: Path, caplog):
    reply = one(tmp_path, req("conflict"))
    assert reply["error"] == {"code": CONFLICT, "message": "people/a.md changed since the hash given; re-read it and retry"}
    reply = one(tmp_path, req("search", {"query": "x"}))
    assert reply["error"]["code"] == NOT_AVAILABLE and "models install" in reply["error"]["message"]

    with caplog.at_level("ERROR"):
        reply = one(tmp_path, req("boom"))
    error = reply["error"]
    assert error["code"] == -32603
    assert error["message"].startswith("boom failed: KeyError")
    assert "\n" not in error["message"] and "Traceback" not in error["message"]
    assert any(record.exc_info for record in caplog.records)  # the traceback went to the log

    for method in ("not_json", "nan"):
        reply = one(tmp_path, req(method))
        assert reply["error"]["code"] == -32603 and "not JSON" in reply["error"]["message"]


def test_number_and_null_ids_are_echoed(tmp_path: Path):
    replies = run(exchange(tmp_path, [req("graph.neighbourhood", {"path": "a"}, id=i) for i in (2.0, None, "x")], 3))
    assert sorted(repr(r["id"]) for r in replies) == sorted(repr(i) for i in (2.0, None, "x"))  # any order
    assert all(r["result"]["center"] == "a" for r in replies)


def test_batch_mixed(tmp_path: Path):
    batch = [
        req("graph.neighbourhood", {"path": "a.md"}, id="a"),
        {"jsonrpc": "2.0", "method": "editor.state", "params": {"active": "a.md"}},  # notification
        req("nope", id="b"),
        {"jsonrpc": "2.0"},
        7,
    ]
    (reply,) = run(exchange(tmp_path, [batch], 1))
    assert isinstance(reply, list) and len(reply) == 4
    assert reply[0] == {"jsonrpc": "2.0", "id": "a", "result": {"center": "a.md", "depth": 1}}
    assert reply[1]["id"] == "b" and reply[1]["error"]["code"] == -32601
    assert reply[2]["error"]["code"] == -32600 and reply[3]["error"]["code"] == -32600


def test_notifications_get_no_response(tmp_path: Path):
    async def body():
        seen: list = []
        async with open_server(tmp_path, make_dispatcher(tmp_path, seen)):
            async with connect(read_discovery(tmp_path).url) as ws:
                await ws.send(json.dumps({"jsonrpc": "2.0", "method": "editor.state", "params": {"active": "x.md"}}))
                await ws.send(json.dumps({"jsonrpc": "2.0", "method": "boom"}))  # failing notification: silent
                await ws.send(json.dumps([{"jsonrpc": "2.0", "method": "editor.state", "params": {"active": "y.md"}}]))
                await ws.send(json.dumps(req("graph.neighbourhood", {"path": "z.md"}, id=5)))
                reply = json.loads(await ws.recv())
                assert reply["id"] == 5  # nothing came before it
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(ws.recv(), 0.2)
        assert [s["active"] for s in seen] == ["x.md", "y.md"]

    run(body())


def test_dispatcher_refuses_sync_handlers():
    dispatcher = Dispatcher()
    with pytest.raises(TypeError, match="async"):
        dispatcher.register("x", lambda params, conn: None)
