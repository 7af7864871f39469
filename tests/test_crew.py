"""sim.threads: the crew walks the parts of each allocation round side by side (fastnet/kernels/crew.py), and a run's
dataset is the same for every thread count."""

from __future__ import annotations

from pathlib import Path

import pytest
import xarray as xr

from fastnet.config import merge
from fastnet.kernels.crew import SPLIT, run_threads
from fastnet.results import to_dataset
from fastnet.sim import prepare, simulate

TRACE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "traces" / "sst_dumpi_testtrace"
TORUS = {"kind": "torus", "dims": [8, 8]}  # rounds of enough heads to be split (kernels/crew.py MIN_SPLIT)
WINDOW = {"warmup": 300, "measure": 1500, "drain": 3000}
CASES = {
    "open loop, separable": {"topology": TORUS, "traffic": {"load": 0.6}, "sim": WINDOW},
    "iSLIP, input speedup 2, UGAL-L": {
        "topology": {"kind": "hyperx", "dims": [8, 8]}, "routing": {"algorithm": "ugal_l"},
        "router": {"allocator": "islip", "input_speedup": 2, "vcs": 4}, "traffic": {"load": 0.6}, "sim": WINDOW},
    "flit crossbar, a router failing mid-run": {
        "topology": TORUS, "router": {"crossbar": "flit"}, "traffic": {"load": 0.5, "packet_phits": 4},
        "sim": WINDOW, "faults": {"events": [[900, "fail", 5]], "allow_disconnected": True}},
    "MPI alltoall": {"topology": TORUS, "router": {"buffer_phits": 64},
                     "workload": {"kind": "mpi", "program": "alltoall", "message_bytes": 20000, "iterations": 1}},
}


def _run(cfg: dict, threads: int, split: bool = True) -> xr.Dataset:
    cfg = merge(cfg, {"sim": {"threads": threads}})
    s = simulate(prepare(cfg))
    if threads > 1 and split:  # rounds were walked in parts: the test compares something
        assert s.crew.ctl[SPLIT] > 0
    return to_dataset(s, 0.0)


def _same(a: xr.Dataset, b: xr.Dataset) -> None:
    for d in (a, b):  # wall times (wall_seconds, faults_route_recompute_seconds, mpi_events_per_second) aside
        for name in [name for name in d.attrs if "second" in name]:
            del d.attrs[name]
    xr.testing.assert_identical(a, b)


@pytest.mark.parametrize("name", list(CASES))
def test_the_same_dataset_for_any_thread_count(name):
    one = _run(CASES[name], 1)
    for threads in (2, 3):
        _same(one, _run(CASES[name], threads))


@pytest.mark.skipif(not TRACE.exists(), reason="needs ../shared (the shared DUMPI traces)")
def test_a_trace_replay_is_the_same_for_any_thread_count():
    cfg = {"topology": {"kind": "torus", "dims": [4, 4]}, "workload": {"kind": "trace", "file": str(TRACE)}}
    one = _run(cfg, 1, split=False)
    assert int(one.execution_cycles) == 2475074  # docs/mpi.md
    _same(one, _run(cfg, 2, split=False))  # (a replay's rounds are small: most are walked by one thread)


def test_auto_threads_are_the_cores_on_large_networks_only(monkeypatch):
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    cfg = {"sim": {"threads": "auto"}}
    assert run_threads(cfg, 1000) == 1
    assert 1 <= run_threads(cfg, 10**7) <= 3
    assert run_threads({"sim": {"threads": 5}}, 1000) == 5
