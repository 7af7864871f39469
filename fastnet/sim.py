"""One simulation run: config -> build -> kernels -> results.

`prepare()` compiles everything the kernels read; `simulate()` advances the cycle loop in chunks (growing the
pools between chunks when they run low, stopping on deadlock), audits conservation, and `run()` returns the
labelled dataset of results.py.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable


from . import config as _config
import numpy as np

from .build import build_routes
from .build.network import GLOBAL, LOCAL, NODE, Network
from .build.routing import Routes, minimal_scan, with_distance_table
from .build.vcs import vc_layout
from .errors import ConfigError, ConservationError, DeadlockError, WorkloadError
from .faults.plan import plan_faults
from .memory import check_memory, check_network_fits, memory_estimate
from .occupancy import OccupancyRecorder
from .registry import (
    CROSSBARS, EJ_MULTIPLE, EJECTIONS, ROUTINGS, SWITCH_ALLOCATORS, UGAL_QUEUES, UGAL_VCS, UP_PORTS, VC_ALLOCATORS,
    X_FLIT,
)
from .topology import build_network
from .traffic.patterns import Traffic, background_traffic, compile_traffic
from .units import PERIOD_ONE, timing

CHUNK = 2048  # most cycles per kernel call: the granularity of progress reports and pool growth
CHUNK_SECONDS = 0.5  # wall time a kernel call aims at (fewer cycles than CHUNK on large networks)
MIN_CHUNK = 1
FIRST_CHUNK = 16  # the first call measures the speed; a quick network grows to CHUNK after it
MAX_HORIZON = 2**24  # cycles from one event to the farthest it schedules (the event wheel's size, 128 MB)


@dataclass
class Simulation:
    cfg: dict[str, Any]
    net: Network
    routes: Routes
    params: Any  # kernels.state.Params
    traffic: Traffic
    state: Any  # kernels.state.State
    workload: Any  # workloads.state.Workload (kind W_OPEN_LOOP when there is none), or mpi.state.Mpi
    cycle: int = 0
    program: Any = None  # mpi.program.Program of an MPI workload (call counts, skipped calls)
    faults: Any = None  # faults.plan.FaultPlan when the config has a [faults] section
    simulate_seconds: float = 0.0  # wall time of the cycle loop, kernels already compiled (simulate)

    @property
    def closed_loop(self) -> bool:
        return self.workload.kind != 0


def prepare(cfg: dict[str, Any] | str | Path | None = None, *, table_budget: int | None = None) -> Simulation:
    """Resolve and check a config, compile network, routing, traffic and the initial state."""
    from .kernels.state import Params, first_pool_rows, new_state
    from .traffic.openloop import start_open_loop
    from .workloads.build import compile_workload, workload_section

    if cfg is None:
        cfg = _config.DEFAULT_CONFIG
    if isinstance(cfg, (str, Path)):
        cfg = _config.read_toml(cfg)
    cfg = _config.resolve(cfg)
    router, traffic, sim, rcfg = cfg["router"], cfg["traffic"], cfg["sim"], cfg["routing"]
    buffers = {NODE: router["buffer_phits_injection"], LOCAL: router["buffer_phits"],
               GLOBAL: router["buffer_phits_global"]}
    for cls, key in ((LOCAL, "buffer_phits"), (GLOBAL, "buffer_phits_global"), (NODE, "buffer_phits_injection")):
        if buffers[cls] < traffic["packet_phits"]:  # (a flit crossbar's smaller buffers: docs/booksim.md)
            raise ConfigError(f"router.{key}", f"must hold a whole packet for virtual cut-through "
                              f"(>= traffic.packet_phits = {traffic['packet_phits']}, got {buffers[cls]})")
    check_network_fits(cfg)  # before the build, which could exhaust the machine itself
    net = build_network(cfg)
    routes = build_routes(net) if table_budget is None else build_routes(net, table_budget)
    fixed_min = rcfg["algorithm"] == "min" and rcfg["min_path"] == "fixed"
    if fixed_min and net.kind == "dragonfly":
        raise ConfigError("routing.min_path", "fixed is for graphs whose minimal paths are shortest paths; a "
                          "dragonfly's are hierarchical (one global hop): use random")
    val_any = rcfg["algorithm"] == "val" and rcfg["intermediate"] == "any"
    if val_any and net.kind in ("dragonfly", "fattree"):
        raise ConfigError("routing.intermediate", "any is a router of a flat network; a dragonfly's Valiant "
                          "intermediate is a group, a fat tree's a top switch: use auto")
    if rcfg["algorithm"] == "ksp" or fixed_min:
        routes = with_distance_table(net, routes)
    plan = None
    if "faults" in cfg:  # (even with none failed: a sweep's points then have the same variables)
        plan = plan_faults(cfg, net, routes)
        net, routes = plan.start(net, routes)
    layout = vc_layout(net, routes, router, rcfg)
    routes = routes._replace(vcr=layout.ranges)
    cfg["router"].update(vcs=layout.vcs[LOCAL], vcs_global=layout.vcs[GLOBAL], vcs_injection=layout.vcs[NODE])
    V = max(layout.vcs.values())
    max_packet = traffic["packet_phits"]
    tm = timing(cfg)
    delay, inject_latency = tm.delay, tm.latency["injection"]
    max_lat = max(int(net.port_latency.max()), inject_latency)
    max_send = -(-max_packet * int(net.port_period.max()) // PERIOD_ONE)  # the slowest link's time for a packet
    closed = workload_section(cfg)["kind"] != "open_loop"
    if closed:  # a closed-loop workload runs until it finishes (at most sim.max_cycles); all of it is measured
        w0, w1 = 0, sim["max_cycles"]
        if sim["timeseries"] and sim["max_cycles"] // sim["timeseries"] > 10**7:
            raise ConfigError("sim.timeseries", "with a closed-loop workload, set sim.max_cycles so that "
                              "max_cycles / timeseries <= 10,000,000 rows")
    else:
        w0 = sim["warmup"]
        w1 = w0 + sim["measure"]
        if w1 + sim["drain"] > sim["max_cycles"]:
            raise ConfigError("sim.max_cycles", f"warmup + measure + drain = {w1 + sim['drain']} exceeds it")
    watchdog = max(sim["watchdog"], 4 * (max_send + max_lat + delay + router["credit_delay"]))
    algorithm = rcfg["algorithm"]
    # per-packet allocation stages: route, VC and switch allocation (at most 3 cycles; a longer `delay` is
    # pipeline latency, not occupancy)
    stages = min(delay, 4)
    head_delay = max(stages - 1, 0) if router["head_delay"] == "auto" else router["head_delay"]
    vc_realloc = max(stages - 2, 0) if router["vc_realloc"] == "auto" else router["vc_realloc"]
    # farthest event ahead of now: a head's ready time (link queue + latency + router delay) or a credit
    # the most an output queue holds: one packet, or with a flit crossbar every credit of the VCs downstream
    flit_crossbar = CROSSBARS.code(router["crossbar"]) == X_FLIT
    queued = max(n * buffers[cls] for cls, n in layout.vcs.items()) if flit_crossbar else max_packet
    max_queue = -(-queued * int(net.port_period.max()) // PERIOD_ONE)
    horizon = max_send + max_queue + max_lat + router["credit_delay"] + max(delay, head_delay) + 8
    if horizon > MAX_HORIZON:  # the event wheel spans it: name the largest part
        parts = {"links.latency": max_lat, "router.credit_delay": router["credit_delay"],
                 "router.delay": max(delay, head_delay)}
        parts["router.buffer_phits" if flit_crossbar else "links.bandwidth"] = max_send + max_queue
        field = max(parts, key=parts.get)
        fix = ("smaller buffers, or router.crossbar = \"packet\": a flit crossbar's output queue holds all their "
               "credits" if field == "router.buffer_phits" else "use a longer cycle: links.cycle")
        raise ConfigError(field, f"makes a hop take {horizon:,} cycles, more than the {MAX_HORIZON:,} the event "
                                 f"wheel allows ({fix})")
    adaptive_choice = algorithm == "ksp" and rcfg["path_choice"] == "adaptive"
    prm = Params(
        vcs=V, delay=delay, inject_latency=inject_latency, head_delay=head_delay, vc_realloc=vc_realloc,
        speedup=float(router["speedup"]),
        iters=router["alloc_iters"], allocator=SWITCH_ALLOCATORS.code(router["allocator"]),
        credit_delay=router["credit_delay"], multi_eject=EJECTIONS.code(router["ejection"]) == EJ_MULTIPLE,
        routing=ROUTINGS.code(algorithm), vc_policy=layout.policy,
        n_escape=(2 if net.kind == "torus" else 1) if algorithm == "adaptive" else 0, hop_limit=layout.hop_limit,
        paths=rcfg["paths"], adaptive_choice=adaptive_choice,
        up_port=UP_PORTS.code(rcfg["up_port"]), fixed_min=fixed_min, val_any=val_any,
        indirect=rcfg["indirect_candidates"], penalty=float(rcfg["penalty"]), threshold=float(rcfg["threshold"]),
        ugal_vcs=UGAL_VCS.code(rcfg["ugal_vcs"]),
        ugal_queue=UGAL_QUEUES.code(rcfg["ugal_queue"]),
        reroute=algorithm == "adaptive" or (algorithm == "updown" and rcfg["up_port"] == "adaptive"),
        max_packet=max_packet, flit_crossbar=flit_crossbar, vc_round_robin=VC_ALLOCATORS[router["vc_choice"]].pointer,
        vc_alloc=VC_ALLOCATORS.code(router["vc_choice"]),
        watchdog=watchdog, skip_idle=sim["skip_idle"], background=False, w0=w0, w1=w1,
        ts_interval=sim["timeseries"], occupancy=False, faults=plan is not None,
        wheel_mask=(1 << max(4, math.ceil(math.log2(horizon)))) - 1,
    )
    vc_cap = np.zeros((net.n_ports, V), dtype=np.int32)
    for cls, n in layout.vcs.items():
        vc_cap[net.port_class == cls, :n] = buffers[cls]
    tr = compile_traffic(net, traffic, sim["seed"])
    program = None
    if workload_section(cfg)["kind"] in ("mpi", "trace"):
        from .mpi.build import compile_mpi

        wl, program = compile_mpi(cfg, net, sim["seed"])
        if program.background is not None:  # a job of kind open_loop: its sources run beside the ranks
            bg = program.background
            tr = background_traffic(net, bg.nodes, bg.load, traffic["packet_phits"])
            prm = prm._replace(background=True)
    else:
        wl = compile_workload(cfg, net, sim["seed"])
    # refuse now, before the state (most of a large run's memory) exists, rather than swap or be killed
    check_memory(memory_estimate(net, routes, cfg, V, layout.hop_limit, extra=(tr, wl)), cfg)
    end = sim["max_cycles"] if closed else w1 + sim["drain"]
    n_ts = math.ceil(end / sim["timeseries"]) if sim["timeseries"] else 0
    st = new_state(net.n_routers, net.n_ports, net.n_nodes, net.radix, prm, sim["seed"], n_ts,
                   packets=first_pool_rows(net.n_nodes), events=first_pool_rows(net.n_nodes), vc_cap=vc_cap,
                   arrival_slots=arrival_slots(tr.rate) if prm.background or not closed else 1)
    if prm.background or not closed:
        start_open_loop(tr, st)
    return Simulation(cfg=cfg, net=net, routes=routes, params=prm, traffic=tr, state=st, workload=wl,
                      program=program, faults=plan)


def arrival_slots(rate: float) -> int:
    """Open-loop arrival wheel size: a power of two about four mean gaps long (a node is looked at about once per
    lap it waits), at most 2**16."""
    mean_gap = 1.0 / rate if rate > 0 else 2.0**16
    return 1 << min(16, max(4, math.ceil(math.log2(4 * mean_gap))))


def _loop_and_signature(s: Simulation) -> tuple[Any, tuple[Any, ...]]:
    """The cycle loop kernel this run calls, and the numba signature it calls it with."""
    import numba

    from .kernels.cycle import cycle_loop
    from .workloads.kernel import generator_of

    args = (s.net.topo, s.routes, s.params, s.traffic, s.workload, s.state, s.cycle, s.cycle, True, 1)
    loop = cycle_loop(generator_of(s.workload), s.params.routing, minimal_scan(s.routes), s.params.allocator,
                      s.params.vc_alloc)
    return loop, tuple(numba.typeof(a) for a in args)


def compile_kernels(s: Simulation) -> Any:
    """The cycle loop this run needs, compiled or loaded from numba's cache (the first run of a routing algorithm
    compiles it: seconds; later ones load it). simulate() calls it; the CLI calls it first to say so."""
    loop, sig = _loop_and_signature(s)
    if sig not in loop.overloads:
        loop.compile(sig)
    return loop


def _compile_audit(s: Simulation) -> threading.Thread:
    """Compile (or load) the end-of-run audit in a thread: the cycle loop releases the GIL, so on a cold cache
    the audit compiles while the simulation runs instead of after it."""
    import numba

    from .kernels.audit import audit

    sig = (numba.typeof(s.params), numba.typeof(s.state))
    thread = threading.Thread(target=audit.compile, args=(sig,), name="fastnet-audit-compile", daemon=True)
    thread.start()
    return thread


def simulate(s: Simulation, progress: Callable[[int, int], None] | None = None,
             occupancy: OccupancyRecorder | None = None) -> Simulation:
    """Run warm-up, measurement window and drain (open loop) or the workload to its end (closed loop); raise
    DeadlockError, WorkloadError or ConservationError if they occur. `occupancy` samples the ports every
    sim.occupancy_interval cycles: a chunk ends on each sampling cycle, where the state is read."""
    from .kernels.cycle import DEADLOCK, DRAINED, FAILED, FINISHED, GROW
    from .kernels.state import C_CREATED, C_DELIVERED, C_DROPPED, C_EPOCH, EPOCH_SPAN, PT_HELD, rebase
    from .workloads.state import ERRORS, WC_ERROR, WC_FINISHED

    prm = s.params
    end = prm.w1 if s.closed_loop else prm.w1 + s.cfg["sim"]["drain"]
    t = s.cycle
    run_chunk = compile_kernels(s)
    auditing = _compile_audit(s)
    started = time.perf_counter()
    chunk = FIRST_CHUNK
    while t < end:
        # a closed loop skips idle cycles (kernels/cycle.py network_idle): `chunk` bounds the cycles it simulates
        if t - s.state.ctr[C_EPOCH] > EPOCH_SPAN // 2:  # the VC records store int32 times from an epoch
            rebase(s.state, t)
        if s.faults and t == s.faults.next_cycle:  # links or routers fail or recover before cycle t
            s.faults.apply(s, t)
        t1 = min(end, end if s.closed_loop else t + chunk, occupancy.next_cycle if occupancy else end,
                 int(s.state.ctr[C_EPOCH]) + EPOCH_SPAN, s.faults.next_cycle if s.faults else end)
        t0, w0 = t, time.perf_counter()
        status, t, low = run_chunk(s.net.topo, s.routes, prm, s.traffic, s.workload, s.state, t, t1, True, chunk)
        chunk = _next_chunk(chunk, min(t - t0, chunk), time.perf_counter() - w0)
        s.cycle = t
        if occupancy and t == occupancy.next_cycle:  # also when the run drained or finished on this cycle
            occupancy.sample(t, s.state.pt[:, PT_HELD])
        if status == GROW:
            grow_pools(s, low)
        elif status == DEADLOCK:
            if s.closed_loop and s.state.ctr[C_CREATED] == s.state.ctr[C_DELIVERED] + s.state.ctr[C_DROPPED]:
                if s.program is not None:
                    from .mpi.results import stall_report

                    raise WorkloadError(f"MPI program stalled at cycle {t}: {stall_report(s)}")
                raise WorkloadError(f"workload stalled at cycle {t}: nothing in flight and no task can act")
            raise DeadlockError(t, blocked_vcs(s))
        elif status == FAILED:
            raise WorkloadError(f"workload failed at cycle {t}: {ERRORS[int(s.workload.wc[WC_ERROR])]}")
        elif status in (DRAINED, FINISHED):
            break
        if progress:
            progress(t, end)
    s.simulate_seconds += time.perf_counter() - started
    if s.closed_loop and not s.workload.wc[WC_FINISHED]:
        raise WorkloadError(f"workload did not finish within sim.max_cycles = {end}")
    if occupancy:
        occupancy.close()
    auditing.join()
    check_conservation(s)
    return s


def grow_pools(s: Simulation, low: int) -> None:
    """After run_chunk returned GROW: double the pools `low` names (bit 1 packets, 2 events, 4 the workload's
    messages)."""
    from .kernels.state import grow
    from .workloads.build import grow_messages

    if low & 3:
        s.state = grow(s.state, packets=bool(low & 1), events=bool(low & 2))
    if low & 4:
        s.workload = grow_messages(s.workload)


def _next_chunk(chunk: int, cycles: int, seconds: float) -> int:
    """Cycles for the next kernel call: about CHUNK_SECONDS of work, at most CHUNK. A million-node network runs
    ~17 cycles/s, so a fixed 2048-cycle chunk would report progress (and take Ctrl-C) every two minutes. Where a
    chunk ends does not change the results (tests/test_progress.py and test_occupancy.py check it)."""
    if cycles <= 0:
        return chunk
    target = max(MIN_CHUNK, min(CHUNK, int(cycles * CHUNK_SECONDS / max(seconds, 1e-9))))
    if target < chunk and seconds < CHUNK_SECONDS / 10:  # too short a call to time: grow, never shrink, on it
        return chunk
    return target


def blocked_vcs(s: Simulation, limit: int = 8) -> list[tuple[int, int, int]]:
    """Some (router, port, vc) whose head packet is waiting."""
    from .kernels.state import C_N_ACTIVE

    st, V = s.state, s.params.vcs
    out = []
    for vc in st.act[: int(st.ctr[C_N_ACTIVE])][:limit]:
        port = int(vc) // V
        out.append((int(s.net.port_router[port]), port, int(vc) % V))
    return out


def check_conservation(s: Simulation) -> dict[str, int]:
    """Created = delivered + dropped + in flight + queued, each packet in exactly one place, credits balanced."""
    from .kernels.audit import (
        A_CREDIT_ERRORS, A_DELIVERING, A_DUPLICATES, A_FREE, A_IN_VCS, A_QUEUED, A_READY_ERRORS, audit,
    )
    from .kernels.state import C_CREATED, C_DELIVERED, C_DROPPED, C_FREE_COUNT, C_QUEUED

    st = s.state
    a = audit(s.params, st)
    created, delivered = int(st.ctr[C_CREATED]), int(st.ctr[C_DELIVERED]) + int(st.ctr[C_DROPPED])
    live = int(a[A_QUEUED] + a[A_IN_VCS] + a[A_DELIVERING])
    problems = []
    if a[A_DUPLICATES]:
        problems.append(f"{a[A_DUPLICATES]} packets found in two places")
    if created - delivered != live:
        problems.append(f"created {created} - delivered or dropped {delivered} != {live} live packets")
    if a[A_FREE] + live != len(st.pk) or a[A_FREE] != st.ctr[C_FREE_COUNT]:
        problems.append(f"pool: {a[A_FREE]} free + {live} live != capacity {len(st.pk)}")
    if a[A_QUEUED] != st.ctr[C_QUEUED]:
        problems.append(f"source queues hold {a[A_QUEUED]}, counter says {st.ctr[C_QUEUED]}")
    if a[A_CREDIT_ERRORS]:
        problems.append(f"{a[A_CREDIT_ERRORS]} VCs whose credits do not add up to the buffer size")
    if a[A_READY_ERRORS]:
        problems.append(f"{a[A_READY_ERRORS]} VCs whose head packet is not waiting for allocation exactly once")
    if problems:
        raise ConservationError("conservation check failed at cycle " + str(s.cycle) + ": " + "; ".join(problems))
    return {"queued": int(a[A_QUEUED]), "in_network": int(a[A_IN_VCS] + a[A_DELIVERING])}


def run(config: dict[str, Any] | str | Path | None = None, *, progress: Callable[[int, int], None] | None = None,
        out: str | Path | None = None):
    """Simulate one config (dict or TOML path; None: the embedded default) and return an xarray.Dataset. With
    `out`, the results are also written to that zarr store (replaced only once the run has finished), and the
    dataset returned is the store opened lazily: with sim.occupancy_interval, `port_occupancy` streams there."""
    from .occupancy import recorder_for
    from .results import to_dataset
    from .store import StagedStore

    t0 = time.perf_counter()
    if out is None:
        s = prepare(config)
        simulate(s, progress, recorder_for(s, None))
        return to_dataset(s, wall_seconds=time.perf_counter() - t0)
    import xarray as xr

    with StagedStore(out) as stage:
        s = prepare(config)
        simulate(s, progress, recorder_for(s, stage.tmp))
        stage.commit(to_dataset(s, wall_seconds=time.perf_counter() - t0))
    return xr.open_zarr(out, chunks=None)
