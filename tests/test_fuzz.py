"""Property tests (Hypothesis) of whole runs and of the command line.

- Random valid configs run without an error (a deadlock counts as one: every routing claims deadlock freedom),
  pass the conservation audit (fastnet.run raises ConservationError otherwise) and give the same results when run
  again with the same seed.
- Random invalid input to `fastnet run` (bad types and ranges, unknown keys and sections, combinations the network
  refuses, malformed TOML, missing or unreadable files) is one line on stderr naming the field, exit code 2, no
  traceback, and an existing `--out` store is left as it was.

CI runs the `ci` profile (tests/conftest.py): 200 examples per property, derandomized and without an example
database, so every run tries the same examples. The nightly profile tries 10x as many, new ones each time:

    HYPOTHESIS_PROFILE=nightly pytest tests/test_fuzz.py --hypothesis-show-statistics

A failure prints the smallest example found and a @reproduce_failure blob that replays it.

Compile time: each combination of (routing, switch allocator, workload generator, minimal-port scan, VC
allocation, crossbar) is a cycle loop of its own (sim.compile_kernels: 10-40 s the first time, most of CI's time).
The valid configs therefore take those from KERNELS, combinations the rest of the suite compiles anyway, and vary
everything else freely: sizes, VCs, buffers, delays, link latencies and bandwidths, speedup, patterns, loads, seeds,
timeseries and failures. Networks are tiny and runs a few thousand cycles, so each example, run twice, takes
milliseconds once its kernel is compiled.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import io
import json
import math
import os
import re
import sys
import tomllib
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple
from unittest import mock

import networkx as nx
import pytest
import xarray as xr
from hypothesis import event, given, note, reject, settings
from hypothesis import strategies as st

import fastnet
from fastnet import config as C
from fastnet.topology import build_network
from fastnet.build.network import GLOBAL, NODE, P_CLASS, P_PEER_ROUTER, P_ROUTER
from fastnet.cli import main
from fastnet.errors import ConfigError
from fastnet.faults.schema import SCHEMA as FAULT_KEYS
from fastnet.machines import names as machine_names
from fastnet.mpi.schema import KEYS as MPI_KEYS, ALL_KEYS as WORKLOAD_KEYS
from fastnet.results import summary
from fastnet.sim import prepare

FUZZ = settings(settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci")))

SIF, ISLIP = "separable_input_first", "islip"
TABLE_KINDS = ("torus", "mesh", "twisted_torus", "graph", "jellyfish", "slimfly")  # a failure can be routed around

# (routing, switch allocator, workload, topology kinds, VC choices, crossbars): each distinct topology scan (the
# distance table, the dragonfly's or the HyperX's algebra), VC allocator (roomiest and round_robin share one) and
# crossbar among them is a cycle loop of its own, and every one of them is a loop the test named compiles too, so on
# CI (one numba cache for the whole suite) this file adds no compilation. Add a row or a choice only for a loop the
# suite already runs, or pay 10-40 s of CI time for it (a flit crossbar is a loop apart from the packet one).
GREEDY = ("roomiest", "round_robin")
BOTH, PACKET, FLIT = ("packet", "flit"), ("packet",), ("flit",)
KERNELS = [
    ("min", SIF, "open_loop", ("torus", "mesh", "twisted_torus", "graph", "jellyfish", "slimfly", "fattree"),
     GREEDY, BOTH),  # test_engine, test_faults (flit)
    ("min", ISLIP, "open_loop", ("torus", "mesh", "fattree"), GREEDY, BOTH),  # test_engine (iSLIP: fat tree, torus)
    ("val", SIF, "open_loop", ("torus", "mesh", "graph", "jellyfish", "slimfly", "fattree"),
     GREEDY, PACKET),  # test_fattree_mport
    ("dor", SIF, "open_loop", ("torus", "torus", "mesh"), GREEDY, PACKET),  # test_faults, test_routing (failures)
    ("adaptive", SIF, "open_loop", ("torus", "torus", "mesh"), GREEDY, BOTH),  # test_faults, test_routing
    ("dor", SIF, "open_loop", ("hyperx",), GREEDY, PACKET),  # test_hyperx
    ("min", SIF, "open_loop", ("dragonfly",), GREEDY, BOTH),  # test_engine
    ("val", SIF, "open_loop", ("dragonfly",), GREEDY, PACKET),  # test_dragonfly_aries, test_faults
    ("ugal_l", SIF, "open_loop", ("dragonfly",), GREEDY, PACKET),  # test_dragonfly_aries, test_faults
    ("updown", SIF, "open_loop", ("fattree",), GREEDY, BOTH),  # test_engine
    ("min", SIF, "collective", ("torus", "mesh", "graph", "fattree"), GREEDY, PACKET),  # a2a, o2a, a2o: test_workloads
    # BookSim2's VC allocators: iSLIP on anynet graphs (test_engine, test_booksim), on the torus and mesh
    # (test_booksim, test_booksim_router); separable input-first on the dragonfly (test_booksim)
    ("min", ISLIP, "open_loop", ("graph",), ("islip",), FLIT),
    ("dor", ISLIP, "open_loop", ("torus", "mesh"), ("islip",), BOTH),
    ("min", SIF, "open_loop", ("dragonfly",), ("separable_input_first",), FLIT),
]

# ---------------------------------------------------------------------------------------------------------------
# valid configs
# ---------------------------------------------------------------------------------------------------------------


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _is_power(n: int, base: int) -> bool:
    while n > 1 and n % base == 0:
        n //= base
    return n == 1


@st.composite
def grid(draw, kind: str, small: bool):
    """torus, mesh: 1 to 3 dimensions of 2 or more routers (a torus dimension of 2: two links between the same
    routers), at most 36 routers (16 for closed-loop workloads)."""
    n = draw(st.integers(1, 3))
    longest = {1: 8, 2: 6, 3: 3} if not small else {1: 8, 2: 4, 3: 2}
    dims = draw(st.lists(st.integers(2 if n > 1 else 3, longest[n]), min_size=n, max_size=n))
    topo = {"kind": kind, "dims": dims, "p": draw(st.integers(1, 2))}
    if draw(st.integers(0, 4)) == 0:  # parallel links, per dimension or all alike
        topo["links"] = draw(st.one_of(st.integers(1, 2), st.lists(st.integers(1, 2), min_size=n, max_size=n)))
    return topo


@st.composite
def twisted_torus(draw):
    k0 = draw(st.integers(3, 6))
    return {"kind": "twisted_torus", "dims": [k0, draw(st.integers(2, 4))], "twist": draw(st.integers(0, k0 - 1)),
            "p": draw(st.integers(1, 2))}


@st.composite
def hyperx(draw):
    dims = draw(st.one_of(st.lists(st.integers(2, 4), min_size=2, max_size=2),
                          st.lists(st.integers(2, 3), min_size=3, max_size=3)))
    trunking = draw(st.one_of(st.just(1), st.integers(1, 2),
                              st.lists(st.integers(1, 2), min_size=len(dims), max_size=len(dims))))
    return {"kind": "hyperx", "dims": dims, "trunking": trunking, "p": draw(st.integers(1, 2)),
            "distance_latency": draw(st.booleans())}


@st.composite
def dragonfly(draw):
    p, a, h = draw(st.integers(1, 2)), draw(st.integers(2, 4)), draw(st.integers(1, 2))
    bundle = draw(st.sampled_from(_divisors(a * h))) if draw(st.integers(0, 3)) == 0 else 1
    links = a * h // bundle  # logical global links per group
    g = draw(st.one_of(st.just("auto"), st.sampled_from([d + 1 for d in _divisors(links)])))
    shapes = ["auto", [a]] + [[n1, a // n1] for n1 in _divisors(a) if 1 < n1 < a]
    return {"kind": "dragonfly", "p": p, "a": a, "h": h, "g": g, "global_bundle": bundle,
            "arrangement": draw(st.sampled_from(["consecutive", "palmtree"])),
            "group_shape": draw(st.sampled_from(shapes))}


@st.composite
def fattree(draw):
    if draw(st.booleans()):
        return {"kind": "fattree", "k": draw(st.integers(2, 3)), "n": draw(st.integers(2, 3))}
    return {"kind": "fattree", "form": "m_port_n_tree", "m": draw(st.sampled_from([4, 6])),
            "n": draw(st.integers(2, 3))}


@st.composite
def jellyfish(draw):
    d = draw(st.integers(2, 4))  # network ports per switch
    switches = draw(st.integers(d + 1, 12).filter(lambda s: s * d % 2 == 0))
    p = draw(st.integers(1, 2))
    return {"kind": "jellyfish", "switches": switches, "radix": d + p, "p": p, "seed": draw(st.integers(0, 1000))}


@st.composite
def graph(draw, small: bool):
    """A ring with chords (no failure of one link disconnects it), optionally some global links, and p per router
    or one for all."""
    R = draw(st.integers(3, 8 if small else 10))
    pairs = {(i, (i + 1) % R) if i < (i + 1) % R else ((i + 1) % R, i) for i in range(R)}
    chords = draw(st.lists(st.tuples(st.integers(0, R - 1), st.integers(0, R - 1)), max_size=R))
    pairs |= {(min(u, v), max(u, v)) for u, v in chords if u != v}
    classes = draw(st.booleans())
    edges = [[u, v, draw(st.sampled_from(["local", "global"]))] if classes else [u, v] for u, v in sorted(pairs)]
    if draw(st.booleans()):
        p = draw(st.integers(1, 2))
    else:
        p = draw(st.lists(st.integers(0, 2), min_size=R, max_size=R).filter(lambda c: sum(c) >= 2))
    return {"kind": "graph", "edges": edges, "p": p}


def topology(kind: str, small: bool = False):
    return {
        "torus": lambda: grid("torus", small), "mesh": lambda: grid("mesh", small), "twisted_torus": twisted_torus,
        "hyperx": hyperx, "dragonfly": dragonfly, "fattree": fattree, "jellyfish": jellyfish,
        "graph": lambda: graph(small),
        "slimfly": lambda: st.fixed_dictionaries({"kind": st.just("slimfly"), "q": st.just(5),
                                                  "p": st.sampled_from([1, 2, "auto"])}),
    }[kind]()


class Net(NamedTuple):
    nodes: int
    pairs: tuple[tuple[int, int], ...]  # router pairs linked (u < v)
    global_pairs: tuple[tuple[int, int], ...]  # those linked by a global link
    bridges: frozenset[tuple[int, int]]  # pairs whose failure disconnects the routers
    empty: tuple[int, ...]  # routers without nodes


@functools.lru_cache(maxsize=256)
def _network(topo_json: str) -> Net:
    net = build_network(C.resolve({"topology": json.loads(topo_json)}))
    port = net.topo.port
    links = port[port[:, P_CLASS] != NODE]
    ends = [(int(min(u, v)), int(max(u, v)), int(c)) for u, v, c in
            zip(links[:, P_ROUTER], links[:, P_PEER_ROUTER], links[:, P_CLASS])]
    pairs = sorted({(u, v) for u, v, _ in ends})
    bridges = frozenset((min(u, v), max(u, v)) for u, v in nx.bridges(nx.Graph(pairs)))
    has_nodes = set(net.node_router.tolist())
    return Net(net.n_nodes, tuple(pairs), tuple(sorted({(u, v) for u, v, c in ends if c == GLOBAL})), bridges,
               tuple(r for r in range(net.n_routers) if r not in has_nodes))


def network_of(topo: dict) -> Net:
    return _network(json.dumps(topo, sort_keys=True))


@st.composite
def failures(draw, topo: dict, routing: str, closed: bool, net: Net, end: int):
    """A [faults] section the routing can route around (faults/plan.py _supported), or None."""
    kind = topo["kind"]
    routers_fail = (kind in TABLE_KINDS and routing in ("min", "val")) or (kind == "fattree" and routing == "updown")
    if kind == "dragonfly" and routing in ("val", "ugal_l"):
        pool, most = net.global_pairs, 2  # only global links may fail in a dragonfly
    elif kind == "torus" and routing in ("dor", "adaptive"):
        pool, most = net.pairs, 1  # dimension-order routing goes round one failed link per ring
    elif routers_fail:
        pool, most = net.pairs, 2
    else:
        return None
    if not pool or draw(st.integers(0, 3)) == 0:
        return None
    forms = ["links", "links", "events"] + ["fraction"] * (kind == "dragonfly") + ["routers"] * routers_fail
    # a closed-loop workload cannot lose packets: failures from the start only, on a network still connected
    form = "links" if closed else draw(st.sampled_from(forms))
    n = 1 if closed else draw(st.integers(1, most))
    # allow_disconnected: traffic without a route is dropped and counted (open loop only); without it, only links
    # whose loss leaves the network connected
    allow = not closed and (n > 1 or form == "routers" or draw(st.integers(0, 3)) == 0)
    if kind in ("torus", "mesh") and routing in ("val", "ugal_l", "ugal_g"):
        return None  # they route by dimension order in each phase, without a detour: refused with failures
    if kind == "torus" and 2 in topo["dims"] and routing in ("dor", "adaptive"):
        allow = True  # a ring of two loses both its links with the pair: refused unless allow_disconnected
    if not allow:
        pool = tuple(pair for pair in pool if pair not in net.bridges)
        if not pool:
            return None
    down = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n, unique=True))
    faults: dict = {"allow_disconnected": True} if allow else {}
    if form == "fraction":
        faults.update(fraction=draw(st.floats(0.05, 0.35)), link_class="global", seed=draw(st.integers(0, 2**31)))
    elif form == "links":
        faults["links"] = [list(pair) for pair in down]
    elif form == "routers":  # its nodes are cut off unless it has none
        routers = net.empty if net.empty and draw(st.booleans()) else sorted({r for pair in net.pairs for r in pair})
        faults["routers"] = [draw(st.sampled_from(routers))]
    else:
        events = []
        for u, v in down:
            fail = draw(st.integers(1, end))
            events.append([fail, "fail", u, v])
            if draw(st.booleans()):
                events.append([draw(st.integers(fail + 1, end + 500)), "recover", u, v])
        if routers_fail and allow and draw(st.integers(0, 3)) == 0:  # and a router
            events.append([draw(st.integers(1, end)), "fail", draw(st.sampled_from(sorted({r for pair in net.pairs
                                                                                            for r in pair})))])
        faults["events"] = events
    return faults


def patterns(kind: str, nodes: int) -> list[str]:
    names = ["uniform", "uniform", "permutation", "shift", "hotspot", "tornado"]
    names += ["bitcomp"] * _is_power(nodes, 2) + ["transpose"] * _is_power(nodes, 4)
    names += ["group_adversarial"] * (kind in ("dragonfly", "slimfly")) + ["slimfly_worst"] * (kind == "slimfly")
    return names


@st.composite
def valid_configs(draw, kernel):
    """(config, VCs above the fewest the routing needs, or None for "auto") for a row of KERNELS."""
    routing, allocator, workload, kinds, vc_choices, crossbars = kernel
    kind = draw(st.sampled_from(kinds))
    closed = workload != "open_loop"
    topo = draw(topology(kind, small=closed))
    net = network_of(topo)
    nodes = net.nodes
    packet = draw(st.sampled_from([1, 2, 3, 4, 5, 8, 10, 16]))
    phit_bytes = draw(st.sampled_from([1, 4, 4, 8]))
    router = {
        "buffer_phits": packet * draw(st.integers(1, 4)) + draw(st.integers(0, packet)),
        "delay": draw(st.integers(0, 5)), "speedup": draw(st.sampled_from([1.0, 1.25, 1.5, 2.0, 3.0])),
        "alloc_iters": draw(st.integers(1, 3)), "allocator": allocator, "credit_delay": draw(st.integers(0, 3)),
        "ejection": draw(st.sampled_from(["single", "multiple"])),
        "crossbar": draw(st.sampled_from(crossbars)),
        "vc_choice": draw(st.sampled_from(vc_choices)),
    }
    if draw(st.booleans()):
        router.update(head_delay=draw(st.integers(0, 3)), vc_realloc=draw(st.integers(0, 3)))
    if draw(st.integers(0, 3)) == 0:
        router.update(vcs_injection=draw(st.integers(1, 3)),
                      buffer_phits_injection=packet * draw(st.integers(1, 3)),
                      buffer_phits_global=packet * draw(st.integers(1, 6)))
    links = {"latency": draw(st.integers(1, 6)), "latency_injection": draw(st.integers(1, 3))}
    if kind in ("dragonfly", "graph"):
        links["latency_global"] = draw(st.integers(1, 12))
    if draw(st.integers(0, 4)) == 0:  # links of different speeds (each class a fraction of the fastest)
        rate = st.sampled_from(["2.5 GB/s", "5 GB/s", "10 GB/s"])
        links.update(bandwidth_local=draw(rate), bandwidth_global=draw(rate), bandwidth_injection=draw(rate))
    rcfg: dict = {"algorithm": routing}
    if routing == "ugal_l":
        rcfg.update(ugal_queue=draw(st.sampled_from(C.UGAL_QUEUES.names)),
                    ugal_vcs=draw(st.sampled_from(C.UGAL_VCS.names)),
                    penalty=draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])), threshold=draw(st.integers(-10, 10)),
                    indirect_candidates=draw(st.integers(1, 4)))
    elif routing == "updown":
        rcfg["up_port"] = draw(st.sampled_from(C.UP_PORTS.names))
    elif routing == "min" and kind != "dragonfly":
        rcfg["min_path"] = draw(st.sampled_from(["random", "fixed"]))
    traffic = {"pattern": draw(st.sampled_from(patterns(kind, nodes))), "load": draw(st.floats(0.02, 1.0)),
               "packet_phits": packet, "phit_bytes": phit_bytes}
    if traffic["pattern"] == "shift":
        traffic["shift"] = draw(st.integers(1, 2 * nodes))
    elif traffic["pattern"] == "hotspot":
        traffic.update(hotspot_nodes=draw(st.lists(st.integers(0, nodes - 1), min_size=1, max_size=3, unique=True)),
                       hotspot_fraction=draw(st.floats(0.0, 1.0)))
    warmup, measure = draw(st.integers(200, 500)), draw(st.integers(500, 1000))
    sim = {"warmup": warmup, "measure": measure, "drain": 2000, "seed": draw(st.integers(0, 2**32 - 1)),
           "watchdog": draw(st.integers(200, 2000))}  # smaller than drain: a deadlock is found, not waited out
    cfg = {"topology": topo, "router": router, "links": links, "routing": rcfg, "traffic": traffic, "sim": sim}
    if closed:
        tasks = draw(st.one_of(st.just("all"), st.integers(2, nodes))) if nodes > 2 else "all"
        T = nodes if tasks == "all" else tasks
        wl = {"kind": draw(st.sampled_from(["a2a", "o2a", "a2o"])), "tasks": tasks,
              "message_bytes": draw(st.integers(1, 4 * packet * phit_bytes)),  # at most 4 packets
              "compute_cycles": draw(st.sampled_from([0, 0, 1, 20])),
              "mapping": draw(st.sampled_from(["linear", "random"])), "mapping_seed": draw(st.integers(0, 99))}
        if wl["kind"] != "a2a":
            wl["root"] = draw(st.integers(0, T - 1))
        cfg["workload"] = wl
        sim.update(max_cycles=2_000_000, skip_idle=draw(st.booleans()))
    elif draw(st.integers(0, 3)) == 0:
        sim["timeseries"] = draw(st.integers(100, 400))
    faults = draw(failures(topo, routing, closed, net, warmup + measure))
    if faults is not None:
        cfg["faults"] = faults
    event(f"topology: {kind}")
    event(f"faults: {'none' if faults is None else '+'.join(sorted(k for k in faults if k != 'seed'))}")
    return cfg, draw(st.one_of(st.none(), st.integers(0, 2)))


def comparable(ds: xr.Dataset) -> xr.Dataset:
    """The dataset without its wall-clock times (the only part of a result that may change between runs)."""
    out = ds.copy()
    out.attrs = {k: v for k, v in ds.attrs.items() if "seconds" not in k}
    return out


def same_results(a: xr.Dataset, b: xr.Dataset) -> None:
    sa, sb = summary(a), summary(b)
    sa.pop("wall_seconds"), sb.pop("wall_seconds")
    assert sa == sb
    xr.testing.assert_identical(comparable(a), comparable(b))


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}-{k[3][0]}-{k[4][0]}-{'-'.join(k[5])}")
@settings(FUZZ, max_examples=-(-FUZZ.max_examples // len(KERNELS)))  # the profile's examples over the kernels
@given(data=st.data())
def test_valid_configs_run_clean_and_the_same_again(kernel, data):
    cfg, extra_vcs = data.draw(valid_configs(kernel), label="case")
    note(json.dumps(cfg))
    try:
        auto = prepare(copy.deepcopy(cfg))  # the fewest VCs the routing needs (failures can lengthen routes)
    except ConfigError as e:  # a combination rule the strategy does not model: rare (see the statistics)
        event(f"rejected: {e.field}")
        note(str(e))
        reject()
    if extra_vcs is not None:
        cfg["router"]["vcs"] = auto.cfg["router"]["vcs"] + extra_vcs
        note(f"router.vcs = {cfg['router']['vcs']}")
    first = fastnet.run(copy.deepcopy(cfg))  # DeadlockError, WorkloadError, ConservationError: the test fails
    same_results(first, fastnet.run(copy.deepcopy(cfg)))
    result = summary(first)
    faults = cfg.get("faults")
    if not faults or not (faults.get("events") or faults.get("allow_disconnected")):
        assert result["packets_dropped"] == 0  # every node pair stays connected from the start
    if "workload" in cfg:  # skipping idle cycles gives the same results (config.py sim.skip_idle)
        flipped = copy.deepcopy(cfg)
        flipped["sim"]["skip_idle"] = not cfg["sim"]["skip_idle"]
        other = summary(fastnet.run(flipped))
        other.pop("wall_seconds"), result.pop("wall_seconds")
        assert other == result


# ---------------------------------------------------------------------------------------------------------------
# invalid input to `fastnet run`
# ---------------------------------------------------------------------------------------------------------------

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_value(v) -> str:
    """A value as TOML (written here rather than with fastnet's own writer, which is under test elsewhere)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return '"' + "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c)
                             for c in v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"


def toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else toml_value(k)


def to_toml(cfg: dict) -> str:
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in cfg.items() if not isinstance(v, dict)]
    for name, table in cfg.items():
        if isinstance(table, dict):
            lines += ["", f"[{toml_key(name)}]"] + [f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


# Small valid configs the invalid ones start from (each is refused before any kernel runs).
BASES = {
    "torus": {"topology": {"kind": "torus", "dims": [3, 3]}, "routing": {"algorithm": "dor"},
              "sim": {"warmup": 100, "measure": 200, "drain": 500}},
    "dragonfly": {"topology": {"kind": "dragonfly", "p": 1, "a": 2, "h": 1}, "routing": {"algorithm": "val"},
                  "traffic": {"packet_phits": 4}, "sim": {"warmup": 100, "measure": 200, "drain": 500}},
    "fattree": {"topology": {"kind": "fattree", "k": 2, "n": 2}, "routing": {"algorithm": "updown"}},
    "graph": {"topology": {"kind": "graph", "edges": [[0, 1], [1, 2], [2, 3], [3, 0]], "p": 2}},
    "a2a": {"topology": {"kind": "mesh", "dims": [3, 3]}, "workload": {"kind": "a2a", "message_bytes": 64}},
    "faults": {"topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "adaptive"},
               "faults": {"links": [[0, 1]], "events": [[100, "fail", 5, 6]]}},
}
SCHEMAS = {**C.SECTIONS, "faults": FAULT_KEYS, "workload": WORKLOAD_KEYS, "mpi": MPI_KEYS}
KNOWN_SECTIONS = ("topology", "machine", *SCHEMAS)

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # "[/" once broke the error line
NAME = st.text(st.characters(whitelist_categories=("L", "Nd"), whitelist_characters="_-"), min_size=1, max_size=12)
SCALARS = st.one_of(
    st.integers(-2**63, 2**63 - 1), st.integers(-3, 70), st.floats(), st.booleans(), TEXT,
    st.sampled_from(["auto", "min", "torus", "uniform", "40 ns", "2 GB/s", "-1", "", "fail", "all", "global"]),
)
JUNK = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(NAME, inner, max_size=3)), max_leaves=6)


