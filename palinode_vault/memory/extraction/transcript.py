"""Transcripts in: markdown speaker turns, JSONL of `{role, content}`, Claude Code's session
JSONL (`{"type": "user"|"assistant", "message": {...}}` lines), or plain text.

Everything becomes a list of `Turn(role, content)` with role "user" (the person), "assistant"
(the agent) or "system". Plain text with no speaker marks is one turn by the person.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

USER = "user"
ASSISTANT = "assistant"
SYSTEM = "system"

_ROLE_NAMES = {
    "user": USER,
    "human": USER,
    "person": USER,
    "me": USER,
    "you": USER,
    "assistant": ASSISTANT,
    "agent": ASSISTANT,
    "ai": ASSISTANT,
    "bot": ASSISTANT,
    "model": ASSISTANT,
    "claude": ASSISTANT,
    "chatgpt": ASSISTANT,
    "gpt": ASSISTANT,
    "system": SYSTEM,
    "tool": SYSTEM,
}
# "User:", "**User:**", "**User**:", "## User", "> Assistant:" at the start of a line
_SPEAKER = re.compile(
    r"^(?:>\s*)?(?:#{1,6}\s*)?(?:\*\*|__)?(?P<name>[A-Za-z][A-Za-z ]{0,20}?)(?:\*\*|__)?\s*(?::(?:\*\*|__)?|$)[ \t]*(?P<rest>.*)$"
)


@dataclass(frozen=True)
class Turn:
    role: str
    content: str


def _role(name: str) -> str | None:
    return _ROLE_NAMES.get(name.strip().lower())


def parse_jsonl(text: str) -> list[Turn] | None:
    """JSONL of {role, content} objects; None when the text is not that."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not lines[0].lstrip().startswith("{"):
        return None
    turns = []
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        if not isinstance(obj, dict) or "content" not in obj:
            return None
        content = obj["content"]
        if isinstance(content, list):  # content parts: keep the text ones
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        role = _role(str(obj.get("role", "user"))) or USER
        turns.append(Turn(role, str(content)))
    return turns


def parse_markdown(text: str) -> list[Turn] | None:
    """Speaker turns ("User: ...", "**Assistant:** ...", "## User"); None without any."""
    turns: list[tuple[str, list[str]]] = []
    speakers = 0  # lines that name a speaker: one "User: ..." line is a transcript of one turn
    for line in text.splitlines():
        m = _SPEAKER.match(line.strip()) if line.strip() else None
        role = _role(m.group("name")) if m else None
        if m and role is not None and (":" in line or line.lstrip().startswith("#")):
            speakers += 1
            turns.append((role, [m.group("rest")] if m.group("rest") else []))
        elif turns:
            turns[-1][1].append(line)
        elif line.strip():
            turns.append((USER, [line]))
    if not speakers:
        return None
    return [Turn(r, "\n".join(body).strip()) for r, body in turns if "\n".join(body).strip()]


def _claude_code_text(content: object) -> str:
    """The text blocks of a Claude Code message; tool calls, tool results, thinking and images
    are skipped (they are the agent's work, not the conversation)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(b.get("text", ""))
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip()
    )


def parse_claude_code(text: str) -> list[Turn] | None:
    """Claude Code's session transcript (the `transcript_path` its hooks receive): one JSON object
    a line, the conversation in the `user` and `assistant` entries' `message.content`. Other
    entries (summaries, system lines, meta and sidechain messages) are skipped, and so are lines
    that do not parse (a transcript still being written ends mid-line). None when no line is a
    Claude Code entry."""
    turns: list[Turn] = []
    recognised = False
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("message"), dict) or "type" not in obj:
            continue
        recognised = True
        if obj.get("type") not in (USER, ASSISTANT) or obj.get("isMeta") or obj.get("isSidechain"):
            continue
        content = _claude_code_text(obj["message"].get("content")).strip()
        if content:
            turns.append(Turn(USER if obj["type"] == USER else ASSISTANT, content))
    return turns if recognised else None


def parse_transcript(text: str) -> list[Turn]:
    """Turns of a transcript in any of the four formats."""
    text = text.lstrip("\ufeff")
    for parse in (parse_claude_code, parse_jsonl, parse_markdown):
        turns = parse(text)
        if turns is not None:
            return turns
    return [Turn(USER, text.strip())] if text.strip() else []


def render(turns: list[Turn]) -> str:
    """Turns as the model reads them: the person's words and the agent's, labelled."""
    labels = {USER: "PERSON", ASSISTANT: "AGENT", SYSTEM: "SYSTEM"}
    return "\n\n".join(f"{labels.get(t.role, 'PERSON')}: {t.content}" for t in turns if t.role != SYSTEM)
