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
from typing import TYPE_CHECKING, Any, Callable


from . import config as _config
import numpy as np

from .build import build_routes
from .build.network import GLOBAL, LOCAL, NODE, Network
from .build.routing import TABLE_BUDGET_BYTES, Routes, minimal_scan, with_distance_table
from .build.vcs import VcLayout, vc_layout
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
from .units import PERIOD_ONE, Timing, timing

if TYPE_CHECKING:
    from .checkpoint import Checkpointer

# A kernel call's budget, in units of work (engine/loop.py run_chunk: a cycle simulated, a grant): each call
# costs a Python round trip and the unboxing of every array (about 50 us), so calls aim at CHUNK_SECONDS of work
CHUNK = 2**20  # the largest budget: bounds a call whose work costs more than the last call's did
CHUNK_SECONDS = 0.5  # wall time a kernel call aims at: the granularity of progress reports and Ctrl-C
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
    crew: Any = None  # kernels.crew.Crew: the run's threads (sim.threads)

    @property
    def closed_loop(self) -> bool:
        return self.workload.kind != 0


def prepare(cfg: dict[str, Any] | str | Path | None = None, *, table_budget: int | None = None) -> Simulation:
    """Resolve and check a config, compile network, routing, traffic and the initial state."""
    from .engine.coldstart import start_early

    cfg = _resolved(cfg)
    with start_early():  # a kernel compiled here means a cold cache: the two-core compile's helper starts now
        return _built(cfg, table_budget)


def _built(cfg: dict[str, Any], table_budget: int | None) -> Simulation:
    """prepare()'s work on a resolved config."""
    buffers = _buffers(cfg)
    check_network_fits(cfg)  # before the build, which could exhaust the machine itself
    net, routes = network_and_routes(cfg, table_budget)
    plan = None
    if "faults" in cfg:  # (even with none failed: a sweep's points then have the same variables)
        plan = plan_faults(cfg, net, routes)
        net, routes = plan.start(net, routes)
    layout = vc_layout(net, routes, cfg["router"], cfg["routing"])
    routes = routes._replace(vcr=layout.ranges)
    cfg["router"].update(vcs=layout.vcs[LOCAL], vcs_global=layout.vcs[GLOBAL], vcs_injection=layout.vcs[NODE])
    closed = _closed_loop(cfg)
    # the kernels' failure handling only where something fails: with nothing down the run is the one without it
    prm = _params(cfg, net, layout, buffers, closed, faults=plan is not None and plan.fails)
    tr, wl, program, prm = _traffic_and_workload(cfg, net, prm)
    # refuse now, before the state (most of a large run's memory) exists, rather than swap or be killed
    check_memory(memory_estimate(net, routes, cfg, prm.vcs, layout.hop_limit, extra=(tr, wl)), cfg)
    st = _initial_state(cfg, net, prm, tr, _vc_capacity(net, layout.vcs, buffers, prm.vcs), closed)
    from .kernels.crew import new_crew, run_threads

    crew = new_crew(run_threads(cfg, net.n_ports), len(st.act), net.radix)
    return Simulation(cfg=cfg, net=net, routes=routes, params=prm, traffic=tr, state=st, workload=wl,
                      program=program, faults=plan, crew=crew)


def _resolved(cfg: dict[str, Any] | str | Path | None) -> dict[str, Any]:
    """The full config: the default one, a TOML file's, or the dict given, with every default filled in."""
    if cfg is None:
        cfg = _config.DEFAULT_CONFIG
    if isinstance(cfg, (str, Path)):
        cfg = _config.read_toml(cfg)
    if not isinstance(cfg, dict):
        raise ConfigError("config", f"must be a table of sections, the path of a TOML config, or None (got "
                          f"{type(cfg).__name__})")
    return _config.resolve(cfg)