@st.composite
def refused_by(draw, check):
    """A value `check` refuses (a few tries at random, then a table: no key takes one)."""
    for _ in range(8):
        value = draw(JUNK)
        if check(value) is not None:
            return value
    return {"not": "a value"} if check({"not": "a value"}) is not None else "not a value"


def _not_a_kind(v) -> str | None:
    return None if isinstance(v, str) and v in C.TOPOLOGIES else "not a kind"


def schema_of(base: dict, section: str) -> dict:
    if section == "topology":
        topo = base["topology"]
        return {**C.topology_schema(topo["kind"], topo.get("form")), "kind": (None, _not_a_kind)}
    if section == "machine":
        return {"name": (None, lambda v: None if isinstance(v, str) and v in machine_names() else "bad")}
    return SCHEMAS[section]


@st.composite
def bad_values(draw):
    """A known key given a value its check refuses."""
    base = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    section = draw(st.sampled_from(KNOWN_SECTIONS))
    schema = schema_of(base, section)
    key = draw(st.sampled_from(sorted(schema)))
    base.setdefault(section, {})[key] = draw(refused_by(schema[key][1]))
    return base, [], f"{section}.{key}"


@st.composite
def unknown_keys(draw):
    base = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    section = draw(st.sampled_from(KNOWN_SECTIONS))
    key = draw(NAME.filter(lambda k: k not in schema_of(base, section) and k not in ("kind", "graph")
                           and k not in C.TOPOLOGIES["fattree"].keys))
    base.setdefault(section, {})[key] = draw(JUNK)
    if section == "machine":
        base["machine"]["name"] = "trinity"
    return base, [], f"{section}.{key}"


