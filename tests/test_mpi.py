"""The MPI layer on the network (fastnet/mpi/): exact ping-pong times, trace replay = generator, MPI semantics,
the real traces of shared/reference/traces, and errors. Every run uses the same 4x4 torus, so the MPI cycle loop
compiles once."""

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pytest

import fastnet
from fastnet.errors import ConfigError, WorkloadError
from fastnet.mpi.calls import ANY_SOURCE, ANY_TAG, Call, Trace
from fastnet.mpi.generators import generate
from fastnet.mpi.results import CUT_OFF_WARNING, SKIPPED_WARNING
from fastnet.mpi.traces.write import write_dumpi, write_dumpi_ascii, write_otf2

TORUS = {"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"max_cycles": 2 * 10**9}}
CYCLE_NS = 4 * 8 / 40.0  # phit_bytes 4 at the default 40 Gb/s


def run(workload: dict, mpi: dict | None = None, **sections):
    cfg = {**TORUS, "workload": workload, **sections}
    if mpi:
        cfg["mpi"] = mpi
    return fastnet.run(cfg)


def shared_traces() -> Path:
    for candidate in (os.environ.get("FASTNET_SHARED"), Path(__file__).resolve().parents[1] / ".." / "shared"):
        if candidate and (Path(candidate) / "reference" / "traces").is_dir():
            return Path(candidate) / "reference" / "traces"
    pytest.skip("shared/reference/traces is not next to this checkout (set FASTNET_SHARED)")


def message_phits(payload: int, header=32, packet_phits=10, phit_bytes=4) -> int:
    wire = payload + header
    full, rest = divmod(wire, packet_phits * phit_bytes)
    return full * packet_phits + math.ceil(rest / phit_bytes)


def zero_load(phits: int, hops=1, delay=3, link=1, injection=1) -> int:
    """docs/model.md: 2 injection latencies + links + (hops + 1) router delays + the phits after the head."""
    return 2 * injection + hops * link + (hops + 1) * delay + phits - 1


@pytest.mark.parametrize("size", [8, 1000, 8192, 8193, 100_000])
def test_pingpong_is_the_zero_load_formula_plus_the_protocol(size):
    ds = run({"kind": "mpi", "program": "pingpong", "message_bytes": size, "iterations": 3})
    one_way = zero_load(message_phits(size))
    if size > 8192:  # rendezvous: a request-to-send and a clear-to-send before the data
        one_way += 2 * zero_load(message_phits(0))
    assert ds.execution_cycles.item() == 2 * 3 * one_way
    assert ds.messages.item() == 6
    assert ds.control_messages.item() == (12 if size > 8192 else 0)
    assert ds.bytes.item() == 6 * size
    assert ds.execution_ns.item() == pytest.approx(ds.execution_cycles.item() * CYCLE_NS)


@pytest.mark.parametrize("size", [8, 1000, 8192, 8193, 65_536, 4 * 2**20])
def test_pingpong_latencies_are_the_one_way_time(size):
    """docs/mpi.md "Results": a data message's latency runs from its send's post to its last byte at the
    receiver, so on an idle network it is the one-way time (the RTS and CTS included for rendezvous); an RTS or
    CTS takes the zero-load time of a header; every envelope finds its receive posted (nothing waits unmatched);
    the per-call histogram counts the same latency."""
    from fastnet.kernels.pool import hist_bin

    iterations = 1 if size > 10**6 else 2
    ds = run({"kind": "mpi", "program": "pingpong", "message_bytes": size, "iterations": iterations})
    one_way = ds.execution_cycles.item() / (2 * iterations)
    formula = zero_load(message_phits(size)) + (2 * zero_load(message_phits(0)) if size > 8192 else 0)
    assert one_way == formula
    assert ds.message_latency_mean.item() == one_way and ds.message_latency_max.item() == one_way
    if size > 8192:
        assert ds.control_latency_mean.item() == zero_load(message_phits(0)) == ds.control_latency_max.item()
    else:
        assert np.isnan(ds.control_latency_mean.item())
    assert ds.unmatched_cycles_mean.item() == 0 and ds.unmatched_cycles_max.item() == 0
    hist = ds.call_message_latency_histogram.sel(call="send").values
    assert hist.sum() == 2 * iterations and hist[hist_bin(int(one_way))] == 2 * iterations




@pytest.mark.parametrize("size", [1000, 100_000])
@pytest.mark.parametrize("key, ns, cycles", [("send_overhead_ns", 80.0, 100), ("recv_overhead_ns", 40.0, 50),
                                             ("byte_ns", 0.1, None)])
def test_host_costs_add_to_the_pingpong(size, key, ns, cycles):
    """docs/mpi.md "Host model": every protocol message costs its sender o_s (80 ns: 100 cycles) and its
    receiver o_r (40 ns: 50 cycles), so a one-way time adds one of each eager and three (RTS, CTS, data)
    rendezvous; G (0.1 ns a byte: 0.125 cycles) adds payload x G, once, for the data."""
    one_way = zero_load(message_phits(size)) + (2 * zero_load(message_phits(0)) if size > 8192 else 0)
    added = round(size * ns / CYCLE_NS) if cycles is None else cycles * (3 if size > 8192 else 1)
    ds = run({"kind": "mpi", "program": "pingpong", "message_bytes": size, "iterations": 2}, {key: ns})
    assert ds.execution_cycles.item() == 2 * 2 * (one_way + added)
    assert ds.message_latency_mean.item() == one_way + added


def test_host_gap_spaces_a_ranks_messages():
    """g = 400 ns (500 cycles): the fan-out root's back-to-back messages leave 500 cycles apart, exactly as when
    it computes 500 cycles before each of them with no gap (then each arrives 500 cycles later: the first
    computation); a ping-pong (one message per leg) does not change."""
    fanout = {"kind": "mpi", "program": "fanout", "message_bytes": 8}
    gapped = run({**fanout, "compute_cycles": 0}, {"gap_ns": 400.0})
    spaced = run({**fanout, "compute_cycles": 500})
    back_to_back = run({**fanout, "compute_cycles": 0})
    np.testing.assert_array_equal(gapped.task_finish_cycle.values[1:], spaced.task_finish_cycle.values[1:] - 500)
    assert gapped.task_finish_cycle.values[15] > back_to_back.task_finish_cycle.values[15] + 14 * 400
    ping = run({"kind": "mpi", "program": "pingpong", "message_bytes": 1000, "iterations": 2}, {"gap_ns": 400.0})
    assert ping.execution_cycles.item() == 4 * zero_load(message_phits(1000))


def test_host_hands_over_messages_in_post_order(tmp_path):
    """G = 0.8 ns a byte (a cycle): an eager isend of 1,000 B and then a rendezvous isend's RTS (no payload) are
    both ready at cycle 1,000; the RTS still leaves second, behind the eager data on the injection link."""
    ranks = [[p2p("isend", 1, nbytes=1000, request=0), p2p("isend", 1, nbytes=20000, request=1),
              Call("waitall", requests=(0, 1))],
             [p2p("irecv", 0, nbytes=1000, request=0), p2p("irecv", 0, nbytes=20000, request=1),
              Call("waitall", requests=(0, 1))]]
    ds = trace_run(tmp_path, ranks, mpi={"byte_ns": 0.8})
    assert ds.control_latency_max.item() == 1000 + message_phits(1000) + zero_load(message_phits(0))


def test_eager_threshold_is_configurable():
    small = run({"kind": "mpi", "program": "pingpong", "message_bytes": 1000}, {"eager_bytes": 512})
    assert small.control_messages.item() == 4


def as_trace_calls(trace: Trace) -> Trace:
    """A generated program as a tracer would record it: computation is time, not cycles, and the run goes from
    MPI_Init to MPI_Finalize. (A collective generator gives all ranks one list: each rank gets copies first.)"""
    trace.ranks = [[dataclasses.replace(c) for c in calls] for calls in trace.ranks]
    for calls in trace.ranks:
        calls.insert(0, Call("noop", name="MPI_Init"))
        for c in calls:
            if c.kind == "compute":
                c.duration_ns, c.duration_cycles = c.duration_cycles * CYCLE_NS, -1
        calls.append(Call("noop", name="MPI_Finalize"))
    return trace


PROGRAMS = [
    ("pingpong", {"message_bytes": 20000, "iterations": 2}),
    ("allreduce", {"message_bytes": 4096, "iterations": 2, "compute_cycles": 50}),
    ("halo3d", {"message_bytes": 3000, "iterations": 2, "compute_cycles": 100}),
    ("fft3d", {"grid": 12, "iterations": 1}),
    ("sweep3d", {"message_bytes": 500, "iterations": 1, "chunks": 2, "compute_cycles": 20}),
]


@pytest.mark.parametrize("program,params", PROGRAMS, ids=[p for p, _ in PROGRAMS])
def test_trace_replay_equals_the_generator(tmp_path, program, params):
    w = {"kind": "mpi", "program": program, **params}
    expected = run(w)
    full = {"iterations": 1, "compute_cycles": 0, "root": 0, "grid": 128, "chunks": 4, "message_bytes": 1024,
            **params}
    trace = as_trace_calls(generate(program, 16, full))
    write_otf2(trace, tmp_path / "otf2" / "trace.otf2")
    write_dumpi_ascii(trace, tmp_path / "dumpi")
    write_dumpi(trace, tmp_path / "bin")
    for path in (tmp_path / "otf2" / "trace.otf2", tmp_path / "dumpi", tmp_path / "bin"):
        ds = run({"kind": "trace", "file": str(path)})
        assert ds.execution_cycles.item() == expected.execution_cycles.item(), path
        assert ds.bytes.item() == expected.bytes.item()
        np.testing.assert_array_equal(ds.rank_wait_cycles.values, expected.rank_wait_cycles.values)


def p2p(kind, peer=ANY_SOURCE, tag=0, nbytes=8, **kw) -> Call:
    return Call(kind, peer=peer, tag=tag, bytes=nbytes, **kw)


def trace_run(tmp_path, ranks: list[list[Call]], comms=None, mpi=None, **workload):
    trace = Trace(ranks + [[] for _ in range(16 - len(ranks))], comms or {})
    write_dumpi_ascii(trace, tmp_path / "t")
    return run({"kind": "trace", "file": str(tmp_path / "t"), **workload}, mpi)


def test_unmatched_time_is_apart_from_the_latency(tmp_path):
    """A receive posted late: the eager message arrives at once and waits unmatched until the receiver, after
    its computation, posts its receive; its latency stays the network's."""
    ranks = [[p2p("send", 1, nbytes=100)], [Call("compute", duration_ns=4000.0), p2p("recv", 0, nbytes=100)]]
    ds = trace_run(tmp_path, ranks)
    lat = zero_load(message_phits(100))
    assert ds.rank_compute_cycles.values[1] > 4000 > lat
    assert ds.message_latency_mean.item() == lat == ds.message_latency_max.item()
    assert ds.unmatched_cycles_mean.item() == ds.rank_compute_cycles.values[1] - lat


def test_any_source_any_tag_and_tag_matching(tmp_path):
    ranks = [
        [p2p("recv", ANY_SOURCE, ANY_TAG), p2p("recv", ANY_SOURCE, 9), p2p("recv", 2, ANY_TAG)],
        [p2p("send", 0, 9)],
        [p2p("send", 0, 4)],
        [p2p("send", 0, 9)],
    ]
    ds = trace_run(tmp_path, ranks)
    assert ds.messages.item() == 3
    assert ds.call_count.sel(call="recv").item() == 3


def test_a_receive_nobody_sends_is_reported_with_rank_and_call(tmp_path):
    ranks = [[p2p("send", 1, 1)], [p2p("recv", 0, 1), p2p("recv", 0, 2)]]
    with pytest.raises(WorkloadError, match=r"rank 1 waits forever in MPI_Recv \(call 1 of .*trace-0001.txt\)"):
        trace_run(tmp_path, ranks)


def test_sub_communicator_collective(tmp_path):
    half = {1: tuple(range(8)), 2: tuple(range(8, 16))}
    ranks = [[Call("bcast", comm=1 if r < 8 else 2, bytes=20000, root=3), Call("barrier")] for r in range(16)]
    ds = trace_run(tmp_path, ranks, half)
    assert ds.call_count.sel(call="bcast").item() == 16
    assert ds.messages.item() == 2 * 7 + 16 * 4  # bcast to 7 ranks per half; 4 dissemination steps of 16 ranks


def test_same_seed_same_result_and_mapping():
    w = {"kind": "mpi", "program": "alltoall", "message_bytes": 600, "mapping": "random"}
    a, b = run(w), run(w)
    assert a.execution_cycles.item() == b.execution_cycles.item()
    np.testing.assert_array_equal(a.task_node.values, b.task_node.values)
    assert sorted(a.task_node.values) == list(range(16))


def test_bad_inputs_get_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match="workload.file"):
        run({"kind": "trace"})
    with pytest.raises(ConfigError, match="no such file") as e:  # the key named, not only the path
        run({"kind": "trace", "file": str(tmp_path / "app.otf2")})
    assert e.value.field == "workload.file"
    with pytest.raises(ConfigError, match="workload.program"):
        run({"kind": "mpi", "program": "fft4d"})
    with pytest.raises(ConfigError, match="mpi.eager_bytes"):
        run({"kind": "mpi"}, {"eager_bytes": -1})
    for program in ("fanout", "bcast"):  # a root past the last rank: fanout's was an IndexError
        with pytest.raises(ConfigError, match="must name one of the program's 4 ranks") as e:
            run({"kind": "mpi", "program": program, "tasks": 4, "root": 4})
        assert e.value.field == "workload.root"
    ranks = [[Call("unknown", name="MPI_Win_fence")], []]
    with pytest.raises(ConfigError, match="MPI_Win_fence"):
        trace_run(tmp_path, ranks)
    ds = trace_run(tmp_path, ranks, skip_unknown=True)
    assert ds.mpi_calls_skipped.item() == 1
    assert "MPI_Win_fence x1" in ds.attrs["mpi_skipped_calls"]
    assert ds.attrs["warnings"] == [SKIPPED_WARNING + "MPI_Win_fence x1"]  # the table prints it, --json carries it
    with pytest.raises(ConfigError, match="a trace's ranks are its own") as e:  # was silently ignored
        trace_run(tmp_path, [[p2p("send", 1)], [p2p("recv", 0)]], tasks=2)
    assert e.value.field == "workload.tasks"



