"""Port occupancy over time on seed 004's Slim Fly: the figures and the table of docs/occupancy.md.

    python docs/gen_occupancy.py [--cycles 6000] [--interval 20]

Seed 004's 3,042-node Slim Fly (q = 13, p = 9: 338 routers, 19 network ports each) with its router as in
examples/slimfly_validation.toml: 2 VCs of 1,600 phits, 39-cycle router delay, 20-cycle links, 8-phit packets,
speedup 1, MIN routing. Worst-case traffic (seed 004 Fig 3) at 50 % of seed 004's load scale (0.355
phits/node/cycle), and uniform traffic at 90 % and 100 % (0.639, 0.71), the loads of seed 004's Fig 8, each run
from an empty network for --cycles cycles with port occupancy sampled every --interval cycles. Writes
docs/img/slimfly_occupancy_*.png and the table between the `occupancy` markers of docs/occupancy.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402 (docs/markers.py, next to this script)

SEED004 = {"topology": {"kind": "slimfly", "q": 13, "p": 9}, "links": {"latency": 20},
           "router": {"vcs": 2, "buffer_phits": 1600, "delay": 39, "speedup": 1.0},
           "routing": {"algorithm": "min"}}
CASES = {  # name: (pattern, load as phits/node/cycle, percent of seed 004's 0.71 scale, draw its figure)
    "wc50": ("slimfly_worst", 0.355, 50, True),
    "ur90": ("uniform", 0.639, 90, False),  # a table row only: its figure looks like ur100's, lighter
    "ur100": ("uniform", 0.71, 100, True),
}
CLASSES = ("injection", "local", "global")
VC_PHITS = 1600


def run_case(name: str, cycles: int, interval: int, store: Path) -> dict:
    import fastnet
    import xarray as xr
    from fastnet.plot import occupancy_figure

    pattern, load, percent, draw = CASES[name]
    cfg = {**SEED004, "traffic": {"pattern": pattern, "load": load, "packet_phits": 8},
           "sim": {"warmup": 0, "measure": cycles, "drain": 0, "occupancy_interval": interval}}
    t0 = time.perf_counter()
    fastnet.run(cfg, out=store)
    wall = time.perf_counter() - t0
    ds = xr.open_zarr(store, chunks=None)
    image = ROOT / "docs" / "img" / f"slimfly_occupancy_{name}.png"
    if draw:
        occupancy_figure(ds, network_only=True, reduce="max").savefig(image, dpi=110, bbox_inches="tight")
    occ = ds["port_occupancy"].values.astype(float)
    cls = ds["port_class"].values
    times = ds["occupancy_time"].values
    last = occ[-max(1, occ.shape[0] // 10):].mean(axis=0)  # the last tenth of the run
    network = occ[:, cls != 0]
    full = network >= 0.9 * VC_PHITS
    row = {"name": name, "pattern": pattern, "load": load, "percent": percent, "wall": wall,
           "cycles": int(ds.cycles), "samples": occ.shape[0], "image": image.name,
           "accepted": float(ds.accepted_phits_per_node_cycle) / 0.71 * 100,
           "full": int(full[-1].sum()), "full_routers": len(np.unique(ds["port_router"].values[cls != 0][full[-1]])),
           "first_full": int(times[np.argmax(full.any(axis=1))]) if full.any() else None,
           "empty": float((last[cls != 0] < 2 * 8).mean() * 100)}
    for c, cname in enumerate(CLASSES):
        row[f"mean_{cname}"] = float(last[cls == c].mean())
    return row


def table(rows: list[dict], cycles: int, interval: int) -> str:
    lines = [f"_Generated {dt.date.today()} by `python docs/gen_occupancy.py --cycles {cycles} --interval "
             f"{interval}`._", "",
             "Occupancy in phits (a port holds 2 VCs x 1,600), averaged over the last tenth of the run; a full VC "
             "is >= 90 % of 1,600 phits; throughput in percent of seed 004's 0.71 phits/node/cycle, counted over "
             "the whole run from an empty network.", "",
             "| traffic | offered % | accepted % | injection ports | local ports | global ports | network ports "
             "with a full VC (routers) | first full at cycle | network ports under 2 packets | wall (s) | figure |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        name = r["image"]
        lines.append(f"| {'worst case' if r['pattern'] == 'slimfly_worst' else 'uniform'}, MIN | {r['percent']} | "
                     f"{r['accepted']:.1f} | {r['mean_injection']:.0f} | {r['mean_local']:.0f} | "
                     f"{r['mean_global']:.0f} | {r['full']} ({r['full_routers']}) | {r['first_full'] or '-'} | "
                     f"{r['empty']:.0f} % | {r['wall']:.1f} | "
                     f"{f'[{name}](img/{name})' if CASES[r['name']][3] else '-'} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=6000)
    ap.add_argument("--interval", type=int, default=20)
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases:
            rows.append(run_case(name, args.cycles, args.interval, Path(tmp) / f"{name}.zarr"))
            print(rows[-1], flush=True)
    text = table(rows, args.cycles, args.interval)
    print(text)
    replace_section(ROOT / "docs" / "occupancy.md", "occupancy", text)


if __name__ == "__main__":
    main()
