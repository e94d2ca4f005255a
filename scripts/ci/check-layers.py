"""Checks that the code keeps its layering (docs/architecture.md): no import
circle in the Python package and no module of it importing a layer above its
own (PYTHON_LAYERS) or the test helpers, no #include circle in the C and C++
sources, and no layer of cpp/src including a layer above it. Standard library only; run by
scripts/ci/lint.sh. Prints each violation and exits 1 when there is one.

Python: the edges are the package's own imports that run when a module is
imported: module level, class bodies and `try`/`if` blocks included, `if
TYPE_CHECKING:` blocks left out. Imports inside a function run when it is
called, after every module has finished loading, so they cannot meet a
half-initialized module and are not edges (they are the way to break a
circle). Importing `a.b.c` also runs `a/__init__.py`, but a package already
being imported is in sys.modules, so that implied edge is not counted either.
Modules with no source in the tree (the built `_native._compiled`, generated
bindings) have no edges.

C/C++: quoted #include lines, resolved the way the build's include paths do
(the including file's folder, then cpp/src, cpp/include, cpp/providers, cpp,
cpp/python); angle-bracket includes and names outside the tree are not
edges.

Usage: python3 scripts/ci/check-layers.py [REPO_ROOT]
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PACKAGE = Path("src/torch_tensorrt_executorch_runtime")
CPP_FOLDERS = ("cpp", "bench")
CPP_SUFFIXES = {".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".cuh"}
INCLUDE_ROOTS = ("cpp/src", "cpp/include", "cpp/providers", "cpp", "cpp/python")
# cpp/src's layers, lowest first: a file includes only its own layer and
# those before it.
PLUGIN_LAYERS = ("common", "cuda", "blob", "backend", "program", "c_api")
# What a layer may include of a lower one that has a face: (including layer,
# included layer) -> the included layer's headers it may name. The Program API
# uses the backend through its registration glue and its load-option table,
# never its internals. The C API, the library's boundary, wires everything.
LAYER_FACES = {
    ("program", "backend"): ("tensorrt_backend.h", "load_options.h"),
}
# The Python package's layers, lowest first (docs/architecture.md): a module
# imports, at module level, only modules of its own layer and those before it.
# Each layer is the modules under these names (relative to the package; "" is
# the package's own __init__).
PYTHON_LAYERS = (
    ("ground", ("errors", "_dtypes", "_platform", "_plan_magic", "testing")),
    ("files", ("pte", "pack", "_generated")),
    ("binding", ("_native",)),
    ("providers", ("providers",)),
    ("activation", ("_activation", "_logging")),
    ("programs", ("program",)),
    ("serving", ("serving",)),
    ("command line", ("cli", "_tte_run", "__main__")),
    ("public face", ("", "runtime")),
)
# The Python package's test helpers, which no other module of it imports.
TESTING_MODULE = "torch_tensorrt_executorch_runtime.testing"

INCLUDE_LINE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a path that returns to its start) per strongly connected
    component with more than one node or a self-edge."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        # Iterative Tarjan: (node, iterator over its successors).
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    components.append(component)
    return [cycle_within(graph, set(component)) for component in components]


def cycle_within(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first node back to itself."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph.get(node, ())):
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if succ in component and succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        frontier = following
    return [start, start]


# ---- Python ------------------------------------------------------------------------------


def python_modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package) for every .py of the package."""
    modules = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root / PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


def import_time_imports(tree: ast.AST):
    """The Import/ImportFrom nodes that run when the module is imported."""
    pending = list(ast.iter_child_nodes(tree))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def binds(path: Path, name: str) -> bool:
    """Whether the module at `path` binds `name` at module level."""
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
                isinstance(t, ast.Name) and t.id == name for target in targets for t in ast.walk(target)):
            return True
    return False


