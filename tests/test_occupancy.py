"""sim.occupancy_interval: per-port occupancy sampled between kernel chunks and streamed into the --out store."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from typer.testing import CliRunner

import fastnet
from fastnet import occupancy as occ
from fastnet.cli import app
from fastnet.errors import ConfigError, ConservationError

TORUS = {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.5},
         "sim": {"warmup": 100, "measure": 600, "drain": 600}}


def with_sim(cfg, **sim):
    return {**cfg, "sim": {**cfg["sim"], **sim}}


def reference_samples(cfg, interval):
    """The occupancy each sampling cycle should show, from a run stepped by hand to those cycles and read from
    the VC records (capacity - free credits, summed per port) rather than from PT_HELD."""
    from fastnet.engine.loop import GROW, OK
    from fastnet.kernels.state import VC_CAP, VC_FREE
    from fastnet.sim import compile_kernels, grow_pools, prepare

    s = prepare(cfg)
    loop = compile_kernels(s)
    end = s.params.w1 + s.cfg["sim"]["drain"]
    rows, cycles, t = [], [], 0
    while t < end:
        status, t, low, _ = loop(s.net.topo, s.routes, s.params, s.traffic, s.workload, s.state, s.crew, t,
                                 min(end, (t // interval + 1) * interval), True, 2**62)  # (no budget)
        if t % interval == 0:
            vc = s.state.vc
            rows.append((vc[:, VC_CAP] - vc[:, VC_FREE]).reshape(s.net.n_ports, -1).sum(axis=1))
            cycles.append(t)
        if status == GROW:
            grow_pools(s, low)
        elif status != OK:
            break
    return np.array(cycles), np.array(rows)


def test_samples_stream_into_the_out_store_next_to_the_results(tmp_path):
    out = tmp_path / "r.zarr"
    ds = fastnet.run(with_sim(TORUS, occupancy_interval=37), out=out)
    var = ds["port_occupancy"]
    assert var.dims == ("occupancy_time", "port") and var.dtype == np.uint16
    assert var.attrs["units"] == "phits" and var.attrs["interval"] == 37
    cycles, rows = reference_samples(TORUS, 37)
    assert len(cycles) == ds.cycles.item() // 37 > 10
    np.testing.assert_array_equal(ds["occupancy_time"].values, cycles)
    np.testing.assert_array_equal(var.values, rows)
    assert var.values.max() > 0 and (var.values.sum(axis=1) > 0).all()
    again = xr.open_zarr(out)  # what a user opens: coordinates and results beside it
    assert {"port_router", "port_class"} <= set(again["port_occupancy"].coords)
    assert again["packets_delivered"].item() == ds["packets_delivered"].item()
    assert not list(tmp_path.glob(".r.zarr.*"))  # the staged store was moved into place


def test_where_chunks_end_does_not_change_the_results(tmp_path):
    plain = fastnet.run(TORUS)
    for interval in (1, 37):
        sampled = fastnet.run(with_sim(TORUS, occupancy_interval=interval), out=tmp_path / f"{interval}.zarr")
        for name, var in plain.data_vars.items():
            np.testing.assert_array_equal(sampled[name].values, var.values, err_msg=name)


def test_rows_are_appended_a_bounded_buffer_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(occ, "BUFFER_BYTES", 3 * 80 * 2)  # three rows of the torus's 80 uint16 ports
    appended = []
    flush = occ.OccupancyRecorder.flush

    def counting_flush(self):
        appended.append(self.n)
        assert len(self.buf) == 3
        flush(self)

    monkeypatch.setattr(occ.OccupancyRecorder, "flush", counting_flush)
    ds = fastnet.run(with_sim(TORUS, occupancy_interval=37), out=tmp_path / "r.zarr")
    n = ds.sizes["occupancy_time"]
    assert appended[:-1] == [3] * (n // 3) and sum(appended) == n
    np.testing.assert_array_equal(ds["port_occupancy"].values, reference_samples(TORUS, 37)[1])


def test_a_14_million_port_network_buffers_one_row_in_chunks_of_a_few_mb():
    rows, ports = occ.layout(14_028_432, 2)
    assert rows == 1 and rows * 14_028_432 * 2 <= occ.BUFFER_BYTES
    assert ports * rows * 2 <= occ.ZARR_CHUNK_BYTES
    rows, ports = occ.layout(9_464, 2)  # Slim Fly q = 13: whole chunks of many samples
    assert rows == occ.MAX_ROWS and rows * ports * 2 <= occ.ZARR_CHUNK_BYTES


@pytest.mark.parametrize("largest, dtype", [(255, np.uint8), (3200, np.uint16), (80_000, np.uint32)])
def test_the_dtype_is_the_smallest_that_holds_a_full_port(largest, dtype):
    assert occ.smallest_uint(largest) == dtype


def test_large_buffers_get_a_wider_dtype(tmp_path):
    cfg = {**with_sim(TORUS, occupancy_interval=100), "router": {"buffer_phits": 20_000}}
    assert fastnet.run(cfg, out=tmp_path / "r.zarr")["port_occupancy"].dtype == np.uint32  # 4 VCs x 20,000


def test_without_a_store_it_is_refused_naming_the_key(tmp_path):
    with pytest.raises(ConfigError) as e:
        fastnet.run(with_sim(TORUS, occupancy_interval=10))
    assert e.value.field == "sim.occupancy_interval" and "--out" in str(e.value)
    r = CliRunner().invoke(app, ["run", "--set", "topology.kind=torus", "--set", "sim.occupancy_interval=10"])
    assert r.exit_code == 2 and r.output.startswith("error: sim.occupancy_interval") and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_cli_out_store_has_the_variable(tmp_path):
    out = tmp_path / "r.zarr"
    r = CliRunner().invoke(app, ["run", "--set", "topology.kind=torus", "--set", "topology.dims=[4,4]",
                                 "--set", "sim.warmup=100", "--set", "sim.measure=300", "--set", "sim.drain=300",
                                 "--set", "sim.occupancy_interval=50", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    ds = xr.open_zarr(out)
    assert ds["port_occupancy"].shape == (ds.cycles.item() // 50, 80)
    assert list(ds["occupancy_time"].values[:3]) == [50, 100, 150]


def test_a_failed_run_leaves_out_as_it_was_and_no_staged_store(tmp_path, monkeypatch):
    out = tmp_path / "r.zarr"
    fastnet.run(with_sim(TORUS, occupancy_interval=50), out=out)
    before = xr.open_zarr(out)["port_occupancy"].values

    def broken(s):
        raise ConservationError("injected failure")

    monkeypatch.setattr("fastnet.sim.check_conservation", broken)
    with pytest.raises(ConservationError):
        fastnet.run({**with_sim(TORUS, occupancy_interval=20), "traffic": {"load": 0.9}}, out=out)
    np.testing.assert_array_equal(xr.open_zarr(out)["port_occupancy"].values, before)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.zarr"]


def test_sweeps_refuse_it_up_front():
    from fastnet.sweeps import load_spec

    spec = load_spec({"base": with_sim(TORUS, occupancy_interval=10), "sweep": {"traffic.load": [0.1, 0.2]}})
    with pytest.raises(ConfigError) as e:
        spec.configs()
    assert e.value.field == "sim.occupancy_interval" and "not recorded in sweeps" in str(e.value)