def test_real_traces_replay():
    traces = shared_traces()
    ds = run({"kind": "trace", "file": str(traces / "sstmacro_testbgp_dumpi_ascii")})
    counts = ds.call_count.to_series()
    assert (counts["isend"], counts["irecv"], counts["waitall"], counts["alltoall"], counts["barrier"]) == \
        (588, 588, 98, 49, 21)
    assert ds.bytes.item() == 418_656 + 49 * 6 * 712  # point-to-point, and alltoall's 712 B to each of 6 peers
    assert ds.execution_cycles.item() > 0 and (ds.rank_compute_cycles > 0).all()
    # MPI_Init takes 1.1 s of this trace: 1.4e9 cycles, skipped while nothing is on the network
    ds = run({"kind": "trace", "file": str(traces / "sst_ember_otf2" / "traces.otf2")})
    assert ds.call_count.sel(call="bcast").item() == 4
    assert ds.bytes.item() == 3 * 4096
    assert ds.execution_ns.item() > 1.1e9


def test_a_trace_run_expects_its_recorded_span():
    """The progress total of a trace's run (mpi/build.py expected_cycles): each rank's computation plus its
    recorded time in MPI calls. The Score-P trace is compute-bound (MPI_Init is most of it), so the estimate is
    its span: within 0.01 % of the run; without the trace's computation there is no estimate."""
    from fastnet.sim import prepare, simulate
    from fastnet.workloads.state import WC_END

    file = str(shared_traces() / "sst_ember_otf2" / "traces.otf2")
    s = prepare({**TORUS, "workload": {"kind": "trace", "file": file}})
    assert s.program.expected == pytest.approx(simulate(s).workload.wc[WC_END], rel=1e-4)
    assert prepare({**TORUS, "workload": {"kind": "trace", "file": file, "compute": "none"}}).program.expected == 0


