"""fastnet.sweep on a real Dask LocalCluster: the dataset equals single fastnet.run calls point by point; failures
are recorded and counted; the numba cache is filled in the parent so that workers never compile."""

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numba
import numpy as np
import pytest
import xarray as xr
from typer.testing import CliRunner

import fastnet
from fastnet.cli import app
from fastnet.errors import ConfigError
from fastnet.sweeps import store
from fastnet.sweeps.runner import kernel_compiles

ROOT = Path(__file__).resolve().parents[1]
TORUS = {"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"warmup": 200, "measure": 500, "drain": 500}}
LOADS = [0.1, 0.4]
PATTERNS = ["uniform", "tornado"]


def single_run(load, pattern):
    """The point as someone would run it by hand, without the sweep's own config code."""
    return fastnet.run({**TORUS, "traffic": {"load": load, "pattern": pattern}})


def assert_point_equals_run(point: xr.Dataset, run: xr.Dataset):
    assert point["status"].item() == store.STATUS_OK and point["error"].item() == ""
    assert json.loads(point["config"].item()) == json.loads(run.attrs["config"])
    for name, var in run.data_vars.items():
        np.testing.assert_array_equal(point[name].values, var.values, err_msg=name)
    for k in ("nodes", "routers", "ports", "vcs"):
        assert point[k].item() == run.attrs[k]


@pytest.fixture(scope="module")
def two_axis(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "two_axis.zarr"
    spec = {"base": TORUS, "sweep": {"traffic.load": LOADS, "traffic.pattern": PATTERNS}}
    ds = fastnet.sweep(spec, out, workers=2)
    return out, ds


def test_two_worker_local_cluster_matches_single_runs(two_axis):
    out, ds = two_axis
    assert ds.sizes["traffic.load"] == 2 and ds.sizes["traffic.pattern"] == 2
    assert list(ds["traffic.load"].values) == LOADS and list(ds["traffic.pattern"].values) == PATTERNS
    assert ds["packet_latency_mean"].dims == ("traffic.load", "traffic.pattern")
    assert ds["packet_latency_histogram"].dims == ("traffic.load", "traffic.pattern", "latency_bin")
    assert ds["port_utilization"].dims == ("traffic.load", "traffic.pattern", "port")
    assert ds["traffic.load"].attrs["units"] == "phits/node/cycle"
    assert ds["packet_latency_mean"].attrs["units"] == "cycles"
    assert json.loads(ds.attrs["sweep_spec"])["axes"][0] == {"keys": ["traffic.load"], "values": [LOADS]}
    assert ds.attrs["fastnet_version"] == fastnet.__version__
    reopened = xr.open_zarr(out)  # what a user does
    for load in LOADS:
        for pattern in PATTERNS:
            run = single_run(load, pattern)
            point = reopened.sel({"traffic.load": load, "traffic.pattern": pattern}).load()
            assert_point_equals_run(point, run)
            np.testing.assert_array_equal(reopened["port_router"].values, run["port_router"].values)
            assert list(reopened["port_class"].values) == list(run["port_class"].values)
    marks = store.markers(out)
    assert sorted(marks) == [0, 1, 2, 3]
    assert len({m["pid"] for m in marks.values()}) == 2  # both worker processes ran points
    assert all(m["compiled"] == 0 for m in marks.values())  # the parent's probe filled the cache


def test_existing_store_needs_resume_and_resume_of_a_finished_sweep_runs_nothing(two_axis):
    out, _ = two_axis
    spec = {"base": TORUS, "sweep": {"traffic.load": LOADS, "traffic.pattern": PATTERNS}}
    with pytest.raises(ConfigError, match="pass --resume"):
        fastnet.sweep(spec, out, workers=1)
    before = store.markers(out)
    seen = []
    ds = fastnet.sweep(spec, out, resume=True, progress=lambda p: seen.append((p.skipped, p.done)))
    assert seen == [(4, 0)] and store.markers(out) == before
    assert (ds["status"].values == store.STATUS_OK).all()
    other = {"base": TORUS, "sweep": {"traffic.load": [0.2], "traffic.pattern": PATTERNS}}
    with pytest.raises(ConfigError, match="different sweep"):
        fastnet.sweep(other, out, resume=True)


def test_failed_points_record_their_error_and_the_sweep_goes_on(tmp_path):
    # buffer_phits = 5 cannot hold a 10-phit packet: prepare() refuses that point only
    spec = tmp_path / "spec.toml"
    spec.write_text('[base.topology]\nkind = "torus"\ndims = [4, 4]\n[base.sim]\nwarmup = 100\nmeasure = 200\n'
                    'drain = 200\n[sweep]\nrouter.buffer_phits = [5, 20, 6]\n')
    out = tmp_path / "r.zarr"
    result = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(out), "--workers", "1", "--resume"])
    assert result.exit_code == 2, result.output  # two points failed: the exit code counts them
    assert "2 failed" in result.output and "router.buffer_phits=5" in result.output
    assert "sweep: 3/3 points (0 before), 2 failed, " in result.output  # off a terminal: progress as lines
    ds = xr.open_zarr(out)
    assert list(ds["status"].values) == [store.STATUS_FAILED, store.STATUS_OK, store.STATUS_FAILED]
    assert "must hold a whole packet" in str(ds["error"].values[0]) and ds["error"].values[1] == ""
    assert np.isnan(ds["packet_latency_mean"].values[[0, 2]]).all()
    assert np.isfinite(ds["packet_latency_mean"].values[1])
    first = store.markers(out)
    assert {m["status"] for m in first.values()} == {"ok", "failed"}
    again = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(out), "--resume", "--retry-failed"])
    assert again.exit_code == 2 and "1 before" in again.output
    second = store.markers(out)
    assert second[1] == first[1] and second[0]["session"] != first[0]["session"]  # only the failed ones reran


