"""Long runs (docs/long_runs.md): a run killed with SIGKILL after a checkpoint and resumed gives the dataset an
uninterrupted run gives (open loop on a Slim Fly, links failing mid-run, an MPI run skipping idle cycles, a run
streaming occupancy); SIGINT and SIGTERM stop a run cleanly at a chunk boundary; what cannot be resumed is
refused in one line; a sweep point killed mid-run goes on from its checkpoint."""

from __future__ import annotations

import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from typer.testing import CliRunner

import fastnet
import fastnet.sim as sim
from fastnet import config
from fastnet.checkpoint import RunStopped, read_header
from fastnet.cli import app
from fastnet.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def short_calls(monkeypatch):
    """Kernel calls of at most 2,048 units of work, as a large network's are, so that the signals these
    small runs get land between calls mid-run rather than after their last."""
    monkeypatch.setattr(sim, "CHUNK", 2048)

HOST_TIME = ("wall_seconds", "faults_route_recompute_seconds", "mpi_events_per_second")  # attrs of the host's clock

SLIMFLY = {"topology": {"kind": "slimfly", "q": 5}, "traffic": {"load": 0.5},
           "sim": {"warmup": 2000, "measure": 100000, "drain": 2000, "checkpoint_every": 3000}}
# routers 0 and 1 of the q = 5 Slim Fly are linked; min routing reads the distance table, recomputed at each event
FAULTS = {**SLIMFLY, "routing": {"algorithm": "min"},
          "faults": {"events": [[9000, "fail", 0, 1], [30000, "fail", 0, 4], [45000, "recover", 0, 1]],
                     "allow_disconnected": True}}
# compute between the allreduces: the loop jumps over the cycles in which nothing moves; the noise draws from each
# rank's random stream
MPI = {"topology": {"kind": "torus", "dims": [4, 4]},
       "workload": {"kind": "mpi", "program": "allreduce", "message_bytes": 4096, "iterations": 2000,
                    "compute_cycles": 5000, "compute_noise": 0.1},
       "sim": {"max_cycles": 2 * 10**9, "skip_idle": True, "checkpoint_every": 1_000_000}}
OCCUPANCY = {**SLIMFLY, "sim": {**SLIMFLY["sim"], "occupancy_interval": 7}}  # 256-row buffers: flushed mid-run


def comparable(ds: xr.Dataset) -> xr.Dataset:
    ds = ds.load()
    ds.attrs = {k: v for k, v in ds.attrs.items() if k not in HOST_TIME}
    return ds


def assert_same(resumed: xr.Dataset, reference: xr.Dataset) -> None:
    xr.testing.assert_identical(comparable(resumed), comparable(reference))


