# The line scanner in C (_line_scan.c): line_scan.scan's answer, or False when it is not sure.
from typing import Any, Literal

def scan(
    body: str, /
) -> tuple[list[tuple[str, str, int, int]], list[tuple[int, str, int]], list[tuple[int, int]]] | Literal[False]: ...

# note.body_links in C: the scanner's raw links as `cls` (note.Link) tuples, or None when a link
# needs Python (a markdown link with a '%' to unquote).
def links(
    text: str, body_start: int, raw: list[tuple[str, str, int, int]], footer_start: int, footer_end: int, cls: type, /
) -> list[Any] | None: ...