def run_skipping_and_not(cfg: dict):
    """The dataset of `cfg` with sim.skip_idle, after checking it equals the one of the loop that visits every
    cycle."""
    fast = fastnet.run(cfg)
    slow = fastnet.run({**cfg, "sim": {**cfg.get("sim", {}), "skip_idle": False}})
    for name, var in slow.data_vars.items():
        np.testing.assert_array_equal(fast[name].values, var.values, err_msg=name)
    return fast


@pytest.mark.parametrize("message_bytes, iterations, buffer", [(3000, 3, 256), (40_000, 2, 64)])
def test_idle_cycles_are_skipped_without_changing_results(message_bytes, iterations, buffer):
    """A compute-bound program: the loop jumps over the cycles in which nothing can happen (sim.skip_idle), and
    with packets in flight from event to event when no head can ask before one (engine/loop.py next_activity:
    the 40 KB rendezvous halo with small buffers keeps heads waiting for credits, FULL); the dataset is the one
    of the loop that visits every cycle."""
    w = {"kind": "mpi", "program": "halo3d", "message_bytes": message_bytes, "iterations": iterations,
         "compute_cycles": 20_000}
    fast = run_skipping_and_not({**TORUS, "router": {"buffer_phits": buffer}, "workload": w})
    assert fast.execution_cycles.item() > 20_000 * iterations


def test_credits_nothing_waits_for_are_taken_back_on_the_way():
    """Hopper's torus with 100 KB halos: trains of packets keep heads asleep for room downstream, and most credits
    come back to VCs nobody waits on. The jump over quiet cycles takes those back without stepping their cycle
    (engine/loop.py unheeded_credits); a credit that wakes a head, or reaches a node, must stop it there: the
    dataset is the one of the loop that visits every cycle."""
    w = {"kind": "mpi", "program": "halo3d", "message_bytes": 100_000, "iterations": 2, "tasks": 64,
         "compute_cycles": 1000}
    run_skipping_and_not({"machine": {"name": "hopper"}, "workload": w})


