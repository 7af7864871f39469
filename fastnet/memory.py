"""How much memory a run will take, how much the machine has, and the refusal when the first exceeds the second.

`memory_estimate` adds up what a run holds at its peak: the Python runtime and its compiled kernels, the network
(measured from the built arrays), the simulation state of kernels/state.py (by formula, before it exists), the
packet and event pools grown for the packets a run keeps in flight, and the largest short-lived allocation (a
pool doubling, the end-of-run audit, or the results dataset). perf/memory_bench.py compares it with the peak RSS
of real runs (table in perf/README.md).

Packets in flight follow Little's law: nodes x packets per node-cycle x latency, with the latency of a packet on
the longest route of its routing at zero load, stretched by an M/D/1 queueing factor 1 + rho / (2 (1 - rho)) for
the load rho on the links (capped at 0.9). Past saturation nothing bounds them: the source queues grow by the
packets the network refuses, 144 bytes each, for the rest of the run, and no estimate made before the run can
see that.
"""

from __future__ import annotations

import math
import os
import resource
import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .errors import ConfigError
from .registry import VALIANT_ROUTINGS
from .units import timing

IMPORT_BYTES = 130 * 2**20  # Python, numpy, numba, llvmlite, xarray and fastnet imported (measured 112 MB)
KERNEL_BYTES = 320 * 2**20  # compiling the cycle loop and the audit on a cold cache (loading them takes less;
# measured 2026-11-28: a cold run of the 3,042-node Slim Fly peaked at 425 MB, ~300 MB of it compiling)
QUEUE_CAP = 0.9  # the highest link load the queueing factor is taken at
EVENTS_PER_PACKET = 1.5  # events pending per live packet (its ready time or delivery, a credit on its way back)


class MemoryEstimate(NamedTuple):
    """Bytes a run holds at its peak, by what holds them."""

    runtime: int  # the interpreter and libraries, and the kernels compiled on a cold cache
    network: int  # topology, routing tables, traffic and workload arrays (measured once built)
    state: int  # kernels/state.py arrays other than the pools
    pools: int  # packet and event pools, grown for `in_flight` packets
    transient: int  # the largest short-lived allocation: a pool doubling, the audit or the results dataset
    in_flight: int  # packets the estimate expects alive at once (in the network and in source queues)

    @property
    def total(self) -> int:
        return self.runtime + self.network + self.state + self.pools + self.transient

    @property
    def to_allocate(self) -> int:
        """What a run still allocates once the network is built: all but the imports and the network."""
        return self.total - IMPORT_BYTES - self.network


def _doubled(start: int, needed: float) -> tuple[int, int]:
    """(final capacity, doublings) of a pool that starts at `start` rows and doubles until it holds `needed`."""
    k = max(0, math.ceil(math.log2(max(needed, 1) / start))) if needed > start else 0
    return start << k, k


def packets_in_flight(cfg: dict[str, Any], n_nodes: int, hops: int, latency: int) -> int:
    """Little's law with a queueing stretch (module docstring); `hops`: router-to-router links of the longest
    route, `latency`: the slowest link's latency in cycles."""

    traffic = cfg["traffic"]
    L = traffic["packet_phits"]
    # virtual cut-through: every router adds its delay and every link (injection and ejection too) its latency,
    # the packet's length is paid once (measured 201 cycles for 2.94 routers on seed 004's Slim Fly: exact)
    zero_load = (hops + 1) * timing(cfg).delay + (hops + 2) * latency + L
    if "workload" in cfg and cfg["workload"].get("kind", "open_loop") != "open_loop":
        return math.ceil(n_nodes / L * zero_load)  # every node sending at link rate: a bound on what it offers
    rho = min(QUEUE_CAP, traffic["load"] * (2 if cfg["routing"]["algorithm"] in VALIANT_ROUTINGS else 1))
    stretch = 1 + rho / (2 * (1 - rho))
    return math.ceil(n_nodes * traffic["load"] / L * zero_load * stretch)