def python_import_graph(root: Path) -> dict[str, set[str]]:
    modules = python_modules(root)

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in import_time_imports(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base_parts = name.split(".") if is_package else name.split(".")[:-1]
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for alias in node.names:
                    # `from pkg import sub` imports the submodule; `from mod import name`
                    # the module; a name a package does not bind is a submodule
                    # without source here (built, generated): no edge.
                    submodule = f"{base}.{alias.name}"
                    if submodule in modules:
                        targets.append(submodule)
                    elif base in modules and (not modules[base][1] or binds(modules[base][0], alias.name)):
                        targets.append(base)
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def python_layer(name: str) -> int | None:
    """The index in PYTHON_LAYERS of dotted module `name`, None for a module no layer names."""
    package = PACKAGE.name
    if name == package:
        relative = ""
    elif name.startswith(package + "."):
        relative = name[len(package) + 1 :]
    else:
        return None
    for index, (_, prefixes) in enumerate(PYTHON_LAYERS):
        for prefix in prefixes:
            if relative == prefix or (prefix and relative.startswith(prefix + ".")):
                return index
    return None


# ---- C and C++ ---------------------------------------------------------------------------


def include_graph(root: Path) -> dict[str, set[str]]:
    files = sorted(p for folder in CPP_FOLDERS for p in (root / folder).rglob("*")
                   if p.suffix in CPP_SUFFIXES and p.is_file())
    names = {p.relative_to(root).as_posix() for p in files}
    graph: dict[str, set[str]] = {name: set() for name in names}
    for path in files:
        name = path.relative_to(root).as_posix()
        here = path.parent.relative_to(root).as_posix()
        for included in INCLUDE_LINE.findall(path.read_text(encoding="utf-8", errors="replace")):
            for folder in (here, *INCLUDE_ROOTS):
                candidate = f"{folder}/{included}"
                # Normalize "a/../b" the way the compiler would.
                parts: list[str] = []
                for part in candidate.split("/"):
                    if part == "..":
                        if parts:
                            parts.pop()
                    elif part != ".":
                        parts.append(part)
                candidate = "/".join(parts)
                if candidate in names:
                    graph[name].add(candidate)
                    break
    return graph


def plugin_layer(name: str) -> int | None:
    parts = name.split("/")
    if len(parts) > 3 and parts[:2] == ["cpp", "src"] and parts[2] in PLUGIN_LAYERS:
        return PLUGIN_LAYERS.index(parts[2])
    return None


# ---- main --------------------------------------------------------------------------------


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
    problems = []

    py_graph = python_import_graph(root)
    for cycle in find_cycles(py_graph):
        problems.append("Python import circle (module level): " + " -> ".join(cycle))

    # The test helpers (making test engines) are for tests: production code
    # tells test plans apart through _plan_magic, never by importing them.
    for name in sorted(py_graph):
        if name != TESTING_MODULE and TESTING_MODULE in py_graph[name]:
            problems.append(f"production code imports the test helpers: {name} imports {TESTING_MODULE}")

    for name in sorted(py_graph):
        own = python_layer(name)
        if own is None:
            problems.append(f"Python module {name} is in no layer: add it to PYTHON_LAYERS (and docs/architecture.md)")
            continue
        for imported in sorted(py_graph[name]):
            other = python_layer(imported)
            if other is not None and other > own:
                order = " < ".join(layer for layer, _ in PYTHON_LAYERS)
                problems.append(f"layer order: {name} ({PYTHON_LAYERS[own][0]}) imports {imported} "
                                f"({PYTHON_LAYERS[other][0]}, a layer above it; order: {order})")

    cpp_graph = include_graph(root)
    for cycle in find_cycles(cpp_graph):
        problems.append("#include circle: " + " -> ".join(cycle))
    for name in sorted(cpp_graph):
        own = plugin_layer(name)
        if own is None:
            continue
        for included in sorted(cpp_graph[name]):
            other = plugin_layer(included)
            if other is not None and other > own:
                problems.append(f"layer order: {name} ({PLUGIN_LAYERS[own]}) includes {included} "
                                f"({PLUGIN_LAYERS[other]}, a layer above it; order: {' < '.join(PLUGIN_LAYERS)})")
            face = LAYER_FACES.get((PLUGIN_LAYERS[own], PLUGIN_LAYERS[other])) if other is not None else None
            if face is not None and included.rsplit("/", 1)[-1] not in face:
                problems.append(f"layer face: {name} ({PLUGIN_LAYERS[own]}) includes {included}, "
                                f"which is internal to {PLUGIN_LAYERS[other]}; it may use "
                                + ", ".join(f"{PLUGIN_LAYERS[other]}/{header}" for header in face))

    for problem in problems:
        print(f"check-layers: {problem}", file=sys.stderr)
    if problems:
        return 1
    edges = sum(map(len, py_graph.values())), sum(map(len, cpp_graph.values()))
    print(f"check-layers: ok ({len(py_graph)} Python modules, {edges[0]} import edges; "
          f"{len(cpp_graph)} C/C++ files, {edges[1]} include edges)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
