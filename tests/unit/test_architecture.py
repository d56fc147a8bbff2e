"""The package's shape (issue 38): each package says its job, imports only downward, and never writes docs.

The layers, lowest first: ``inputs`` and ``queueing`` (what is asked, the textbook engine), ``run``
(where work runs), ``mechanisms``, ``solve``, ``model``, ``sim``, ``evidence``, ``plan``, the public
API (``perfmodel/__init__.py``), then ``cli``. A module may import its own package or a lower layer,
at the top of the file or inside a function alike: a function-level import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import perfmodel

PACKAGE = Path(perfmodel.__file__).resolve().parent
#: layer of each package (equal layers may not import each other)
LAYERS = {"_version": 0, "inputs": 1, "queueing": 1, "run": 2, "mechanisms": 3, "solve": 4, "model": 5,
          "sim": 6, "evidence": 7, "plan": 8, "__init__": 9, "cli": 10}  # fmt: skip
#: allowed between equal layers: the input checks build on the queueing engine's
SIDEWAYS = {("inputs", "queueing")}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        out[".".join(("perfmodel", *parts)).removesuffix(".__init__")] = path
    return out


def _imports(path: Path) -> set[str]:
    """Every ``perfmodel`` module ``path`` imports, anywhere in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "perfmodel":
            found |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "perfmodel"}
    return found


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        targets = set()
        for imp in _imports(path):
            while imp and imp not in modules:
                imp = imp.rpartition(".")[0]
            if imp and imp != name and imp != "perfmodel":
                targets.add(imp)
            elif imp == "perfmodel" and name != "perfmodel":
                targets.add(imp)
        graph[name] = targets
    return graph


def test_every_package_says_its_job_in_its_docstring():
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split(".")[0]) > 20, f"{init.parent.name}/__init__.py: say what it does"


def test_imports_go_down_the_layers():
    upward = []
    for name, targets in _graph().items():
        mine = _package(name)
        for target in targets:
            theirs = _package(target)
            if mine == theirs or (mine, theirs) in SIDEWAYS:
                continue
            if LAYERS[theirs] >= LAYERS[mine]:
                upward.append(f"{name} -> {target}")
    assert not upward, "imports against the layers:\n" + "\n".join(sorted(upward))


def test_there_is_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle.extend([*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt])
                return True
            if nxt not in state and visit(nxt, [*path, nxt]):
                return True
        state[node] = 2
        return False

    for start in sorted(graph):
        if start not in state and visit(start, [start]):
            break
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_library_never_writes_docs():
    """Regeneration scripts live in tools/; library code builds text and returns it."""
    texts = {p: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}
    offenders = [str(p.relative_to(PACKAGE)) for p, text in texts.items() if '/ "docs"' in text]
    assert not offenders, f"library modules that locate docs/: {offenders}"


#: modules that import part of the library inside functions, on purpose: the public API's lazy
#: ``calibrate`` / ``validate`` and the command line's verbs (each pays only for its own imports)
DEFERRING = {"perfmodel/__init__.py", "perfmodel/cli.py"}


def test_library_imports_sit_at_the_top_of_their_module():
    """A function-level import hid import cycles; with the layers acyclic, only deliberate deferrals
    remain (:data:`DEFERRING`)."""
    late = []
    for path in PACKAGE.rglob("*.py"):
        name = f"perfmodel/{path.relative_to(PACKAGE)}"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            inner = isinstance(node, ast.ImportFrom) and id(node) not in top and node.col_offset > 0
            if inner and (node.module or "").split(".")[0] == "perfmodel" and name not in DEFERRING:
                late.append(f"{name}:{node.lineno} from {node.module}")
    assert not late, "imports inside functions:\n" + "\n".join(late)


def test_no_library_function_is_longer_than_80_lines():
    """Issue 38: a function a maintainer can read at once (docstring included)."""
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > 80:
                    long.append(f"perfmodel/{path.relative_to(PACKAGE)}: {node.name} ({lines} lines)")
    assert not long, "functions over 80 lines:\n" + "\n".join(long)


def test_every_system_spec_key_is_documented():
    """Issue 38: a spec key added to the loader is a row of docs/models.md's table and a line of the
    loader's own docstring (the table once lacked four keys)."""
    import re

    from perfmodel.inputs import systems

    doc = (PACKAGE.parent / "docs" / "models.md").read_text(encoding="utf-8")
    start = doc.index("| key | meaning |")
    table = doc[start : doc.index("\n\n", start)]
    documented = {k for row in table.splitlines()[2:] for k in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert systems._KEYS <= documented, sorted(systems._KEYS - documented)
    lines = {m for m in re.findall(r"^([a-z_]+)", systems.__doc__, flags=re.M)}
    named = {
        k
        for line in re.findall(r"^([a-z_, ]+?)\s{2,}", systems.__doc__, flags=re.M)
        for k in line.split(", ")
    }
    assert systems._KEYS <= lines | named, sorted(systems._KEYS - lines - named)
