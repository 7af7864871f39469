"""No import circles inside fastnet/, read from the import statements themselves (issue 34), and every documented
config section accepted by a fresh interpreter (no section may depend on some other module having been imported).

The graph: one node per module, a package standing for its `__init__.py`. Every import statement counts, at module
level or inside a function (a function-level import is a circle that only waits for its first call), with relative
imports resolved to module names. An import of `fastnet.a.b.c` from module M is an edge M -> fastnet.a.b.c, and also
M -> fastnet.a and M -> fastnet.a.b, since importing a module executes every package above it, except for the
packages M itself lies in: those are already executing (or done) when M runs, so M reaches into them only when it
names them. Hence:

- `from P import x` where P/x.py exists is an edge to P.x (plus P when P does not contain M);
- `from P import name` for any other name reads P's `__init__`, an edge to P even from a module inside P
  (`from fastnet.mpi.traces import TraceError` in a reader that P's `__init__` imports is a real circle: the
  name is not defined yet when the reader runs);
- `import P.x` is an edge to P.x (and to P when P does not contain M).

Not seen: a module named in a string (importlib); fastnet has none.

A circle is a strongly connected component of more than one module: each of its modules is imported, at some call,
while another one of them is only half executed, so the order of imports or of first calls decides what works.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "fastnet"


def module_names(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module under fastnet/: dotted name -> file (a package's name -> its __init__.py)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _packages(name: str) -> list[str]:
    """The packages a module lies in, outermost first: fastnet.a.b -> [fastnet, fastnet.a]."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The fastnet modules that `name` (the module in `path`) imports, by the rule in this file's docstring."""
    own = set(_packages(name)) | ({name} if path.name == "__init__.py" else set())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()

    def reach(target: str, explicit: bool) -> None:
        if target not in modules:
            return
        targets.update(p for p in _packages(target) if p not in own)
        if explicit or target not in own:
            targets.add(target)

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                reach(alias.name, explicit=False)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    reach(sub, explicit=False)
                else:
                    reach(base, explicit=True)
    targets.discard(name)
    return targets


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _path_within(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One circle through the component's first module, as a -> b -> ... -> a, for the failure message."""
    inside = set(component)
    start = component[0]
    previous = {start: ""}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & inside):
            if w == start:
                path = [v]
                while previous[path[-1]]:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if w not in previous:
                previous[w] = v
                queue.append(w)
    return component


def test_the_walker_sees_a_circle():
    graph = {"fastnet.cli": {"fastnet.throughput", "fastnet.throughput.command"},
             "fastnet.throughput": set(), "fastnet.throughput.command": {"fastnet.cli"}}
    assert circles(graph) == [["fastnet.cli", "fastnet.throughput.command"]]
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": set(), "e": {"a", "d"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert _path_within(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_relative_imports_resolve(tmp_path):
    pkg = tmp_path / "fastnet"
    (pkg / "a").mkdir(parents=True)
    for f in ("__init__.py", "x.py", "a/__init__.py", "a/b.py", "a/c.py"):
        (pkg / f).write_text("")
    (pkg / "a" / "b.py").write_text("from . import c\nfrom .. import x\nfrom ..a import name\n\n"
                                    "def f():\n    from fastnet import y\n")
    modules = module_names(pkg)
    assert imports_of("fastnet.a.b", pkg / "a" / "b.py", modules) == {"fastnet.a.c", "fastnet.x", "fastnet.a",
                                                                     "fastnet"}
    (pkg / "x.py").write_text("import fastnet.a.c\n")
    assert imports_of("fastnet.x", pkg / "x.py", modules) == {"fastnet.a", "fastnet.a.c"}
    (pkg / "a" / "c.py").write_text("from . import b\nfrom .b import f\n")
    assert imports_of("fastnet.a.c", pkg / "a" / "c.py", modules) == {"fastnet.a.b"}