def test_set_changes_the_base_of_a_spec_file(tmp_path):
    """fastnet sweep --set section.key=value overrides the spec's base (to try a spec out in a short window), as
    fastnet run --set overrides a config; a key the sweep varies keeps its axis."""
    import json

    spec = tmp_path / "spec.toml"
    spec.write_text('[base.topology]\nkind = "torus"\ndims = [4, 4]\n[base.sim]\nwarmup = 100\nmeasure = 5000\n'
                    'drain = 200\n[sweep]\ntraffic.load = [0.1, 0.2]\n')
    out = tmp_path / "s.zarr"
    result = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(out), "--workers", "1", "--quiet",
                                      "--set", "sim.measure=300", "--set", "traffic.load=0.9"])
    assert result.exit_code == 0, result.output
    ds = xr.open_zarr(out)
    configs = [json.loads(c) for c in ds["config"].values.ravel()]
    assert [c["sim"]["measure"] for c in configs] == [300, 300]
    assert [c["traffic"]["load"] for c in configs] == [0.1, 0.2]
    bad = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "b.zarr"), "--set", "measure=1"])
    assert bad.exit_code == 2 and "--set" in bad.output


def test_a_store_that_is_not_a_sweep_is_left_alone(tmp_path):
    import xarray as xr

    from fastnet.store import write_dataset

    write_dataset(xr.Dataset({"a": ("x", [1, 2])}), tmp_path / "run.zarr")
    spec = {"base": TORUS, "sweep": {"traffic.load": [0.1]}}
    with pytest.raises(ConfigError, match="not a fastnet sweep store"):
        fastnet.sweep(spec, tmp_path / "run.zarr", resume=True)


def test_cli_reports_bad_input_in_one_line_with_exit_code_2(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('[base.topology]\nkind = "torus"\n[sweep]\ntraffic.lod = [0.1]\n')
    r = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "x.zarr")])
    assert r.exit_code == 2 and "traffic.lod: unknown key" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "x.zarr").exists()
    r = CliRunner().invoke(app, ["sweep", str(tmp_path / "none.toml"), "--out", str(tmp_path / "x.zarr")])
    assert r.exit_code == 2 and "no such file" in r.output


def test_remote_scheduler_runs_the_same_sweep(tmp_path):
    from distributed import LocalCluster

    spec = {"base": TORUS, "sweep": {"traffic.load": [0.3], "traffic.pattern": ["uniform"]}}
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        ds = fastnet.sweep(spec, tmp_path / "r.zarr", scheduler=cluster.scheduler_address)
        with pytest.raises(ConfigError, match="--workers"):
            fastnet.sweep(spec, tmp_path / "r2.zarr", scheduler=cluster.scheduler_address, workers=2)
        assert not (tmp_path / "r2.zarr").exists()  # refused before anything was written
        address = cluster.scheduler_address
    with pytest.raises(ConfigError, match="--scheduler: cannot connect"):  # the cluster is gone
        fastnet.sweep(spec, tmp_path / "r3.zarr", scheduler=address)
    assert not list(tmp_path.glob("r3.zarr*"))
    assert_point_equals_run(ds.isel({"traffic.load": 0, "traffic.pattern": 0}).load(), single_run(0.3, "uniform"))


def test_kernel_compiles_counts_what_numba_compiled():
    # the counter behind the cold-cache test must see a compilation when one happens
    mod = types.ModuleType("fastnet._compile_counter_check")
    mod.f = numba.njit(cache=False)(lambda x: x + 1)
    sys.modules[mod.__name__] = mod
    try:
        before = kernel_compiles()
        mod.f(1)
        assert kernel_compiles() == before + 1
    finally:
        del sys.modules[mod.__name__]


