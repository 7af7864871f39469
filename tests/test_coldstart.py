"""A cold start on two cores (fastnet/engine/coldstart.py): the kernels the cycle loop calls, compiled before it by
this process and a helper process, are the ones typing the loop asks for, with the same argument types."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numba

from fastnet.engine import coldstart

ROOT = Path(__file__).resolve().parents[1]

# In a process of its own (an empty numba cache, two cores): compile one loop, recording each kernel this process
# compiled and whether the helper ran; prints them as JSON.
PROBE = """
import json, sys
from numba.core import event
import fastnet.engine.coldstart as coldstart
from fastnet.engine.loop import stage_kernels
from fastnet.sim import compile_kernels, prepare

compiled, helpers = [], []
class Log(event.Listener):
    def on_start(self, ev):
        compiled.append((ev.data["dispatcher"], tuple(ev.data["args"])))
    def on_end(self, ev):
        pass
start = coldstart._start_helper
coldstart._start_helper = lambda: helpers.append(1) or start()
s = prepare({"topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "min"},
             "sim": {"warmup": 100, "measure": 200, "drain": 100}})
early = len(helpers)  # started while prepare() compiled its first kernel
plan = stage_kernels(s.net.topo, s.routes, s.params, s.traffic, s.workload, s.state, s.crew)
kernels = {id(kernel): kernel.py_func.__name__ for kernel, _ in plan}
with event.install_listener("numba:compile", Log()):
    compile_kernels(s)
here = [(kernels[id(d)], str(args)) for d, args in compiled if id(d) in kernels]
print(json.dumps({"helpers": len(helpers), "early": early, "here": here,
                  "plan": [(k.py_func.__name__, str(t)) for k, t in plan]}))
"""


def test_stage_kernels_are_the_loops_calls(tmp_path):
    """Each kernel of stage_kernels is compiled once, with its planned types, by this process or the helper: a
    call of run_chunk whose types drifted from the plan would be compiled again while typing the loop. The helper
    starts while prepare() compiles its first kernel (coldstart.start_early), and the plan takes it."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_NUM_THREADS="2", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["helpers"] == got["early"] == 1  # one helper, started early and taken by the plan
    plan = [tuple(k) for k in got["plan"]]
    here = [tuple(k) for k in got["here"]]
    assert len(here) == len(set(here)) and set(here) <= set(plan), (here, plan)


def test_compile_apart_without_a_helper(monkeypatch):
    """A helper that cannot start leaves every kernel to this process."""
    monkeypatch.setattr(coldstart, "_start_helper", lambda: None)

    @numba.njit
    def twice(x):
        return 2 * x

    coldstart.compile_apart([(twice, (numba.types.int64,)), (twice, (numba.types.float64,))])
    assert set(twice.overloads) == {(numba.types.int64,), (numba.types.float64,)}


@numba.njit
def _leaf(x):
    return x + 1


@numba.njit
def _middle(x):
    return 2 * _leaf(x)


@numba.njit
def _top(x):
    return _middle(x) - 1


def test_plan_takes_callees_first():
    """A kernel is taken only once the listed kernels it calls (found in its source, through helpers) are done;
    the longest chain's foot comes first, and this process takes only what the loop calls."""
    i64 = (numba.types.int64,)
    assert coldstart._reach(_top) >= {id(_middle), id(_leaf)}  # through _middle
    plan = coldstart._Plan([(_middle, i64), (twice_float, i64), (_leaf, i64)], loop=_top)
    assert plan.needs[id(_middle)] == {id(_leaf)} and plan.loop_needs == {id(_middle), id(_leaf)}
    first = plan.take(mine=True)
    assert first[0] is _leaf
    assert plan.take(mine=False)[0] is twice_float  # the only one ready: the helper's, though the loop needs none
    plan.finish(first)
    assert plan.take(mine=True)[0] is _middle
    assert plan.take(mine=True) is None

@numba.njit
def twice_float(x):
    return 2.0 * x


def test_mpi_stages_lie_beneath_advance_mpi():
    """mpi_kernels lists advance_mpi and stages it reaches, so each is compiled before what calls it."""
    from fastnet.mpi.kernel import advance_mpi, mpi_kernels

    kernels = [kernel for kernel, _ in mpi_kernels(None)]
    assert kernels[0] is advance_mpi
    assert {id(kernel) for kernel in kernels[1:]} <= coldstart._reach(advance_mpi)


# Kernels in a module of their own, so that numba caches them (kernels/_jit.py): a callee and a stage used by two
# callers, each compiled in a process of its own.
LINKED = """
from fastnet.kernels._jit import jit, jit_callee, jit_stage

@jit_callee
def twice(x):
    return 2 * x

@jit_stage
def plus_one(x):
    return x + 1

@jit
def first(x):
    return twice(x) + plus_one(x)

@jit
def second(x):
    return plus_one(twice(x)) * 3
"""
CALL = """
import json, sys
from numba.core import event
import linked

compiled = []
class Log(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        pass
with event.install_listener("numba:compile", Log()):
    value = getattr(linked, sys.argv[1])(5)
libraries = {type(cres.library).__name__ for cres in linked.twice.overloads.values()}
print(json.dumps({"value": int(value), "compiled": compiled, "library": sorted(libraries)}))
"""


def test_a_callee_from_the_cache_links_into_a_new_caller(tmp_path):
    """A @jit_callee or @jit_stage kernel keeps no machine code of its own (_jit._LinkedOnly), only the IR its
    callers link: one compiled by another process and loaded from numba's cache (a cold start's helper, or an
    earlier run with other routing) serves a caller compiled later, and both callers compute what they say."""
    (tmp_path / "linked.py").write_text(LINKED)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join([str(tmp_path),
                                                                                                 str(ROOT)]))

    def call(kernel):
        out = subprocess.run([sys.executable, "-c", CALL, kernel], env=env, capture_output=True, text=True,
                             check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert call("first") == {"value": 16, "compiled": ["first", "twice", "plus_one"], "library": ["_LinkedOnly"]}
    loaded = call("second")  # its callees from the cache
    assert (loaded["value"], loaded["compiled"]) == (33, ["second"])
    assert call("first")["value"] == 16


def test_an_early_helper_no_plan_takes_is_closed(monkeypatch):
    """start_early starts the helper when a fastnet kernel must be compiled (a cold start); if the loop then comes
    from the cache, no plan takes it and end_early closes its input, on which it exits."""
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)
    monkeypatch.setattr(coldstart, "CACHE", True)

    def thrice(x):
        return 3 * x

    thrice.__module__ = "fastnet.probe"  # a fastnet kernel, for start_early
    thrice = numba.njit(thrice)
    with coldstart.start_early():
        assert thrice(2) == 6
    assert len(coldstart._EARLY) == 1
    helper = coldstart._EARLY[0]
    coldstart.end_early()
    assert not coldstart._EARLY and helper.wait(timeout=120) == 0
