"""A sweep killed with SIGKILL mid-way and resumed: every point is present exactly once and equals a fresh run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr

import fastnet
from fastnet import config
from fastnet.sweeps import store

ROOT = Path(__file__).resolve().parents[1]
LOADS = [0.1, 0.3, 0.4, 0.5]
SEEDS = [1, 2]
SIM = {"warmup": 2000, "measure": 2000, "drain": 4000}  # the 1056-node default dragonfly: ~0.1-0.4 s a point


def spec_text():
    base = config.merge(config.read_toml(config.DEFAULT_CONFIG), {"sim": SIM})
    lines = []
    for section, table in base.items():
        lines.append(f"[base.{section}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    return "\n".join(lines + ["[sweep]", f"traffic.load = {LOADS}", f"sim.seed = {SEEDS}", ""])


def sweep_cmd(spec, out, *extra):
    return [sys.executable, "-m", "fastnet", "sweep", str(spec), "--out", str(out), "--workers", "2", "--quiet",
            *extra]


def fresh_run(load, seed):
    override = {"traffic": {"load": load}, "sim": {**SIM, "seed": seed}}
    return fastnet.run(config.merge(config.read_toml(config.DEFAULT_CONFIG), override))


def wait_for_group_to_exit(pgid, seconds):
    """Live (not zombie) processes of a process group still there after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        live = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                live.append(int(stat.parent.name))
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.1)


def test_sigkill_mid_sweep_then_resume_runs_each_missing_point_once(tmp_path):
    spec, out = tmp_path / "spec.toml", tmp_path / "r.zarr"
    spec.write_text(spec_text())
    total = len(LOADS) * len(SEEDS)
    proc = subprocess.Popen(sweep_cmd(spec, out), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (out.exists() and len(store.markers(out)) >= 2):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the sweep finished no point in time"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)  # kill -9 of the sweep: no cleanup code runs in it
        proc.wait(timeout=30)
    finally:
        live = wait_for_group_to_exit(proc.pid, seconds=10)
        if live:  # never leave processes behind, whatever the assertion below says
            os.killpg(proc.pid, signal.SIGKILL)
    assert not live, f"worker processes outlived the killed sweep: {live}"
    before = store.markers(out)
    assert 2 <= len(before) < total, "the kill should land mid-sweep"
    pending = sorted(set(range(total)) - set(before))
    # A point killed after writing part of its region but before its marker: leave garbage there.
    torn = pending[0]
    shape = (len(LOADS), len(SEEDS))
    pos = store.position(shape, torn)
    chunk = out / "packet_latency_mean" / "c" / str(pos[0]) / str(pos[1])
    chunk.parent.mkdir(parents=True, exist_ok=True)
    chunk.write_bytes(b"\x00\x01torn")

    r = subprocess.run(sweep_cmd(spec, out, "--resume"), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    after = store.markers(out)
    assert sorted(after) == list(range(total))  # every point exactly once: one marker each, none missing
    for i, m in before.items():
        assert after[i] == m  # finished points were not run again
    sessions = {after[i]["session"] for i in pending}
    assert len(sessions) == 1 and sessions.isdisjoint({m["session"] for m in before.values()})

    ds = xr.open_zarr(out)
    assert (ds["status"].values == store.STATUS_OK).all()
    for i in range(total):
        li, si = store.position(shape, i)
        run = fresh_run(LOADS[li], SEEDS[si])
        point = ds.isel({"traffic.load": li, "sim.seed": si}).load()
        for name, var in run.data_vars.items():
            np.testing.assert_array_equal(point[name].values, var.values, err_msg=f"{name} at point {i}")