@st.composite
def unknown_sections(draw):
    base = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    name = draw(NAME.filter(lambda n: n not in KNOWN_SECTIONS))
    base[name] = draw(st.one_of(st.dictionaries(NAME, JUNK, max_size=3), JUNK))
    return base, [], name


@st.composite
def not_tables(draw):
    base = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    section = draw(st.sampled_from(KNOWN_SECTIONS))
    base[section] = draw(st.one_of(SCALARS, st.lists(JUNK, max_size=3)))
    return base, [], section


@st.composite
def by_set(draw):
    """The same as bad_values, from the command line: a config file, then `--set section.key=value`."""
    cfg, _, field = draw(bad_values())
    section, key = field.split(".", 1)
    value = cfg[section].pop(key)
    return cfg, ["--set", f"{field}={toml_value(value)}"], field


MISSING, DIRECTORY = "@@missing", "@@directory"  # placeholders for paths made in the test's folder


def _file(content: str) -> str:
    return "@@file:" + content


def refused(i: int) -> list[tuple[str, dict, str]]:
    """Combinations each key allows alone but the network, routing or workload refuses: (base, changes to it,
    field named). `i` varies the numbers."""
    torus = {"kind": "torus", "dims": [3, 2 + i % 3]}
    cases = [
        ("torus", {"traffic": {"packet_phits": 3 + i % 30}, "router": {"buffer_phits": 1 + i % 2}},
         "router.buffer_phits"),
        ("torus", {"traffic": {"packet_phits": 8}, "router": {"buffer_phits_global": 1 + i % 7}},
         "router.buffer_phits_global"),
        ("torus", {"traffic": {"packet_phits": 8}, "router": {"buffer_phits_injection": 1 + i % 7}},
         "router.buffer_phits_injection"),
        ("torus", {"topology": {**torus, "dims": [3, 3]}, "traffic": {"pattern": "bitcomp"}}, "traffic.pattern"),
        ("torus", {"topology": {**torus, "dims": [2, 4]}, "traffic": {"pattern": "transpose"}}, "traffic.pattern"),
        ("torus", {"traffic": {"pattern": ["group_adversarial", "slimfly_worst"][i % 2]}}, "traffic.pattern"),
        ("torus", {"traffic": {"pattern": "hotspot", "hotspot_nodes": [0, 100 + i]}}, "traffic.hotspot_nodes"),
        ("dragonfly", {"routing": {"algorithm": ["dor", "adaptive", "updown"][i % 3]}}, "routing.algorithm"),
        ("graph", {"routing": {"algorithm": ["dor", "adaptive", "updown"][i % 3]}}, "routing.algorithm"),
        ("torus", {"router": {"vcs": 1}}, "router.vcs"),
        ("dragonfly", {"router": {"vcs": 1 + i % 2}}, "router.vcs"),
        ("dragonfly", {"router": {"vcs": 4, "vcs_global": 1}}, "router.vcs_global"),
        ("dragonfly", {"routing": {"algorithm": "min", "min_path": "fixed"}}, "routing.min_path"),
        ("torus", {"sim": {"max_cycles": 1 + i % 700}}, "sim.max_cycles"),
        ("torus", {"topology": {"kind": "dragonfly", "p": 1, "a": 4, "h": 2, "g": 4}}, "topology.g"),
        ("torus", {"topology": {"kind": "dragonfly", "a": 2, "h": 1, "g": 4 + i % 5}}, "topology.g"),
        ("torus", {"topology": {"kind": "dragonfly", "a": 4, "h": 1, "group_shape": [3, 1 + i % 3]}},
         "topology.group_shape"),
        ("torus", {"topology": {"kind": "dragonfly", "a": 3, "h": 1, "global_bundle": 2}}, "topology.global_bundle"),
        ("torus", {"topology": {"kind": "slimfly", "q": [6, 10, 12, 14, 15][i % 5]}}, "topology.q"),
        ("torus", {"topology": {"kind": "jellyfish", "switches": 5, "radix": 4, "p": 1}}, "topology.radix"),
        ("torus", {"topology": {"kind": "jellyfish", "switches": 8, "radix": 3, "p": 3 + i % 3}}, "topology.p"),
        ("torus", {"topology": {"kind": "twisted_torus", "dims": [4, 2, 2]}}, "topology.dims"),
        ("torus", {"topology": {**torus, "links": [1, 1, 1]}}, "topology.links"),
        ("torus", {"topology": {"kind": "hyperx", "dims": [3, 3], "trunking": [1, 2, 1]}}, "topology.trunking"),
        ("graph", {"topology": {"kind": "graph", "edges": [[0, 1], [2, 3]], "p": 1}}, "topology.edges"),
        ("graph", {"topology": {"kind": "graph", "edges": [], "p": 1}}, "topology.edges"),
        ("graph", {"topology": {"kind": "graph", "edges": [[0, 1], [1, 2]], "p": [1, 1]}}, "topology.p"),
        ("torus", {"topology": {"kind": "graph", "file": MISSING}}, "topology.file"),
        ("torus", {"faults": {"links": [[0, [4, 5, 7, 8][i % 4]]]}}, "faults.links"),  # not neighbours
        ("torus", {"faults": {"links": [[0, 50 + i]]}}, "faults.links"),
        ("torus", {"faults": {"links": [[0, 1], [1, 2]]}}, "faults"),  # two failures in ring 0, 1, 2
        ("torus", {"faults": {"routers": [i % 9]}}, "faults.routers"),  # dor is not a table routing
        ("torus", {"faults": {"events": [[10, "fail", 0, 1], [20, "recover", 3, 4]]}}, "faults.events[1]"),
        ("torus", {"faults": {"events": [[10 + i % 50, "fail", 0, 1], [5, "fail", 0, 1]]}}, "faults.events[0]"),
        ("dragonfly", {"faults": {"links": [[0, 1]]}}, "faults.links"),  # a local link of group 0
        ("dragonfly", {"faults": {"fraction": 0.5, "link_class": ["local", "any"][i % 2]}}, "faults.link_class"),
        ("dragonfly", {"faults": {"routers": [1]}}, "faults.routers"),
        ("dragonfly", {"routing": {"algorithm": "min"}, "faults": {"fraction": 1.0, "link_class": "global"}},
         "faults"),
        ("fattree", {"routing": {"algorithm": ["min", "val"][i % 2]}, "faults": {"links": [[0, 2]]}}, "faults"),
        ("torus", {"topology": {"kind": "hyperx", "dims": [3, 3], "p": 1}, "faults": {"links": [[0, 1]]}}, "faults"),
        ("a2a", {"faults": {"events": [[100, "fail", 0, 1]]}}, "faults.events"),
        ("a2a", {"faults": {"links": [[0, 1]], "allow_disconnected": True}}, "faults.allow_disconnected"),
        ("graph", {"faults": {"links": [[0, 1], [1, 2]]}}, "faults"),  # cuts router 1 off
        ("torus", {"faults": {"file": MISSING}}, "faults.file"),
        ("torus", {"faults": {"file": DIRECTORY}}, "faults.file"),
        ("torus", {"faults": {"file": _file("links = [[0, 1]\n")}}, "faults.file"),  # malformed TOML
        ("torus", {"faults": {"file": _file('file = "other.toml"\n')}}, "faults.file"),
        ("torus", {"faults": {"file": _file("[faults]\ncolour = 3\n")}}, "faults.colour"),
        ("torus", {"faults": {"file": _file(f"links = {i}\n")}}, "faults.links"),
        ("torus", {"faults": {"file": _file("links = [[0, 1], [1, 2]]\n")}}, "faults"),  # same ring under dor
        ("a2a", {"workload": {"kind": "a2a", "tasks": 10 + i % 50}}, "workload.tasks"),
        ("a2a", {"workload": {"kind": ["o2a", "a2o"][i % 2], "tasks": 4, "root": 4 + i % 9}}, "workload.root"),
        ("a2a", {"workload": {"kind": "sr", "messages": 5, "wave": 6 + i % 9}}, "workload.wave"),
        ("a2a", {"workload": {"kind": "a2a", "ranks_per_node": 2}}, "workload.ranks_per_node"),
        ("a2a", {"workload": {"kind": "a2a", "jobs": [{"kind": "mpi"}]}}, "workload.jobs"),
        ("a2a", {"workload": {"kind": "mpi", "jobs": [{"colour": 1}]}}, "workload.jobs[0].colour"),
        ("a2a", {"workload": {"kind": "graph500", "cycle_ns": 1.0, "link_gbps": 40}}, "workload.cycle_ns"),
        ("a2a", {"workload": {"kind": "trace"}}, "workload.file"),
        ("a2a", {"workload": {"kind": "trace", "file": MISSING}}, "workload.file"),  # a file not there: its key
        ("a2a", {"workload": {"kind": "trace", "file": DIRECTORY}}, DIRECTORY),  # a bad trace: its file
        ("a2a", {"workload": {"kind": "mpi", "mapping": MISSING + ".txt"}}, "workload.mapping"),
        ("torus", {"machine": {"name": "trinity"}, "topology": {"kind": "torus", "dims": [1, 4]}}, "topology.dims"),
    ]
    return cases


