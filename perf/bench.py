"""Engine benchmarks: simulated cycles/s, phit-hops/s, peak memory, cold and warm start, as ratios to BookSim2.

    python perf/bench.py            # run every case, print the table, rewrite perf/README.md's engine table
    python perf/bench.py --check    # also compare with perf/baseline.json (fails if a ratio fell below half)

Each case runs in its own process so its peak RSS is its own; inside it, a tiny run first loads the cached
kernels so the timed run is warm. BookSim2 figures come from ../shared/reference/booksim (same machine kind).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from children import in_child

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REF = ROOT.parent / "shared" / "reference" / "booksim"


def booksim_torus_wall(traffic: str, load: float) -> float | None:
    path = REF / "torus8x8_dor.csv"
    if not path.exists():
        return None
    with path.open() as f:
        for row in csv.DictReader(f):
            if row["traffic"] == traffic and abs(float(row["offered"]) - load) < 1e-9:
                return float(row["booksim_wall_s"])
    return None


CASES = {
    "dragonfly_k4_ur03": {
        "what": "1056-node dragonfly (BookSim2 dragonflynew k=4), uniform 0.3, 10-phit packets, 40,000 cycles",
        "config": None,  # the embedded default run
        "booksim": {"wall_s": 413.0, "cycles": 40000, "source": "reference/booksim/README.md"},
    },
    "slimfly_q13_ur05": {
        "what": "3042-node Slim Fly q=13 p=9 (seed 004), uniform 0.5, min, 8-phit packets, 40,000 cycles",
        "config": {"topology": {"kind": "slimfly", "q": 13, "p": 9}, "traffic": {"load": 0.5, "packet_phits": 8},
                   "sim": {"warmup": 30000, "measure": 10000, "drain": 20000}},
        "booksim": None,
    },
    "torus8x8_ur02": {
        "what": "64-node 8x8 torus, uniform 0.2, 1-phit packets, 8-phit buffers, latency 2, 40,000 cycles",
        "config": {"topology": {"kind": "torus", "dims": [8, 8]}, "links": {"latency": 2},
                   "router": {"buffer_phits": 8, "delay": 4, "speedup": 1.0, "credit_delay": 0},
                   "traffic": {"load": 0.2, "packet_phits": 1},
                   "sim": {"warmup": 30000, "measure": 10000, "drain": 20000}},
        "booksim": {"wall_s": booksim_torus_wall("uniform", 0.20), "cycles": None,
                    "source": "reference/booksim/torus8x8_dor.csv (a latency run: cycles not recorded)"},
    },
}


def run_case(name: str) -> dict:
    """Body of one case's child process."""
    import fastnet
    from fastnet.memory import peak_rss

    fastnet.run({"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"warmup": 10, "measure": 10, "drain": 0}})
    t0 = time.perf_counter()
    ds = fastnet.run(CASES[name]["config"])
    wall = time.perf_counter() - t0
    cycles = int(ds.cycles)
    return {
        "wall_s": wall,
        "cycles": cycles,
        "cycles_per_s": cycles / wall,
        "phit_hops_per_s": int(ds.phit_hops) / wall,
        "router_cycles_per_s": cycles * ds.attrs["routers"] / wall,
        "peak_rss_mb": peak_rss() / 2**20,
        "accepted": float(ds.accepted_phits_per_node_cycle),
        "latency": float(ds.packet_latency_mean),
    }


ROUTING_CASE = {"topology": {"kind": "dragonfly", "p": 4, "a": 8, "h": 4}, "router": {"buffer_phits": 64},
                "traffic": {"load": 0.3, "packet_phits": 8}, "sim": {"warmup": 2000, "measure": 18000, "drain": 0}}


# the UGAL settings of docs/validation/dragonfly_routing.py (Kim et al.'s UGAL-L_VC_H, minimal packets' own VCs)
VALIDATION_UGAL = {"ugal_vcs": "separate", "ugal_queue": "vc_h", "threshold": 50.0}
ROUTINGS = {"min": {}, "ugal_l": {}, "ugal_g": {}, "val": {},
            "ugal_l, validation settings": VALIDATION_UGAL, "ugal_g, validation settings": VALIDATION_UGAL}


def routing_costs() -> dict:
    """CPU time per simulated cycle of each routing on the same dragonfly load, as ratios to MIN, measured in one
    process (interleaved, best of three, so a busy machine affects every routing alike)."""
    import fastnet

    def config(name: str) -> dict:
        return {**ROUTING_CASE, "routing": {"algorithm": name.split(",")[0], **ROUTINGS[name]}}

    best = {n: float("inf") for n in ROUTINGS}
    hops = {}
    for n in ROUTINGS:  # load the kernels first
        fastnet.run({**config(n), "sim": {"warmup": 10, "measure": 10, "drain": 0}})
    for _ in range(3):
        for n in ROUTINGS:
            t0 = time.process_time()
            ds = fastnet.run(config(n))
            best[n] = min(best[n], (time.process_time() - t0) / int(ds.cycles))
            hops[n] = float(ds.hops_mean)
    return {n: {"us_per_cycle": best[n] * 1e6, "ratio_to_min": best[n] / best["min"], "hops": hops[n]}
            for n in ROUTINGS}


def start_times() -> dict:
    """`fastnet run` (the embedded 1056-node dragonfly) as a newcomer's first and second command: cold (an empty
    numba cache: its kernels compile) and warm (cache filled), each with the process's peak RSS."""
    cmd = [sys.executable, "-c", "import sys\nfrom fastnet.cli import main\nfrom fastnet.memory import peak_rss\n"
           "sys.argv = ['fastnet', 'run', '--json']\ntry:\n    main()\nfinally:\n    print(peak_rss(), file=sys.stderr)"]
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            out[f"run_{label}_s"] = time.perf_counter() - t0
            out[f"run_{label}_rss_mb"] = int(r.stderr.strip().splitlines()[-1]) / 2**20
            out["run_cycles"] = json.loads(r.stdout.strip().splitlines()[-1])["cycles"]
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fastnet", "--help"], capture_output=True, check=True)
    out["help_s"] = time.perf_counter() - t0
    return out


def table(results: dict) -> str:
    lines = [
        "| case | cycles | wall (s) | cycles/s | phit-hops/s | peak RSS (MB) | BookSim2 wall (s) | speed-up |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results["cases"].items():
        ref = CASES[name]["booksim"]
        ref_wall = ref and ref["wall_s"]
        speed = f"{ref_wall / r['wall_s']:.0f}x" if ref_wall and ref.get("cycles") else "n/a"
        lines.append(f"| {name} | {r['cycles']} | {r['wall_s']:.2f} | {r['cycles_per_s']:,.0f} | "
                     f"{r['phit_hops_per_s']:,.0f} | {r['peak_rss_mb']:.0f} | {ref_wall if ref_wall else 'n/a'} | "
                     f"{speed} |")
    lines += ["", "Routing cost on the 1056-node dragonfly at uniform 0.3, 8-phit packets (CPU time per simulated "
                  "cycle, best of three, one process):", "",
              "| routing | us/cycle | ratio to min | hops |", "|---|---:|---:|---:|"]
    for name, r in results["routing"].items():
        lines.append(f"| {name} | {r['us_per_cycle']:.1f} | {r['ratio_to_min']:.2f} | {r['hops']:.2f} |")
    s = results["start"]
    lines += ["", f"`fastnet run` (the embedded dragonfly, {s['run_cycles']:,} cycles): cold start (empty numba cache) "
                  f"{s['run_cold_s']:.1f} s wall, peak RSS {s['run_cold_rss_mb']:.0f} MB; warm start "
                  f"{s['run_warm_s']:.2f} s, {s['run_warm_rss_mb']:.0f} MB; `fastnet --help` {s['help_s']:.2f} s."]
    return "\n".join(lines)


def write_readme(results: dict) -> None:
    readme = HERE / "README.md"
    text = readme.read_text() if readme.exists() else "# Performance\n"
    start, end = "<!-- bench:start -->", "<!-- bench:end -->"
    block = (f"{start}\nMeasured {results['date']} on {results['machine']} by `python perf/bench.py`.\n\n"
             f"{table(results)}\n{end}")
    if start in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n## Engine\n\n" + block + "\n"
    readme.write_text(text)


def check(results: dict) -> int:
    """Regression check: each case's cycles/s must be at least half the baseline's (generous: machines vary)."""
    base = json.loads((HERE / "baseline.json").read_text())
    bad = 0
    for name, r in results["cases"].items():
        ratio = r["cycles_per_s"] / base["cases"][name]["cycles_per_s"]
        status = "ok" if ratio >= 0.5 else "REGRESSION"
        bad += status != "ok"
        print(f"{name}: {ratio:.2f}x of baseline cycles/s  {status}")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--save-baseline", action="store_true")
    args = ap.parse_args()
    if args.child == "routing":
        print(json.dumps(routing_costs()))
        return 0
    if args.child:
        print(json.dumps(run_case(args.child)))
        return 0
    results = {
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "cases": {name: in_child(__file__, name) for name in CASES},
        "routing": in_child(__file__, "routing"),
        "start": start_times(),
    }
    print(table(results))
    (HERE / "results.json").write_text(json.dumps(results, indent=1))
    write_readme(results)
    if args.save_baseline:
        (HERE / "baseline.json").write_text(json.dumps(results, indent=1))
    return check(results) if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
