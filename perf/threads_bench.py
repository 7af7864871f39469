"""What a second thread gives the cycle loop (sim.threads, kernels/crew.py), on perf/scale_bench.py's Slim Fly and
dragonfly cases (seed 004's router, uniform load):

    python perf/threads_bench.py [--cases sf13,sf37,...] [--no-readme]

Each case runs in its own process: `prepare`, cycles 0..WARM, then ROUNDS spans of cycles (FASTNET_THREADS_ROUNDS,
default 8), the spans taking turns between one thread and two on the same simulation (a run's state is the same for
any thread count, so both counts advance one run, and the machine's swings fall on both alike). Columns: wall per
cycle with 1 and with 2 threads (median of the spans), and their ratio. Rewrites the `crew` section of
perf/README.md.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))
sys.path.insert(0, str(ROOT / "perf"))

from children import case_args, in_child  # noqa: E402
from scale_bench import advance, case_config, network_label  # noqa: E402

WARM = 600
CASES = {"sf13": 2000, "sf37": 200, "sf73": 150, "sf163": 100,  # cycles a span
         "df4": 4000, "df8": 1000, "df16": 50, "df22": 25}
ROUNDS = int(os.environ.get("FASTNET_THREADS_ROUNDS", "8"))


def child(name: str) -> dict:
    from fastnet.kernels.crew import new_crew
    from fastnet.sim import compile_kernels, prepare

    s = prepare(case_config(name, 2))
    run = compile_kernels(s)  # the loop with the crew's code: one thread walks every round alone in it
    crews = {1: new_crew(1, len(s.state.act), s.net.radix), 2: s.crew}
    t = advance(run, s, 0, WARM)
    spans: dict[int, list[float]] = {1: [], 2: []}
    for k in range(ROUNDS):
        threads = 1 + k % 2
        s.crew = crews[threads]
        w = time.perf_counter()
        t = advance(run, s, t, t + CASES[name])
        spans[threads].append(1000 * (time.perf_counter() - w) / CASES[name])
    return {"p": s.net.n_nodes // s.net.n_routers, "nodes": s.net.n_nodes, "ports": s.net.n_ports,
            "one": spans[1], "two": spans[2]}


def main() -> None:
    from markers import replace_section

    args = case_args(CASES, child)
    if args is None:
        return
    rows = ["| network | nodes | ports | 1 thread (ms a cycle) | 2 threads (ms a cycle) | 1 / 2 |",
            "|---|---:|---:|---:|---:|---:|"]
    for name in args.cases.split(","):
        r = in_child(__file__, name)
        one, two = statistics.median(r["one"]), statistics.median(r["two"])
        rows.append(f"| {network_label(name, r['p'])} | {r['nodes']:,} | {r['ports']:,} | {one:.3g} "
                    f"({min(r['one']):.3g}-{max(r['one']):.3g}) | {two:.3g} ({min(r['two']):.3g}-{max(r['two']):.3g}) "
                    f"| {one / two:.2f}x |")
        print(rows[-1], flush=True)
    body = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()} by `python perf/threads_bench.py` ({ROUNDS} spans a case after {WARM} "
            "cycles, taking turns; median and range).\n\n" + "\n".join(rows))
    if not args.no_readme:
        replace_section(ROOT / "perf" / "README.md", "crew", body)


if __name__ == "__main__":
    main()