def refused_case(i: int, which: int) -> tuple[dict, list, str]:
    base, changes, field = refused(i)[which]
    cfg = C.merge(BASES[base], changes)
    if "workload" in changes:
        cfg["workload"] = changes["workload"]  # not merged: the base's keys may not apply to the new kind
    return cfg, [], field


REFUSED = len(refused(1))
refused_combinations = st.builds(refused_case, st.integers(1, 10**6), st.integers(0, REFUSED - 1))


@st.composite
def malformed_toml(draw):
    text = to_toml(BASES[draw(st.sampled_from(sorted(BASES)))])
    lines = text.splitlines()
    at = draw(st.integers(0, len(lines)))
    junk = draw(st.one_of(
        st.sampled_from(["[router", "x = ", "= 1", "[[", "vcs = 1\nvcs = 2", "k = 'open", 'k = "\\q"', "k = 1 2",
                         "[topology]", "k = [1, 2", "k = {a = 1", "k = 0x", "k = 1979-13-45", "k = tru"]),
        st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)))
    lines.insert(at, junk)
    text = "\n".join(lines)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return text.encode(), [], "config"
    reject()  # the text happens to be valid TOML


@st.composite
def undecodable(draw):
    head = to_toml(BASES["torus"]).encode()
    bad = draw(st.sampled_from([b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80abc"]))
    at = draw(st.integers(0, len(head)))
    return head[:at] + bad + head[at:], [], "config"


@st.composite
def no_config_file(draw):
    return draw(st.sampled_from([MISSING, DIRECTORY])), [], "config"  # (too long a name: test_regressions)


@st.composite
def bad_set_syntax(draw):
    item = draw(st.one_of(NAME, NAME.map(lambda s: s + "=1"), NAME.map(lambda s: s + ".x")))
    return None, ["--set", item], "--set"


INVALID = st.one_of(*(strategy.map(lambda case, kind=kind: (*case, kind)) for kind, strategy in [
    ("bad value", bad_values()), ("bad value by --set", by_set()), ("unknown key", unknown_keys()),
    ("unknown section", unknown_sections()), ("section not a table", not_tables()),
    ("refused combination", refused_combinations), ("malformed TOML", malformed_toml()),
    ("not UTF-8", undecodable()), ("no config file", no_config_file()), ("--set syntax", bad_set_syntax())]))


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """`fastnet ARGS` in this process: (exit code, stdout, stderr). An exception other than SystemExit (a
    traceback, for a user) propagates and fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.object(sys, "argv", ["fastnet", *args]), redirect_stdout(out), redirect_stderr(err):
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else int(e.code is not None)
    return code, out.getvalue(), err.getvalue()


def snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, hashlib.sha1(p.read_bytes()).hexdigest()
                                         if p.is_file() else "dir") for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def cli_dirs(tmp_path_factory):
    """(a folder for the invalid inputs, the folder of an existing --out store, the store, its snapshot)."""
    work = tmp_path_factory.mktemp("fuzz_inputs")
    (work / "directory").mkdir()
    keep = tmp_path_factory.mktemp("fuzz_out")
    store = keep / "kept.zarr"
    cfg = work / "tiny.toml"
    cfg.write_text(to_toml({"topology": {"kind": "torus", "dims": [3, 3]},
                            "sim": {"warmup": 50, "measure": 100, "drain": 300}}))
    code, _, err = run_cli(["run", str(cfg), "--quiet", "--json", "--out", str(store)])
    assert code == 0 and store.is_dir(), err
    return work, keep, store, snapshot(keep)


def materialize(value, work: Path):
    """Replace the @@ placeholders of a case by paths in `work` (writing the @@file: contents)."""
    if isinstance(value, dict):
        return {k: materialize(v, work) for k, v in value.items()}
    if isinstance(value, list):
        return [materialize(v, work) for v in value]
    if not isinstance(value, str) or not value.startswith("@@"):
        return value
    if value.startswith(MISSING):
        return str(work / "no-such-folder" / ("missing.toml" + value[len(MISSING):]))
    if value == DIRECTORY:
        return str(work / "directory")
    if value == "@@long":
        return str(work / ("x" * 300 + ".toml"))  # a name longer than the file system allows
    path = work / f"faults-{hashlib.sha1(value.encode()).hexdigest()[:8]}.toml"
    path.write_text(value[len("@@file:"):])
    return str(path)


@FUZZ
@given(case=INVALID)
def test_invalid_input_is_one_line_naming_the_field(case, cli_dirs):
    config, args, field, kind = case
    event(f"input: {kind}")
    work = cli_dirs[0]
    argv = argv_of(config, args, work)
    field = materialize(field, work)
    note(f"{argv} -> {field}")
    check_refused(argv, field, cli_dirs)


def check_refused(argv: list[str], field: str, cli_dirs) -> str:
    """Run `fastnet ARGV --out STORE`: exit code 2, one line on stderr naming `field`, nothing on stdout, the store
    as it was. Returns the line."""
    work, keep, store, before = cli_dirs
    code, out, err = run_cli([*argv, "--out", str(store)])
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert lines[0][len("error: "):].startswith(field + ": "), (field, err)
    assert out == ""
    after = snapshot(keep)
    if after != before:
        cli_dirs[3].clear()
        cli_dirs[3].update(after)  # so that only this case fails
    assert after == before  # the store is untouched, and no staged copy is left beside it
    return lines[0]


def argv_of(config, args: list[str], work: Path) -> list[str]:
    if config is None:
        return ["run", *args]
    if isinstance(config, str):
        return ["run", materialize(config, work), *args]
    path = work / "case.toml"
    path.write_bytes(config if isinstance(config, bytes) else to_toml(materialize(config, work)).encode())
    return ["run", str(path), *args]


@pytest.mark.parametrize("which", range(REFUSED), ids=[f"{base}-{field.lstrip('@')}" for base, _, field in refused(1)])
def test_every_refused_combination(which, cli_dirs):
    """Each rule of refused() once per run (the property above draws them among many other inputs)."""
    config, args, field = refused_case(1, which)
    check_refused(argv_of(config, args, cli_dirs[0]), materialize(field, cli_dirs[0]), cli_dirs)


# ---------------------------------------------------------------------------------------------------------------
# Regressions: what the fuzzing found (each was a traceback, a mangled line, or packets dropped on a network the
# plan accepted as connected), kept as plain cases.
# ---------------------------------------------------------------------------------------------------------------
H = 2**63 - 1
REGRESSIONS = [
    # cli.fail prints the message as rich markup
    (['--set', 'traffic.pattern="[/]"'], "traffic.pattern", None),  # MarkupError traceback
    (['--set', 'traffic.pattern="[b]x"'], "traffic.pattern", "'[b]x'"),  # printed as 'x'
    (['--set', 'faults.links=3'], "faults.links", "[u, v]"),  # "must be a list of  pairs"
    # config.resolve hashes topology.kind
    (['--set', 'topology.kind=[1]'], "topology.kind", None),  # TypeError: unhashable type: 'list'
    (['--set', 'topology.kind={a = 1}'], "topology.kind", None),
    # integers the checks let through with no upper bound, refused later by numpy
    (['--set', 'traffic.pattern="hotspot"', '--set', f'traffic.hotspot_nodes=[{2**40}]'], "traffic.hotspot_nodes",
     None),  # OverflowError: out of bounds for int32
    (['--set', 'links.latency=2147483648'], "links.latency", None),  # OverflowError
    (['--set', f'router.vcs={H}'], "router.vcs", None),  # OverflowError
    (['--set', f'router.buffer_phits={H}'], "router.buffer_phits", None),  # OverflowError
    (['--set', f'router.credit_delay={H}'], "router.credit_delay", None),  # ValueError: maximum dimension
    (['--set', f'topology.p={H}'], "topology.p", None),  # OverflowError
    (['--set', f'topology.links={H}'], "topology.links", None),  # ValueError: negative dimensions
    (['--set', 'topology.kind="graph"', '--set', f'topology.edges=[[0, {H}]]'], "topology.edges", None),
    (['--set', 'workload.kind="sr"', '--set', f'workload.messages={H}', '--set', f'workload.wave={H}'],
     "workload.messages", None),  # ValueError: maximum allowed dimension exceeded
    # Path.is_file raises OSError (ENAMETOOLONG) for a name longer than the file system allows
    (["@@long"], "config", None),  # config.read_toml
    (["--set", 'faults.file="@@long"'], "faults.file", None),  # faults/schema.py resolve_faults
]


@pytest.mark.parametrize("args,field,kept", REGRESSIONS, ids=[f"{i}-{c[1]}" for i, c in enumerate(REGRESSIONS)])
def test_regressions(args, field, kept, cli_dirs):
    work = cli_dirs[0]
    small = [] if any(a.startswith("topology.kind") for a in args) else \
        ["--set", 'topology.kind="torus"', "--set", "topology.dims=[3, 3]"]
    long = materialize("@@long", work)
    line = check_refused(["run", *small, *[a.replace("@@long", long) for a in args]], field, cli_dirs)
    assert kept is None or kept in line


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads a file without read permission")
def test_unreadable_config(cli_dirs, tmp_path):
    path = tmp_path / "unreadable.toml"
    path.write_text(to_toml(BASES["torus"]))
    path.chmod(0)
    check_refused(["run", str(path)], "config", cli_dirs)


GRID_DROPS = [  # (routing, topology, router and traffic keys): each with faults.links = [[0, 1]]
    # dor: in a torus dimension of 2 both ring links join the same two routers, so failing the pair (faults.links
    # names router pairs) leaves no way round; faults/plan.py _ring_cut once counted one lost link and accepted it
    ("dor", {"kind": "torus", "dims": [2, 3]}, {}),  # about 20 % dropped
    ("dor", {"kind": "torus", "dims": [2]}, {}),  # a network cut in two, all dropped
    ("adaptive", {"kind": "torus", "dims": [2]}, {}),  # the same
    ("adaptive", {"kind": "torus", "dims": [2, 2]}, {"router": {"buffer_phits": 1}, "traffic": {"packet_phits": 1,
                                                                                              "load": 1.0}}),  # escape
    # val on a torus or mesh was a table routing for _supported (so accepted) but routes by dimension order
    ("val", {"kind": "mesh", "dims": [4, 4]}, {}),  # about 20 % dropped
    ("val", {"kind": "torus", "dims": [2, 2]}, {}),  # about 60 % dropped
]


@pytest.mark.parametrize("routing,topology,extra", GRID_DROPS, ids=[
    f"{r}-{t['kind']}-{'x'.join(map(str, t['dims']))}" + ("-loaded" if e else "") for r, t, e in GRID_DROPS])
def test_grid_failures_cutting_nodes_off_are_refused(routing, topology, extra):
    """A failure the plan accepts without allow_disconnected must not cut any node pair off: these are refused."""
    cfg = fastnet.config.merge({"topology": topology, "routing": {"algorithm": routing}, "traffic": {"load": 0.3},
                                "sim": {"warmup": 200, "measure": 500, "drain": 2000},
                                "faults": {"links": [[0, 1]]}}, extra)
    with pytest.raises(ConfigError) as e:
        prepare(cfg)
    assert e.value.field == "faults"


def test_a2a_with_multiple_ejection():
    """All-to-all of one-packet messages with router.ejection = "multiple" (single ejection finishes in 17 cycles;
    a 3x3 mesh, o2a and a2o, and 4-phit packets do too)."""
    fastnet.run({"topology": {"kind": "torus", "dims": [5]}, "router": {"ejection": "multiple"},
                 "traffic": {"packet_phits": 1}, "workload": {"kind": "a2a", "message_bytes": 1}})