def memory_estimate(net: Any, routes: Any, cfg: dict[str, Any], vcs: int, hop_limit: int = 0,
                    extra: tuple[Any, ...] = ()) -> MemoryEstimate:
    """The peak memory of running `cfg` on the built `net` and `routes` with `vcs` VC slots per port; `extra`:
    other built arrays or NamedTuples of arrays the run keeps (traffic, workload)."""
    from .build.routing import diameter
    from .kernels.crew import crew_bytes, run_threads
    from .kernels.state import N_EV, N_PK, N_TS, first_pool_rows
    from .occupancy import BUFFER_BYTES

    R, P, N = net.n_routers, net.n_ports, net.n_nodes
    network = _nbytes(net.topo) + _nbytes(net.graph.__dict__) + _nbytes(routes) + _nbytes(extra)
    PV = P * vcs
    sim = cfg["sim"]
    rows = 0
    if sim["timeseries"]:
        closed = "workload" in cfg and cfg["workload"].get("kind", "open_loop") != "open_loop"
        end = sim["max_cycles"] if closed else sim["warmup"] + sim["measure"] + sim["drain"]
        rows = math.ceil(end / sim["timeseries"])
    state = state_bytes(R, P, N, vcs, cfg) + rows * N_TS * 8 + crew_bytes(run_threads(cfg, P), PV)

    D = diameter(routes)
    algorithm = cfg["routing"]["algorithm"]
    hops = hop_limit if algorithm == "ksp" else 2 * D if algorithm in VALIANT_ROUTINGS else D
    live = packets_in_flight(cfg, N, hops, int(net.port_latency.max()))
    start = first_pool_rows(N)  # the kernel asks for more (engine/loop.py pools_low)
    packets, grew_pk = _doubled(start, live + N + 1)
    events, grew_ev = _doubled(start, EVENTS_PER_PACKET * live + 3 * min(P, live + N) + N + 16)
    pools = packets * N_PK * 8 + events * N_EV * 8

    # a doubling holds the old rows, the new ones and their concatenation at once: the final pool again
    growth = max(packets * N_PK * 8 if grew_pk else 0, events * N_EV * 8 if grew_ev else 0)
    audit = packets + 16 * PV  # kernels/audit.py: a mark per packet, two int64 per VC
    dataset = 32 * P  # results.py: per-port utilisation, coordinates, and their zarr encoding
    if sim.get("occupancy_interval"):
        dataset += 2 * max(BUFFER_BYTES, 4 * P)  # the row buffer and a chunk being compressed
    transient = max(growth, audit, dataset)
    return MemoryEstimate(runtime=IMPORT_BYTES + KERNEL_BYTES, network=network, state=state, pools=pools,
                          transient=transient, in_flight=live)


def state_bytes(R: int, P: int, N: int, vcs: int, cfg: dict[str, Any]) -> int:
    """Bytes of kernels/state.py's arrays but the pools and the time series, for R routers, P ports (vcs VC slots
    each) and N nodes."""
    from .kernels.state import N_ND, N_PT, N_VC, N_VG, N_VS

    choice = cfg["router"]["vc_choice"]
    pointer = 4 if choice != "roomiest" else 0  # State.vc_ptr
    arbiters = N_VG * 8 + 4 if choice in ("islip", "separable_input_first") else 0  # vc_grant, vc_asking
    streams = N_VS * 8 if cfg["router"]["crossbar"] == "flit" else 0  # State.vs
    return (P * vcs * (N_VC * 4 + 4 + pointer + arbiters + streams)  # vc records, walk order, VC allocation, streams
            + P * vcs // 8 + P * vcs // 512  # the ready list's bits (State.awake, awake_sum)
            + P * (N_PT * 8 + 3 * 4)  # port records, allocation scratch
            + N * (N_ND * 8 + 4 + 8 + 1)  # node records, active list, RNG streams, blocked
            + R * 8)


def network_floor(cfg: dict[str, Any]) -> tuple[tuple[int, int, int], int] | None:
    """((routers, ports, nodes), the least a run of the resolved `cfg` allocates) by formula from the topology's
    size, before anything is built: the compiled kernels, Topology's port and node records, the simulation state
    (with the configured VCs, one if "auto") and the initial pools. None where the size is not known (an edge
    list)."""
    from .build import network_size
    from .build.network import NODE_PORT, P_PERIOD
    from .kernels.state import N_EV, N_PK, first_pool_rows

    size = network_size(cfg["topology"])
    if size is None:
        return None
    R, P, N = size
    vcs = cfg["router"]["vcs"] if isinstance(cfg["router"]["vcs"], int) else 1
    topology = P * (P_PERIOD + 1) * 4 + N * (NODE_PORT + 1) * 4  # Topology.port and .node (int32 records)
    pools = first_pool_rows(N) * (N_PK + N_EV) * 8
    return size, KERNEL_BYTES + topology + state_bytes(R, P, N, vcs, cfg) + pools


def build_floor(cfg: dict[str, Any]) -> tuple[tuple[int, int, int], int] | None:
    """((routers, ports, nodes), the least that building the resolved `cfg`'s network allocates) by formula:
    Topology's port and node records. What a command that builds a network without running it (info, throughput)
    needs at least; None where the size is not known (an edge list)."""
    from .build.kinds import network_size
    from .build.network import NODE_PORT, P_PERIOD

    size = network_size(cfg["topology"])
    if size is None:
        return None
    R, P, N = size
    return size, P * (P_PERIOD + 1) * 4 + N * (NODE_PORT + 1) * 4 + R * 8


LP_BYTES_PER_PATH = 1_500  # HiGHS's model of MMF/MCF: 1.6 kB a path measured (the dragonfly's 1.1 M uniform flows)


