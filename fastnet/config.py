"""Run configuration: TOML sections, their documented defaults, validation and `--set` overrides.

A config is a dict of sections: `topology`, `router`, `links`, `routing`, `traffic` and `sim` (their schemas are
below), and those of EXTRA_SECTIONS (`workload`, `mpi`, `machine`, `faults`, `throughput`: each schema in its own
module, which imports fastnet.checks and never this one). Every key has a default; `resolve()` fills them in,
checks each value and raises `ConfigError(field, message)` naming the dotted field and what is allowed. With
neither a config nor `--set`, `fastnet run` runs `configs/default.toml`, BookSim2's dragonfly reference run
(shared/reference/booksim/dragonfly_k4_uniform_min_0.3.cfg).
"""

from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .build.kinds import TOPOLOGIES, topology_schema
from .checks import (
    MAX_VCS, Check, boolean, check_section, choice, cycles_or_wall_time, integer, integer_list, integer_or_auto,
    real,
)
from .errors import ConfigError
from .faults.schema import resolve_faults
from .machines import preset, resolve_machine
from .mpi.schema import resolve_mpi, resolve_workload
from .registry import (
    CROSSBARS, EJECTIONS, ROUTINGS, SWITCH_ALLOCATORS, UGAL_QUEUES, UGAL_VCS, UP_PORTS, VC_ALLOCATORS,
)
from .throughput.settings import resolve_section as resolve_throughput
from .traffic.patterns import PATTERNS
from .units import check_bandwidth, check_cycle, check_cycles_or_time, timing