def _buffers(cfg: dict[str, Any]) -> dict[int, int]:
    """Phits of one VC's buffer by port class; ConfigError if one is below config.vc_floor."""
    router, traffic = cfg["router"], cfg["traffic"]
    buffers = {NODE: router["buffer_phits_injection"], LOCAL: router["buffer_phits"],
               GLOBAL: router["buffer_phits_global"]}
    floor = _config.vc_floor(router["crossbar"], router["speedup"], traffic["packet_phits"])
    for cls, key in ((LOCAL, "buffer_phits"), (GLOBAL, "buffer_phits_global"), (NODE, "buffer_phits_injection")):
        if buffers[cls] >= floor:
            continue
        if router["crossbar"] == "packet":
            raise ConfigError(f"router.{key}", f"must hold a whole packet for virtual cut-through "
                              f"(>= traffic.packet_phits = {floor}, got {buffers[cls]}); "
                              "router.crossbar = \"flit\" (wormhole, credits flit by flit) takes smaller buffers")
        raise ConfigError(f"router.{key}", f"must hold the phits one cycle of the flit crossbar moves (>= {floor}"
                          f" = min(ceil(router.speedup), traffic.packet_phits), got {buffers[cls]}); or lower "
                          "router.speedup")
    return buffers


def _check_intermediate(rcfg: dict, kind: str) -> None:
    """routing.intermediate: `any` for val on a flat network, `router` for val and ugal on a dragonfly."""
    algorithm, intermediate = rcfg["algorithm"], rcfg["intermediate"]
    if intermediate == "any" and (algorithm != "val" or kind in ("dragonfly", "fattree")):
        raise ConfigError("routing.intermediate", f"any is val's intermediate on a flat network (routing is "
                          f"{algorithm} on a {kind}): a dragonfly's Valiant intermediate is a group (auto) or a router "
                          f"(router), a fat tree's a top switch (auto)")
    if intermediate == "router" and (algorithm not in ("val", "ugal_l", "ugal_g") or kind != "dragonfly"):
        raise ConfigError("routing.intermediate", f"router is the intermediate of val and ugal on a dragonfly "
                          f"(routing is {algorithm} on a {kind}): use auto")


def _fixed_min(rcfg: dict[str, Any]) -> bool:
    """Minimal routing over one fixed shortest path per router pair (routing.min_path = "fixed")."""
    return rcfg["algorithm"] == "min" and rcfg["min_path"] == "fixed"


def network_and_routes(cfg: dict[str, Any], table_budget: int | None = None) -> tuple[Network, Routes]:
    """The network as built, and its routes: with a distance table where the routing reads one (ksp, fixed min);
    ConfigError for a routing setting this network cannot take (`fastnet info` refuses what `run` would)."""
    rcfg = cfg["routing"]
    net = build_network(cfg)
    budget = TABLE_BUDGET_BYTES if table_budget is None else table_budget
    routes = build_routes(net, budget, failures="faults" in cfg)  # failures recompute the distance table
    if _fixed_min(rcfg) and net.kind == "dragonfly":
        raise ConfigError("routing.min_path", "fixed is for graphs whose minimal paths are shortest paths; a "
                          "dragonfly's are hierarchical (one global hop): use random")
    if rcfg["order"] == "xy_yx" and (rcfg["algorithm"] != "ugal_l" or net.kind != "hyperx"):
        raise ConfigError("routing.order", f"xy_yx is an order of ugal_l on a HyperX or flattened butterfly "
                          f"(routing is {rcfg['algorithm']} on a {net.kind}); use xy_yx routing for one order per "
                          f"packet without UGAL")
    _check_intermediate(rcfg, net.kind)
    if rcfg["algorithm"] == "dor_express" and not net.params.get("express"):
        raise ConfigError("routing.algorithm", "dor_express takes a mesh's express channels (topology.express > 0, "
                          "BookSim2's cmesh); this network has none: use dor")
    if rcfg["algorithm"] == "ksp" or _fixed_min(rcfg):
        routes = with_distance_table(net, routes)
    return net, routes


def _closed_loop(cfg: dict[str, Any]) -> bool:
    """A workload other than open-loop traffic: it runs until it finishes."""
    from .workloads.build import workload_section

    return workload_section(cfg)["kind"] != "open_loop"


def _window(sim: dict[str, Any], closed: bool) -> tuple[int, int]:
    """The measurement window [w0, w1): a closed-loop workload's whole run (at most sim.max_cycles), else
    sim.warmup to warmup + measure, checked to leave the drain room within sim.max_cycles."""
    if closed:  # a closed-loop workload runs until it finishes (at most sim.max_cycles); all of it is measured
        if sim["timeseries"] and sim["max_cycles"] // sim["timeseries"] > 10**7:
            raise ConfigError("sim.timeseries", "with a closed-loop workload, set sim.max_cycles so that "
                              "max_cycles / timeseries <= 10,000,000 rows")
        return 0, sim["max_cycles"]
    w0 = sim["warmup"]
    w1 = w0 + sim["measure"]
    if w1 + sim["drain"] > sim["max_cycles"]:
        raise ConfigError("sim.max_cycles", f"warmup + measure + drain = {w1 + sim['drain']} exceeds it")
    return w0, w1


