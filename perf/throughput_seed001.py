"""Seed 001 (Faizian et al., Throughput models of interconnection networks) Figs 7-10, reproduced.

jellyfish(216, 6, 1) and torus(3, 6, 6, 6, 1), k = 1, 2, 4, 8 shortest paths, random(1) and perm(1), 36 patterns
per point, MMF/MCF/HM/JM. Prints the markdown table of docs/throughput.md and checks the paper's findings;
writes every number to perf/throughput_seed001.json.

    python perf/throughput_seed001.py [--samples 36]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastnet.throughput.evaluate import evaluate  # noqa: E402

TOPOLOGIES = {
    "jellyfish(216, 6, 1)": {"kind": "jellyfish", "switches": 216, "radix": 6, "p": 1, "seed": 1},
    "torus(3, 6, 6, 6, 1)": {"kind": "torus", "dims": [6, 6, 6], "p": 1},
}
PATTERNS = ("random", "perm")
KS = (1, 2, 4, 8)
MODELS = ("mmf", "mcf", "hm", "jm")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=36)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("throughput_seed001.json"))
    args = ap.parse_args()
    results = []
    for tname, topo in TOPOLOGIES.items():
        for pattern in PATTERNS:
            for k in KS:
                t0 = time.perf_counter()
                ds = evaluate({"topology": topo, "throughput": {"pattern": pattern, "x": 1, "k": k,
                                                                "samples": args.samples, "seed": 1}})
                row = {"topology": tname, "pattern": f"{pattern}(1)", "k": k, "samples": ds.sizes["sample"],
                       "max_hops": int(ds.attrs["max_hops"]), "wall_seconds": time.perf_counter() - t0}
                for m in MODELS:
                    d = ds.sel(model=m)
                    row[m] = float(d.throughput_mean)
                    row[m + "_ci"] = float(d.throughput_ci)
                    row[m + "_seconds_per_sample"] = float(d.seconds.mean())
                results.append(row)
                print(f"{tname} {pattern}(1) k={k}: " + " ".join(f"{m}={row[m]:.4f}" for m in MODELS)
                      + f" ({row['wall_seconds']:.1f} s)", file=sys.stderr, flush=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(table(results))
    print()
    print(findings(results))


def table(results: list[dict]) -> str:
    lines = ["| topology | pattern | k | MMF | MCF | HM | JM | JM / MMF | HM / MMF |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        cells = [f"{r[m]:.3f} ± {r[m + '_ci']:.3f}" for m in MODELS]
        lines.append(f"| {r['topology']} | {r['pattern']} | {r['k']} | " + " | ".join(cells)
                     + f" | {r['jm'] / r['mmf']:.3f} | {r['hm'] / r['mmf']:.3f} |")
    return "\n".join(lines)


def findings(results: list[dict]) -> str:
    """The four findings the issue names, each checked on every topology and pattern they concern."""
    out = []
    for tname in TOPOLOGIES:
        for pattern in ("random(1)", "perm(1)"):
            rows = sorted((r for r in results if r["topology"] == tname and r["pattern"] == pattern),
                          key=lambda r: r["k"])
            mmf = [r["mmf"] for r in rows]
            mcf = [r["mcf"] for r in rows]
            rises = all(b >= a - 1e-9 for a, b in zip(mmf, mmf[1:])) and mmf[-1] > mmf[0]
            out.append(f"- {tname}, {pattern}: MMF rises with k: {'yes' if rises else 'NO'} "
                       f"({' -> '.join(f'{v:.3f}' for v in mmf)})")
            spread = (max(mcf) - min(mcf)) / max(mcf)
            if pattern == "random(1)":
                out.append(f"  MCF flat: {'yes' if spread < 0.05 else 'NO'} (spread {spread:.1%}: "
                           f"{' -> '.join(f'{v:.3f}' for v in mcf)})")
            else:
                out.append(f"  MCF: {' -> '.join(f'{v:.3f}' for v in mcf)} (k = 1: {mcf[0] / mmf[0]:.2f} x MMF, "
                           f"k = 8: {mcf[-1] / mmf[-1]:.2f} x MMF)")
            hm8 = rows[-1]["hm"] / rows[-1]["mmf"]
            hm1 = rows[0]["hm"] / rows[0]["mmf"]
            out.append(f"  HM / MMF: {hm1:.3f} at k = 1, {hm8:.3f} at k = 8 "
                       f"(underestimates at k = 8: {'yes' if hm8 < hm1 and hm8 < 0.95 else 'NO'})")
            jm = [r["jm"] / r["mmf"] for r in rows]
            out.append(f"  JM / MMF: {', '.join(f'{v:.3f}' for v in jm)} (k = 1, 2, 4, 8)")
    return "\n".join(out)


if __name__ == "__main__":
    main()
