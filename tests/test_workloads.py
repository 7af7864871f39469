"""The message layer and seed 002's micro-kernels on tiny networks: exact timings where the engine's zero-load
timing gives them, the causal order of Send/Wait, wave bookkeeping, determinism and conservation."""

import numpy as np
import pytest

import fastnet
from fastnet.sim import check_conservation, prepare, simulate

P = 16  # phits per packet
PHIT = 4  # bytes per phit: 64-byte packets


def config(kind, topology=None, **workload):
    return {
        "topology": topology or {"kind": "torus", "dims": [4, 2]},
        "router": {"vcs": "auto", "buffer_phits": 64},
        "traffic": {"packet_phits": P, "phit_bytes": PHIT},
        "workload": {"kind": kind, **workload},
    }


TWO_NODES = {"kind": "mesh", "dims": [2]}  # two routers, one node each, one link


@pytest.mark.parametrize("nbytes, packets, last_phits", [(64, 1, 16), (192, 3, 16), (200, 4, 2), (1, 1, 1)])
def test_message_is_split_into_full_packets_and_pipelined(nbytes, packets, last_phits):
    # Zero-load timing of one router hop (kernels/timing.py): head injected at 0 reaches router A at 1 (injection
    # link), is granted at 1 + delay = 4, reaches router B at 5, is granted at 8 and its tail reaches the node at
    # 8 + 1 + L - 1 = 8 + L. Back-to-back packets follow one every P cycles, so the message of k packets (the
    # last one `last_phits` long) completes at (k - 1) P + 8 + last, and execution ends one cycle later.
    ds = fastnet.run(config("a2a", TWO_NODES, message_bytes=nbytes))
    assert ds.packets_delivered.item() == 2 * packets
    assert ds.execution_cycles.item() == (packets - 1) * P + 8 + last_phits + 1
    assert ds.message_latency_max.item() == (packets - 1) * P + 8 + last_phits


def test_o2a_root_sends_in_turn_and_receivers_finish_in_that_order():
    ds = fastnet.run(config("o2a", message_bytes=640, root=2))
    finish = ds.task_finish_cycle.values
    order = [(2 + u) % 8 for u in range(1, 8)]  # the root sends to root+1, root+2, ...
    assert finish[2] == 0  # the root waits for nothing
    assert all(finish[a] < finish[b] for a, b in zip(order, order[1:]))
    # injection at the root is the bottleneck: 7 messages x 10 packets x 16 phits leave back to back
    assert 7 * 10 * P < ds.execution_cycles.item() < 7 * 10 * P + 60
    assert ds.messages_posted.item() == 7


def test_a2o_is_bounded_by_consumption_at_the_root():
    ds = fastnet.run(config("a2o", message_bytes=640, root=5))
    finish = ds.task_finish_cycle.values
    assert finish[5] == ds.execution_cycles.item() - 1  # only the root waits; it is the last to finish
    assert (np.delete(finish, 5) == 0).all()
    assert 7 * 10 * P <= ds.execution_cycles.item() < 7 * 10 * P + 60


def test_multiple_ejection_lets_every_input_port_deliver_at_once():
    # With FSIN's multiple consumption the root's four input links each deliver at link rate: A2O is bounded by
    # those links (7 messages over 4 of them: at least 2 messages' worth), not by one ejection channel.
    cfg = config("a2o", message_bytes=640, root=5)
    cfg["router"]["ejection"] = "multiple"
    ds = fastnet.run(cfg)
    assert 2 * 10 * P <= ds.execution_cycles.item() < 7 * 10 * P * 0.6
    # one packet alone takes exactly as long as with a single ejection channel
    one = config("a2a", TWO_NODES, message_bytes=64)
    single = fastnet.run(one).execution_cycles.item()
    one["router"]["ejection"] = "multiple"
    assert fastnet.run(one).execution_cycles.item() == single

def test_a2a_sends_every_pair_once():
    ds = fastnet.run(config("a2a", message_bytes=256))
    assert ds.messages_posted.item() == ds.messages_completed.item() == 8 * 7
    assert ds.packets_delivered.item() == 8 * 7 * 4
    assert ds.wave_messages.values.tolist() == [56]
    assert ds.wave_end.item() == ds.execution_cycles.item() - 1


