"""The shape of the code (issue 34): functions a reader can hold, kernels included."""

import ast
from pathlib import Path

MAX_LINES = 80  # def line to last line, docstring included (ast: end_lineno - lineno + 1)
PACKAGE = Path(__file__).resolve().parents[1] / "fastnet"


def long_functions(root: Path, limit: int) -> list[tuple[str, str, int, int]]:
    """(file under root, qualified name, first line, lines) of every function or method over `limit` lines."""
    out = []
    for path in sorted(root.rglob("*.py")):
        stack = [(ast.parse(path.read_text(), filename=str(path)), "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = prefix + child.name
                    lines = child.end_lineno - child.lineno + 1
                    if not isinstance(child, ast.ClassDef) and lines > limit:
                        out.append((path.relative_to(root).as_posix(), name, child.lineno, lines))
                    stack.append((child, name + "."))
                else:
                    stack.append((child, prefix))
    return sorted(out)


def test_no_function_over_80_lines():
    """Split a longer function into stages named for what they do (sim.prepare, results.to_dataset)."""
    long = long_functions(PACKAGE, MAX_LINES)
    assert not long, "over 80 lines: " + "; ".join(f"fastnet/{path}:{line} {name} ({n} lines)"
                                                   for path, name, line, n in long)


def test_long_functions_methods_and_inner_functions_are_named(tmp_path):
    body = "".join(f"        x{i} = {i}\n" for i in range(80))  # 80 lines: with its def line, 81
    (tmp_path / "m.py").write_text("def short():\n    pass\n\n\nclass A:\n    def long(self):\n" + body +
                                   "\n\ndef outer():\n    def inner():\n" + body)
    assert long_functions(tmp_path, MAX_LINES) == [("m.py", "A.long", 6, 81), ("m.py", "outer", 89, 82),
                                                   ("m.py", "outer.inner", 90, 81)]


def test_each_constant_prefix_has_one_meaning():
    """Module-level constants name their family with a prefix (PK_ packet columns, RK_ rank columns, W_ workload
    kinds, ...): a prefix is defined in one module, and other modules import from it, so `S_DONE` cannot be a
    statistic in one file and a rank state in another (issue 34). Likewise no constant name is defined in two
    modules (two KIND_CODES, two KEYS).

    Prefix: the name up to and including its first underscore. Public names only (`_INT` is the module's own,
    never imported). Allowed in several modules: words that qualify what follows instead of naming a family
    (GENERIC)."""
    import ast
    import re
    from pathlib import Path

    import fastnet

    generic = {
        "ALL_": "all of: ALL_FUNCTIONS (DUMPI function ids), ALL_PATTERNS (throughput patterns)",
        "DEFAULT_": "the default of: DEFAULT_CONFIG, DEFAULT_Y, DEFAULT_MODELS, DEFAULT_LINK_GBPS",
        "MAX_": "the most of: MAX_VCS, MAX_FANOUT, MAX_ROWS, MAX_CYCLES, ...",
        "MIN_": "the least of: MIN_MEASURE, MIN_CHUNK",
        "N_": "the number of: N_PK (packet columns), N_OP, N_MS, ... (each record's width, beside its columns)",
        "SINGLE_": "one of: SINGLE_WAITS (MPI calls completing one request), SINGLE_PATH_ROUTINGS",
    }
    root = Path(fastnet.__file__).parent
    defined: dict[str, set[str]] = {}  # name -> modules that assign it at module level
    registries: set[str] = set()  # a registry (VC_ALLOCATORS) is a table of names, not one of a prefix's family
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root.parent).as_posix()
        body = list(ast.parse(path.read_text()).body)
        while body:
            node = body.pop(0)
            if isinstance(node, (ast.If, ast.Try)):  # module-level `if` / `try` blocks assign module names too
                body += node.body + node.orelse + getattr(node, "finalbody", []) + [
                    s for h in getattr(node, "handlers", []) for s in h.body]
                continue
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            if isinstance(getattr(node, "value", None), ast.Call) and getattr(node.value.func, "id", "") == "Registry":
                registries |= {t.id for t in targets if isinstance(t, ast.Name)}
            for target in targets:
                for name in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                    if isinstance(name, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]*", name.id):
                        defined.setdefault(name.id, set()).add(module)
    assert len(defined) > 200, "found too few constants: is this fastnet's source?"

    twice = {name: sorted(mods) for name, mods in defined.items() if len(mods) > 1}
    by_prefix: dict[str, dict[str, list[str]]] = {}
    for name, mods in defined.items():
        if "_" in name.strip("_") and name not in registries:
            prefix = name[:name.index("_") + 1]
            for m in mods:
                by_prefix.setdefault(prefix, {}).setdefault(m, []).append(name)
    shared = {prefix: {m: sorted(names) for m, names in sorted(mods.items())}
              for prefix, mods in sorted(by_prefix.items()) if len(mods) > 1 and prefix not in generic}
    problems = [f"{n} is defined in {', '.join(m)}: give each meaning its own name, or import it from one module"
                for n, m in sorted(twice.items())]
    problems += [f"prefix {p} is defined in " + "; ".join(f"{m} ({', '.join(n)})" for m, n in mods.items())
                 + ": one family per prefix, in one module" for p, mods in shared.items()]
    assert not problems, "\n".join(problems)
