"""The OpenAI-compatible chat backend against a real server: llama-cpp-python's own
`llama_cpp.server`, serving the default SmolLM2 GGUF on 127.0.0.1, started here.

What is checked is what the code guarantees whatever the model says: the answer comes back under a
constrained format and validates, the pass runs end to end through the CLI, secrets are withheld
before the server sees the text and nothing written holds one, and a server that is away or silent
gives a clear error and no write.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from palinode_vault.cli import main
from palinode_vault.memory.extraction.extract import extract_text
from palinode_vault.memory.extraction.selection import selection_schema, selections
from palinode_vault.models import ModelUnavailable
from palinode_vault.models.chat_server import ChatServerGenerator, base_url
from palinode_vault.program import load_program
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

pytestmark = pytest.mark.requires_models  # llama-cpp-python's own server serves the default GGUF

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample-vault"
SECRET = "sk_live_Zx9Yw8Vu7Ts6Rq5Po4Nm"
TALK = (
    "User: We decided to send reminder SMS from a queue worker instead of the web request, because the "
    f"provider times out under load. The API key is {SECRET}.\nAssistant: Noted.\n"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`python -m llama_cpp.server` on a free port with the packaged SmolLM2; its /v1 URL."""
    from palinode_vault.models.packaged import SMOLLM2_GGUF

    model = SMOLLM2_GGUF.locate()  # raises ModelUnavailable with the fix when it is not installed
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("llama_server.py")),  # llama_cpp.server, repacking off
                "--model",
                str(model),
                "--model_alias",
                "smollm2",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "8192",
                "--n_threads",
                "2",
                "--verbose",
                "False",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=5) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _vault(tmp_path: Path, program_extra: str = "") -> Path:
    root = tmp_path / "v"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".palinode"))
    # a CPU shared with other work answers slowly: a generous wait, so only a hang fails
    program = (REPO / "PROGRAM.md").read_text().replace("  timeout_seconds: 120 ", "  timeout_seconds: 900 ", 1)
    assert "timeout_seconds: 900" in program
    if program_extra:
        program = program.replace('  model_server: ""', f"  model_server: {program_extra}", 1)
        assert program_extra in program
    (root / "PROGRAM.md").write_text(program)
    return root


def _written_text(root: Path) -> str:
    return "\n".join(
        p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and p.suffix in (".md", ".jsonl", ".json", ".log")
    )


def test_base_url_names_the_api_root():
    assert base_url("http://127.0.0.1:11434") == "http://127.0.0.1:11434/v1"
    assert base_url("http://h:1/v1/") == "http://h:1/v1"
    assert base_url("https://box.lan/v1/chat/completions") == "https://box.lan/v1"
    for bad in ("file:///etc/passwd", "127.0.0.1:8080", "ftp://h/v1", "http:///v1"):
        with pytest.raises(ModelUnavailable, match="not an http"):
            base_url(bad)


def test_constrained_answer_from_the_server_validates(tmp_path, server):
    root = _vault(tmp_path)
    program = load_program(root)
    gen = ChatServerGenerator(server, timeout=900)  # no model name: the first one the server lists
    assert gen.model == "smollm2"
    # the selection schema the pass sends: enums of statement numbers, types, names and decisions
    schema = selection_schema(program, 3, ["Mira Okonkwo"], ["SMS provider choice"])
    statements = "[1] We decided to bill clinics monthly.\n[2] Mira leads the beta.\n[3] We learned the tablets overheat."
    answer, finish = gen.generate_json("Choose the statements worth remembering.", statements, schema, 400)
    assert finish == "stop" and isinstance(answer, dict) and isinstance(answer.get("items"), list)
    chosen, invalid = selections(answer, schema)
    assert invalid == [] and all(c.statement in (1, 2, 3) for c in chosen)  # the server kept to the enums
    assert gen.format_used in ("json_schema", "json_object")  # constrained, not plain text


def test_extract_end_to_end_through_the_server(tmp_path, server):
    root = _vault(tmp_path)
    result = CliRunner().invoke(
        main, ["extract", "--vault", str(root), "--model-server", server, "--model", "smollm2", "--json", "-"], input=TALK
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output[result.output.index("{") :])
    assert answer["withheld_secrets"] >= 1
    assert len(answer["items"]) <= 5
    assert SECRET not in _written_text(root) and SECRET not in result.output
    for item in answer["items"]:
        assert item["path"] is None or item["path"].split("/")[0] in {
            "people",
            "projects",
            "decisions",
            "insights",
            "research",
            "inbox",
        }


def test_program_md_names_the_server(tmp_path, server):
    """With generation.model_server in PROGRAM.md and no flag, the pass goes to that server."""
    root = _vault(tmp_path, program_extra=server)
    v = Vault(Settings(vault=root))
    v.load()
    r = extract_text(v, TALK, source="e2e", dry_run=True)
    assert r.attempts >= 1 and r.finish_reason in ("stop", "length")
    assert r.withheld_secrets >= 1


def test_server_away_is_a_clear_error_and_no_write(tmp_path):
    root = _vault(tmp_path, program_extra=f"http://127.0.0.1:{_free_port()}/v1")
    before = _written_text(root)
    result = CliRunner().invoke(main, ["extract", "--vault", str(root), "-"], input=TALK)
    assert result.exit_code == 1
    assert "is not answering" in result.output and "Fix:" in result.output
    assert "Traceback" not in result.output
    assert _written_text(root) == before


def test_silent_server_times_out(tmp_path):
    """A server that accepts the connection and never answers: the timeout, named, not a hang."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        gen = ChatServerGenerator(f"http://127.0.0.1:{listener.getsockname()[1]}", model="m", timeout=1)
        started = time.monotonic()
        with pytest.raises(ModelUnavailable, match="did not answer within 1 s"):
            gen.generate_json("s", "u", {"type": "object", "properties": {}}, 10)
        assert time.monotonic() - started < 10