def test_sr_waves_follow_each_other_through_the_compute_phase():
    ds = fastnet.run(config("sr", messages=50, wave=8, message_bytes=128, compute_cycles=100))
    start, end = ds.wave_start.values, ds.wave_end.values
    assert len(start) == 7  # ceil(50 / 8)
    assert ds.wave_messages.values.tolist() == [8] * 6 + [2]
    assert (start[1:] == end[:-1] + 100).all()  # Wait for the whole wave, compute, then the next Send
    assert ds.execution_cycles.item() == end[-1] + 100 + 1
    assert ds.messages_posted.item() + ds.messages_local.item() == 50
    net = ds.wave_network_messages.values
    assert (net <= ds.wave_messages.values).all() and net.sum() == ds.messages_posted.item()


def test_a_wave_of_local_copies_takes_no_time():
    """A message to its own task is a local copy that completes at once: a wave of them alone ends where it
    starts, and with no computation the next wave starts in that cycle, as it does after a network wave (it
    started a cycle later, and a last such wave ended the run a cycle late)."""
    ds = fastnet.run(config("sr", messages=60, wave=1, message_bytes=64, tasks=2))
    start, end, net = ds.wave_start.values, ds.wave_end.values, ds.wave_network_messages.values
    assert 0 < (net == 0).sum() < len(net)  # both kinds of wave
    assert (end[net == 0] == start[net == 0]).all() and (start[1:] == end[:-1]).all()
    assert ds.execution_cycles.item() == end[-1] + 1
    one = {**config("gups", messages=1, tasks=2), "sim": {"seed": 2}}  # its one message is a local copy
    ds = fastnet.run(one)
    assert ds.messages_local.item() == 1 and ds.execution_cycles.item() == 1


def test_gups_is_one_wave_of_the_same_messages():
    sr = fastnet.run(config("sr", messages=40, wave=5, message_bytes=128))
    gups = fastnet.run(config("gups", messages=40, message_bytes=128))
    assert len(gups.wave_start) == 1
    assert gups.messages_posted.item() == sr.messages_posted.item()  # same draws from the same seed
    assert gups.execution_cycles.item() < sr.execution_cycles.item()  # no synchronisation between waves


def test_sr_is_deterministic_and_seeded():
    cfg = config("sr", messages=60, wave=6, message_bytes=200, mapping="random")
    a, b = fastnet.run(cfg), fastnet.run(cfg)
    for name in ("execution_cycles", "wave_end", "task_node", "packets_delivered", "message_latency_mean"):
        assert np.array_equal(a[name].values, b[name].values), name
    cfg["sim"] = {"seed": 2}
    c = fastnet.run(cfg)
    assert not np.array_equal(a.wave_end.values, c.wave_end.values)
    assert sorted(a.task_node.values.tolist()) == list(range(8))  # a permutation of the nodes


def test_tasks_subset_and_conservation_audit():
    s = prepare(config("a2a", tasks=5, message_bytes=300, mapping="random"))
    simulate(s)
    held = check_conservation(s)  # every packet id in one place, credits balanced
    assert held == {"queued": 0, "in_network": 0}
    assert s.workload.task_node.tolist() != list(range(5)) and len(set(s.workload.task_node.tolist())) == 5
    ds = fastnet.run(config("a2a", tasks=5, message_bytes=300))
    assert ds.messages_posted.item() == 20


def test_message_pool_grows_between_chunks():
    # GUPS posts all its messages at cycle 0. Start from a 20-row pool: run_chunk returns GROW until the pool
    # holds a cycle's worth of posts, then every message goes through.
    from fastnet.workloads.state import MS_NEXT, N_MS, WC_FREE_COUNT, WC_FREE_HEAD

    s = prepare(config("gups", messages=3000, message_bytes=64))
    msg = np.zeros((20, N_MS), dtype=np.int64)
    msg[:, MS_NEXT] = np.append(np.arange(1, 20), -1)
    s.workload.wc[WC_FREE_HEAD], s.workload.wc[WC_FREE_COUNT] = 0, 20
    s.workload = s.workload._replace(msg=msg)
    simulate(s)
    assert len(s.workload.msg) >= 3000
    from fastnet.workloads.state import WC_COMPLETED, WC_LOCAL, WC_POSTED

    wc = s.workload.wc
    assert wc[WC_POSTED] + wc[WC_LOCAL] == 3000 and wc[WC_COMPLETED] == wc[WC_POSTED]
