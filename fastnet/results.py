"""Results of a run as a labelled xarray.Dataset; every variable is described once, in VARIABLES.

Latency follows BookSim2: packet latency runs from creation at the source to the tail reaching the destination
node (source queueing included), network latency from the head entering the network. Both are taken over the
packets created inside the measurement window [warmup, warmup + measure); accepted throughput counts the phits
delivered inside the window, offered counts the phits created inside it. `unstable` is 1 when some measured
packets were still undelivered after `sim.drain` cycles, or the backlog grew over the window (the network is past
saturation). A closed-loop workload
(`[workload]`) measures its whole run, and adds its execution time and per-wave or per-level tables. Beside an
MPI run with background traffic (a job of kind open_loop), the packet statistics are the background's alone, per
background node, until the MPI run ends (docs/mpi.md "Background traffic").
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import xarray as xr

from .build.routing import is_table
from .registry import W_MPI, W_OPEN_LOOP
from .units import Timing, timing
from .version import __version__

# name: (dims, units, description)
VARIABLES: dict[str, tuple[tuple[str, ...], str, str]] = {
    "accepted_phits_per_node_cycle": ((), "phits/node/cycle", "phits delivered in the window / nodes / window"),
    "offered_phits_per_node_cycle": ((), "phits/node/cycle", "phits created in the window / nodes / window"),
    "injected_phits_per_node_cycle": ((), "phits/node/cycle", "phits entering the network in the window"),
    "packet_latency_mean": ((), "cycles", "creation to tail delivered, measured packets"),
    "packet_latency_p50": ((), "cycles", "median packet latency (histogram, <= 1.6 % bin width)"),
    "packet_latency_p99": ((), "cycles", "99th percentile packet latency"),
    "packet_latency_max": ((), "cycles", "largest packet latency"),
    "packet_latency_mean_ns": ((), "ns", "packet_latency_mean x cycle_ns"),
    "network_latency_mean_ns": ((), "ns", "network_latency_mean x cycle_ns"),
    "accepted_gbytes_per_node": ((), "GB/s", "accepted throughput per node: phits x phit_bytes / cycle_ns"),
    "offered_gbytes_per_node": ((), "GB/s", "offered throughput per node"),
    "network_latency_mean": ((), "cycles", "head injected to tail delivered, measured packets"),
    "network_latency_p50": ((), "cycles", "median network latency"),
    "network_latency_p99": ((), "cycles", "99th percentile network latency"),
    "network_latency_max": ((), "cycles", "largest network latency"),
    "hops_mean": ((), "hops", "router-to-router links per measured packet"),
    "hops_local_mean": ((), "hops", "local (and torus, tree, graph) links per measured packet"),
    "hops_global_mean": ((), "hops", "global links per measured packet"),
    "packets_created": ((), "packets", "created by the sources over the whole run"),
    "packets_injected": ((), "packets", "entered the network over the whole run"),
    "packets_delivered": ((), "packets", "delivered over the whole run"),
    "packets_in_flight": ((), "packets", "in the network at the end"),
    "packets_dropped": ((), "packets", "lost to failures over the whole run (fastnet/faults; 0 without)"),
    # with a [faults] section (docs/faults.md)
    "packets_dropped_by_cause": (("drop_cause",), "packets", "dropped on a failing link, in a failing router, or "
                                 "where no live route led to the destination"),
    "port_failed_cycles": (("port",), "cycles", "cycles each port's link (or router) was down in the run"),
    "packets_queued": ((), "packets", "waiting in source queues at the end"),
    "packets_measured": ((), "packets", "created in the window and delivered"),
    "cycles": ((), "cycles", "simulated cycles"),
    "phit_hops": ((), "phits", "phits times switch traversals over the whole run (BookSim's flit-hops)"),
    "unstable": ((), "1", "1 if measured packets were left undelivered after the drain (saturated); without a drain "
                 "(sim.drain = 0) or beside an MPI run, 1 if the sources' queues held more than a packet per node at "
                 "the end; open loop, also 1 if the backlog grew over the window (packets created in it less those "
                 "delivered or dropped: over a packet per node and 2 % of those created)"),
    "port_utilization": (("port",), "phits/cycle", "phits sent on each output port per window cycle"),
    "packet_latency_histogram": (("latency_bin",), "packets", "measured packets per latency bin"),
    "network_latency_histogram": (("latency_bin",), "packets", "measured packets per network-latency bin"),
    "ts_created_phits": (("time",), "phits", "phits created in each time-series interval"),
    "ts_delivered_phits": (("time",), "phits", "phits delivered in each interval"),
    "ts_packet_latency_mean": (("time",), "cycles", "mean latency of the packets delivered in each interval"),
    "ts_packets_in_network": (("time",), "packets", "packets in the network at the end of each interval (of the "
                              "run, for a last shorter interval)"),
    "ts_packets_queued": (("time",), "packets", "packets in source queues at the end of each interval (of the run, "
                          "for a last shorter interval)"),
    # streamed during the run into the --out store (fastnet/occupancy.py), not built by to_dataset
    "port_occupancy": (("occupancy_time", "port"), "phits",
                       "phits reserved in each port's input VCs (buffered or on the link to it), sampled"),
    "occupancy_time": (("occupancy_time",), "cycle", "cycle at which the occupancy was sampled (end of cycle - 1)"),
    # closed-loop workloads (fastnet/workloads/): the whole run is the measurement window
    "execution_cycles": ((), "cycles", "cycles until the workload completed: its last cycle + 1 (seed 000/002 "
                         "workloads), or the cycle its last rank returned from its last call (MPI, from cycle 0)"),
    "execution_ns": ((), "ns", "MPI: execution_cycles x cycle_ns"),
    "mpi_calls": ((), "calls", "MPI calls of the program that move data or compute (no-data calls excluded)"),
    "mpi_calls_skipped": ((), "calls", "trace calls fastnet does not model, skipped (workload.skip_unknown)"),
    "messages": ((), "messages", "MPI data transfers (eager messages and rendezvous data)"),
    "bytes": ((), "bytes", "MPI payload bytes transferred (headers excluded)"),
    "control_messages": ((), "messages", "rendezvous requests-to-send and clears-to-send"),
    "mpi_events": ((), "events", "MPI: calls replayed + messages delivered (data and control); the run's "
                   "mpi_events_per_second attribute divides it by the time of the cycle loop"),
    "rank_compute_cycles": (("task",), "cycles", "MPI: cycles each rank computed"),
    "job_execution_cycles": (("job",), "cycles", "MPI jobs (workload.jobs): the cycle the job's last rank returned "
                             "from its last call"),
    "job_execution_ns": (("job",), "ns", "job_execution_cycles x cycle_ns"),
    "job_ranks": (("job",), "ranks", "ranks of each job"),
    "job_compute_cycles": (("job",), "rank-cycles", "cycles the job's ranks computed"),
    "job_wait_cycles": (("job",), "rank-cycles", "cycles the job's ranks spent blocked in waits and collectives"),
    "rank_wait_cycles": (("task",), "cycles", "MPI: cycles each rank spent blocked in waits and collectives"),
    "call_count": (("call",), "calls", "MPI calls of each kind"),
    "call_cycles": (("call",), "rank-cycles", "cycles ranks spent inside each kind of blocking call (compute: "
                                              "computing)"),
    "call_message_latency_histogram": (("call", "latency_bin"), "messages",
                                       "MPI data-message latency (as message_latency_mean) per latency bin, by "
                                       "the call that sent it"),
    "timeline_rank": (("interval",), "rank", "MPI timeline ([mpi] timeline_intervals): the rank of each interval in "
                      "which a rank computed or was blocked in a call, rank by rank in time order"),
    "timeline_call": (("interval",), "call", "what the rank did: an index into the call coordinate ('compute', or "
                      "the blocking call: a send waiting for its rendezvous, a receive, a wait, a collective)"),
    "timeline_start": (("interval",), "cycle", "first cycle of the interval"),
    "timeline_end": (("interval",), "cycle", "cycle the rank went on (the interval is [start, end))"),
    "comm_matrix_bytes": (("rank_from", "rank_to"), "bytes", "MPI payload bytes sent between ranks (coordinates: "
                          "the first rank of each cell; attribute comm_matrix_ranks_per_cell)"),
    "execution_seconds": ((), "s", "Graph500: execution_cycles x cycle_ns"),
    "messages_posted": ((), "messages", "messages the workload sent through the network"),
    "messages_completed": ((), "messages", "messages whose every packet arrived"),
    "messages_local": ((), "messages", "SR/GUPS messages with dst = src (a local copy, no network)"),
    "message_latency_mean": ((), "cycles", "message posted (Send) to its last packet's tail delivered (MPI: data "
                             "messages, from the send's post to the data's last byte at the receiver)"),
    "message_latency_max": ((), "cycles", "largest message latency"),
    "control_latency_mean": ((), "cycles", "MPI: rendezvous RTS and CTS, each from its post to its arrival"),
    "control_latency_max": ((), "cycles", "MPI: largest RTS or CTS latency"),
    "unmatched_cycles_mean": ((), "cycles", "MPI: cycles an envelope (eager data, RTS) waited at its receiver from "
                              "its arrival until a receive or collective step took it, mean over envelopes"),
    "unmatched_cycles_max": ((), "cycles", "MPI: longest such wait"),
    "network_usage_phits_per_node_cycle": ((), "phits/node/cycle", "phits injected / nodes / execution_cycles"),
    "task_finish_cycle": (("task",), "cycle", "cycle at which each task finished (-1: never waits)"),
    "wave_start": (("wave",), "cycle", "cycle a wave's sends were posted (collectives: one wave)"),
    "wave_end": (("wave",), "cycle", "cycle the wave's last message completed"),
    "wave_cycles": (("wave",), "cycles", "wave_end - wave_start + 1"),
    "wave_messages": (("wave",), "messages", "messages of the wave (SR: including local copies)"),
    "wave_network_messages": (("wave",), "messages", "messages of the wave that used the network"),
    "cycle_ns": ((), "ns", "Graph500, MPI: the time of one cycle (one phit per link)"),
    "link_gbps": ((), "Gb/s", "Graph500: link bandwidth, phit_bytes * 8 / cycle_ns"),
    "query_time_cycles": ((), "cycles", "Graph500: t_q / t_c"),
    "root_degree": ((), "edges", "Graph500: d_r, given or drawn from the lognormal of eqs 18-19"),
    "root_task": ((), "task", "Graph500: the process hosting the root vertex"),
    "levels": ((), "levels", "Graph500: BFS levels run"),
    "queries_total": ((), "queries", "Graph500: remote queries sent over all levels"),
    "queries_received": ((), "queries", "Graph500 (fogsim): queries received, FOGSim's 'P2P Queries sent'"),
    "level_start": (("level",), "cycle", "Graph500: cycle the level started (the root's host)"),
    "level_end": (("level",), "cycle", "Graph500: cycle the last process finished the level's all-reduce"),
    "level_cycles": (("level",), "cycles", "Graph500: level_end - level_start + 1"),
    "level_messages": (("level",), "messages", "Graph500: query messages of the level (eqs 2-3)"),
    "level_queries": (("level",), "queries", "Graph500: remote queries of the level (eq 1)"),
    "level_senders": (("level",), "processes", "Graph500: processes with at least one message in the level"),
    "level_mean_edges": (("level",), "edges", "Graph500: mean of the level's Gaussian (eqs 4-7, capped)"),
    "level_sigma_edges": (("level",), "edges", "Graph500: standard deviation of the level's Gaussian (eqs 8-16)"),
}


def variables_markdown() -> str:
    """docs/results.md: every variable a run's dataset may hold, from VARIABLES (docs/gen_results.py writes it; a
    test keeps it current)."""
    intro = __doc__.split("\n\n", 1)[1].strip().replace("\n", " ")
    lines = ["# What a run's dataset holds", "",
             "Generated from `fastnet/results.py` VARIABLES by `python docs/gen_results.py`. Each variable of a "
             "dataset (`fastnet.run`, `fastnet run --out`, a sweep point) carries these `units` and `description` "
             "attributes; the dataset's attributes hold the resolved config (`config`, JSON), the seed, the "
             "network's size and the run's timing. A variable is present when its run has it: the time series "
             "with `sim.timeseries`, failures with `[faults]`, the rest by workload.", "", intro, "",
             "| variable | dimensions | units | what |", "|---|---|---|---|"]
    for name, (dims, units, doc) in VARIABLES.items():
        lines.append(f"| `{name}` | {', '.join(dims) or 'scalar'} | {units} | {doc} |")
    return "\n".join(lines) + "\n"


def bin_edges(n_bins: int) -> np.ndarray:
    """Lower edge of each latency-histogram bin (kernels/pool.py: hist_bin)."""
    from .kernels.state import HIST_SUB

    b = np.arange(n_bins + 1, dtype=np.int64)
    e = np.maximum((b - 2 * HIST_SUB) // HIST_SUB + 1, 0)
    m = np.where(b < 2 * HIST_SUB, b, (b - 2 * HIST_SUB) % HIST_SUB + HIST_SUB)
    return np.where(b < 2 * HIST_SUB, b, m << e)


def percentile(hist: np.ndarray, q: float) -> float:
    """Value below which a fraction q of the histogram lies (bin midpoint; exact below 128 cycles)."""
    total = hist.sum()
    if total == 0:
        return float("nan")
    edges = bin_edges(len(hist))
    i = int(np.searchsorted(np.cumsum(hist), q * total, side="left"))
    lo, hi = edges[i], edges[i + 1]
    return float(lo) if hi - lo == 1 else float(lo + (hi - lo - 1) / 2)


def _mean(total: float, count: float) -> float:
    return float(total) / count if count else float("nan")


def to_dataset(s: Any, wall_seconds: float) -> xr.Dataset:
    """The results of run `s` (after `wall_seconds` of wall time): its packet statistics, per port and per latency
    bin, the time series, the failures' counts and the workload's figures, each variable described by VARIABLES."""
    prm = s.params
    bg = s.program.background if prm.background else None
    N = len(bg.nodes) if bg is not None else s.net.n_nodes  # the nodes whose packets are measured
    window = min(prm.w1, s.cycle) - prm.w0  # a closed-loop run measures all its cycles
    t = timing(s.cfg)
    # without a drain (BookSim2's sim_type = throughput) measured packets are always left in flight at the end
    no_drain = s.cfg["sim"]["drain"] == 0 and s.workload.kind == W_OPEN_LOOP
    stats = _packet_statistics(s, N, window, by_queues=bg is not None or no_drain)
    ports, port_coords = _per_port(s, window)
    hists, hist_coords = _histograms(s.state)
    values = {**stats, **ports, **hists, **_in_physical_units(stats, t, s.cfg["traffic"]["phit_bytes"])}
    coords = {**port_coords, **hist_coords}
    if prm.ts_interval:
        ts_values, coords["time"] = _timeseries(s)
        values.update(ts_values)
    fattrs: dict[str, Any] = {}
    if s.faults is not None:
        fvalues, coords["drop_cause"], fattrs = _fault_values(s)
        values.update(fvalues)
    wvalues, wcoords, wattrs = _workload_values(s, wall_seconds)
    values.update(wvalues)
    coords.update(wcoords)
    attrs = {**_run_attrs(s, N, bg, t, wall_seconds), **fattrs, **wattrs}
    return xr.Dataset(_described(values), coords=coords, attrs=attrs)


def _backlog_grew(s: Any, N: int) -> bool:
    """Whether the sources and the network held clearly more packets at the window's end than at its start: the
    window's packets (phits) created less those delivered in it and the measured ones dropped, over a packet per
    node and 2 % of those created (a stable network's backlog only fluctuates). Past saturation a run may still
    drain its window in time, and without a drain deep injection buffers hold the backlog the sources' queues
    would show."""
    from .kernels import state as K

    sc, ctr = s.state.sc, s.state.ctr
    size = float(np.mean(s.traffic.sizes))
    grew = sc[K.S_OFFERED_PHITS] - sc[K.S_ACCEPTED_PHITS] - ctr[K.C_MEAS_DROPPED] * size
    return bool(grew > max(N * size, 0.02 * sc[K.S_OFFERED_PHITS]))


def _in_network(ctr: np.ndarray) -> int:
    """Packets in the network now: created and not delivered, dropped or still in their source queues (as
    engine/loop.py record_timeseries counts them at each interval's end)."""
    from .kernels import state as K

    return int(ctr[K.C_CREATED] - ctr[K.C_DELIVERED] - ctr[K.C_DROPPED] - ctr[K.C_QUEUED])


def _packet_statistics(s: Any, N: int, window: int, by_queues: bool) -> dict[str, Any]:
    """Throughput per node over the window, latency and hops of the measured packets, and the packet counts;
    `unstable` by the sources' queues at the end (`by_queues`) or by measured packets left undelivered, and for
    open-loop traffic also by a backlog that grew over the window."""
    from .kernels import state as K

    st = s.state
    sc, ctr = st.sc, st.ctr
    count = int(sc[K.S_COUNT])
    in_network = _in_network(ctr)
    return {
        "accepted_phits_per_node_cycle": sc[K.S_ACCEPTED_PHITS] / (N * window),
        "offered_phits_per_node_cycle": sc[K.S_OFFERED_PHITS] / (N * window),
        "injected_phits_per_node_cycle": sc[K.S_MEAS_INJECTED_PHITS] / (N * window),
        "packet_latency_mean": _mean(sc[K.S_LAT_SUM], count),
        "packet_latency_p50": percentile(st.lat_hist, 0.5),
        "packet_latency_p99": percentile(st.lat_hist, 0.99),
        "packet_latency_max": float(sc[K.S_LAT_MAX]) if count else float("nan"),
        "network_latency_mean": _mean(sc[K.S_NET_SUM], count),
        "network_latency_p50": percentile(st.net_hist, 0.5),
        "network_latency_p99": percentile(st.net_hist, 0.99),
        "network_latency_max": float(sc[K.S_NET_MAX]) if count else float("nan"),
        "hops_mean": _mean(sc[K.S_HOPS_SUM], count),
        "hops_local_mean": _mean(sc[K.S_HOPS_LOCAL], count),
        "hops_global_mean": _mean(sc[K.S_HOPS_GLOBAL], count),
        "packets_created": int(ctr[K.C_CREATED]),
        "packets_injected": int(ctr[K.C_INJECTED]),
        "packets_delivered": int(ctr[K.C_DELIVERED]),
        "packets_in_flight": in_network,
        "packets_queued": int(ctr[K.C_QUEUED]),
        "packets_dropped": int(ctr[K.C_DROPPED]),
        "packets_measured": count,
        "cycles": int(s.cycle),
        "phit_hops": int(ctr[K.C_PHIT_HOPS]),
        # background traffic stops with the MPI run, a run without a drain at the window's end, its last packets in
        # flight: it is unstable if the sources' queues hold more than a packet per node then (the network did not
        # keep up with the offered load)
        "unstable": int((ctr[K.C_QUEUED] > N if by_queues else
                         ctr[K.C_MEAS_CREATED] != ctr[K.C_MEAS_DELIVERED] + ctr[K.C_MEAS_DROPPED])
                        or (s.workload.kind == W_OPEN_LOOP and _backlog_grew(s, N))),
    }


def _per_port(s: Any, window: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each output port's utilization over the window; the port coordinates (router, class)."""
    from .kernels.state import PT_PHITS

    net = s.net
    coords = {
        "port": np.arange(net.n_ports),
        "port_router": ("port", net.port_router.copy()),
        "port_class": xr.Variable("port", net.port_class.astype(np.int8),  # CF flags, not strings (zarr v3)
                                  attrs={"flag_values": [0, 1, 2], "flag_meanings": "injection local global"}),
    }
    return {"port_utilization": s.state.pt[:s.net.n_ports, PT_PHITS] / window}, coords


def _histograms(st: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The measured packets per latency bin, and the bins' lower edges."""
    values = {"packet_latency_histogram": st.lat_hist.copy(), "network_latency_histogram": st.net_hist.copy()}
    coords = {"latency_bin": np.arange(len(st.lat_hist)),
              "latency_bin_lower": ("latency_bin", bin_edges(len(st.lat_hist))[:-1])}
    return values, coords


def _in_physical_units(stats: dict[str, Any], t: Timing, phit_bytes: int) -> dict[str, Any]:
    """The mean latencies in ns and the throughputs in GB/s per node."""
    gbytes = phit_bytes / t.cycle_ns  # one phit per node per cycle, in GB/s
    return {
        "packet_latency_mean_ns": stats["packet_latency_mean"] * t.cycle_ns,
        "network_latency_mean_ns": stats["network_latency_mean"] * t.cycle_ns,
        "accepted_gbytes_per_node": stats["accepted_phits_per_node_cycle"] * gbytes,
        "offered_gbytes_per_node": stats["offered_phits_per_node_cycle"] * gbytes,
    }


def _timeseries(s: Any) -> tuple[dict[str, Any], np.ndarray]:
    """Per time-series interval (sim.timeseries) up to the last cycle run: phits created and delivered, mean
    latency, packets in the network and queued; and the interval's first cycle."""
    from .kernels import state as K

    interval = s.params.ts_interval
    rows = -(-int(s.cycle) // interval)
    ts = s.state.ts[:rows].copy()
    if s.cycle % interval:  # the loop samples an interval's counts at its end: a last partial one ends with the run
        ctr = s.state.ctr
        ts[-1, K.TS_IN_NETWORK] = _in_network(ctr)
        ts[-1, K.TS_QUEUED] = ctr[K.C_QUEUED]
    values = {
        "ts_created_phits": ts[:, K.TS_CREATED_PHITS],
        "ts_delivered_phits": ts[:, K.TS_DELIVERED_PHITS],
        "ts_packet_latency_mean": np.where(ts[:, K.TS_LAT_COUNT] > 0,
                                           ts[:, K.TS_LAT_SUM] / np.maximum(ts[:, K.TS_LAT_COUNT], 1), np.nan),
        "ts_packets_in_network": ts[:, K.TS_IN_NETWORK],
        "ts_packets_queued": ts[:, K.TS_QUEUED],
    }
    return values, np.arange(rows) * interval


def _fault_values(s: Any) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    """The packets dropped by cause, each port's failed cycles, the causes, and the failures' attributes."""
    from .kernels import state as K

    ctr, plan = s.state.ctr, s.faults
    values = {"packets_dropped_by_cause": ctr[[K.C_DROP_LINK, K.C_DROP_ROUTER, K.C_DROP_UNROUTABLE]].copy(),
              "port_failed_cycles": plan.port_failed_cycles(int(s.cycle))}
    first = plan.states[0][1]
    attrs = {"faults_links_down_at_start": len(first.links), "faults_routers_down_at_start": len(first.routers),
             "faults_events_applied": plan.step,
             "faults_route_recompute_seconds": float(sum(plan.recompute_seconds))}
    return values, list(K.DROP_CAUSES), attrs


def _workload_values(s: Any, wall_seconds: float) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The closed-loop workload's values, coordinates and attributes (workloads/results.py; mpi/results.py for the
    MPI kinds, with the events replayed and their rate)."""
    if s.workload.kind != W_MPI:
        from .workloads.results import workload_values

        return workload_values(s)
    from .mpi.results import mpi_values

    values, coords, attrs = mpi_values(s)
    values["mpi_events"] = values["mpi_calls"] + values["messages"] + values["control_messages"]
    # over the cycle loop alone: the build and a first run's compilation are not the replay's speed
    attrs["mpi_events_per_second"] = values["mpi_events"] / max(s.simulate_seconds or wall_seconds, 1e-9)
    return values, coords, attrs


def _run_attrs(s: Any, N: int, bg: Any, t: Timing, wall_seconds: float) -> dict[str, Any]:
    """What ran: version, seed, config, network, routing mode, timing, wall time, and background traffic."""
    net = s.net
    return {
        "fastnet_version": __version__,
        "seed": int(s.cfg["sim"]["seed"]),
        # what reruns it: where checkpoints went is not part of it (a checkpoint_every is refused without a file),
        # nor how many threads ran it (the same results for any count)
        "config": json.dumps({**s.cfg, "sim": {**s.cfg["sim"], "checkpoint_every": "auto", "threads": "auto"}},
                             sort_keys=True),
        "topology": net.kind,
        "routers": net.n_routers,
        "nodes": N,
        "ports": net.n_ports,
        "vcs": s.params.vcs,
        "routing_mode": "table" if is_table(s.routes) else "algebraic",
        "wall_seconds": float(wall_seconds),
        "cycle_ns": t.cycle_ns,
        "timing": json.dumps(t.report(s.cfg["traffic"]["phit_bytes"]), sort_keys=True),
        **({"background_job": bg.job, "background_nodes": len(bg.nodes), "background_load": bg.load}
           if bg is not None else {}),
    }


def _described(values: dict[str, Any]) -> dict[str, xr.Variable]:
    """Each value as a Variable with the dims, units and description VARIABLES gives it."""
    data_vars = {}
    for name, value in values.items():
        dims, units, doc = VARIABLES[name]
        data_vars[name] = xr.Variable(dims, np.asarray(value), attrs={"units": units, "description": doc})
    return data_vars


# attributes the --json object carries when a run has them (the table prints their warnings; the events rate has a
# line of its own)
SUMMARY_ATTRS = ("trace_calls_not_recorded", "trace_files_cut_off", "mpi_skipped_calls", "mpi_events_per_second")


def summary(ds: xr.Dataset) -> dict[str, Any]:
    """The `--json` object: scalar metrics plus wall_seconds, and what the table prints besides them: the
    warnings (a list, empty when there are none) and the attributes they come from."""
    out: dict[str, Any] = {}
    for name, var in ds.data_vars.items():
        if var.ndim == 0:
            v = var.item()
            out[name] = None if isinstance(v, float) and np.isnan(v) else v
    out["wall_seconds"] = ds.attrs.get("wall_seconds")
    for name in SUMMARY_ATTRS:
        if name in ds.attrs:
            out[name] = ds.attrs[name]
    out["warnings"] = list(ds.attrs.get("warnings", []))
    return out
