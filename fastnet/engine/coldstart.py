"""A cold start on two cores. numba compiles one function at a time and holds the GIL while it does, so on an empty
cache most of a first run went to compiling on one core while the other idled (perf/README.md, "Cold start on two
cores"). The kernels the cycle loop calls are compiled apart and cached on disk (kernels/_jit.py): before the loop
is compiled, this process and a helper process (`python -m fastnet.engine.coldstart`) take them one at a time from
one list, and typing the loop then finds each in memory or in the cache instead of compiling it. The helper is
started as soon as a cold start shows (`start_early`: prepare() compiling its first kernel), so that its own start
overlaps prepare's compiles.

Used only when the loop itself must be compiled, numba's cache is on and numba may use two cores or more
(NUMBA_NUM_THREADS; a sweep's workers each get their share of the cores). The machine code is the same whichever
process compiled it; a helper that cannot start or fails leaves its kernels to be compiled here, as without it.
"""

from __future__ import annotations

import importlib
import os
import pickle
import select
import subprocess
import sys
import threading
from pathlib import Path
from types import CodeType
from typing import Any, Callable, Iterator

import numba
from numba.core import event
from numba.core.dispatcher import Dispatcher

from ..kernels._jit import CACHE

_PACKAGE = Path(__file__).resolve().parents[1]
Kernel = tuple[Any, tuple]  # a @jit kernel (its dispatcher) and the argument types it is called with


def _two_cores() -> bool:
    """Whether a cold start compiles on two cores: numba's cache on (the helper hands its kernels over in it) and
    numba allowed two threads or more."""
    return CACHE and numba.config.NUMBA_NUM_THREADS >= 2


def before_compiling(loop: Any, kernels: Callable[[], list[Kernel]]):
    """A context in which compiling `loop` (not loading it from the cache) first compiles `kernels()` on two
    cores. numba announces a compile only after its cache missed, so a warm run does nothing here."""
    return event.install_listener("numba:compile", _BeforeCompiling(loop, kernels))


class _BeforeCompiling(event.Listener):
    def __init__(self, loop: Any, kernels: Callable[[], list[Kernel]]):
        self.loop, self.kernels, self.done = loop, kernels, False

    def on_start(self, ev: event.Event) -> None:  # noqa: D102 - numba's listener API
        if ev.data["dispatcher"] is self.loop and not self.done:
            self.done = True
            if _two_cores():
                compile_apart(self.kernels(), self.loop)

    def on_end(self, ev: event.Event) -> None:  # noqa: D102
        pass


def start_early():
    """A context in which the first compile of a fastnet kernel (every one is cached: a compile is a cache miss,
    so a cold start, and the loop will be compiled too) starts the helper process at once, so that its own start
    (Python, numba, fastnet: about 1.5 s) overlaps the compiles of prepare() (a trace reader's, the open-loop
    sources' first draws) instead of delaying its share of the kernels. `compile_apart` takes it; `end_early`
    closes it if the loop came from the cache after all."""
    return event.install_listener("numba:compile", _StartEarly())


class _StartEarly(event.Listener):
    def on_start(self, ev: event.Event) -> None:  # noqa: D102 - numba's listener API
        if _EARLY or not _two_cores():
            return
        module = getattr(getattr(ev.data["dispatcher"], "py_func", None), "__module__", None) or ""
        if module.startswith(_PACKAGE.name + "."):
            helper = _start_helper()
            if helper is not None:
                _EARLY.append(helper)

    def on_end(self, ev: event.Event) -> None:  # noqa: D102
        pass


_EARLY: list[subprocess.Popen] = []  # a helper started by start_early, not yet taken


def end_early() -> None:
    """Close a helper that start_early started and no plan took (it exits when its input closes)."""
    while _EARLY:
        try:
            _EARLY.pop().stdin.close()
        except OSError:
            pass


def compile_apart(kernels: list[Kernel], loop: Any = None) -> None:
    """Compile (or load) each kernel with its argument types, this process and one helper process each taking the
    next from the list (the largest first) whose listed callees are compiled (`_Plan`). Returns once every kernel
    `loop` calls is compiled (all of them without a `loop`); the helper compiles the rest (the audit) meanwhile,
    and this process finds them in the cache when it calls them, or compiles them itself if it comes first."""
    plan = _Plan([(kernel, tuple(types)) for kernel, types in kernels if tuple(types) not in kernel.overloads], loop)
    item = plan.take(mine=True)  # the head of the longest chain: here, while the helper starts
    helper = (_EARLY.pop() if _EARLY else _start_helper()) if plan.todo else None
    if helper is not None:
        threading.Thread(target=_feed, args=(helper, plan), name="fastnet-coldstart", daemon=True).start()
    while item is not None:
        try:
            item[0].compile(item[1])
        finally:
            plan.finish(item)
        item = plan.take(mine=True)
    plan.wait_needed()


