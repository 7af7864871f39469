"""The judged check of docs/long_runs.md on larger runs than the tests': each case is run by `fastnet run` in a
process killed with SIGKILL at a random moment after its first checkpoint, resumed with `fastnet run --resume`,
and compared with an uninterrupted run (every variable, coordinate and attribute but the host's clock).

    python perf/long_runs_check.py [--cases sf37,occupancy37,otf2] [--seed 1]

Prints one JSON line per case: the cycle of the checkpoint resumed from, the run's cycles, identical or not.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "reference" / "traces"
SEED004 = {"router": {"vcs": 2, "buffer_phits": 1600, "delay": 39, "speedup": 1.0}, "links": {"latency": 20},
           "routing": {"algorithm": "min"}, "traffic": {"load": 0.071, "packet_phits": 8}}
CASES = {
    "sf37": {"topology": {"kind": "slimfly", "q": 37}, **SEED004,
             "sim": {"warmup": 1000, "measure": 4000, "drain": 1000, "checkpoint_every": 1000}},
    "occupancy37": {"topology": {"kind": "slimfly", "q": 37}, **SEED004,
                    "sim": {"warmup": 1000, "measure": 4000, "drain": 1000, "checkpoint_every": 1000,
                            "occupancy_interval": 50}},
    "otf2": {"topology": {"kind": "torus", "dims": [4, 4]},
             "workload": {"kind": "trace", "file": str(SHARED / "sst_ember_otf2" / "traces.otf2")},
             "sim": {"max_cycles": 2 * 10**9, "skip_idle": True, "checkpoint_every": 10_000_000}},
}
HOST_TIME = ("wall_seconds", "faults_route_recompute_seconds", "mpi_events_per_second")


def fastnet(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fastnet", "run", *args, "--quiet"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw)


def check(name: str, cfg: dict, seed: int, tmp: Path) -> dict:
    import xarray as xr

    from fastnet import config
    from fastnet.checkpoint import read_header

    toml, ck, out, ref = tmp / f"{name}.toml", tmp / f"{name}.ckpt", tmp / f"{name}.zarr", tmp / f"{name}-ref.zarr"
    toml.write_text(config.to_toml(cfg))
    t0 = time.perf_counter()
    p = fastnet(str(toml), "--checkpoint", str(ck), "--out", str(out))
    while not ck.exists():
        if p.poll() is not None:
            raise SystemExit(f"{name}: the run ended before its first checkpoint: {p.communicate()[1]}")
        time.sleep(0.01)
    time.sleep(random.Random(seed).uniform(0.0, 2.0))
    p.send_signal(signal.SIGKILL)
    p.wait()
    killed = p.returncode == -signal.SIGKILL
    cycle = read_header(ck)["cycle"]
    r = fastnet("--resume", str(ck), "--out", str(out))
    assert r.wait() == 0, r.communicate()[1]
    resumed_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    f = fastnet(str(toml), "--checkpoint", str(tmp / f"{name}-ref.ckpt"), "--out", str(ref))
    assert f.wait() == 0, f.communicate()[1]
    reference_s = time.perf_counter() - t0
    a, b = xr.open_zarr(out).load(), xr.open_zarr(ref).load()
    for ds in (a, b):
        ds.attrs = {k: v for k, v in ds.attrs.items() if k not in HOST_TIME}
    return {"case": name, "killed": killed, "checkpoint_cycle": cycle, "cycles": int(b.cycles),
            "identical": a.identical(b), "killed_and_resumed_seconds": round(resumed_s, 1),
            "uninterrupted_seconds": round(reference_s, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fastnet-long-runs-") as tmp:
        for name in a.cases.split(","):
            print(json.dumps(check(name, CASES[name], a.seed, Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