def test_no_import_circles():
    graph = import_graph()
    found = circles(graph)
    lines = []
    for component in found:
        circle = _path_within(graph, component)
        rest = sorted(set(component) - set(circle))
        lines.append(" -> ".join(circle) + (f" (the same circle also takes in {', '.join(rest)})" if rest else ""))
    assert not found, ("import circles in fastnet/ (one name, one place: move what both sides need to a module "
                       "that imports neither):\n" + "\n".join(lines))



# The rooms that feed the router pipeline, and those above them: the cycle loop (fastnet/engine/) calls both, so
# a run's data flows down through them and no kernel reaches up into a workload.
ABOVE_THE_KERNELS = ("engine", "traffic", "workloads", "mpi", "faults", "sim")


def test_the_kernels_import_no_room_above_them():
    graph = import_graph()
    up = {f"{m} -> {t}" for m, targets in graph.items() if m.startswith("fastnet.kernels")
          for t in targets if t.split(".")[1:2] and t.split(".")[1] in ABOVE_THE_KERNELS}
    assert not up, "kernels/ imports a room above it (engine/loop.py is where stages and workloads meet):\n" + \
        "\n".join(sorted(up))

# Sections documented outside docs/config.md (whose `## [section]` headings list the rest), and their page.
SECTION_PAGES = {"machine": "docs/machines.md", "throughput": "docs/throughput.md"}


def documented_sections() -> set[str]:
    names = set(re.findall(r"^## `\[(\w+)\]`", (ROOT / "docs" / "config.md").read_text(), re.MULTILINE))
    for name, page in SECTION_PAGES.items():
        assert f"[{name}]" in (ROOT / page).read_text(), f"{page} no longer documents [{name}]"
    return names | set(SECTION_PAGES)


def test_a_fresh_interpreter_accepts_every_documented_section():
    """No section may exist only once some other module has been imported (the [throughput] section did)."""
    sections = documented_sections()
    cfg = {name: {} for name in sections} | {"machine": {"name": "trinity"}, "workload": {"kind": "sr"}}
    code = ("import json, sys\nimport fastnet.config\n"
            "cfg = fastnet.config.resolve(json.loads(sys.argv[1]))\n"
            "print(json.dumps({'resolved': sorted(cfg), 'known': [*fastnet.config.SECTION_ORDER, "
            "*fastnet.config.EXTRA_SECTIONS]}))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", code, json.dumps(cfg)], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert set(answer["resolved"]) == sections
    assert set(answer["known"]) == sections, "a section config.py knows is not documented, or the reverse"


def test_the_numba_cache_is_named_after_every_file_kernels_are_built_from():
    """kernels/_jit.py names the cache after a hash of the kernel folders and of the modules whose constants kernels
    freeze: a kernel outside them, or a constant taken from a module outside them, would be left stale in the cache
    when its file changed (a new code in registry.py ran the cached loop of another routing)."""
    from fastnet.kernels._jit import HASHED_FOLDERS, HASHED_MODULES

    folders = {PACKAGE / f for f in HASHED_FOLDERS}
    jitted = re.compile(r"^@(jit\w*|numba\.\w*jit)\b|= *(jit\w*|numba\.\w*jit)\(", re.M)
    outside = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
               if p.parent not in folders and p.name != "_jit.py" and jitted.search(p.read_text())]
    assert not outside, f"kernels outside kernels/_jit.py HASHED_FOLDERS: {outside}"
    constant = re.compile(r"^from (?:\.\.+|fastnet\.)(\w+) import \(?([^)]*?)\)?$", re.M | re.S)
    taken = set()
    for folder in folders:
        for path in folder.glob("*.py"):
            for module, names in constant.findall(path.read_text()):
                if (PACKAGE / f"{module}.py").exists() and re.search(r"\b[A-Z][A-Z0-9_]+\b", names):
                    taken.add(f"{module}.py")
    assert taken <= set(HASHED_MODULES), f"constants taken from {sorted(taken - set(HASHED_MODULES))}"