def test_workers_started_against_an_empty_cache_load_what_the_parent_compiled(tmp_path):
    """House style 10: on a fresh machine (no ~/.cache, an empty numba cache) the parent's probe compiles every
    kernel a point needs before the workers start, and no worker compiles one (two workers compiling into one
    cache is numba#4807's crash). The sweep runs in a new process whose home has no .cache, as a newcomer's."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), MPLCONFIGDIR=str(tmp_path / "mpl"))
    spec = tmp_path / "spec.toml"
    spec.write_text('[base.topology]\nkind = "torus"\ndims = [4, 4]\n[base.sim]\nwarmup = 100\nmeasure = 300\n'
                    'drain = 300\n[sweep]\ntraffic.load = [0.1, 0.2, 0.3, 0.4]\n')
    r = subprocess.run([sys.executable, "-m", "fastnet", "sweep", str(spec), "--out", str(tmp_path / "c.zarr"),
                        "--workers", "2", "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    cache = list((home / ".cache" / "fastnet").glob("numba-*"))
    assert len(cache) == 1 and list(cache[0].rglob("*cycle_loop*.nbi")), "the parent did not fill the new cache"
    marks = store.markers(tmp_path / "c.zarr")
    assert len(marks) == 4 and len({m["pid"] for m in marks.values()}) == 2
    assert [m["compiled"] for m in marks.values()] == [0, 0, 0, 0]


def test_workload_tables_hold_the_longest_run(tmp_path):
    """How many levels a BFS takes is known only after the run: the store's `level` dim is sized from the
    config's bound, not from the probe, so a seed whose BFS takes more levels than the probed one still fits (seeds
    1, 2, 3 take 3, 4 and 8). The network is test_graph500_workload's, whose cycle loop the suite compiles anyway."""
    spec = {"base": {"topology": {"kind": "torus", "dims": [4, 2]},
                     "traffic": {"packet_phits": 8, "phit_bytes": 512},
                     "workload": {"kind": "graph500", "scale": 10, "max_levels": 12}},
            "sweep": {"sim.seed": [1, 2, 3]}}
    ds = fastnet.sweep(spec, tmp_path / "g.zarr", workers=1)
    assert ds.sizes["level"] == 13 and (ds.status == 1).all()
    for seed in (1, 2, 3):
        one = fastnet.run({**spec["base"], "sim": {"seed": seed}})
        got = ds.sel({"sim.seed": seed})
        assert int(got.levels) == int(one.levels)
        n = int(one.levels)
        np.testing.assert_array_equal(got.level_messages.values[:n], one.level_messages.values)
        assert np.isnan(got.level_messages.values[n:]).all()


def test_a_closed_loop_point_the_probe_ran_whole_is_kept_not_run_again(tmp_path):
    """A closed-loop probe runs its point to the end (it has no shorter form): that run is the point's result,
    written by the parent, and no worker runs it a second time."""
    base = {"topology": {"kind": "torus", "dims": [4, 4]}, "workload": {"kind": "a2a", "message_bytes": 256}}
    spec = {"base": base, "sweep": {"sim.seed": [5, 6]}}
    seen = []
    ds = fastnet.sweep(spec, tmp_path / "a.zarr", workers=1, progress=lambda p: seen.append((p.done, p.skipped)))
    marks = store.markers(tmp_path / "a.zarr")
    assert marks[0]["session"] == "probe" and marks[1]["session"] != "probe"
    assert marks[0]["pid"] == os.getpid() and marks[1]["pid"] != os.getpid()
    assert seen[0] == (1, 0) and seen[-1] == (2, 0)
    for seed in (5, 6):
        assert_point_equals_run(ds.sel({"sim.seed": seed}).load(), fastnet.run({**base, "sim": {"seed": seed}}))


def test_mpi_points_whose_tables_differ_in_length_each_fit_and_keep_their_labels(tmp_path):
    """An MPI program's rank, timeline and comm-matrix tables differ from point to point (more ranks a node, a
    longer program): the store is sized by the longest any point fills (each point's program lowered before the
    store is made), shorter tables padded; named coordinates (call) keep their labels."""
    base = {"topology": {"kind": "torus", "dims": [4, 4]},
            "workload": {"kind": "mpi", "program": "allreduce", "message_bytes": 64}}
    spec = {"base": base, "sweep": {"workload.iterations": [1, 3], "workload.ranks_per_node": [1, 2]}}
    ds = fastnet.sweep(spec, tmp_path / "m.zarr", workers=1)
    assert (ds.status == store.STATUS_OK).all(), ds.error.values
    assert ds.sizes["task"] == 32 and ds.sizes["rank_from"] == 32
    assert "allreduce" in list(ds["call"].values)
    for it in (1, 3):
        for rpn in (1, 2):
            one = fastnet.run({**base, "workload": {**base["workload"], "iterations": it, "ranks_per_node": rpn}})
            got = ds.sel({"workload.iterations": it, "workload.ranks_per_node": rpn}).load()
            assert int(got.execution_cycles) == int(one.execution_cycles)
            n, k = one.sizes["task"], one.sizes["interval"]
            np.testing.assert_array_equal(got.task_finish_cycle.values[:n], one.task_finish_cycle.values)
            np.testing.assert_array_equal(got.timeline_start.values[:k], one.timeline_start.values)
            np.testing.assert_array_equal(got.comm_matrix_bytes.values[:n, :n], one.comm_matrix_bytes.values)
            np.testing.assert_array_equal(got.call_count.values, one.call_count.values)
            assert np.isnan(got.task_finish_cycle.values[n:]).all()
