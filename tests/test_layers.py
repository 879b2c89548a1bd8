"""The package's shape, checked on every run (docs/ARCHITECTURE.md draws it): which layer may
import which, no private name imported across modules, no import cycle between modules.

Imports are read from the source with `ast` (function-local imports too), so a cycle hidden in
a function body counts.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "palinode_vault"

# layer (a subpackage or module of palinode_vault) -> the palinode_vault layers it must not import
FORBIDDEN = {
    "core": {"*"},  # core imports only core and kinds
    "kinds": {"*"},
    "memory": {"sidecar", "mcp", "server", "cli"},
    "index": {"memory", "sidecar", "mcp", "server", "cli"},
    "models": {"core", "memory", "index", "sidecar", "mcp", "server", "cli"},
    "mcp": {"sidecar", "cli"},
    "sidecar": {"cli"},
}
ALLOWED_FOR_ALL = {"kinds"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(module imported, name imported from it or None, line) for every palinode_vault import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found += [(module, a.name, node.lineno) for a in node.names if module.startswith("palinode_vault")]
        elif isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names if a.name.startswith("palinode_vault")]
    return found


def _graph() -> tuple[dict[str, Path], dict[str, set[str]], list[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = defaultdict(set)
    private = []
    for name, path in modules.items():
        for module, imported, line in _imports(name, path):
            target = f"{module}.{imported}" if imported and f"{module}.{imported}" in modules else module
            if target != name:
                edges[name].add(target)
            if imported and imported.startswith("_") and not imported.startswith("__") and target == module:
                private.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {imported} from {module}")
    return modules, edges, private


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_each_layer_imports_only_what_it_may():
    modules, edges, _ = _graph()
    wrong = []
    for name, targets in edges.items():
        banned = FORBIDDEN.get(_layer(name), set())
        for target in targets:
            layer = _layer(target)
            if layer in ("", _layer(name)) or layer in ALLOWED_FOR_ALL:
                continue
            if "*" in banned or layer in banned:
                wrong.append(f"{name} imports {target}")
    assert wrong == []


def test_no_private_name_is_imported_from_another_module():
    assert _graph()[2] == []


def test_no_import_cycle_between_modules():
    modules, edges, _ = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in modules:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    # a package importing its own submodules (registration, re-exports) is not a cycle between modules
    cycles = [c for c in cycles if not (len(c) == 2 and (c[1].startswith(c[0] + ".") or c[0].startswith(c[1] + ".")))]
    assert cycles == []


def test_the_checks_see_a_violation():
    """The reader finds imports at all depths (a checker that saw nothing would pass everything)."""
    modules, edges, _ = _graph()
    assert "palinode_vault.core.note" in edges["palinode_vault.core.crossrefs"]
    assert any(t.startswith("palinode_vault.memory") for t in edges["palinode_vault.mcp.ops"])
    assert len(modules) > 50