class _Plan:
    """The kernels both processes take from, in order, each once the listed kernels it calls (found in its source:
    `_reach`) are compiled, by either process: typing a kernel compiles its callees first, so a kernel taken
    before them would compile them again. The callees come first, the deepest first, then what the loop calls,
    then the rest (the audit, which only the helper takes: this process goes on to compile the loop)."""

    def __init__(self, items: list[Kernel], loop: Any):
        listed = {id(kernel) for kernel, _ in items}
        reach = {id(kernel): _reach(kernel) & listed - {id(kernel)} for kernel, _ in items}
        self.needs = {k: {c for c in callees if k not in reach[c]} for k, callees in reach.items()}  # no cycles
        self.loop_needs = _reach(loop) & listed if loop is not None else listed
        height: dict[int, int] = {}  # the longest chain of listed callers above a kernel

        def above(k: int) -> int:
            if k not in height:
                height[k] = max((above(c) + 1 for c, needs in self.needs.items() if k in needs), default=0)
            return height[k]

        self.todo = sorted(items, key=lambda item: (-above(id(item[0])), id(item[0]) not in self.loop_needs))
        self.done: set[int] = set()
        self.changed = threading.Condition()

    def take(self, mine: bool) -> Kernel | None:
        """The first kernel whose callees are compiled (waiting while the other process compiles one of them);
        None when none is left (for this process: none that the loop calls)."""
        with self.changed:
            while True:
                todo = [item for item in self.todo if not mine or id(item[0]) in self.loop_needs]
                if not todo:
                    return None
                for item in todo:
                    if self.needs[id(item[0])] <= self.done:
                        self.todo.remove(item)
                        return item
                self.changed.wait()

    def finish(self, item: Kernel) -> None:
        """`item` compiled, in the cache (or failed: whoever calls it compiles it)."""
        with self.changed:
            self.done.add(id(item[0]))
            self.changed.notify_all()

    def wait_needed(self) -> None:
        """Until every kernel the loop calls is compiled (the helper's last one among them: in the cache)."""
        with self.changed:
            while not self.loop_needs <= self.done:
                self.changed.wait()


def _reach(kernel: Any) -> set[int]:
    """The kernels (numba dispatchers, by id) that `kernel` calls, directly or through its callees: the names its
    code, and that of every kernel or helper it reaches, reads from its module or closure."""
    seen: set[int] = set()
    stack = [kernel]
    while stack:
        func = stack.pop().py_func
        scope = dict(func.__globals__)
        scope.update(zip(func.__code__.co_freevars, (cell.cell_contents for cell in func.__closure__ or ())))
        for name in _names(func.__code__):
            found = scope.get(name)
            if isinstance(found, Dispatcher) and id(found) not in seen:
                seen.add(id(found))
                stack.append(found)
    return seen


def _names(code: CodeType) -> Iterator[str]:
    yield from code.co_names
    yield from code.co_freevars
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _names(const)


def _start_helper() -> subprocess.Popen | None:
    """The same interpreter and environment, importing this fastnet (not another on the path): the same sources,
    so the same numba cache directory (kernels/_jit.py)."""
    if not sys.executable:
        return None
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_PACKAGE.parent)] + ([path] if path else [])))
    try:
        return subprocess.Popen([sys.executable, "-m", "fastnet.engine.coldstart"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None


def _feed(helper: subprocess.Popen, plan: _Plan) -> None:
    """Hand the helper the next kernel each time it has finished one; stop when none is left or it fails (what
    it has not compiled, this process compiles while typing the loop)."""
    try:
        while (item := plan.take(mine=False)) is not None:
            try:
                kernel, types = item
                message = pickle.dumps((kernel.py_func.__module__, kernel.py_func.__name__, types))
                helper.stdin.write(len(message).to_bytes(8, "little") + message)
                helper.stdin.flush()
                if helper.stdout.readline() != b"ok\n":
                    break
            finally:
                plan.finish(item)
    except OSError:  # the helper died: a broken pipe
        pass
    finally:
        try:
            helper.stdin.close()
        except OSError:
            pass
        helper.wait()


def _serve(first_wait: float = 120.0) -> None:
    """The helper: compile each kernel it is sent into numba's cache, answer "ok", until its input closes. One
    started early whose plan does not come within `first_wait` seconds (prepare() with no run after it) leaves."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    if os.name == "posix" and not select.select([stdin], [], [], first_wait)[0]:
        return
    while len(size := stdin.read(8)) == 8:
        module, name, types = pickle.loads(stdin.read(int.from_bytes(size, "little")))
        getattr(importlib.import_module(module), name).compile(types)
        stdout.write(b"ok\n")
        stdout.flush()


if __name__ == "__main__":
    _serve()