def killed_then_resumed(tmp_path: Path, cfg: dict, seed: int) -> tuple[int, xr.Dataset]:
    """`fastnet run` in a process killed with SIGKILL at a random moment after its first checkpoint, then resumed
    (fastnet.run(resume=...)): (the checkpoint's cycle, the resumed run's dataset)."""
    toml, ck, out = tmp_path / "run.toml", tmp_path / "run.ckpt", tmp_path / "out.zarr"
    toml.write_text(config.to_toml(cfg))
    proc = subprocess.Popen([sys.executable, "-m", "fastnet", "run", str(toml), "--checkpoint", str(ck),
                             "--out", str(out), "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not ck.exists():
            assert proc.poll() is None, f"the run ended before its first checkpoint: {proc.communicate()[1]}"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(random.Random(seed).uniform(0.0, 0.4))
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before the kill: make it longer"
    assert not out.exists()  # --out is never half-written
    cycle = read_header(ck)["cycle"]
    assert cycle > 0 and cycle % cfg["sim"]["checkpoint_every"] == 0  # on a multiple of the interval
    resumed = fastnet.run(toml, resume=ck, out=out)
    assert not ck.exists() and not list(tmp_path.glob(".run.ckpt.*"))  # finished: no checkpoint, no torn write
    return cycle, resumed


def reference(tmp_path: Path, cfg: dict) -> xr.Dataset:
    """The same config run without interruption (writing checkpoints too, so that its config is the same)."""
    return fastnet.run(cfg, checkpoint=tmp_path / "ref.ckpt", out=tmp_path / "ref.zarr")


@pytest.mark.parametrize("name, cfg", [("open-loop slimfly", SLIMFLY), ("links failing mid-run", FAULTS),
                                       ("mpi skipping idle cycles", MPI), ("streaming occupancy", OCCUPANCY)])
def test_killed_with_sigkill_and_resumed_is_identical_to_an_uninterrupted_run(tmp_path, name, cfg):
    cycle, resumed = killed_then_resumed(tmp_path, cfg, seed=len(name))
    ref = reference(tmp_path, cfg)
    assert 0 < cycle < int(ref.cycles)
    assert_same(resumed, ref)
    if cfg is FAULTS:
        assert ref.attrs["faults_events_applied"] == 3 and int(ref.packets_dropped) > 0
    if cfg is OCCUPANCY:
        assert resumed.port_occupancy.shape[0] == int(ref.cycles) // 7 and int(ref.port_occupancy.sum()) > 0


def test_checkpoints_change_no_result(tmp_path):
    cfg = {**SLIMFLY, "sim": {**SLIMFLY["sim"], "measure": 5000, "checkpoint_every": "auto"}}
    plain = fastnet.run(cfg)
    with_checkpoints = fastnet.run({**cfg, "sim": {**cfg["sim"], "checkpoint_every": 700}},
                                   checkpoint=tmp_path / "c.ckpt")
    for name, var in plain.data_vars.items():
        np.testing.assert_array_equal(with_checkpoints[name].values, var.values, err_msg=name)
    assert with_checkpoints.attrs["config"] == plain.attrs["config"]  # what reruns it, without a checkpoint file


def stopped_at(cfg: dict, ck: Path, cycle: int, signum: int = signal.SIGINT, **kw) -> RunStopped:
    """Run cfg in this process, sending it `signum` once it passes `cycle`: the RunStopped it raises."""
    def progress(t: int, end: int) -> None:
        if t >= cycle:
            os.kill(os.getpid(), signum)

    with pytest.raises(RunStopped) as e:
        fastnet.run(cfg, checkpoint=ck, progress=progress, **kw)
    return e.value


def test_sigint_and_sigterm_stop_at_a_chunk_boundary_with_a_checkpoint(tmp_path):
    cfg = {**SLIMFLY, "sim": {**SLIMFLY["sim"], "measure": 8000, "checkpoint_every": 0}}  # 0: only when stopped
    ck = tmp_path / "a.ckpt"
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    for signum in (signal.SIGINT, signal.SIGTERM):
        stop = stopped_at(cfg, ck, 3000, signum, out=tmp_path / "o.zarr")
        assert stop.signum == signum and stop.exit_code == 128 + signum and stop.path == ck
        assert read_header(ck)["cycle"] == stop.cycle >= 3000 and isinstance(stop, KeyboardInterrupt)
        assert not (tmp_path / "o.zarr").exists() and not list(tmp_path.glob(".o.zarr*"))
        ck.unlink()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before  # handlers put back
    stop = stopped_at(cfg, ck, 3000)
    assert_same(fastnet.run(cfg, resume=ck), fastnet.run(cfg, checkpoint=tmp_path / "b.ckpt"))


def test_a_run_stopped_between_fault_events_resumes_on_the_network_of_that_moment(tmp_path):
    """Two events applied, one to come: the resumed run's ports and distance table are those of the plan's step."""
    stop = stopped_at(FAULTS, tmp_path / "f.ckpt", 35000)
    assert 35000 <= stop.cycle < 45000
    assert_same(fastnet.run(FAULTS, resume=tmp_path / "f.ckpt"), reference(tmp_path, FAULTS))


def test_a_real_trace_replay_skipping_idle_cycles_stopped_mid_run_resumes_exactly(tmp_path):
    """shared/reference's SST/macro DUMPI trace (16 ranks, 12.5 million cycles, most of them skipped)."""
    traces = Path(os.environ.get("FASTNET_SHARED", ROOT / ".." / "shared")) / "reference" / "traces"
    if not (traces / "sstmacro_testbgp_dumpi_ascii").is_dir():
        pytest.skip("shared/reference/traces is not next to this checkout (set FASTNET_SHARED)")
    cfg = {**MPI, "workload": {"kind": "trace", "file": str(traces / "sstmacro_testbgp_dumpi_ascii")},
           "sim": {**MPI["sim"], "checkpoint_every": 0}}
    stop = stopped_at(cfg, tmp_path / "t.ckpt", 6_000_000)
    ref = reference(tmp_path, cfg)
    assert 6_000_000 <= stop.cycle < int(ref.cycles)
    assert_same(fastnet.run(cfg, resume=tmp_path / "t.ckpt"), ref)


def test_a_resumed_run_checkpoints_and_stops_again_and_resumes_again(tmp_path):
    """A restart of a restart (SST's #1275: checkpointing a restarted run crashed)."""
    ck = tmp_path / "r.ckpt"
    first = stopped_at(SLIMFLY, ck, 10000)
    second = stopped_at(SLIMFLY, ck, 40000, signal.SIGTERM, resume=ck)
    assert first.cycle < 40000 <= second.cycle == read_header(ck)["cycle"]
    assert_same(fastnet.run(resume=ck), reference(tmp_path, SLIMFLY))


def test_without_a_checkpoint_file_a_signal_still_stops_the_run_cleanly():
    cfg = {**SLIMFLY, "sim": {**SLIMFLY["sim"], "checkpoint_every": "auto"}}
    with pytest.raises(RunStopped, match="no checkpoint was written"):
        fastnet.run(cfg, progress=lambda t, end: t > 2000 and os.kill(os.getpid(), signal.SIGINT))


def test_a_second_signal_stops_at_once_and_says_so():
    cfg = {**SLIMFLY, "sim": {**SLIMFLY["sim"], "checkpoint_every": "auto"}}

    def twice(t, end):
        if t > 2000:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(RunStopped, match="stopped at once by a second SIGINT"):  # it said "before the loop"
        fastnet.run(cfg, progress=twice)


def test_a_signal_after_the_loop_waits_for_the_results(tmp_path, monkeypatch):
    """SIGINT while the results are made (the loop over) said "before the simulation's loop" and lost the run; it
    now stops the run once the results are written, and says so."""
    from fastnet import results

    made = results.to_dataset

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        return made(*args, **kwargs)

    monkeypatch.setattr(results, "to_dataset", interrupted)
    out = tmp_path / "r.zarr"
    with pytest.raises(RunStopped, match="after the simulation's loop had ended"):
        fastnet.run(SLIMFLY, out=out, checkpoint=tmp_path / "c.ckpt")
    monkeypatch.setattr(results, "to_dataset", made)
    assert_same(xr.open_zarr(out).load(), reference(tmp_path, SLIMFLY))
    assert not (tmp_path / "c.ckpt").exists()  # the run finished: its checkpoint is stale


def test_cli_sigterm_prints_the_command_that_resumes_and_it_does(tmp_path):
    toml, ck, out = tmp_path / "run.toml", tmp_path / "run.ckpt", tmp_path / "out.zarr"
    toml.write_text(config.to_toml(SLIMFLY))
    proc = subprocess.Popen([sys.executable, "-m", "fastnet", "run", str(toml), "--checkpoint", str(ck), "--out",
                             str(out), "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not ck.exists():  # the loop has begun
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    lines = stderr.strip().splitlines()
    assert lines[-1] == f"resume with: fastnet run --resume {ck} --out {out}", stderr
    assert "stopped by SIGTERM at cycle" in lines[-2] and not out.exists() and stdout == ""
    assert read_header(ck)["cycle"] == int(lines[-2].split("at cycle ")[1].split(";")[0].replace(",", ""))
    command = lines[-1].split(": ", 1)[1].split()  # fastnet run --resume ...
    r = subprocess.run([sys.executable, "-m", *command, "--quiet"], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert_same(xr.open_zarr(out), reference(tmp_path, SLIMFLY))


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    ck = tmp_path / "c.ckpt"
    stopped_at(SLIMFLY, ck, 2500)
    return ck


def test_resuming_with_another_config_is_refused_naming_the_key(checkpoint, tmp_path):
    other = {**SLIMFLY, "traffic": {"load": 0.4}}
    with pytest.raises(ConfigError) as e:
        fastnet.run(other, resume=checkpoint)
    assert e.value.field == "traffic.load" and "is 0.5 in the checkpoint" in str(e.value)
    toml = tmp_path / "run.toml"
    toml.write_text(config.to_toml(SLIMFLY))
    r = CliRunner().invoke(app, ["run", str(toml), "--set", "sim.seed=2", "--resume", str(checkpoint)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith("error: sim.seed: is 1 in the checkpoint"), r.output
    # keys that change no result may differ
    fastnet.run({**SLIMFLY, "sim": {**SLIMFLY["sim"], "checkpoint_every": 0, "memory_check": False}},
                resume=checkpoint)


def test_a_section_left_out_compares_as_its_defaults():
    """[mpi] or [workload] given with their defaults is the config the checkpoint holds without them; a value that
    differs is named by its own key, not by the first key of the section missing on the other side."""
    from fastnet.checkpoint import config_difference

    base = {"topology": {"kind": "torus", "dims": [4, 4]}, "workload": {"kind": "mpi", "program": "barrier"}}
    saved = config.resolve(base)
    assert saved.pop("mpi") == config.resolve({**base, "mpi": {}})["mpi"]  # as a checkpoint older than that holds it
    assert config_difference(saved, config.resolve({**base, "mpi": {"eager_bytes": 8192}})) is None
    assert config_difference(saved, config.resolve({**base, "mpi": {"eager_bytes": 100}})) == (
        "mpi.eager_bytes", 8192, 100)
    assert config_difference(config.resolve({}), config.resolve({"workload": {"kind": "open_loop"}})) is None


def test_a_checkpoint_of_another_version_is_refused(checkpoint):
    with checkpoint.open("rb") as f:
        header, body = pickle.load(f), pickle.load(f)
    header["fastnet_version"] = "0.0.1"
    with checkpoint.open("wb") as f:
        pickle.dump(header, f, protocol=5)
        pickle.dump(body, f, protocol=5)
    r = CliRunner().invoke(app, ["run", "--resume", str(checkpoint)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith(f"error: --resume: {checkpoint} was written by fastnet 0.0.1"), r.output
    header["fastnet_version"] = fastnet.__version__
    header["layout"]["columns"]["fastnet.kernels.state.N_PK"] += 1  # same version, another state layout
    with checkpoint.open("wb") as f:
        pickle.dump(header, f, protocol=5)
    with pytest.raises(ConfigError, match="N_PK differs"):
        fastnet.run(resume=checkpoint)


@pytest.mark.parametrize("damage", ["flipped", "cut"])
def test_a_damaged_checkpoint_body_is_one_line_and_left_alone(checkpoint, damage):
    """Bytes flipped in the body (it unpickled into a state that crashed the kernels: a segfault, or a failed
    conservation check at the end) or the file cut short: its trailer's CRC-32 refuses it before anything runs."""
    data = bytearray(checkpoint.read_bytes())
    if damage == "flipped":
        middle = len(data) // 2
        data[middle:middle + 64] = bytes(255 - b for b in data[middle:middle + 64])
    else:
        data = data[: len(data) - 100]
    checkpoint.write_bytes(bytes(data))
    r = CliRunner().invoke(app, ["run", "--resume", str(checkpoint)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith(f"error: --resume: {checkpoint} is damaged"), r.output
    assert checkpoint.read_bytes() == bytes(data)  # not overwritten by the refused run


def test_what_is_not_a_checkpoint_and_misuse_are_one_line_errors(tmp_path, checkpoint):
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a pickle")
    for args, start in [(["--resume", str(junk)], f"error: --resume: {junk} is not a fastnet checkpoint"),
                        (["--resume", str(tmp_path / "none")], "error: --resume: no such checkpoint"),
                        (["--set", "topology.kind=torus", "--checkpoint", str(checkpoint)],
                         f"error: --checkpoint: {checkpoint} exists: continue that run with --resume"),
                        (["--set", "topology.kind=torus", "--set", "sim.checkpoint_every=1000"],
                         "error: sim.checkpoint_every: writes checkpoints to a file"),
                        (["--set", "topology.kind=torus", "--set", 'sim.checkpoint_every="10 minutes"'],
                         "error: sim.checkpoint_every: must be \"auto\""),
                        (["--set", "topology.kind=torus", "--checkpoint", str(tmp_path / "no" / "c")],
                         "error: --checkpoint: directory")]:
        r = CliRunner().invoke(app, ["run", *args])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, (args, r.output)
        assert r.output.startswith(start), (args, r.output)


def test_a_sweep_point_killed_mid_run_goes_on_from_its_checkpoint(tmp_path):
    from fastnet.sweeps import store

    base = {**SLIMFLY, "sim": {**SLIMFLY["sim"], "measure": 100000, "checkpoint_every": 2000}}
    lines = []
    for section, table in base.items():
        lines.append(f"[base.{section}]")
        lines += [f"{k} = {config._toml_value(v, k)}" for k, v in table.items()]
    spec, out = tmp_path / "spec.toml", tmp_path / "s.zarr"
    spec.write_text("\n".join(lines + ["[sweep]", "\"traffic.load\" = [0.3, 0.5]", ""]))
    cmd = [sys.executable, "-m", "fastnet", "sweep", str(spec), "--out", str(out), "--workers", "2", "--quiet"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    checkpoints = tmp_path / "s.zarr.checkpoints"
    try:
        deadline = time.monotonic() + 300
        while not (checkpoints.is_dir() and any(checkpoints.glob("point-*.ckpt"))):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    saved = {p.name: read_header(p)["cycle"] for p in checkpoints.glob("point-*.ckpt")}
    assert saved and not store.markers(out)
    r = subprocess.run(cmd + ["--resume"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    markers = store.markers(out)
    resumed = {i: m["resumed_from_cycle"] for i, m in markers.items()}
    assert any(resumed[int(name[6:-5])] >= cycle > 0 for name, cycle in saved.items()), (saved, resumed)
    assert not checkpoints.exists()
    ds = xr.open_zarr(out)
    for i, load in enumerate((0.3, 0.5)):
        run = fastnet.run({**base, "traffic": {"load": load}, "sim": {**base["sim"], "checkpoint_every": "auto"}})
        point = ds.isel({"traffic.load": i}).load()
        for name, var in run.data_vars.items():
            np.testing.assert_array_equal(point[name].values, var.values, err_msg=f"{name} at point {i}")
