"""Every registry, walked name by name: the config accepts the name, `fastnet info` or the reader reaches it, and
its code reaches its own implementation in the kernels; a code no registry declares fails loudly."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numba
import numpy as np
import pytest
from typer.testing import CliRunner

import fastnet
from fastnet import registry as R
from fastnet.build.kinds import TOPOLOGIES
from fastnet.cli import app
from fastnet.config import resolve
from fastnet.inspect import describe, registries, registries_markdown
from fastnet.mpi.calls import Call, Trace
from fastnet.mpi.generators import PROGRAMS, generate
from fastnet.mpi.traces import READERS
from fastnet.mpi.traces.write import write_dumpi, write_dumpi_ascii, write_otf2
from fastnet.topology import build_network
from fastnet.traffic.patterns import PATTERNS, compile_traffic

PACKAGE = Path(fastnet.__file__).parent
DOCS = PACKAGE.parent / "docs"

# a small instance of every topology kind (what `fastnet info` builds for it)
SMALL = {
    "graph": {"edges": [[0, 1], [1, 2], [2, 3], [3, 0]], "p": 2},
    "dragonfly": {"p": 1, "a": 2, "h": 1},
    "slimfly": {"q": 5, "p": 1},
    "torus": {"dims": [4, 4]},
    "mesh": {"dims": [4, 4]},
    "twisted_torus": {"dims": [4, 2], "twist": 2},
    "fattree": {"k": 2, "n": 3},
    "jellyfish": {"switches": 8, "radix": 4, "p": 1},
    "hyperx": {"dims": [4, 4], "p": 1},
}


def choosing(key: str, name: str) -> dict:
    """The smallest config that chooses `name` for registry `key` (where the name needs a topology, its own)."""
    if key == "topology.kind":
        return {"topology": {"kind": name, **SMALL[name]}}
    if key == "routing.algorithm":
        kinds = R.ROUTINGS[name].attrs.get("kinds") or ("torus",)
        topology = {"kind": kinds[0], **SMALL[kinds[0]]}
        if name == "dor_express":  # a mesh with express channels (BookSim2's cmesh): a run refuses it on one without
            topology["express"] = 1
        return {"topology": topology, "routing": {"algorithm": name}}
    if key.startswith("mpi."):
        collective = next(c for c in ("allreduce", "allgather") if c in R.COLLECTIVE_ALGORITHMS[name].collectives)
        return {"mpi": {collective: name}}
    section, field = key.split(".")
    if key == "workload.kind" and name == "trace":
        return {"workload": {"kind": name, "file": "app.otf2"}}  # (read when the run starts)
    return {section: {field: name}}


ALL_NAMES = [(key, e.name) for key, reg in registries().items() for e in reg]
CONFIGURABLE = [(k, n) for k, n in ALL_NAMES if not k.startswith("mpi.") or
                {"allreduce", "allgather"} & set(R.COLLECTIVE_ALGORITHMS[n].collectives)]


def test_every_topology_kind_has_a_small_instance():
    """A new kind needs its small instance here (and in tests/test_networkx.py CASES, tests/test_memory.py SIZES and
    tests/test_engine.py TOPOLOGIES: docs/developing.md "Adding a topology"), or the tests below fail on a KeyError."""
    assert set(SMALL) == set(TOPOLOGIES.names), f"add {sorted(set(TOPOLOGIES.names) - set(SMALL))} to SMALL"


def test_names_are_unique_and_codes_are_dense():
    for key, reg in registries().items():
        assert len(set(reg.names)) == len(reg.names), key
        codes = sorted({e.code for e in reg})
        assert codes == list(range(len(codes))), f"{key}: codes {codes} are not 0..n-1"


@pytest.mark.parametrize("key,name", CONFIGURABLE, ids=[f"{k}={n}" for k, n in CONFIGURABLE])
def test_the_config_accepts_every_registered_name(key, name):
    cfg = resolve(choosing(key, name))
    if key.startswith("mpi."):
        assert name in cfg["mpi"].values()
    else:
        section, field = key.split(".")
        assert cfg[section][field] == name


def test_the_config_refuses_a_name_no_registry_declares():
    for key, _ in registries().items():
        if key.startswith("mpi."):
            continue
        section, field = key.split(".")
        with pytest.raises(fastnet.ConfigError) as e:
            resolve({section: {field: "no_such_name"}})
        assert e.value.field == key


def test_info_lists_every_registry():
    result = CliRunner().invoke(app, ["info", "--registries", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    for key, reg in registries().items():
        assert [row["name"] for row in listed[key]] == list(reg.names)
    assert (DOCS / "registries.md").read_text() == registries_markdown(), "run python docs/gen_registries.py"


def test_results_doc_lists_every_variable():
    from fastnet.results import VARIABLES, variables_markdown

    text = (DOCS / "results.md").read_text()
    assert text == variables_markdown(), "run python docs/gen_results.py"
    assert all(f"| `{name}` |" in text for name in VARIABLES)


@pytest.mark.parametrize("kind", TOPOLOGIES.names)
def test_info_builds_every_topology_kind_and_its_size_formula_holds(kind):
    cfg = resolve(choosing("topology.kind", kind))
    facts = describe(cfg)
    assert facts["topology"] == kind
    size = TOPOLOGIES[kind].size(cfg["topology"])
    if size is not None:
        assert (facts["routers"], facts["ports"] - facts["nodes"], facts["nodes"]) == size


@pytest.mark.parametrize("routing", R.ROUTINGS.names)
def test_info_lays_out_vcs_for_every_routing(routing):
    facts = describe(resolve(choosing("routing.algorithm", routing)))
    assert facts["vcs_local"] >= 1


@pytest.mark.parametrize("pattern", PATTERNS.names)
def test_every_pattern_makes_its_traffic(pattern):
    kind = "slimfly" if pattern in ("slimfly_worst", "group_adversarial") else "torus"
    size = {"dims": [8, 8]} if pattern == "taper64" else {}  # 64 nodes exactly
    cfg = resolve({"topology": {"kind": kind, **SMALL[kind], **size}, "traffic": {"pattern": pattern}})
    net = build_network(cfg)
    tr = compile_traffic(net, cfg["traffic"], seed=1)
    assert tr.pattern == PATTERNS[pattern].make(net, cfg["traffic"], np.random.default_rng(1))[0]


@pytest.mark.parametrize("program", PROGRAMS.names)
def test_every_mpi_program_generates_a_trace(program):
    params = resolve({"workload": {"kind": "mpi", "program": program}})["workload"]
    trace = generate(program, 8, params)
    assert len(trace.ranks) == 8 and any(trace.ranks)


WRITERS = {  # format -> how a Trace is written in it (fastnet/mpi/traces/write.py)
    "otf2": lambda trace, d: write_otf2(trace, d / "t.otf2"),
    "dumpi": lambda trace, d: write_dumpi(trace, d) and d,
    "dumpi_ascii": lambda trace, d: write_dumpi_ascii(trace, d) and d,
}


@pytest.mark.parametrize("fmt", READERS.names)
def test_every_trace_format_is_read_by_its_reader(fmt, tmp_path):
    if fmt not in WRITERS:
        pytest.skip(f"no writer for {fmt}: give WRITERS one to round-trip it (its reader's own tests cover it)")
    trace = Trace([[Call("send", peer=1, bytes=64), Call("barrier")], [Call("recv", peer=0, bytes=64),
                                                                       Call("barrier")]])
    back = READERS[fmt].read(WRITERS[fmt](trace, tmp_path))
    assert [[c.kind for c in calls if c.kind != "noop"] for calls in back.ranks] == [["send", "barrier"],
                                                                                   ["recv", "barrier"]]


# Kernel codes: each registry's constants, where the kernels branch on them.
DISPATCH = [  # (registry, module declaring its constants, prefix, files whose dispatch compares each one)
    (R.ROUTINGS, R, "R_", ["kernels/routing.py"]),
    (R.SWITCH_ALLOCATORS, R, "SA_", ["kernels/allocate.py"]),
    (R.VC_ALLOCATORS, R, "VA_", ["kernels/allocate.py", "kernels/vc_alloc.py"]),
    (R.GENERATORS, R, "GEN_", ["engine/generate.py", "engine/loop.py"]),
    (R.COLLECTIVE_ALGORITHMS, R, "ALG_", ["mpi/collectives.py"]),
]


def _compared(files: list[str]) -> set[str]:
    """Names compared with == or != anywhere in these files (`if routing == R_VAL or ...`)."""
    out = set()
    for f in files:
        for node in ast.walk(ast.parse((PACKAGE / f).read_text())):
            if isinstance(node, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
                out |= {n.id for n in [node.left, *node.comparators] if isinstance(n, ast.Name)}
    return out


@pytest.mark.parametrize("reg,module,prefix,files", DISPATCH, ids=[d[2] for d in DISPATCH])
def test_every_kernel_code_has_its_own_branch(reg, module, prefix, files):
    constants = {k: v for k, v in vars(module).items() if k.startswith(prefix) and isinstance(v, int)}
    assert sorted(constants.values()) == sorted({e.code for e in reg}), f"{prefix}* and {reg.what} codes differ"
    missing = set(constants) - _compared(files)
    assert not missing, f"no branch of {files} takes {sorted(missing)}"


def test_every_algebraic_topology_has_its_scan():
    import fastnet.build.kinds as K

    algebraic = {f"K_{e.name.upper()}" for e in TOPOLOGIES if e.algebra != "never"}
    assert algebraic <= set(vars(K)), "a kind routed by algebra has no K_* code"
    assert not algebraic - _compared(["kernels/minimal.py"]), "an algebraic kind has no scan in kernels/minimal.py"


def test_a_code_no_registry_declares_is_refused_before_compiling():
    from fastnet.engine.loop import cycle_loop

    with pytest.raises(NotImplementedError, match="routing algorithm code 99 is not registered"):
        cycle_loop(R.GEN_OPEN_LOOP, 99, -1, R.SA_SEPARABLE, R.VA_GREEDY, R.X_PACKET)
    with pytest.raises(NotImplementedError, match="switch allocator code 7"):
        cycle_loop(R.GEN_OPEN_LOOP, R.R_MIN, -1, 7, R.VA_GREEDY, R.X_PACKET)
    with pytest.raises(NotImplementedError, match="generate stage code 42"):
        cycle_loop(42, R.R_MIN, -1, R.SA_SEPARABLE, R.VA_GREEDY, R.X_PACKET)
    with pytest.raises(NotImplementedError, match="crossbar code 5"):
        cycle_loop(R.GEN_OPEN_LOOP, R.R_MIN, -1, R.SA_SEPARABLE, R.VA_GREEDY, 5)


def test_a_code_no_branch_takes_does_not_compile():
    """A dispatch on a kernel constant that no branch takes fails when the kernel compiles (_jit.no_implementation),
    instead of falling through to another variant: here the minimal-port scan of a kind with no algebra."""
    from fastnet.kernels._jit import jit
    from fastnet.kernels.minimal import algebraic_scan

    def scan_for(scan):
        @jit
        def probe(ps, port, ip, alg, buf):
            return algebraic_scan(ps, port, ip, alg, 0, 1, buf, scan)
        return probe

    args = (np.zeros(3, np.int32), np.zeros((2, 6), np.int32), np.zeros(104, np.int64), np.zeros((1, 1), np.int32),
            np.zeros(4, np.int64))
    with pytest.raises(numba.core.errors.CompilerError, match="code 99 has no implementation"):
        scan_for(99)(*args)


def test_a_stage_compiled_apart_prunes_on_its_caller_s_constant():
    """A constant passed to a kernel compiled apart (a stage's `crossbar`) arrives as a literal argument, and the
    branches it rules out are pruned there too (_jit._literal_arguments_as_constants): the callee of the other
    branch, which cannot compile, is never compiled."""
    from fastnet.kernels._jit import jit, jit_callee, jit_stage

    @jit_callee
    def broken(x):
        return x + undefined_name  # noqa: F821 - typing this fails

    @jit_stage
    def stage(x, code):
        if code == 1:
            return x + 1
        return broken(x)

    def loop_for(code):
        @jit
        def loop(x):
            return stage(x, code)
        return loop

    assert loop_for(1)(3) == 4
    with pytest.raises(numba.core.errors.TypingError):
        loop_for(2)(3)


def test_a_collective_algorithm_pair_no_branch_implements_is_refused():
    from fastnet.mpi.collectives import n_steps, round_plan
    from fastnet.mpi.state import CO_BARRIER, MAX_FANOUT

    peers, sizes = np.zeros(MAX_FANOUT, np.int64), np.zeros(MAX_FANOUT, np.int64)
    with pytest.raises(ValueError, match="no implementation"):
        round_plan(CO_BARRIER, R.ALG_RING, 0, 4, 0, 0, 8, np.zeros(1, np.int64), 0, peers, sizes)
    with pytest.raises(ValueError, match="no step count"):  # nor counted its steps
        n_steps(CO_BARRIER, R.ALG_RING, 4)
