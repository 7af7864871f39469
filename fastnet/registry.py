"""Registries: each name a user can choose, declared once with the integer code the kernels branch on.

A `Registry` is an ordered table of entries: a name, its code (0, 1, ... in order of declaration unless given) and
whatever else its concept needs (a builder, a size formula, the topologies it applies to, a line of docs). Config
validation lists its names, the kernels import its codes as module constants (numba freezes them, so a loop made
for one code still prunes the others' branches), `fastnet info` and the docs tables read it. A code that no entry
declares is refused by `require` where a kernel is made for it, never routed, allocated or generated some other way.

The registries of concepts whose kernels branch on a code are declared here, below; topology kinds, whose entries
hold their builders, in build/kinds.py; traffic patterns in traffic/patterns.py; MPI programs in
mpi/generators.py; trace formats in mpi/traces/__init__.py. docs/developing.md says what adding to each touches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass(frozen=True)
class Entry:
    name: str
    code: int
    doc: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, key: str) -> Any:  # an entry's own facts read as attributes: entry.kinds, entry.build
        try:
            return self.__dict__["attrs"][key]
        except KeyError:
            raise AttributeError(key) from None


class Registry:
    """Names of one concept (`what`, as errors name it) and their codes."""

    def __init__(self, what: str):
        self.what = what
        self._by_name: dict[str, Entry] = {}
        self._by_code: dict[int, Entry] = {}

    def add(self, name: str, doc: str = "", code: int | None = None, **attrs: Any) -> int:
        """Declare `name`; returns its code (the next free one unless given: aliases share a code)."""
        if name in self._by_name:
            raise ValueError(f"{self.what} {name!r} is declared twice")
        if code is None:
            code = max(self._by_code, default=-1) + 1
        entry = Entry(name, code, doc, attrs)
        self._by_name[name] = entry
        self._by_code.setdefault(code, entry)
        return code

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._by_name.values())

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> Entry:
        return self._by_name[name]

    def code(self, name: str) -> int:
        return self._by_name[name].code

    def entry_of(self, code: int) -> Entry:
        return self._by_code[int(code)]

    def require(self, code: int) -> int:
        """`code`, if an entry declares it; otherwise the error a kernel made for it must raise."""
        if int(code) not in self._by_code:
            raise NotImplementedError(f"{self.what} code {code} is not registered (fastnet/registry.py); "
                                      f"registered: " + ", ".join(f"{e.name} = {e.code}" for e in self))
        return int(code)


# ---------------------------------------------------------------- routing (kernels/routing.py route)
ROUTINGS = Registry("routing algorithm")
R_MIN = ROUTINGS.add("min", "a random minimal port at each hop (or one fixed shortest path: routing.min_path)")
R_VAL = ROUTINGS.add("val", "Valiant: minimal to a random intermediate, then minimal to the destination",
                     ordered=True)
R_UGAL_L = ROUTINGS.add("ugal_l", "UGAL with local queues: minimal or Valiant, chosen at the source", ordered=True)
R_UGAL_G = ROUTINGS.add("ugal_g", "UGAL with global knowledge: queues summed along each path", ordered=True)
R_DOR = ROUTINGS.add("dor", "dimension order", kinds=("torus", "mesh", "hyperx"), ordered=True)
R_ADAPTIVE = ROUTINGS.add("adaptive", "minimal adaptive with a dimension-order escape (Duato)", kinds=("torus", "mesh"),
                          ordered=True)
R_UPDOWN = ROUTINGS.add("updown", "up*/down* with a choice of up port (routing.up_port)", kinds=("fattree",))
R_KSP = ROUTINGS.add("ksp", "source routing over the k shortest paths (seed 001)")
R_XY_YX = ROUTINGS.add("xy_yx", "dimension order, lowest dimension first (XY) or highest first (YX), drawn per packet "
                       "at its source, each order on its own half of the VCs (BookSim2's xy_yx_mesh, xyyx_flatfly)",
                       kinds=("mesh", "hyperx"), ordered=True)
R_DOR_EXPRESS = ROUTINGS.add("dor_express", "dimension order on a mesh with express channels, taking an edge's "
                             "express channel toward a destination more than one router away along the edge, where "
                             "it lands closer (BookSim2's dor_cmesh)", kinds=("mesh",), ordered=True)
R_ADAPTIVE_XY_YX = ROUTINGS.add("adaptive_xy_yx", "xy_yx with the order whose first hop has fewer credits in use "
                                "downstream, ties at random (BookSim2's adaptive_xy_yx_mesh, adaptive_xyyx_flatfly)",
                                kinds=("mesh", "hyperx"), ordered=True)
# `kinds`: the topologies a routing needs (build/vcs.py check_routing refuses others). `ordered`: on a torus, mesh
# or HyperX it moves in dimension order (in each phase), with dateline or phase VC classes (build/vcs.py); any
# other routing takes minimal ports there, with hop-indexed classes, as on any graph.
VALIANT_ROUTINGS = ("val", "ugal_l", "ugal_g")  # two phases through an intermediate
XY_YX_ROUTINGS = ("xy_yx", "adaptive_xy_yx")  # one of two dimension orders per packet, each on its own VC class

UGAL_QUEUES = Registry("UGAL queue")  # routing.ugal_queue: what UGAL-L on a dragonfly reads at each path's first port
UQ_PORT = UGAL_QUEUES.add("port", "the whole port's occupancy")
UQ_VC = UGAL_QUEUES.add("vc", "the VCs of the path's class (UGAL-L_VC)")
UQ_VC_H = UGAL_QUEUES.add("vc_h", "the VCs of the path's class where both paths share a port (UGAL-L_VC_H)")

UGAL_VCS = Registry("UGAL VC scheme")  # routing.ugal_vcs: VC classes of minimally routed packets under UGAL
UV_SHARED = UGAL_VCS.add("shared", "the classes of Valiant's packets, by global hops taken")
UV_BOOKSIM = UGAL_VCS.add("booksim", "the classes of Valiant's second phase, as BookSim2")
UV_SEPARATE = UGAL_VCS.add("separate", "a class of their own before the global hop")

UP_PORTS = Registry("up-port choice")  # routing.up_port: how updown picks a packet's up port
UP_MLID = UP_PORTS.add("mlid", "the source's digit (Lin et al.'s multiple-LID routing, seed 003 §VI)")
UP_DMODK = UP_PORTS.add("dmodk", "the destination's digit")
UP_RANDOM = UP_PORTS.add("random", "at random, per packet")
UP_ADAPTIVE = UP_PORTS.add("adaptive", "the least occupied")
UP_RANDOM_PATH = UP_PORTS.add("random_path", "one pseudo-random path per source-destination flow, as an IB fabric")

# ---------------------------------------------------------------- router (kernels/allocate.py, vc_alloc.py, timing.py)
SWITCH_ALLOCATORS = Registry("switch allocator")
SA_SEPARABLE = SWITCH_ALLOCATORS.add("separable_input_first", "each input port picks one VC, then each output one "
                                     "input")
SA_ISLIP = SWITCH_ALLOCATORS.add("islip", "each input asks for every output one of its VCs wants, each output grants "
                                 "one input, each input accepts one grant (BookSim2's default)")

VC_ALLOCATORS = Registry("VC allocator")  # router.vc_choice; the code is the cycle loop's `vc_alloc`: heads take
# VCs one at a time (VA_GREEDY: the roomiest, or the next from a round-robin pointer), or BookSim2's allocators
VA_GREEDY = VC_ALLOCATORS.add("roomiest", "a head takes the free downstream VC with the most room", pointer=False)
VC_ALLOCATORS.add("round_robin", "a head takes the first free VC from a pointer that moves past each one taken",
                  code=VA_GREEDY, pointer=True)
VA_ISLIP = VC_ALLOCATORS.add("islip", "BookSim2's iSLIP VC allocator over a router's input and output VCs",
                             pointer=True)
VA_SEPARABLE = VC_ALLOCATORS.add("separable_input_first", "BookSim2's separable input-first VC allocator",
                                 pointer=True)

CROSSBARS = Registry("crossbar")
X_PACKET = CROSSBARS.add("packet", "a packet holds its crossbar input and output until its tail has crossed")
X_FLIT = CROSSBARS.add("flit", "packets share the crossbar by bandwidth, cycle by cycle (BookSim2's router)")

WORKLOADS = Registry("workload kind")  # workload.kind: Workload.kind codes (aliases share a code)
W_OPEN_LOOP = WORKLOADS.add("open_loop", "the engine's Bernoulli sources ([traffic])")
W_SR = WORKLOADS.add("sr", "seed 002's send/receive waves (workloads/micro.py)")
WORKLOADS.add("gups", "seed 002's GUPS: sr with one wave of every message", code=W_SR)
W_A2A = WORKLOADS.add("a2a", "seed 002's all-to-all")
W_O2A = WORKLOADS.add("o2a", "seed 002's one-to-all")
W_A2O = WORKLOADS.add("a2o", "seed 002's all-to-one")
W_GRAPH500 = WORKLOADS.add("graph500", "seed 000's Graph500 BFS (workloads/graph500*.py)")
W_MPI = WORKLOADS.add("mpi", "an MPI program (workload.program, fastnet/mpi/generators.py)")
WORKLOADS.add("trace", "an MPI trace replayed (workload.file, fastnet/mpi/traces/)", code=W_MPI)

# The generate stage a cycle loop is made for (engine/loop.py cycle_loop's first constant): the open-loop sources,
# or one closed-loop workload's kernel (engine/generate.py generator_of, advance_workload)
GENERATORS = Registry("generate stage")
GEN_OPEN_LOOP = GENERATORS.add("open_loop", "traffic/openloop.py generate_open_loop")
GEN_SR = GENERATORS.add("sr", "workloads/micro.py advance_sr")
GEN_COLLECTIVE = GENERATORS.add("collective", "workloads/micro.py advance_collective (a2a, o2a, a2o)")
GEN_GRAPH500 = GENERATORS.add("graph500", "workloads/graph500.py (the paper's model)")
GEN_GRAPH500_FOGSIM = GENERATORS.add("graph500_fogsim", "workloads/graph500_fogsim.py (FOGSim's phases)")
GEN_MPI = GENERATORS.add("mpi", "mpi/kernel.py advance_mpi")

COLLECTIVE_ALGORITHMS = Registry("collective algorithm")  # an MPI op's OP_ALG (mpi/program.py choose_algorithm;
# mpi/collectives.py round_plan and n_steps implement each for the collectives it lists)
ALG_DISSEMINATION = COLLECTIVE_ALGORITHMS.add("dissemination", "MPICH's barrier", collectives=("barrier",))
ALG_BINOMIAL = COLLECTIVE_ALGORITHMS.add("binomial", "a binomial tree from or to the root",
                                         collectives=("bcast", "reduce", "gather", "scatter"))
ALG_RECURSIVE_DOUBLING = COLLECTIVE_ALGORITHMS.add(
    "recursive_doubling", "log2(n) exchanges of doubling distance (MPICH's pairing when n is not a power of 2)",
    collectives=("allreduce", "allgather"))
ALG_RING = COLLECTIVE_ALGORITHMS.add("ring", "n - 1 steps around a ring (allreduce: reduce-scatter, then allgather)",
                                     collectives=("allreduce", "allgather"))
ALG_PAIRWISE = COLLECTIVE_ALGORITHMS.add("pairwise", "n - 1 pairwise exchanges", collectives=("alltoall", "alltoallv"))
ALG_RABENSEIFNER = COLLECTIVE_ALGORITHMS.add("rabenseifner", "reduce-scatter by recursive halving, then allgather "
                                             "by recursive doubling", collectives=("allreduce",))


def algorithms_for(collective: str) -> tuple[str, ...]:
    """The collective algorithms that implement `collective` (mpi.allreduce and mpi.allgather choose among them)."""
    return tuple(e.name for e in COLLECTIVE_ALGORITHMS if collective in e.collectives)


EJECTIONS = Registry("ejection model")
EJ_SINGLE = EJECTIONS.add("single", "one ejection channel per node at link rate (BookSim2)")
EJ_MULTIPLE = EJECTIONS.add("multiple", "every input port delivers to its node at once (FSIN/INSEE)")
