"""Speed of the throughput models (issue 6 targets), printed as the rows of perf/README.md's table.

Targets: JM on jellyfish(1000, 24, 8) random(1), k = 8, under 10 s; MMF on jellyfish(216, 6, 1) random(1), k = 8,
under 60 s. Each is timed three ways: the model alone (median over patterns, JIT warm), the whole in-process
evaluation (build network, draw pattern, k shortest paths, model), and the CLI command in a fresh process
(imports and numba cache loading included). `--big` adds HM and JM on a 10 000-switch jellyfish.

    python perf/throughput_bench.py [--big]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from fastnet.topology import build_network  # noqa: E402
from fastnet.throughput.evaluate import MODELS, evaluate, hop_limit, resolve, sample_instance  # noqa: E402

JM_TOPO = {"kind": "jellyfish", "switches": 1000, "radix": 24, "p": 8, "seed": 1}
MMF_TOPO = {"kind": "jellyfish", "switches": 216, "radix": 6, "p": 1, "seed": 1}
BIG_TOPO = {"kind": "jellyfish", "switches": 10000, "radix": 24, "p": 8, "seed": 1}


def model_alone(topo: dict, model: str, samples: int) -> tuple[float, float, int, int]:
    """(median, max) seconds of the model on `samples` random(1), k = 8 instances; flows, paths."""
    cfg = resolve({"topology": topo, "throughput": {"pattern": "random", "k": 8}})
    net = build_network(cfg)
    H = hop_limit(net, cfg["throughput"])
    times = []
    for i in range(samples + 1):
        inst = sample_instance(net, cfg, i, H)
        t0 = time.perf_counter()
        MODELS[model](inst)
        if i:  # the first one may compile
            times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(np.max(times)), inst.n_flows, inst.n_paths


def in_process(topo: dict, model: str) -> float:
    evaluate({"topology": topo, "throughput": {"pattern": "random", "k": 8, "samples": 1, "models": [model]}})
    t0 = time.perf_counter()
    evaluate({"topology": topo, "throughput": {"pattern": "random", "k": 8, "samples": 1, "models": [model]}})
    return time.perf_counter() - t0


def cli(topo: dict, model: str) -> float:
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "t.toml"
        cfg.write_text("[topology]\n" + "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in topo.items()))
        cmd = [sys.executable, "-m", "fastnet", "throughput", str(cfg), "--pattern", "random", "--x", "1", "--k", "8",
               "--samples", "1", "--models", model, "--json"]
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also HM/JM on jellyfish(10000, 24, 8)")
    args = ap.parse_args()
    import numba

    print(f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, numba threads {numba.get_num_threads()}")
    print("| case | flows | paths | model alone (median / max) | in-process total | CLI, fresh process | target |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rows = [("JM, jellyfish(1000, 24, 8), random(1), k = 8", JM_TOPO, "jm", 10, "10 s"),
            ("MMF, jellyfish(216, 6, 1), random(1), k = 8", MMF_TOPO, "mmf", 36, "60 s")]
    if args.big:
        rows += [("HM, jellyfish(10000, 24, 8), random(1), k = 8", BIG_TOPO, "hm", 3, "—"),
                 ("JM, jellyfish(10000, 24, 8), random(1), k = 8", BIG_TOPO, "jm", 3, "—")]
    for name, topo, model, samples, target in rows:
        med, mx, flows, paths = model_alone(topo, model, samples)
        total = in_process(topo, model)
        fresh = cli(topo, model)
        print(f"| {name} | {flows} | {paths} | {med:.3f} / {mx:.3f} s ({samples} patterns) | {total:.2f} s | "
              f"{fresh:.2f} s | {target} |", flush=True)


if __name__ == "__main__":
    main()
