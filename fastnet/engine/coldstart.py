"""A cold start on two cores. numba compiles one function at a time and holds the GIL while it does, so on an empty
cache most of a first run went to compiling on one core while the other idled (perf/README.md, "Cold start on two
cores"). The kernels the cycle loop calls are compiled apart and cached on disk (kernels/_jit.py): before the loop
is compiled, this process and a helper process (`python -m fastnet.engine.coldstart`) take them one at a time from
one list, and typing the loop then finds each in memory or in the cache instead of compiling it.

Used only when the loop itself must be compiled, numba's cache is on and numba may use two cores or more
(NUMBA_NUM_THREADS; a sweep's workers each get their share of the cores). The machine code is the same whichever
process compiled it; a helper that cannot start or fails leaves its kernels to be compiled here, as without it.
"""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable

import numba
from numba.core import event

from ..kernels._jit import CACHE

_PACKAGE = Path(__file__).resolve().parents[1]
Kernel = tuple[Any, tuple]  # a @jit kernel (its dispatcher) and the argument types it is called with


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
            if CACHE and numba.config.NUMBA_NUM_THREADS >= 2:  # the helper hands its kernels over in the cache
                compile_apart(self.kernels())

    def on_end(self, ev: event.Event) -> None:  # noqa: D102
        pass


def compile_apart(kernels: list[Kernel]) -> None:
    """Compile (or load) each kernel with its argument types, this process and one helper process each taking the
    next from the list (the largest first) until none is left."""
    todo = deque((kernel, tuple(types)) for kernel, types in kernels if tuple(types) not in kernel.overloads)
    feeder = None
    if len(todo) > 1:
        helper = _start_helper()
        if helper is not None:
            feeder = threading.Thread(target=_feed, args=(helper, todo), name="fastnet-coldstart", daemon=True)
            feeder.start()
    while (item := _next(todo)) is not None:
        kernel, types = item
        kernel.compile(types)
    if feeder is not None:
        feeder.join()  # the helper's last kernel: in the cache once it answers


def _next(todo: deque) -> Kernel | None:
    """The next kernel of the list both processes take from, None when it is empty (the other may take the last
    between a test and a take, so none is made)."""
    try:
        return todo.popleft()
    except IndexError:
        return None


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


def _feed(helper: subprocess.Popen, todo: deque) -> None:
    """Hand the helper the next kernel each time it has finished one; stop when none is left or it fails (what
    it has not compiled, this process compiles while typing the loop)."""
    try:
        while (taken := _next(todo)) is not None:
            kernel, types = taken
            item = pickle.dumps((kernel.py_func.__module__, kernel.py_func.__name__, types))
            helper.stdin.write(len(item).to_bytes(8, "little") + item)
            helper.stdin.flush()
            if helper.stdout.readline() != b"ok\n":
                break
    except OSError:  # the helper died: a broken pipe
        pass
    finally:
        try:
            helper.stdin.close()
        except OSError:
            pass
        helper.wait()


def _serve() -> None:
    """The helper: compile each kernel it is sent into numba's cache, answer "ok", until its input closes."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while len(size := stdin.read(8)) == 8:
        module, name, types = pickle.loads(stdin.read(int.from_bytes(size, "little")))
        getattr(importlib.import_module(module), name).compile(types)
        stdout.write(b"ok\n")
        stdout.flush()


if __name__ == "__main__":
    _serve()