SECTIONS: dict[str, dict[str, tuple[Any, Check]]] = {
    "router": {
        "vcs": ("auto", integer_or_auto(1, MAX_VCS)),  # per local (and torus, tree, graph) input port; auto: the
        # fewest the routing needs to be deadlock-free
        "vcs_global": ("auto", integer_or_auto(1, MAX_VCS)),  # per global input port (dragonfly, Slim Fly); auto: the
        # fewest
        "vcs_injection": ("auto", integer_or_auto(1, MAX_VCS)),  # per injection input port; auto: 1
        "buffer_phits": (256, integer(1)),  # per VC of local ports
        "buffer_phits_global": ("auto", integer_or_auto(1)),  # per VC of global ports; auto: buffer_phits
        "buffer_phits_injection": ("auto", integer_or_auto(1)),  # per VC of injection ports; auto: buffer_phits
        "delay": (3, check_cycles_or_time(0)),  # cycles (or a time) from head arrival to the earliest switch grant
        "head_delay": ("auto", integer_or_auto(0)),  # cycles from reaching the head of a VC to the earliest grant;
        # auto: min(delay, 4) - 1 (route computation, VC and switch allocation are done per packet at the head
        # of its VC, as in BookSim2; a longer delay is pipeline latency)
        "vc_realloc": ("auto", integer_or_auto(0)),  # cycles after a packet's tail is granted before its downstream
        # VC can be allocated to another packet; auto: min(delay, 4) - 2 (BookSim2 frees a VC when the tail
        # wins the switch, then the next packet needs VC and switch allocation)
        "speedup": (2.0, real(1.0, 64.0)),  # crossbar bandwidth / link bandwidth
        "alloc_iters": (1, integer(1, 16)),
        "allocator": ("separable_input_first", choice(*SWITCH_ALLOCATORS.names)),  # switch allocator: each
        # input port picks one VC, then each output one input; or islip (BookSim2's default): each input asks for every output
        # one of its VCs wants, each output grants one input, each input accepts one grant
        "credit_delay": (2, integer(0)),  # cycles added to the credit's trip back over the link
        # which free downstream VC a head gets (and a node's packet, among its injection VCs with room): the one
        # with the most room; or (round_robin) the first from a pointer that moves past each one taken, whatever
        # it holds; or BookSim2's VC allocators, iSLIP and separable input-first, with those pointers
        "vc_choice": ("roomiest", choice(*VC_ALLOCATORS.names)),
        "crossbar": ("packet", choice(*CROSSBARS.names)),  # packet: a packet holds its crossbar input and output
        # until its tail has crossed, into a one-packet output queue; flit (BookSim2's router): packets share
        # the crossbar by bandwidth (ceil(L / speedup) cycles each), into an output queue bounded by credits
        "input_speedup": (1, integer(1, 16)),  # crossbar inputs per input port: VC v of a port uses input v mod
        # input_speedup, so that many of its VCs may cross in one cycle (BookSim2's input_speedup)
        "wait_for_tail_credit": (False, boolean),  # true: a downstream VC (and a node's injection VC) is allocated
        # to the next packet only once the credit of the last one's tail has come back, i.e. the VC is empty
        # (BookSim2's wait_for_tail_credit = 1); false: once that tail has crossed the switch
        "ejection": ("single", choice(*EJECTIONS.names)),  # single: one ejection channel per node at link
        # rate (BookSim2); multiple: every input port delivers to its node at once (FSIN/INSEE's multiple
        # consumption)
    },
    "links": {  # times in cycles or as "40 ns", bandwidths as "2 GB/s" / "56 Gb/s" (fastnet/units.py)
        "latency": (1, check_cycles_or_time(1)),
        "latency_local": ("auto", check_cycles_or_time(1, auto=True)),  # auto: links.latency
        "latency_global": ("auto", check_cycles_or_time(1, auto=True)),
        "latency_injection": ("auto", check_cycles_or_time(1, auto=True)),  # node -> router
        "latency_ejection": ("auto", check_cycles_or_time(1, auto=True)),  # router -> node (and the credits back
        # to the node); auto: latency_injection
        "cycle": ("auto", check_cycle),  # the cycle time; auto: traffic.phit_bytes / the reference bandwidth
        "bandwidth": ("auto", check_bandwidth),  # the reference: one phit per cycle; auto: the fastest class
        # given below, else every link moves one phit per cycle
        "bandwidth_local": ("auto", check_bandwidth),  # auto: links.bandwidth; a slower link moves a fraction
        "bandwidth_global": ("auto", check_bandwidth),  # of a phit per cycle
        "bandwidth_injection": ("auto", check_bandwidth),
        "bandwidth_black": ("auto", check_bandwidth),  # a 2-D dragonfly group's columns (Aries' black links);
        # auto: bandwidth_local
    },
    "routing": {
        "algorithm": ("min", choice(*ROUTINGS.names)),
        "indirect_candidates": (1, integer(1, 64)),  # UGAL: Valiant paths compared with the minimal one (n_I)
        "penalty": (1.0, real(0.0, 1e6)),  # UGAL: weight of the non-minimal cost (seed 004's c_SF)
        "threshold": (0.0, real(-1e9, 1e9)),  # UGAL: phits added to the non-minimal cost (bias to minimal)
        "ugal_hops": (True, boolean),  # UGAL-L: a path's cost is its first port's occupancy x its hops (Kim et
        # al.); false: the occupancy alone, the paths weighed by penalty only (BookSim2's ugal_dragonflynew: 1 and 2)
        "ugal_queue": ("port", choice(*UGAL_QUEUES.names)),  # UGAL-L on a dragonfly: the occupancy read at the first
        # port of each path: the whole port, the VCs of the path's class, or those where both paths share a port
        "ugal_vcs": ("shared", choice(*UGAL_VCS.names)),  # UGAL on a dragonfly: VC classes of minimally routed packets
        "up_port": ("mlid", choice(*UP_PORTS.names)),  # updown: how a packet picks its up port: mlid (the source's
        # digit, Lin et al.'s multiple-LID routing, seed 003 §VI), dmodk (the destination's digit), random (per
        # packet), adaptive, random_path (one pseudo-random path per source-destination flow, as an IB fabric)
        "paths": (4, integer(1, 64)),  # ksp: k, the paths per router pair
        "hop_limit": ("auto", integer_or_auto(1)),  # ksp: longest path allowed; auto: diameter + 1
        "path_choice": ("random", choice("random", "adaptive")),  # ksp: per packet, random or least-occupied
        "intermediate": ("auto", choice("auto", "any", "router")),  # val, ugal: auto, the topology's own draw (on a
        # HyperX new coordinates where source and destination differ, on a dragonfly a group); any (val on a flat
        # network), any router, a packet stopping at its destination's router on the way to it (BookSim2's
        # valiant_flatfly); router (dragonfly), a router among all, one in the source's group meaning the minimal
        # path, the packet going to that router itself (BookSim2's ugal_dragonflynew; kernels/routing.py)
        "order": ("dor", choice("dor", "xy_yx")),  # ugal_l on a HyperX: dor, dimension order in both phases; xy_yx,
        # XY or YX drawn per packet at its source for both phases, on VC halves split again by phase (BookSim2's
        # ugal_xyyx_flatfly)
        "min_path": ("random", choice("random", "fixed")),  # min: a random minimal port at each hop, or one fixed
        # shortest path per router pair (BookSim2's anynet: kernels/routing.py fixed_min_port)
        "vc_classes": ("hop", choice("hop", "any", "halves")),  # graphs (distance classes): hop, a VC class per hop
        # (deadlock-free); any, every VC on every hop, as BookSim2's anynet (it can deadlock: build/vcs.py);
        # halves: two dateline / phase / order classes split the VCs as BookSim2 does, sharing the middle one of an
        # odd number (it can deadlock)
    },
    "traffic": {
        "pattern": ("uniform", choice(*PATTERNS.names)),
        "load": (0.3, real(0.0, 1.0, lo_open=True)),  # phits/node/cycle offered
        "packet_phits": (10, integer(1, 32767)),
        "injection": ("bernoulli", choice("bernoulli", "on_off")),  # on_off: BookSim2's two-state Markov source
        "burst_alpha": (0.5, real(-1.0, 1.0)),  # on_off: off -> on per cycle; one of the three negative: from load
        "burst_beta": (0.5, real(-1.0, 1.0)),  # on_off: on -> off per cycle
        "burst_r1": (-1.0, real(-1.0, 1.0)),  # on_off: packet probability per cycle while on
        "packet_sizes": ([], integer_list(1, 0)),  # open-loop packets drawn among these sizes (<= packet_phits);
        "packet_size_rates": ([], integer_list(1, 0)),  # ... each as likely as its rate (BookSim2's
        # packet_size_rate); [] = every packet packet_phits
        "phit_bytes": (4, integer(1)),  # bytes a link moves per cycle: sizes workload messages in packets
        "shift": (1, integer(1)),  # k of shift(k)
        "hotspot_nodes": ([0], integer_list(0)),
        "hotspot_fraction": (0.1, real(0.0, 1.0)),
        "numbering": ("router", choice("router", "chip")),  # node ids of the pattern's tables and node lists:
        # fastnet's (router by router) or BookSim2's chip numbering of its flatfly and cmesh (traffic/patterns.py)
        "digits": ([], integer_list(1, 0)),  # [base, count]: how BookSim2's digit patterns (tornado, neighbor,
        # badperm_yarc) read a node id; [] = the topology's grid of nodes
        "exclude": ([], integer_list(0, 0)),  # background: nodes no packet is sent to
        "to_self": (False, boolean),  # uniform and permutation may pick the source itself, as BookSim2's uniform
        # and randperm do (the BookSim2 importer sets it): a node's packet to itself crosses its router only
    },
    "sim": {
        "warmup": (30000, integer(0)),
        "measure": (10000, integer(1)),
        "drain": (20000, integer(0)),  # most cycles to wait after the window for measured packets
        "seed": (1, integer(0, 2**63 - 1)),
        "watchdog": (20000, integer(10)),  # cycles without any phit moving before DeadlockError
        "threads": ("auto", integer_or_auto(1, 256)),  # threads of the cycle loop (kernels/crew.py; the same
        # results for any count); auto: every core the process may use (NUMBA_NUM_THREADS caps it) on a network of
        # kernels/crew.py THREADS_FROM_PORTS ports or more, else 1
        "skip_idle": (True, boolean),  # closed loop: jump over cycles in which nothing can happen (same results)
        "timeseries": (0, integer(0)),  # record a time series every N cycles (0: off)
        "occupancy_interval": (0, integer(0)),  # sample every port's buffer occupancy every N cycles into the
        # --out store as it runs (0: off; fastnet/occupancy.py)
        "memory_check": (True, boolean),  # refuse a run whose memory estimate exceeds the memory available
        "checkpoint_every": ("auto", cycles_or_wall_time),  # with a checkpoint file: simulated cycles, or a wall time
        # ("10 min"), between checkpoints; "auto": 10 min; 0: only when stopped (fastnet/checkpoint.py)
        "max_cycles": (2**62, integer(1, 2**62)),  # a closed-loop run stops here; an open one must end before it
    },
}

