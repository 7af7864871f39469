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