def throughput_floor(cfg: dict[str, Any]) -> tuple[tuple[int, int, int], int] | None:
    """build_floor, plus the least the throughput models hold for the resolved `cfg`: for each flow its hosts,
    weight and offsets, for each of its k paths an offset and at least max_hops + 2 links (the host links; "auto"
    is at least 2 router hops), and with MMF or MCF the LP's share of each path. The flows are counted where the
    pattern tells them before a build (throughput/patterns.py flow_count; uniform's N^2 fills memory first)."""
    from .throughput.patterns import flow_count

    floor = build_floor(cfg)
    if floor is None:
        return None
    (R, P, N), need = floor
    t = cfg["throughput"]
    flows = flow_count(t["pattern"], t["x"], N, cfg["traffic"])
    hops = 2 if t["max_hops"] == "auto" else int(t["max_hops"])
    per_path = 8 * (1 + hops + 2) + (LP_BYTES_PER_PATH if {"mmf", "mcf"} & set(t["models"]) else 0)
    return (R, P, N), need + flows * (4 * 8 + t["k"] * per_path)


def check_throughput_fits(cfg: dict[str, Any]) -> None:
    """ConfigError(sim.memory_check) before `fastnet throughput` builds anything, when even the network's records
    and the instance's flows and paths (throughput_floor) exceed the memory available."""
    if cfg["sim"]["memory_check"]:
        _refuse_above(throughput_floor(cfg), "for its records and the throughput models' flows and paths",
                      "evaluate it anyway")


def _nbytes(obj: Any) -> int:
    """Bytes of the numpy arrays in obj (an array, a NamedTuple, a dict's values or a tuple of those)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, dict):
        obj = tuple(obj.values())
    if isinstance(obj, tuple):
        return sum(_nbytes(x) for x in obj)
    return 0


def available_memory() -> int | None:
    """Bytes the machine can give this process now: Linux's MemAvailable, less if a cgroup limit is tighter;
    elsewhere the free physical pages where the OS reports them; None when nothing tells."""
    available = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
                break
    except OSError:
        pass
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            return None
    limit = _cgroup_room()
    return min(available, limit) if limit is not None else available


def _cgroup_room() -> int | None:
    """Limit - usage of this process's memory cgroup (v2, then v1), or None without a limit."""
    for limit_file, usage_file in (("memory.max", "memory.current"),
                                   ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        try:
            limit = Path("/sys/fs/cgroup", limit_file).read_text().strip()
            usage = int(Path("/sys/fs/cgroup", usage_file).read_text())
        except (OSError, ValueError):
            continue
        if limit == "max" or int(limit) >= 2**60:  # v1 writes "no limit" as a huge number
            return None
        return int(limit) - usage
    return None


def peak_rss() -> int:
    """Peak resident set size of this process so far, in bytes: Linux's VmHWM, else ru_maxrss (KiB on Linux,
    bytes on macOS). Not ru_maxrss first: Linux carries it across exec, so a process started by a large one
    (pytest late in the suite) reports its parent's size."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def gb(n: float) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def check_network_fits(cfg: dict[str, Any]) -> None:
    """ConfigError(sim.memory_check) before the build when the network's floor (network_floor) exceeds the memory
    available: a network that large would exhaust the machine while it is being built, before check_memory."""
    if cfg["sim"]["memory_check"]:
        _refuse_above(network_floor(cfg), "before it runs", "run anyway")


def check_build_fits(cfg: dict[str, Any]) -> None:
    """ConfigError(sim.memory_check) before the build when even the network's records (build_floor) exceed the
    memory available: topology.build_network calls it, so every command that builds a network refuses first."""
    if cfg["sim"]["memory_check"]:
        _refuse_above(build_floor(cfg), "to build", "build it anyway")


def _refuse_above(floor: tuple[tuple[int, int, int], int] | None, needed_for: str, override: str) -> None:
    """ConfigError naming the network's size when its `floor` ((routers, ports, nodes), bytes) exceeds the memory
    available."""
    available = available_memory()
    if floor is None or available is None or floor[1] <= available:
        return
    (R, P, N), need = floor
    raise ConfigError("sim.memory_check", f"this network ({R:,} routers, {P:,} ports, {N:,} nodes) needs at "
                      f"least {gb(need)} {needed_for} and {gb(available)} is available; use a smaller network, "
                      f"free memory, or set sim.memory_check = false to {override}")


def check_memory(estimate: MemoryEstimate, cfg: dict[str, Any]) -> None:
    """ConfigError(sim.memory_check) when what the run still allocates exceeds the memory available."""
    if not cfg["sim"]["memory_check"]:
        return
    available = available_memory()
    if available is None or estimate.to_allocate <= available:
        return
    raise ConfigError("sim.memory_check", f"this run needs about {gb(estimate.to_allocate)} more memory "
                      f"({gb(estimate.total)} in all, {estimate.in_flight:,} packets in flight) and "
                      f"{gb(available)} is available; use a smaller network or lower load, free memory, or set "
                      "sim.memory_check = false to run anyway")
