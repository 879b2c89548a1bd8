# The line scanner in C (_line_scan.c): line_scan.scan's answer, or False when it is not sure.
from typing import Literal

def scan(
    body: str, /
) -> tuple[list[tuple[str, str, int, int]], list[tuple[int, str, int]], list[tuple[int, int]]] | Literal[False]: ...
