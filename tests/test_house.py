"""The house rules, measured on the package's own source: small modules and functions, no module cycle, and a
shallow import graph inside ``builders/`` (every import counts: inside a function or under TYPE_CHECKING too).

``clincorp``'s entry (``builders/commands/main.py``) loads the command modules by name when it builds the
command line, so the longest chain starts at a command module."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from tests.test_layers import PACKAGE, _is_module, imported_modules, module_name, package_modules

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 6
MAX_BUILDERS_CHAIN = 6
BUILDERS = f"{PACKAGE}.builders."


def long_modules(paths: list[Path]) -> list[str]:
    counted = ((path, len(path.read_text(encoding="utf-8").splitlines())) for path in paths)
    return [f"{path.name}: {lines} lines" for path, lines in counted if lines > MAX_MODULE_LINES]


def oversized_functions(source: str, where: str) -> list[str]:
    """Functions of ``source`` over :data:`MAX_FUNCTION_LINES` lines (signature to last line) or taking more
    than :data:`MAX_PARAMETERS` parameters (``self`` and ``cls`` aside)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        arguments = node.args
        named = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        parameters = [a for a in named if a.arg not in ("self", "cls")]
        count = len(parameters) + (arguments.vararg is not None) + (arguments.kwarg is not None)
        if lines > MAX_FUNCTION_LINES:
            found.append(f"{where}:{node.lineno} {node.name}: {lines} lines")
        if count > MAX_PARAMETERS:
            found.append(f"{where}:{node.lineno} {node.name}: {count} parameters")
    return found


def import_graph() -> dict[str, set[str]]:
    """Module → the package's modules it imports (a name imported from a module counts as that module)."""
    graph: dict[str, set[str]] = {}
    for path in package_modules():
        importer = module_name(path)
        imported = {name if _is_module(name) else name.rpartition(".")[0] for name in imported_modules(path)}
        graph[importer] = {name for name in imported if _is_module(name) and name != importer}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle, found by depth-first search (each cycle once per module that closes it)."""
    found: list[list[str]] = []
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                found.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def longest_chain(graph: dict[str, set[str]], inside: str) -> list[str]:
    """The longest import chain among the modules whose names start with ``inside`` (the graph has no cycle)."""

    @cache
    def from_module(module: str) -> tuple[str, ...]:
        below = [from_module(m) for m in graph.get(module, ()) if m.startswith(inside)]
        return (module, *max(below, key=len, default=()))

    return list(max((from_module(m) for m in graph if m.startswith(inside)), key=len, default=()))


def test_no_module_is_over_500_lines() -> None:
    assert long_modules(package_modules()) == []


def test_no_function_is_over_60_lines_or_takes_7_parameters() -> None:
    found = [
        problem
        for path in package_modules()
        for problem in oversized_functions(path.read_text(encoding="utf-8"), module_name(path))
    ]
    assert found == []


def test_no_module_imports_itself_through_others() -> None:
    assert cycles(import_graph()) == []


def test_the_longest_import_chain_inside_builders_is_at_most_6_modules() -> None:
    chain = longest_chain(import_graph(), BUILDERS)
    assert len(chain) <= MAX_BUILDERS_CHAIN, " -> ".join(name.removeprefix(BUILDERS) for name in chain)


def test_the_measures_catch_what_they_forbid() -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(60))
    wide = "def wide(self, a, b, c, d, e, f, *g):\n    pass\n"
    source = f"def long():\n{body}{wide}\ndef fine(a, b, c, d, e, f):\n    pass\n"
    assert oversized_functions(source, "m") == ["m:1 long: 61 lines", "m:62 wide: 7 parameters"]
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert longest_chain({"p.a": {"p.b", "q.x"}, "p.b": {"p.c"}, "p.c": set(), "q.x": set()}, "p.") == [
        "p.a",
        "p.b",
        "p.c",
    ]