SECTION_ORDER = ("topology", "router", "links", "routing", "traffic", "sim")

# Every other section: name -> its resolver (the table as given -> the table resolved), in the order to_toml writes
# them. A new section is its schema module (which imports fastnet.checks, never this module) and one line here.
EXTRA_SECTIONS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "workload": resolve_workload,  # mpi/schema.py (with the closed-loop kinds' keys of workloads/schema.py)
    "mpi": resolve_mpi,  # mpi/schema.py
    "machine": resolve_machine,  # machines/__init__.py
    "faults": resolve_faults,  # faults/schema.py
    "throughput": resolve_throughput,  # throughput/settings.py
}


def defaults(kind: str = "dragonfly") -> dict[str, dict[str, Any]]:
    """The full default config for a topology kind, unresolved (not the embedded example, whose links are slower)."""
    cfg: dict[str, dict[str, Any]] = {"topology": {"kind": kind}}
    cfg["topology"].update({k: copy.deepcopy(v[0]) for k, v in topology_schema(kind).items()})
    for name, keys in SECTIONS.items():
        cfg[name] = {k: copy.deepcopy(v[0]) for k, v in keys.items()}
    return cfg


DEFAULT_CONFIG = Path(__file__).parent / "configs" / "default.toml"


def load_config(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read a TOML run config and return it resolved (defaults filled in, values checked)."""
    return resolve(read_toml(path))


FILE_KEYS = (("topology", "file"), ("workload", "file"), ("workload", "mapping"), ("faults", "file"))


def beside(cfg: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A config read from a file in `folder`: each relative path it names (FILE_KEYS, and each of workload.jobs'
    file and mapping) that is not found from the working directory but is next to the config is taken from
    there, as the BookSim2 converter finds a network_file."""
    workload = cfg.get("workload")
    jobs = workload.get("jobs") if isinstance(workload, dict) else None
    tables = [(cfg.get(section), key) for section, key in FILE_KEYS]
    if isinstance(jobs, list):
        tables += [(job, key) for job in jobs for key in ("file", "mapping")]
    for table, key in tables:
        name = table.get(key) if isinstance(table, dict) else None
        if isinstance(name, str) and name and not Path(name).is_absolute() and not Path(name).exists() \
                and (folder / name).exists():
            table[key] = str(folder / name)
    return cfg


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file as a dict; a run config's relative file names are found as `beside` says."""
    p = Path(path)
    try:
        if not p.is_file():
            raise ConfigError("config", f"no such file: {p}")
        with p.open("rb") as f:
            return beside(tomllib.load(f), p.absolute().parent)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError("config", f"{p} is not valid TOML ({e})") from None
    except OSError as e:  # unreadable, a name too long, ...
        raise ConfigError("config", f"cannot read {p}: {e.strerror or e}") from None


_TOML_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_value(v: Any, field: str) -> str:
    """One value as TOML; ConfigError(field) for a value TOML cannot hold, rather than text that reads back
    different or not at all."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        if not -2**63 <= v < 2**63:
            raise ConfigError(field, f"cannot be written as TOML, whose integers are 64-bit (got {v})")
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)  # repr: the shortest exact decimal
    if isinstance(v, str):
        if any(0xD800 <= ord(c) <= 0xDFFF for c in v):
            raise ConfigError(field, f"cannot be written as TOML: not valid Unicode (got {v!r})")
        return '"' + "".join(_TOML_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c)
                             for c in v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x, field) for x in v) + "]"
    if isinstance(v, dict):  # an inline table: workload.jobs is a list of them
        return "{" + ", ".join(f"{_toml_key(k, field)} = {_toml_value(x, field)}" for k, x in v.items()) + "}"
    raise ConfigError(field, f"cannot be written as TOML (got {v!r}, a {type(v).__name__})")


def _toml_key(k: str, field: str) -> str:
    bare = k and all(c.isascii() and (c.isalnum() or c in "_-") for c in k)
    return k if bare else _toml_value(k, field)


def to_toml(cfg: dict[str, Any], header: str = "") -> str:
    """A config (tables of scalars and lists) as TOML text that `read_toml` reads back to the same dict: sections
    in SECTION_ORDER, then the extra ones (`workload`), then any others; `header` becomes # comment lines."""
    known = [s for s in (*SECTION_ORDER, *EXTRA_SECTIONS) if s in cfg]
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for section in known + [s for s in cfg if s not in known]:
        values = cfg[section]
        if not isinstance(values, dict):
            raise ConfigError(section, "must be a table")
        lines += ["", f"[{_toml_key(section, section)}]"]
        lines += [f"{_toml_key(k, f'{section}.{k}')} = {_toml_value(v, f'{section}.{k}')}" for k, v in values.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def parse_set(items: list[str]) -> dict[str, dict[str, Any]]:
    """Turn `--set section.key=value` strings into a nested dict; values parse as TOML where they can."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise ConfigError("--set", f"expected section.key=value, got {item!r}")
        dotted, raw = item.split("=", 1)
        section, key = dotted.strip().split(".", 1)
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        out.setdefault(section, {})[key] = value
    return out


def _form(topo: dict[str, Any]) -> Any:
    """A topology table's form (its kind's default when not given; None for a kind without forms)."""
    kind = topo.get("kind", "dragonfly")
    if kind not in TOPOLOGIES or not TOPOLOGIES[kind].attrs.get("forms"):
        return None
    return topo.get("form", TOPOLOGIES[kind].keys["form"][0])


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Section-wise merge; a new `topology.kind` drops the old kind's keys, a new `topology.form` the old form's."""
    out = copy.deepcopy(base)
    for section, values in override.items():
        if not isinstance(values, dict):
            out[section] = values
            continue
        old = out.get("topology", {})
        if section == "topology" and "kind" in values and values["kind"] != old.get("kind"):
            out["topology"] = {}
        elif section == "topology" and "form" in values and values["form"] != _form(old):
            out["topology"] = {k: v for k, v in old.items() if k == "kind"}
        out.setdefault(section, {}).update(copy.deepcopy(values))
    return out


def apply_machine(cfg: dict[str, Any]) -> dict[str, Any]:
    """The config with its machine's preset underneath (the config's own keys win)."""
    if "machine" not in cfg:
        return cfg
    name = resolve_machine(cfg["machine"])["name"]
    base = preset(name)
    rest = {k: v for k, v in cfg.items() if k != "machine"}
    topo = rest.get("topology")
    if isinstance(topo, dict) and "kind" not in topo and "kind" in base.get("topology", {}):
        rest["topology"] = {"kind": base["topology"]["kind"], **topo}
    out = merge(base, rest)
    out["machine"] = {"name": name}
    return copy.deepcopy(out)


def _resolve_topology(topo: Any) -> dict[str, Any]:
    """The `[topology]` table checked against its kind's keys (build/kinds.py), and its form's if it has forms."""
    if not isinstance(topo, dict):
        raise ConfigError("topology", "must be a table")
    kind = topo.get("kind", "dragonfly")
    if not isinstance(kind, str) or kind not in TOPOLOGIES:
        raise ConfigError("topology.kind", "must be one of " + ", ".join(TOPOLOGIES.names) + f" (got {kind!r})")
    if kind == "graph" and "graph" in topo:  # a networkx graph: stored as its edge list, so attrs stay plain data
        from .graph_input import resolve_graph  # (networkx: only when a graph is given)

        topo = resolve_graph(topo)
    given = {k: v for k, v in topo.items() if k != "kind"}
    schema = TOPOLOGIES[kind].keys
    if TOPOLOGIES[kind].attrs.get("forms"):
        form = given.get("form", schema["form"][0])
        problem = schema["form"][1](form)
        if problem:
            raise ConfigError("topology.form", f"{problem} (got {form!r})")
        schema = topology_schema(kind, form)
        for key in given:
            if key in TOPOLOGIES[kind].keys and key not in schema:
                raise ConfigError(f"topology.{key}", f"is not a key of form {form}; its keys: "
                                  + ", ".join(k for k in schema if k != "form"))
    return {"kind": kind, **check_section("topology", given, schema)}


def vc_floor(crossbar: str, speedup: float, packet_phits: int) -> int:
    """The fewest phits a VC's buffer may hold: a whole packet with the packet crossbar (virtual cut-through); with
    the flit crossbar (wormhole, credits flit by flit) what one cycle of crossbar time moves, ceil(speedup) phits of
    a packet, which must all be there and have room downstream (kernels/timing.py room_needed, chunk_ready): a
    smaller VC would never let a packet go."""
    return packet_phits if crossbar == "packet" else min(math.ceil(speedup), packet_phits)


def plain(value: Any) -> Any:
    """A config built in Python as TOML would give it: NumPy scalars and arrays (np.arange, np.linspace, a sweep's
    coordinate) as ints, floats, bools, strings and lists, tuples as lists; every table and list a copy (resolve
    changes none of the caller's), other objects (a networkx graph, read only) kept."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    return value


def resolve(cfg: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Fill in defaults and check every value; raise ConfigError naming the first bad field."""
    cfg = apply_machine(plain(cfg or {}))
    extra = {k: v for k, v in cfg.items() if k not in SECTION_ORDER and k not in EXTRA_SECTIONS}
    if extra:
        key = next(iter(extra))
        raise ConfigError(key, "unknown section; allowed: " + ", ".join(SECTION_ORDER + tuple(EXTRA_SECTIONS)))
    out: dict[str, dict[str, Any]] = {"topology": _resolve_topology(cfg.get("topology", {}))}
    for name, schema in SECTIONS.items():
        out[name] = check_section(name, cfg.get(name, {}), schema)
    for name, (schema_fn) in EXTRA_SECTIONS.items():
        if name in cfg:
            out[name] = schema_fn(cfg[name])
    if "mpi" not in out and out.get("workload", {}).get("kind") in ("mpi", "trace"):  # the run's MPI settings,
        out["mpi"] = resolve_mpi({})  # recorded and shown (--show-config) though none was given
    links = out["links"]
    for key in ("latency_local", "latency_global", "latency_injection"):
        if links[key] == "auto":
            links[key] = links["latency"]
    if links["latency_ejection"] == "auto":
        links["latency_ejection"] = links["latency_injection"]
    router = out["router"]
    for key in ("buffer_phits_global", "buffer_phits_injection"):
        if router[key] == "auto":
            router[key] = router["buffer_phits"]
    timing(out)  # times and bandwidths convert to cycles (raises naming the field)
    return out