def test_mapping_file(tmp_path):
    path = tmp_path / "ranks.txt"
    path.write_text(" ".join(str(15 - r) for r in range(16)))
    ds = run({"kind": "mpi", "program": "pingpong", "mapping": str(path)})
    assert list(ds.task_node.values) == list(range(15, -1, -1))
    path.write_text("0 0 1")
    with pytest.raises(ConfigError, match="workload.mapping"):
        run({"kind": "mpi", "program": "pingpong", "mapping": str(path)})


def test_fanout_gives_each_destination_its_zero_load_latency():
    """One message to every other rank, 200 cycles apart on an idle 8x8 torus: rank r's arrival minus its send's
    start is the zero-load latency, 18 cycles at one hop (as the ping-pong) plus 4 (link 1 + router 3) a hop."""
    ds = run({"kind": "mpi", "program": "fanout", "message_bytes": 8, "compute_cycles": 200},
             topology={"kind": "torus", "dims": [8, 8]})
    r = np.arange(1, 64)
    latency = ds.task_finish_cycle.values[1:] - 200 * r
    x, y = r % 8, r // 8
    hops = np.minimum(x, 8 - x) + np.minimum(y, 8 - y)
    np.testing.assert_array_equal(latency, 18 + 4 * (hops - 1))
    assert ds.messages.item() == 63


# ---------------------------------------------------------------- the compute model (docs/mpi.md "Computation")

HALO = {"kind": "mpi", "program": "halo3d", "tasks": 8, "iterations": 3, "compute_cycles": 2000}


def test_compute_none_is_the_network_alone():
    none = run({**HALO, "compute": "none"})
    assert (none.rank_compute_cycles.values == 0).all()
    assert none.execution_cycles.item() == run({**HALO, "compute_cycles": 0}).execution_cycles.item()


def test_rank_and_node_speeds_make_stragglers():
    base = run(HALO)
    assert (base.rank_compute_cycles.values == 6000).all()
    slow = run({**HALO, "rank_speed": [[3, 0.5]]})
    assert slow.rank_compute_cycles.values.tolist() == [6000] * 3 + [12000] + [6000] * 4
    assert slow.execution_cycles.item() > base.execution_cycles.item()
    others = np.arange(8) != 3  # its neighbours wait for it
    assert slow.rank_wait_cycles.values[others].sum() > base.rank_wait_cycles.values[others].sum() + 6000
    node = run({**HALO, "node_speed": [[5, 0.25]], "mapping": "random"})
    on5 = node.task_node.values == 5
    expected = np.where(on5, 24000, 6000) if on5.any() else np.full(8, 6000)
    np.testing.assert_array_equal(node.rank_compute_cycles.values, expected)
    with pytest.raises(ConfigError, match="workload.rank_speed"):
        run({**HALO, "rank_speed": [[8, 2.0]]})
    with pytest.raises(ConfigError, match="workload.node_speed"):
        run({**HALO, "node_speed": [[3, 0]]})


def test_compute_noise_is_seeded_and_centred():
    noisy = {**HALO, "iterations": 40, "compute_noise": 0.1}
    a, b = run(noisy), run(noisy)
    assert a.execution_cycles.item() == b.execution_cycles.item()
    np.testing.assert_array_equal(a.rank_compute_cycles.values, b.rank_compute_cycles.values)
    c = run(noisy, sim={"seed": 7, "max_cycles": 2 * 10**9})
    assert (c.rank_compute_cycles.values != a.rank_compute_cycles.values).any()
    per_rank = a.rank_compute_cycles.values / (40 * 2000)
    assert abs(per_rank.mean() - 1) < 0.02 and per_rank.std() > 0.002  # 40 draws of sd 0.1 a rank: sd 0.016


def test_mpi_init_time_counted_or_not(tmp_path):
    """Each rank spends 5 us in MPI_Init, computes 1 us, joins a barrier and finalizes: not counting MPI_Init
    takes its 5 us (6,250 cycles of 0.8 ns) off the execution and off every rank's computation."""
    ranks = []
    for r in range(4):
        ranks.append([Call("noop", name="MPI_Init", start_ns=0.0, end_ns=5000.0),
                      Call("barrier", start_ns=6000.0, end_ns=6100.0),
                      Call("noop", name="MPI_Finalize", start_ns=6200.0, end_ns=6300.0)])
    write_dumpi_ascii(Trace(ranks), tmp_path / "t")
    counted = run({"kind": "trace", "file": str(tmp_path / "t")})
    dropped = run({"kind": "trace", "file": str(tmp_path / "t"), "count_init": False})
    assert counted.execution_cycles.item() - dropped.execution_cycles.item() == 6250
    np.testing.assert_array_equal(counted.rank_compute_cycles.values - dropped.rank_compute_cycles.values, 6250)


# ---------------------------------------------------------------- placement and ranks sharing a node


def test_ranks_of_one_node_talk_through_memory():
    """Two ranks per node: ping-pong between ranks 0 and 1 never touches the network; each message arrives
    memory_latency_ns (200 ns = 250 cycles) + wire bytes / memory_gbytes (10 GB/s = 8 bytes a cycle) after it
    was posted: eager 1000 B is 250 + 129 cycles, rendezvous 100 KB is an RTS, a CTS and the data."""
    def ping(size, **mpi):
        return run({"kind": "mpi", "program": "pingpong", "message_bytes": size, "tasks": 2, "ranks_per_node": 2},
                   mpi or None)
    eager = ping(1000)
    assert eager.execution_cycles.item() == 2 * (250 + 129) and eager.packets_injected.item() == 0
    assert eager.task_node.values.tolist() == [0, 0]
    rdv = ping(100_000)
    assert rdv.execution_cycles.item() == 2 * ((250 + 4) * 2 + 250 + 12_504)
    fast = ping(1000, memory_latency_ns=0.0, memory_gbytes=1000.0)
    assert fast.execution_cycles.item() == 2 * 2  # at least a cycle each way
    every = run({"kind": "mpi", "program": "halo3d", "ranks_per_node": 2, "iterations": 2})
    assert every.sizes["task"] == 32  # tasks = "all": every slot
    one = run({"kind": "mpi", "program": "halo3d", "tasks": 32, "ranks_per_node": 2, "iterations": 2})
    assert one.execution_cycles.item() == every.execution_cycles.item()
    assert one.packets_injected.item() < 2 * run({"kind": "mpi", "program": "halo3d", "iterations": 2}
                                                  ).packets_injected.item()


