"""Speed of the closed-loop workloads (issue 4's two targets), each case in its own process.

    python perf/workload_bench.py [--repeat 3] [--cases sr10,graph500] [--no-readme]

- `sr10_torus8x4`: seed 002's SR10 (10,000 messages of 1 KB in waves of 10) on the 8x4 torus of
  presets.seed002 (4-byte phits, 16-phit packets). Target: under 0.5 s warm (INSEE: 48 s on a Pentium IV).
- `graph500_s26_table4`: one BFS of seed 000's model (paper variant) at scale 26, edgefactor 16, c_s = 256 on
  Table IV's 72-node dragonfly (presets.table4) at t_q = 1.5 ns and 40 Gb/s (the Altamira point of Fig 8), root
  degree drawn with seed 1. Target: under 10 s warm and under 200 MB.

"Warm" means the numba cache is filled and a small run of the same kernels has executed in the process before
the timed runs; a timed run is prepare() + simulate() (config -> finished workload, conservation audit included,
no xarray dataset). Peak RSS is the process's maximum resident set (Python, numba and llvmlite included; the
xarray dataset of fastnet.run adds about 55 MB and is not built here). CPU seconds are reported next to wall
seconds because the project machine is shared: under contention wall time stretches, CPU time does not.
Writes perf/workload_results.json and the `## Workloads` section of perf/README.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "sr10_torus8x4": {
        "build": "seed002('torus', {'kind': 'sr', 'message_bytes': 1024, 'messages': 10000, 'wave': 10})",
        "warm": "seed002('torus', {'kind': 'sr', 'message_bytes': 1024, 'messages': 100, 'wave': 10})",
        "target_s": 0.5, "target_mb": None,
    },
    "graph500_s26_table4": {
        "build": "table4(26, 1.5, 40.0, seed=1)",
        "warm": "table4(12, 1.5, 40.0, seed=1)",
        "target_s": 10.0, "target_mb": 200,
    },
}

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from fastnet.memory import peak_rss
from fastnet.sim import prepare, simulate
from fastnet.workloads.presets import seed002, table4
from fastnet.workloads.state import WC_END, WC_POSTED
simulate(prepare({warm}))
out = []
for _ in range({repeat}):
    w, c = time.perf_counter(), time.process_time()
    s = simulate(prepare({build}))
    out.append(dict(wall=time.perf_counter() - w, cpu=time.process_time() - c,
                    cycles=int(s.workload.wc[WC_END]) + 1, messages=int(s.workload.wc[WC_POSTED])))
print(json.dumps(dict(runs=out, peak_rss_mb=peak_rss() / 2**20)))
"""


def run_case(name: str, repeat: int) -> dict:
    c = CASES[name]
    code = CHILD.format(root=str(ROOT), warm=c["warm"], build=c["build"], repeat=repeat)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"{name} failed:\n{p.stderr}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    runs = r["runs"]
    best = min(runs, key=lambda x: x["wall"])
    return {"case": name, "cycles": best["cycles"], "messages": best["messages"],
            "wall_s": best["wall"], "cpu_s": min(x["cpu"] for x in runs),
            "wall_all": [round(x["wall"], 3) for x in runs], "peak_rss_mb": r["peak_rss_mb"],
            "target_s": c["target_s"], "target_mb": c["target_mb"]}


def table(results: list[dict]) -> str:
    lines = ["| case | cycles | messages | wall (s, best) | CPU (s, best) | cycles/s (CPU) | peak RSS (MB) | "
             "target | met |", "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        target = f"< {r['target_s']:g} s" + (f", < {r['target_mb']} MB" if r["target_mb"] else "")
        met = r["cpu_s"] < r["target_s"] and (r["target_mb"] is None or r["peak_rss_mb"] < r["target_mb"])
        wall_met = r["wall_s"] < r["target_s"]
        verdict = "yes" if met and wall_met else ("CPU yes, wall no" if met else "no")
        lines.append(f"| {r['case']} | {r['cycles']:,} | {r['messages']:,} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | "
                     f"{r['cycles'] / r['cpu_s']:,.0f} | {r['peak_rss_mb']:.0f} | {target} | {verdict} |")
    return "\n".join(lines)


def write_readme(body: str) -> None:
    readme = ROOT / "perf" / "README.md"
    text = readme.read_text() if readme.exists() else "# Performance\n"
    start, end = "<!-- workloads:start -->", "<!-- workloads:end -->"
    if start not in text:
        text = text.rstrip() + "\n\n## Workloads\n\n" + start + "\n" + end + "\n"
    i, j = text.index(start) + len(start), text.index(end)
    readme.write_text(text[:i] + "\n" + body + "\n" + text[j:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--no-readme", action="store_true")
    a = ap.parse_args()
    results = [run_case(name, a.repeat if name.startswith("sr10") else 1) for name in a.cases.split(",")]
    (ROOT / "perf" / "workload_results.json").write_text(json.dumps(results, indent=1) + "\n")
    body = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, 2 cores (shared), Python "
            f"{platform.python_version()} by `python perf/workload_bench.py` (cases and what \"warm\" means: its "
            f"docstring).\n\n" + table(results))
    print(body)
    if not a.no_readme:
        write_readme(body)


if __name__ == "__main__":
    main()