def _watchdog_and_horizon(cfg: dict[str, Any], net: Network, tm: Timing, vcs: dict[int, int],
                          buffers: dict[int, int], head_delay: int) -> tuple[int, int]:
    """The watchdog (cycles with packets in flight and no phit moving before a DeadlockError: sim.watchdog, at
    least four of the slowest hops) and the horizon (the farthest ahead of now an event is scheduled: a head's
    ready time after link queue, latency and router delay, or a credit). ConfigError names the largest part of
    a hop too long for the event wheel."""
    router, max_packet, delay = cfg["router"], cfg["traffic"]["packet_phits"], tm.delay
    max_lat = max(int(net.port_latency.max()), tm.latency["injection"])
    max_send = -(-max_packet * int(net.port_period.max()) // PERIOD_ONE)  # the slowest link's time for a packet
    watchdog = max(cfg["sim"]["watchdog"], 4 * (max_send + max_lat + delay + router["credit_delay"]))
    # the most an output queue holds: one packet, or with a flit crossbar every credit of the VCs downstream
    flit_crossbar = CROSSBARS.code(router["crossbar"]) == X_FLIT
    queued = max(n * buffers[cls] for cls, n in vcs.items()) if flit_crossbar else max_packet
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
    return watchdog, horizon


def _params(cfg: dict[str, Any], net: Network, layout: VcLayout, buffers: dict[int, int], closed: bool,
            faults: bool) -> Any:
    """The kernels' Params: the router's pipeline, the routing's choices by code, the window and the event wheel."""
    from .kernels.state import MAX_DIVIDEND, Params, divisor

    router, sim, rcfg = cfg["router"], cfg["sim"], cfg["routing"]
    algorithm = rcfg["algorithm"]
    tm = timing(cfg)
    w0, w1 = _window(sim, closed)
    # per-packet allocation stages: route, VC and switch allocation (at most 3 cycles; a longer `delay` is
    # pipeline latency, not occupancy)
    stages = min(tm.delay, 4)
    head_delay = max(stages - 1, 0) if router["head_delay"] == "auto" else router["head_delay"]
    vc_realloc = max(stages - 2, 0) if router["vc_realloc"] == "auto" else router["vc_realloc"]
    watchdog, horizon = _watchdog_and_horizon(cfg, net, tm, layout.vcs, buffers, head_delay)
    vcs = max(layout.vcs.values())
    if net.n_ports * vcs >= MAX_DIVIDEND:  # (the memory check refuses such a network long before)
        raise ConfigError("router.vcs", f"{net.n_ports:,} ports x {vcs} VCs is over 2**31 VC records: fewer VCs or "
                                        "a smaller network")
    vc_magic, vc_shift = divisor(vcs)
    return Params(
        vcs=vcs, vc_magic=vc_magic, vc_shift=vc_shift, delay=tm.delay, inject_latency=tm.latency["injection"],
        head_delay=head_delay, vc_realloc=vc_realloc, speedup=float(router["speedup"]),
        iters=router["alloc_iters"], allocator=SWITCH_ALLOCATORS.code(router["allocator"]),
        credit_delay=router["credit_delay"], multi_eject=EJECTIONS.code(router["ejection"]) == EJ_MULTIPLE,
        routing=ROUTINGS.code(algorithm), vc_policy=layout.policy,
        n_escape=(2 if net.kind == "torus" else 1) if algorithm == "adaptive" else 0, hop_limit=layout.hop_limit,
        paths=rcfg["paths"], adaptive_choice=algorithm == "ksp" and rcfg["path_choice"] == "adaptive",
        up_port=UP_PORTS.code(rcfg["up_port"]), fixed_min=_fixed_min(rcfg),
        val_any=algorithm == "val" and rcfg["intermediate"] == "any",
        inter_router=rcfg["intermediate"] == "router",
        indirect=rcfg["indirect_candidates"], penalty=float(rcfg["penalty"]), threshold=float(rcfg["threshold"]),
        ugal_hops=rcfg["ugal_hops"],
        ugal_xy_yx=rcfg["order"] == "xy_yx",
        ugal_vcs=UGAL_VCS.code(rcfg["ugal_vcs"]),
        ugal_queue=UGAL_QUEUES.code(rcfg["ugal_queue"]),
        reroute=algorithm == "adaptive" or (algorithm == "updown" and rcfg["up_port"] == "adaptive"),
        max_packet=cfg["traffic"]["packet_phits"], input_speedup=router["input_speedup"],
        wait_tail_credit=router["wait_for_tail_credit"], crossbar=CROSSBARS.code(router["crossbar"]),
        vc_round_robin=VC_ALLOCATORS[router["vc_choice"]].pointer, vc_alloc=VC_ALLOCATORS.code(router["vc_choice"]),
        watchdog=watchdog, skip_idle=sim["skip_idle"], background=False, w0=w0, w1=w1,
        ts_interval=sim["timeseries"], occupancy=False, faults=faults,
        wheel_mask=(1 << max(4, math.ceil(math.log2(horizon)))) - 1,
    )


def _traffic_and_workload(cfg: dict[str, Any], net: Network, prm: Any) -> tuple[Traffic, Any, Any, Any]:
    """The open-loop traffic, the workload and, for MPI, its program (with background traffic from a job of kind
    open_loop, which replaces the traffic and sets prm.background): (traffic, workload, program, prm)."""
    from .workloads.build import compile_workload, workload_section

    seed = cfg["sim"]["seed"]
    tr = compile_traffic(net, cfg["traffic"], seed)
    if workload_section(cfg)["kind"] not in ("mpi", "trace"):
        return tr, compile_workload(cfg, net, seed), None, prm
    from .mpi.build import compile_mpi

    wl, program = compile_mpi(cfg, net, seed)
    if program.background is not None:  # a job of kind open_loop: its sources run beside the ranks
        bg = program.background
        tr = background_traffic(net, bg.nodes, bg.load, cfg["traffic"]["packet_phits"])
        prm = prm._replace(background=True)
    return tr, wl, program, prm


def _vc_capacity(net: Network, vcs: dict[int, int], buffers: dict[int, int], V: int) -> np.ndarray:
    """int32[P, V]: each VC's buffer in phits, by its port's class (0 for the VCs a class does not use)."""
    vc_cap = np.zeros((net.n_ports, V), dtype=np.int32)
    for cls, n in vcs.items():
        vc_cap[net.port_class == cls, :n] = buffers[cls]
    return vc_cap


def _initial_state(cfg: dict[str, Any], net: Network, prm: Any, tr: Traffic, vc_cap: np.ndarray,
                   closed: bool) -> Any:
    """The kernels' State at cycle 0: the first pools, the time-series rows of the whole run, and the open-loop
    sources' first arrivals."""
    from .kernels.state import first_pool_rows, new_state
    from .traffic.openloop import start_open_loop

    sim = cfg["sim"]
    end = sim["max_cycles"] if closed else prm.w1 + sim["drain"]
    n_ts = math.ceil(end / sim["timeseries"]) if sim["timeseries"] else 0
    st = new_state(net.n_routers, net.n_ports, net.n_nodes, net.radix, prm, sim["seed"], n_ts,
                   packets=first_pool_rows(net.n_nodes), events=first_pool_rows(net.n_nodes), vc_cap=vc_cap,
                   arrival_slots=arrival_slots(tr.rate) if prm.background or not closed else 1)
    if prm.background or not closed:
        start_open_loop(tr.pattern, tr.table, tr.process, tr.rate, tr.alpha, tr.beta, tr.r1, st.nd, st.arrivals,
                        st.rng_node)
    return st


def arrival_slots(rate: float) -> int:
    """Open-loop arrival wheel size: a power of two about four mean gaps long (a node is looked at about once per
    lap it waits), at most 2**16."""
    mean_gap = 1.0 / rate if rate > 0 else 2.0**16
    return 1 << min(16, max(4, math.ceil(math.log2(4 * mean_gap))))


def _loop_and_signature(s: Simulation) -> tuple[Any, tuple[Any, ...]]:
    """The cycle loop kernel this run calls, and the numba signature it calls it with."""
    import numba

    from .engine.generate import generator_of
    from .engine.loop import cycle_loop

    args = (s.net.topo, s.routes, s.params, s.traffic, s.workload, s.state, s.crew, s.cycle, s.cycle, True, 1)
    loop = cycle_loop(generator_of(s.workload), s.params.routing, minimal_scan(s.routes), s.params.allocator,
                      s.params.vc_alloc, s.params.crossbar, int(s.crew.threads > 1))
    return loop, tuple(numba.typeof(a) for a in args)


def compile_kernels(s: Simulation) -> Any:
    """The cycle loop this run needs, compiled or loaded from numba's cache (the first run of a routing algorithm
    compiles it: seconds; later ones load it). The kernels it calls, and the audit, are compiled first on two
    cores when it must be compiled (engine/coldstart.py). simulate() calls it; the CLI calls it first to say so."""
    from .engine.coldstart import before_compiling, end_early
    from .engine.loop import stage_kernels

    loop, sig = _loop_and_signature(s)
    if sig not in loop.overloads:
        with before_compiling(loop, lambda: [_audit_kernel(s)] + stage_kernels(
                s.net.topo, s.routes, s.params, s.traffic, s.workload, s.state, s.crew)):
            loop.compile(sig)
    end_early()
    if s.crew.threads > 1:
        member, sig = _member_and_signature(s)
        member.compile(sig)
    return loop


def _member(s: Simulation) -> Any:
    """The kernel this run's crew members run (kernels/crew.py)."""
    from .engine.loop import crew_member

    return crew_member(s.params.routing, minimal_scan(s.routes), s.params.allocator, s.params.crossbar)


def _member_and_signature(s: Simulation) -> tuple[Any, tuple[Any, ...]]:
    """The crew member kernel of this run's threads and its numba signature."""
    import numba

    args = (s.net.topo, s.routes, s.params, s.state, s.crew, 1)
    return _member(s), tuple(numba.typeof(a) for a in args)


def call_loop(run_chunk: Any, s: Simulation, t: int, t1: int, budget: int,
              stop_when_drained: bool = True) -> tuple[int, int, int, int]:
    """One call of the cycle loop (compile_kernels' kernel: engine/loop.py run_chunk), with the crew's members
    walking their parts of each allocation round in threads of their own meanwhile (kernels/crew.py); a member that
    raises stops the loop and its error is raised here."""
    crew = s.crew
    args = (s.net.topo, s.routes, s.params, s.traffic, s.workload, s.state, crew, t, t1, stop_when_drained, budget)
    if crew.threads == 1:
        return run_chunk(*args)
    from .kernels.crew import reset_crew, stop_crew

    member = _member(s)
    errors: list[BaseException] = []

    def walk(part: int) -> None:
        try:
            member(s.net.topo, s.routes, s.params, s.state, crew, part)
        except BaseException as e:  # the loop waits for this part: stop it
            errors.append(e)
            stop_crew(crew, True)

    reset_crew(crew)
    members = [threading.Thread(target=walk, args=(p,), name=f"fastnet-crew-{p}", daemon=True)
               for p in range(1, crew.threads)]
    for thread in members:
        thread.start()
    try:
        return run_chunk(*args)
    except RuntimeError:
        if errors:
            raise errors[0] from None
        raise
    finally:
        stop_crew(crew, False)
        for thread in members:
            thread.join()


def _audit_kernel(s: Simulation) -> tuple[Any, tuple[Any, ...]]:
    """The end-of-run audit's kernel and the argument types simulate() calls it with."""
    import numba

    from .kernels.audit import COUNT_SCRATCH, count

    return count, (numba.typeof(s.params), numba.typeof(s.state), *COUNT_SCRATCH)


def _compile_audit(s: Simulation) -> threading.Thread:
    """Compile (or load) the end-of-run audit in a thread: the cycle loop releases the GIL, so on a cold cache
    the audit compiles while the simulation runs instead of after it."""
    count, sig = _audit_kernel(s)
    thread = threading.Thread(target=count.compile, args=(sig,), name="fastnet-audit-compile", daemon=True)
    thread.start()
    return thread


def simulate(s: Simulation, progress: Callable[[int, int], None] | None = None,
             occupancy: OccupancyRecorder | None = None, checkpoint: Checkpointer | None = None) -> Simulation:
    """Run warm-up, measurement window and drain (open loop) or the workload to its end (closed loop); raise
    DeadlockError, WorkloadError or ConservationError if they occur. `occupancy` samples the ports every
    sim.occupancy_interval cycles: a chunk ends on each sampling cycle, where the state is read. `checkpoint`
    writes the run's state at chunk boundaries and stops it there on SIGINT or SIGTERM (checkpoint.RunStopped);
    a run resumed from one (sim.start) goes on from s.cycle."""
    from .engine.loop import DEADLOCK, DRAINED, FAILED, FINISHED, GROW
    from .kernels.state import C_CREATED, C_DELIVERED, C_DROPPED, C_EPOCH, EPOCH_SPAN, PT_HELD, rebase
    from .workloads.state import ERRORS, WC_ERROR, WC_FINISHED

    prm = s.params
    end = prm.w1 if s.closed_loop else prm.w1 + s.cfg["sim"]["drain"]
    t = s.cycle
    run_chunk = compile_kernels(s)
    auditing = _compile_audit(s)
    started = time.perf_counter()
    chunk = FIRST_CHUNK
    if checkpoint is not None:
        checkpoint.start(s)
    while t < end:
        # `chunk` bounds a call's work (engine/loop.py run_chunk); a closed loop skips idle cycles
        if t - s.state.ctr[C_EPOCH] > EPOCH_SPAN // 2:  # the VC records store int32 times from an epoch
            rebase(s.state, t)
        if s.faults and t == s.faults.next_cycle:  # links or routers fail or recover before cycle t
            s.faults.apply(s, t)
        t1 = min(end, occupancy.next_cycle if occupancy else end, int(s.state.ctr[C_EPOCH]) + EPOCH_SPAN,
                 s.faults.next_cycle if s.faults else end, checkpoint.next_cycle if checkpoint else end)
        w0 = time.perf_counter()
        status, t, low, work = call_loop(run_chunk, s, t, t1, chunk)
        chunk = _next_chunk(chunk, work, time.perf_counter() - w0)
        s.cycle = t
        if occupancy and t == occupancy.next_cycle:  # also when the run drained or finished on this cycle
            occupancy.sample(t, s.state.pt[:s.net.n_ports, PT_HELD])
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
        if progress:  # after every kernel call, the last one included (a drained or finished run: t < end)
            progress(t, end)
        if status in (DRAINED, FINISHED):
            break
        if checkpoint is not None and t < end:  # a chunk boundary: nothing is half done here
            checkpoint.boundary(s, occupancy)
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


def _next_chunk(chunk: int, work: int, seconds: float) -> int:
    """The next kernel call's budget, after a call did `work` units in `seconds`: about CHUNK_SECONDS of work, at
    most CHUNK. A million-node network runs ~17 cycles/s, a trace replay's sparse cycles millions a second: a
    fixed number of cycles would report progress every few minutes in one and pay for a call every few hundred
    microseconds in the other. Where a chunk ends does not change the results (tests/test_progress.py and
    test_occupancy.py check it)."""
    if work <= 0:
        return chunk
    target = max(MIN_CHUNK, min(CHUNK, int(work * CHUNK_SECONDS / max(seconds, 1e-9))))
    if target < chunk and seconds < CHUNK_SECONDS / 10:  # too short a call to time: grow, never shrink, on it
        return chunk
    return target


def blocked_vcs(s: Simulation, limit: int = 8) -> list[tuple[int, int, int]]:
    """Some (router, port, vc) whose head packet is waiting."""
    from .kernels.state import UNLISTED, VC_JOIN

    st, V = s.state, s.params.vcs
    out = []
    for vc in np.flatnonzero(st.vc[:, VC_JOIN] != UNLISTED)[:limit]:
        port = int(vc) // V
        out.append((int(s.net.port_router[port]), port, int(vc) % V))
    return out


def check_conservation(s: Simulation) -> dict[str, int]:
    """Created = delivered + dropped + in flight + queued, each packet in exactly one place, credits balanced."""
    from .kernels.audit import (
        AU_CREDIT_ERRORS, AU_DELIVERING, AU_DUPLICATES, AU_FREE, AU_IN_VCS, AU_QUEUED, AU_READY_ERRORS, audit,
    )
    from .kernels.state import C_CREATED, C_DELIVERED, C_DROPPED, C_FREE_COUNT, C_QUEUED

    st = s.state
    a = audit(s.params, st)
    created, delivered = int(st.ctr[C_CREATED]), int(st.ctr[C_DELIVERED]) + int(st.ctr[C_DROPPED])
    live = int(a[AU_QUEUED] + a[AU_IN_VCS] + a[AU_DELIVERING])
    problems = []
    if a[AU_DUPLICATES]:
        problems.append(f"{a[AU_DUPLICATES]} packets found in two places")
    if created - delivered != live:
        problems.append(f"created {created} - delivered or dropped {delivered} != {live} live packets")
    if a[AU_FREE] + live != len(st.pk) or a[AU_FREE] != st.ctr[C_FREE_COUNT]:
        problems.append(f"pool: {a[AU_FREE]} free + {live} live != capacity {len(st.pk)}")
    if a[AU_QUEUED] != st.ctr[C_QUEUED]:
        problems.append(f"source queues hold {a[AU_QUEUED]}, counter says {st.ctr[C_QUEUED]}")
    if a[AU_CREDIT_ERRORS]:
        problems.append(f"{a[AU_CREDIT_ERRORS]} VCs whose credits do not add up to the buffer size")
    if a[AU_READY_ERRORS]:
        problems.append(f"{a[AU_READY_ERRORS]} VCs whose head packet is not waiting for allocation exactly once")
    if problems:
        raise ConservationError("conservation check failed at cycle " + str(s.cycle) + ": " + "; ".join(problems))
    return {"queued": int(a[AU_QUEUED]), "in_network": int(a[AU_IN_VCS] + a[AU_DELIVERING])}


def run(config: dict[str, Any] | str | Path | None = None, *, progress: Callable[[int, int], None] | None = None,
        out: str | Path | None = None, checkpoint: str | Path | None = None, resume: str | Path | None = None):
    """Simulate one config (dict or TOML path; None: the embedded default) and return an xarray.Dataset.
    `progress(t, end)` is called after every kernel call (about every half second), the last one included: t the
    cycle reached, end the last cycle the run may reach (a run that drained or finished stops before it). With
    `out`, the results are also written to that zarr store (replaced only once the run has finished), and the
    dataset returned is the store opened lazily: with sim.occupancy_interval, `port_occupancy` streams there.

    `checkpoint`: a file the run's whole state is written to every sim.checkpoint_every ("auto": 10 minutes) and
    when SIGINT or SIGTERM stops it (checkpoint.RunStopped, a KeyboardInterrupt); removed once the run finished.
    `resume`: a checkpoint to go on from, giving the dataset an uninterrupted run gives; the config must be the
    checkpoint's (None: take it from there), and checkpoints go on to the same file unless `checkpoint` names
    another (docs/long_runs.md)."""
    from .checkpoint import Checkpointer, read_header
    from .occupancy import recorder_for
    from .results import to_dataset
    from .store import StagedStore, check_out_path

    t0 = time.perf_counter()
    if config is None and resume is not None:
        cfg = read_header(resume)["config"]
    else:
        cfg = _resolved(config)
    if out is not None:
        check_out_path(Path(out))
    ck = Checkpointer(checkpoint if checkpoint is not None else resume, cfg, fresh=resume is None)
    with ck.signals():
        s, streamed = start(cfg, resume, ck)
        if out is None:
            simulate(s, progress, recorder_for(s, None), ck)
            ds = to_dataset(s, wall_seconds=time.perf_counter() - t0)
            ck.finished()
            return ds
        import xarray as xr

        with StagedStore(out, tmp=streamed["store"] if streamed else None) as stage:
            try:
                simulate(s, progress, recorder_for(s, stage.tmp, streamed), ck)
            except BaseException:
                stage.keep = ck.on_disk()  # the checkpoint's occupancy rows are in the staged store
                raise
            stage.commit(to_dataset(s, wall_seconds=time.perf_counter() - t0))
        ck.finished()
    return xr.open_zarr(out, chunks=None)


def start(cfg: dict[str, Any], resume: str | Path | None, checkpoint: Checkpointer) -> tuple[Simulation, Any]:
    """(the prepared run of the resolved `cfg`, None), or resumed from checkpoint `resume`: (the run as the
    checkpoint left it, the position of its occupancy stream or None)."""
    if resume is None:
        return prepare(cfg), None
    from .checkpoint import check_config, read_header, restore

    header = read_header(resume)
    check_config(resume, header, cfg)  # before building anything
    s = prepare(cfg)
    streamed, checkpoint.network = restore(s, resume, header)
    return s, streamed