def test_placements():
    df = {"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}, "sim": {"max_cycles": 10**8}}  # 9 groups
    def nodes(**w):
        ds = fastnet.run({**df, "workload": {"kind": "mpi", "program": "barrier", "tasks": 20, **w}})
        return ds.task_node.values
    np.testing.assert_array_equal(nodes(), np.arange(20))
    np.testing.assert_array_equal(nodes(ranks_per_node=2), np.arange(20) // 2)
    groups = nodes(mapping="round_robin_groups") // 8
    np.testing.assert_array_equal(groups, np.arange(20) % 9)
    routers = nodes(mapping="round_robin_routers")
    np.testing.assert_array_equal(routers[:20], (np.arange(20) % 36) * 2)  # the first node of each router
    rnd = nodes(mapping="random", ranks_per_node=3)
    assert np.bincount(rnd).max() <= 3 and len(set(rnd.tolist())) > 7
    with pytest.raises(ConfigError, match="workload.ranks_per_node"):
        fastnet.run({**df, "workload": {"kind": "a2a", "ranks_per_node": 2}})
    with pytest.raises(ConfigError, match="workload.tasks"):
        fastnet.run({**df, "workload": {"kind": "mpi", "program": "barrier", "tasks": 200, "ranks_per_node": 2}})


def test_jobs_interfere_when_interleaved_and_less_on_disjoint_groups():
    """Two 32-rank alltoalls on a 72-node dragonfly (9 groups of 8 nodes), minimal routing: on interleaved nodes
    each takes far longer together than alone; on disjoint groups each slows down less (its minimal paths never
    leave its own groups). Per-job results, each job's clock from its own first call."""
    df = {"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}, "routing": {"algorithm": "min"},
          "sim": {"max_cycles": 10**9}}
    a2a = {"program": "alltoall", "message_bytes": 512, "tasks": 32}

    def jobs(*nodes):
        ds = fastnet.run({**df, "workload": {"kind": "mpi", "jobs": [{**a2a, "nodes": n} for n in nodes]}})
        return ds.job_execution_cycles.values
    even, odd, low, high = [0, 72, 2], [1, 72, 2], [0, 32], [32, 64]
    alone = {k: jobs(n)[0] for k, n in {"even": even, "odd": odd, "low": low, "high": high}.items()}
    interleaved, disjoint = jobs(even, odd), jobs(low, high)
    slow_inter = interleaved / np.array([alone["even"], alone["odd"]])
    slow_disj = disjoint / np.array([alone["low"], alone["high"]])
    assert (slow_inter > 1.5).all() and (slow_disj < 1.1).all() and (slow_disj < slow_inter).all()
    ds = fastnet.run({**df, "workload": {"kind": "mpi", "jobs": [{**a2a, "nodes": even},
                                                                 {"program": "barrier", "tasks": 4, "nodes": odd}]}})
    assert ds.job_ranks.values.tolist() == [32, 4] and ds.task_job.values.tolist() == [0] * 32 + [1] * 4
    assert ds.task_node.values[32:].tolist() == [1, 3, 5, 7]
    assert ds.execution_cycles.item() == ds.job_execution_cycles.values.max()


@pytest.mark.parametrize("jobs, field", [
    ([{"program": "barrier", "tasks": 8, "nodes": [0, 8]}, {"program": "barrier", "tasks": 8, "nodes": [4, 12]}],
     "workload.jobs[1].nodes"),  # they share nodes 4..7
    ([{"program": "barrier", "colour": 1}], "workload.jobs[0].colour"),
    ([{"program": "barrier", "nodes": [5, 2]}], "workload.jobs[0].nodes"),
    ([{"kind": "trace"}], "workload.jobs[0].file"),
    ([{"program": "barrier", "tasks": 20, "nodes": [0, 8]}], "workload.jobs[0].tasks"),
    ([{"program": "bcast", "root": 9, "nodes": [0, 8]}], "workload.jobs[0].root"),
    ([{"program": "alltoall", "nodes": [20, 40]}], "workload.jobs[0].nodes"),  # the torus has 16 nodes
    ([{"program": "barrier", "nodes": [0, 40]}], "workload.jobs[0].nodes"),  # not cut down to 16
    ([{"program": "barrier", "nodes": [0, 8]}, {"kind": "open_loop", "nodes": [8, 100]}], "workload.jobs[1].nodes"),
    ([{"program": "barrier", "nodes": [0, 8]}, {"kind": "open_loop", "nodes": [8, 16], "program": "alltoall"}],
     "workload.jobs[1].program"),  # background traffic runs no program
])
def test_bad_jobs_name_the_job_and_field(jobs, field):
    with pytest.raises(ConfigError) as e:
        run({"kind": "mpi", "jobs": jobs})
    assert e.value.field == field


def test_a_replay_reports_mpi_events_per_second():
    from typer.testing import CliRunner

    from fastnet.cli import app

    ds = run({"kind": "mpi", "program": "pingpong", "message_bytes": 100_000, "iterations": 2})
    assert ds.mpi_events.item() == ds.mpi_calls.item() + ds.messages.item() + ds.control_messages.item()
    assert ds.attrs["mpi_events_per_second"] > 0
    r = CliRunner().invoke(app, ["run", "--set", "topology.kind=torus", "--set", "topology.dims=[4,4]",
                                 "--set", "workload.kind=mpi", "--set", "workload.program=barrier"])
    assert r.exit_code == 0 and "MPI events/s" in r.output, r.output


def test_timeline_and_communication_matrix_account_for_every_cycle_and_byte():
    """The timeline's intervals add up, rank by rank, to its compute and wait cycles; the matrix to its bytes."""
    w = {"kind": "mpi", "program": "halo3d", "message_bytes": 3000, "iterations": 2, "compute_cycles": 500}
    ds = run(w)
    compute = list(ds.call.values).index("compute")
    d = (ds.timeline_end - ds.timeline_start).values
    rank, call = ds.timeline_rank.values, ds.timeline_call.values
    R = ds.sizes["task"]
    assert (d > 0).all() and ds.attrs["timeline_dropped"] == 0
    np.testing.assert_array_equal(np.bincount(rank[call == compute], d[call == compute], minlength=R),
                                  ds.rank_compute_cycles.values)
    np.testing.assert_array_equal(np.bincount(rank[call != compute], d[call != compute], minlength=R),
                                  ds.rank_wait_cycles.values)
    assert (np.diff(rank) >= 0).all()  # rank by rank, each in time order
    assert ds.comm_matrix_bytes.sum().item() == ds.bytes.item()
    assert (np.diag(ds.comm_matrix_bytes.values) == 0).all()
    pp = run({"kind": "mpi", "program": "pingpong", "message_bytes": 100, "iterations": 3},
             {"timeline_intervals": 2, "comm_matrix_cells": 1})
    assert pp.comm_matrix_bytes.values.tolist() == [[600]]  # one cell of both ranks
    assert pp.sizes["interval"] == 2 and pp.attrs["timeline_dropped"] > 0


def test_plot_draws_the_gantt_chart_and_the_matrix_of_a_run(tmp_path):
    from typer.testing import CliRunner

    from fastnet.cli import app

    store = tmp_path / "run.zarr"
    args = ["run", "--set", "topology.kind=torus", "--set", "topology.dims=[4,4]", "--set", "workload.kind=mpi",
            "--set", "workload.program=alltoall", "--set", "workload.message_bytes=64", "--out", str(store)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    for y in ("timeline", "comm_matrix_bytes"):
        r = CliRunner().invoke(app, ["plot", str(store), "-o", str(tmp_path / f"{y}.png"), "--y", y])
        assert r.exit_code == 0 and (tmp_path / f"{y}.png").stat().st_size > 10_000, r.output
    r = CliRunner().invoke(app, ["plot", str(store), "-o", str(tmp_path / "x.png"), "--y", "latency"])
    assert r.exit_code == 2 and "--y" in r.output and "timeline" in r.output


def test_background_traffic_slows_a_job_that_shares_its_links_and_is_measured_alone():
    """A job of kind open_loop beside an MPI job: its packets, not the job's, make the packet statistics; the
    heavier it is, the longer the job takes."""
    a2a = {"kind": "mpi", "program": "alltoall", "message_bytes": 512, "tasks": 8, "nodes": [0, 16, 2]}
    alone = run({"kind": "mpi", "jobs": [a2a]})
    busy = [run({"kind": "mpi", "jobs": [{"kind": "open_loop", "nodes": [1, 16, 2], "load": load}, a2a]})
            for load in (0.3, 0.6)]
    assert busy[0].job_execution_cycles.values[0] == -1 and busy[0].attrs["background_job"] == 0
    assert busy[0].attrs["background_nodes"] == 8
    assert busy[1].job_execution_cycles[1] > 1.05 * alone.job_execution_cycles[0]
    for ds, load in zip(busy, (0.3, 0.6)):
        assert ds.offered_phits_per_node_cycle.item() == pytest.approx(load, rel=0.1)
        assert ds.injected_phits_per_node_cycle.item() == pytest.approx(load, rel=0.1)  # not the ranks' phits too
        assert ds.messages.item() == alone.messages.item() and ds.bytes.item() == alone.bytes.item()
        assert ds.packets_delivered.item() > alone.packets_delivered.item()  # the background's too
    assert busy[0].packet_latency_mean.item() < alone.packet_latency_mean.item()  # no MPI packet in them
    again = run({"kind": "mpi", "jobs": [{"kind": "open_loop", "nodes": [1, 16, 2], "load": 0.3}, a2a]})
    assert again.job_execution_cycles.values.tolist() == busy[0].job_execution_cycles.values.tolist()
    assert again.packet_latency_mean.item() == busy[0].packet_latency_mean.item()
    last = run({"kind": "mpi", "jobs": [a2a, {"kind": "open_loop", "nodes": [1, 16, 2], "load": 0.3}]})
    assert last.attrs["background_job"] == 1 and last.sizes["job"] == 2  # a job without ranks, listed last
    assert last.job_execution_cycles.values[1] == -1 and last.job_ranks.values.tolist() == [8, 0]


def test_a_message_of_several_bursts_is_not_held_back_by_busy_background_sources():
    """A rank's next burst of packets is made when its node's source queue empties. That was told by the count of
    nodes with queued packets falling, which background sources filling their own queues kept from falling: at
    load 0.8 a 1 KB ping-pong (27 packets a message, bursts of 16) took 5,780 cycles instead of 554, at 0.9 it
    never ended."""
    pp = {"program": "pingpong", "message_bytes": 1024, "tasks": 2, "nodes": [0, 2]}
    alone = run({"kind": "mpi", "jobs": [pp]}).execution_cycles.item()
    for load in (0.5, 0.9):
        busy = run({"kind": "mpi", "jobs": [pp, {"kind": "open_loop", "nodes": [2, 16], "load": load}]})
        assert alone <= busy.execution_cycles.item() < 1.3 * alone, load


@pytest.mark.parametrize("jobs, field", [
    ([{"kind": "open_loop", "nodes": [0, 8]}, {"kind": "open_loop", "nodes": [8, 16]}, {"program": "barrier"}],
     "workload.jobs"),
    ([{"kind": "open_loop", "nodes": [0, 8]}], "workload.jobs"),
    ([{"program": "barrier", "tasks": 4, "nodes": [0, 4]}, {"kind": "open_loop", "nodes": [2, 8]}],
     "workload.jobs[1].nodes"),
    ([{"program": "barrier", "load": 0.2}], "workload.jobs[0].load"),
    ([{"program": "barrier", "tasks": 4}, {"kind": "open_loop", "load": 2.0}], "workload.jobs[1].load"),
])
def test_bad_background_jobs_name_the_field(jobs, field):
    with pytest.raises(ConfigError) as e:
        run({"kind": "mpi", "jobs": jobs})
    assert e.value.field == field


def test_largest_message_bounds_every_collective_round():
    """The engine keeps free packets for each rank's largest message (mpi/build.py packets_per_message): no
    round of any collective may post a message larger than collectives.largest_message says."""
    from fastnet import registry as R
    from fastnet.mpi import state as S
    from fastnet.mpi.collectives import largest_message, n_steps, round_plan

    cases = [(S.CO_BARRIER, R.ALG_DISSEMINATION), (S.CO_BCAST, R.ALG_BINOMIAL), (S.CO_REDUCE, R.ALG_BINOMIAL),
             (S.CO_GATHER, R.ALG_BINOMIAL), (S.CO_SCATTER, R.ALG_BINOMIAL), (S.CO_ALLREDUCE, R.ALG_RECURSIVE_DOUBLING),
             (S.CO_ALLREDUCE, R.ALG_RING), (S.CO_ALLREDUCE, R.ALG_RABENSEIFNER), (S.CO_ALLGATHER, R.ALG_RING),
             (S.CO_ALLGATHER, R.ALG_RECURSIVE_DOUBLING), (S.CO_ALLTOALL, R.ALG_PAIRWISE)]
    peers, sizes, counts = np.zeros(S.MAX_FANOUT, np.int64), np.zeros(S.MAX_FANOUT, np.int64), np.zeros(1, np.int64)
    nbytes = 1000
    for kind, alg in cases:
        for n in [*range(1, 20), 32, 33, 48]:
            if alg == R.ALG_RECURSIVE_DOUBLING and kind == S.CO_ALLGATHER and n & (n - 1):
                continue
            bound = int(largest_message(np.array([kind]), np.array([n]), np.array([nbytes]))[0])
            sent = 0
            for root in {0, n // 2}:
                for me in range(n):
                    for step in range(n_steps(kind, alg, n)):
                        ns, _ = round_plan(kind, alg, me, n, root, step, nbytes, counts, 0, peers, sizes)
                        sent = max([sent, *sizes[:ns]])
            assert sent <= bound, (kind, alg, n, sent, bound)
            if n > 1 and kind != S.CO_BARRIER:
                assert sent > 0


@pytest.mark.parametrize("n", [3, 6, 12])
def test_recursive_doubling_allgather_falls_back_on_a_size_not_a_power_of_two(n):
    """Recursive doubling pairs me with me xor 2^k, a rank that does not exist when n is not a power of two:
    as MPICH, the choice falls back to auto's (ring), and the run is the ring's."""
    from fastnet import registry as R
    from fastnet.mpi.program import Options, choose_algorithm

    forced = Options(cycle_ns=1.0, allgather="recursive_doubling")
    assert choose_algorithm("allgather", 64, n, forced) == R.ALG_RING
    assert choose_algorithm("allgather", 64, 8, forced) == R.ALG_RECURSIVE_DOUBLING
    w = {"kind": "mpi", "program": "allgather", "tasks": n, "message_bytes": 64}
    rd, ring = run(w, {"allgather": "recursive_doubling"}), run(w, {"allgather": "ring"})
    assert rd.messages.item() == ring.messages.item() == n * (n - 1)
    assert rd.execution_cycles.item() == ring.execution_cycles.item()


def test_pingpong_computes_after_every_iteration():
    """`compute_cycles` follows every iteration of every program that has iterations (docs/mpi.md), pingpong's
    too: both ranks compute after each round trip."""
    w = {"kind": "mpi", "program": "pingpong", "iterations": 2, "message_bytes": 8}
    base, busy = run(w), run({**w, "compute_cycles": 1000})
    assert busy.execution_cycles.item() == base.execution_cycles.item() + 2 * 1000
    assert busy.rank_compute_cycles.values[:2].tolist() == [2000, 2000]


@pytest.mark.parametrize("program, nbytes, packets", [("barrier", 8, 1), ("bcast", 8, 1), ("allreduce", 100, 4),
                                                      ("alltoall", 100_000, 16)])
def test_ranks_keep_free_only_the_packets_of_their_largest_message(program, nbytes, packets):
    """The engine keeps tasks x packets_per_message packets free (engine/loop.py): one per rank for a barrier,
    `burst` (16) only for messages that long. 40-byte packets, 32-byte header."""
    from fastnet.sim import prepare

    s = prepare({**TORUS, "workload": {"kind": "mpi", "program": program, "message_bytes": nbytes}})
    assert s.workload.packets_per_message == packets


def test_a_fragment_of_a_run_says_so_in_every_output(tmp_path):
    """A DUMPI trace whose footer counts calls it did not record: the warning is an attribute of the dataset and
    a key of `fastnet run --json` (the table prints it too)."""
    import json

    from typer.testing import CliRunner

    from fastnet.cli import app

    write_dumpi_ascii(Trace([[p2p("send", 1)], [p2p("recv", 0)]] + [[] for _ in range(14)]), tmp_path / "t")
    f = tmp_path / "t" / "trace-0000.txt"
    f.write_text(f.read_text() + "MPI_Allreduce called 3 times and ignored 3 times\n")
    ds = run({"kind": "trace", "file": str(tmp_path / "t")})
    assert ds.attrs["trace_calls_not_recorded"] == "MPI_Allreduce x3"
    assert len(ds.attrs["warnings"]) == 1 and "MPI_Allreduce x3" in ds.attrs["warnings"][0]
    args = ["run", "--set", "topology.kind='torus'", "--set", "topology.dims=[4, 4]", "--set",
            "workload.kind='trace'", "--set", f"workload.file='{tmp_path / 't'}'"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["trace_calls_not_recorded"] == "MPI_Allreduce x3"
    assert summary["warnings"] == ds.attrs["warnings"]
    table = CliRunner().invoke(app, args)
    assert "warning: the tracer did not record" in table.output and "MPI_Allreduce x3" in table.output


def test_a_rank_file_cut_short_is_replayed_with_a_warning(tmp_path):
    """A DUMPI ASCII rank file that ends before its footer (a crash, or a copy cut short) loses its last calls
    without a trace of it: the run says which files; a whole trace has an empty list of warnings."""
    ranks = [[p2p("send", 1), p2p("send", 1)], [p2p("recv", 0), p2p("recv", 0)]] + [[] for _ in range(14)]
    write_dumpi_ascii(Trace(ranks), tmp_path / "t")
    whole = run({"kind": "trace", "file": str(tmp_path / "t")})
    assert whole.attrs["warnings"] == [] and "trace_files_cut_off" not in whole.attrs
    f = tmp_path / "t" / "trace-0001.txt"
    f.write_text(f.read_text().split("MPI_Recv called")[0])  # its calls whole, the footer gone
    cut = run({"kind": "trace", "file": str(tmp_path / "t")})
    assert cut.attrs["trace_files_cut_off"] == str(f)
    assert cut.attrs["warnings"] == [CUT_OFF_WARNING + str(f)]
    assert cut.execution_cycles.item() == whole.execution_cycles.item()


def test_call_cycles_holds_the_computation_under_compute():
    """call_cycles' compute entry was 0 while call_count counted the computations."""
    ds = run({"kind": "mpi", "program": "halo3d", "tasks": 8, "compute_cycles": 100})
    assert ds.call_cycles.sel(call="compute").item() == ds.rank_compute_cycles.sum().item() > 0
    assert ds.call_cycles.sum().item() == ds.rank_compute_cycles.sum().item() + ds.rank_wait_cycles.sum().item()


def test_call_count_counts_each_computation_the_run_does(tmp_path):
    """mpi_calls counts each computation between two calls once (docs/mpi.md): a trace's gaps counted none, and
    a program's compute calls dropped by workload.compute = "none" still counted."""
    def at(call: Call, ns: float) -> Call:
        return dataclasses.replace(call, start_ns=ns, end_ns=ns + 10.0)
    ranks = [[at(p2p("send", 1), 0.0), at(p2p("send", 1), 5000.0), at(p2p("recv", 1), 9000.0)],
             [at(p2p("recv", 0), 0.0), at(p2p("recv", 0), 10.0), at(p2p("send", 0), 9000.0)]]
    ds = trace_run(tmp_path, ranks)  # rank 0 computes twice (4,990 and 3,990 ns), rank 1 once (8,980 ns)
    assert ds.call_count.sel(call="compute").item() == 3
    assert ds.mpi_calls.item() == 6 + 3
    assert ds.call_cycles.sel(call="compute").item() == ds.rank_compute_cycles.sum().item() > 0
    none = run({"kind": "mpi", "program": "halo3d", "tasks": 8, "compute_cycles": 100, "compute": "none"})
    assert none.call_count.sel(call="compute").item() == 0 == none.call_cycles.sel(call="compute").item()


def test_an_mpi_program_may_have_one_rank_and_send_zero_byte_messages():
    """MPI allows a one-rank MPI_COMM_WORLD (its collectives move nothing) and 0-byte messages (the header alone:
    a latency test's first point); seed 002's kernels still need two tasks and a byte."""
    one = run({"kind": "mpi", "program": "allreduce", "tasks": 1})
    assert one.messages.item() == 0 and one.execution_cycles.item() == 0
    empty = run({"kind": "mpi", "program": "pingpong", "message_bytes": 0})
    eight = run({"kind": "mpi", "program": "pingpong", "message_bytes": 8})
    assert empty.bytes.item() == 0 and empty.messages.item() == 2
    assert 0 < empty.execution_cycles.item() < eight.execution_cycles.item()
    with pytest.raises(ConfigError, match="at least 2 tasks") as e:
        run({"kind": "sr", "tasks": 1})
    assert e.value.field == "workload.tasks"
    with pytest.raises(ConfigError, match="must be >= 1 for sr") as e:
        run({"kind": "sr", "message_bytes": 0})
    assert e.value.field == "workload.message_bytes"


def test_an_mpi_run_records_its_mpi_settings_given_or_not():
    """The resolved config (--show-config, the dataset's attributes) holds [mpi] for an MPI workload even when no
    key of it was given: eager_bytes, header_bytes and the algorithms are part of what the run did."""
    from fastnet.config import resolve
    from fastnet.mpi.schema import resolve_mpi
    assert resolve({"workload": {"kind": "mpi"}})["mpi"] == resolve_mpi({})
    assert resolve({"workload": {"kind": "trace", "file": "x"}})["mpi"]["eager_bytes"] == resolve_mpi({})["eager_bytes"]
    assert "mpi" not in resolve({"workload": {"kind": "a2a"}}) and "mpi" not in resolve({})


@pytest.mark.parametrize("first", [8192, 4])
def test_messages_of_one_sender_match_in_send_order_whatever_order_they_arrive(tmp_path, first):
    """MPI's non-overtaking rule: rank 0's six messages to rank 5 (same tag) alternate between 8 KiB and 4 B, and
    with local links at half speed a small one overtakes the big one sent before it on another minimal path. The
    one that arrives early waits for the earlier one; once that is taken, it takes the next receive (it used to
    wait forever)."""
    sizes = [first, 8196 - first] * 3
    sends = [p2p("isend", 5, 7, nbytes=n, request=i) for i, n in enumerate(sizes)]
    recvs = [p2p("irecv", 0, 7, nbytes=n, request=i) for i, n in enumerate(sizes)]
    ranks = [sends + [Call("waitall", requests=tuple(range(6)))], [], [], [], [],
             recvs + [Call("waitall", requests=tuple(range(6)))]]
    write_dumpi_ascii(Trace(ranks + [[] for _ in range(10)], {}), tmp_path / "t")
    links = {"cycle": "0.8 ns", "bandwidth": "5 GB/s", "bandwidth_local": "2.5 GB/s"}
    ds = run({"kind": "trace", "file": str(tmp_path / "t"), "compute": "none"}, links=links)
    assert ds.messages.item() == 6 and ds.bytes.item() == sum(sizes)
