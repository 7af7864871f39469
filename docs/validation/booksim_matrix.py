"""The validation matrix: every topology kind BookSim2 has, the same config file run by both simulators.

Each row is a BookSim2 config in docs/validation/matrix/ (the anynet rows name a network file that fastnet wrote:
`fastnet info <kind>.toml --export <kind>.anynet`). fastnet runs the file as it is (`fastnet run x.cfg`); the
pattern and the load go to both simulators as BookSim2 command-line overrides. For each row and pattern:

- zero-load latency: packet latency at load 0.02 flits/node/cycle;
- saturation: a load is *carried* when the run is stable (BookSim2: it printed its overall statistics, i.e. did
  not judge the run unstable; fastnet: packet latency under BookSim2's latency_thres, 500 cycles) and accepted
  >= 95 % of offered. Bisection over [0.02, 1] until the bracket is under 2.5 % of its lower end gives the last
  carried load (its accepted throughput is the saturation throughput) and the first load not carried;
- latency at half of BookSim2's saturation load, both simulators.

    python docs/validation/booksim_matrix.py --booksim /path/to/booksim2/src/booksim   # measure BookSim2 too
    python docs/validation/booksim_matrix.py                                          # fastnet against the CSV

The first form rewrites booksim_matrix_ref.csv (BookSim2's points and its commit); both rewrite
booksim_matrix.csv (fastnet's points) and the matrix in docs/validation.md. tests/test_validation_matrix.py
(slow) checks every row against the CSV.
"""

from __future__ import annotations

import argparse
import csv
import math
import multiprocessing
import re
import subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, NamedTuple

from common import HERE, markdown_table, write_section

import fastnet
from fastnet.booksim import read_file
from fastnet.errors import DeadlockError

MATRIX = HERE / "matrix"
REF_CSV = HERE / "booksim_matrix_ref.csv"
OURS_CSV = HERE / "booksim_matrix.csv"

# (row, BookSim2 config in matrix/, adversarial pattern or patterns); every row also runs uniform
ROWS = [
    ("torus 8x8, dim_order", "torus_8x8.cfg", "bitcomp"),
    ("torus 4x4x4, dim_order", "torus_4x4x4.cfg", "bitcomp"),
    ("torus 8x8, speedup 2, 4-flit packets", "torus_8x8_speedup2.cfg", "bitcomp"),
    ("mesh 8x8, dim_order", "mesh_8x8.cfg", "transpose"),
    ("fat tree 4-ary 3-tree, nca", "fattree_k4n3.cfg", "bitcomp"),
    ("fat tree, separable input-first allocators", "fattree_k4n3_input_first.cfg", "bitcomp"),
    ("fat tree, 4-flit packets (switch allocated flit by flit)", "fattree_k4n3_4flit.cfg", "bitcomp"),
    ("dragonfly k=2 (72 nodes), min", "dragonfly_k2.cfg", "bad_dragon"),
    ("dragonfly k=2 (72 nodes), ugal", "dragonfly_k2_ugal.cfg", "bad_dragon"),
    ("Slim Fly q=4 (128 nodes, anynet), min", "slimfly_q4.cfg", "bitcomp"),
    ("Slim Fly, 4-flit packets (switch allocated flit by flit)", "slimfly_q4_4flit.cfg", "bitcomp"),
    ("jellyfish 32x10 (128 nodes, anynet), min", "jellyfish_32.cfg", "bitcomp"),
    ("flattened butterfly 4x4, c=4 (hyperx), ran_min", "flatfly_k4n2c4.cfg", ("bitcomp", "tornado", "badperm_yarc")),
    ("flattened butterfly 4x4, c=4 (hyperx), ugal", "flatfly_k4n2c4_ugal.cfg", ("bitcomp", "tornado", "badperm_yarc")),
    ("flattened butterfly 4x4, c=4 (hyperx), valiant", "flatfly_k4n2c4_valiant.cfg", ("tornado", "badperm_yarc")),
    ("mesh 8x8, BookSim2's mesh88_lat (20-flit packets in 8-flit VCs, wait_for_tail_credit, input_speedup 2)",
     "mesh88_lat.cfg", "transpose"),
    ("mesh 8x8, xy_yx", "mesh_8x8_xy_yx.cfg", "transpose"),
    ("mesh 8x8, adaptive_xy_yx", "mesh_8x8_adaptive_xy_yx.cfg", "transpose"),
    ("flattened butterfly 4x4, c=4 (hyperx), xyyx", "flatfly_k4n2c4_xyyx.cfg", "tornado"),
    ("flattened butterfly 4x4, c=4 (hyperx), ugal_xyyx", "flatfly_k4n2c4_ugal_xyyx.cfg", "tornado"),
]
ZERO_LOAD = 0.02
LATENCY_THRES = 500.0  # BookSim2's latency_thres: past it, a run is unstable
CARRIED = 0.95  # accepted / offered
PRECISION = 0.025  # bisection stops when (first not carried - last carried) < PRECISION * last carried
# zero-load latency within 2 cycles or 5 %; saturation within 5 % of BookSim2's or inside its bracket
ZERO_LOAD_CYCLES, ZERO_LOAD_REL, SATURATION_REL = 2.0, 0.05, 0.05


class Point(NamedTuple):
    load: float
    stable: bool
    latency: float
    accepted: float

    @property
    def carried(self) -> bool:
        return self.stable and self.latency < LATENCY_THRES and self.accepted >= CARRIED * self.load


def overrides(pattern: str, load: float) -> list[str]:
    return [f"traffic={pattern}", f"injection_rate={load:.6g}"]


# ---------------------------------------------------------------- the two simulators

_OVERALL = "====== Overall Traffic Statistics ======"


def booksim_point(binary: str, cfg: str, pattern: str, load: float) -> Point:
    """Run BookSim2 on matrix/<cfg> (from that folder, where anynet finds its network file)."""
    out = subprocess.run([binary, cfg, *overrides(pattern, load)], cwd=MATRIX, capture_output=True, text=True,
                         timeout=3600).stdout
    if _OVERALL not in out:  # BookSim2 judged the run unstable (or it did not converge): no overall figures
        return Point(load, False, float("nan"), float("nan"))
    overall = out.split(_OVERALL, 1)[1]

    def number(label: str) -> float:
        m = re.search(rf"^{label} average = ([-0-9.e+]+)", overall, re.M)
        return float(m.group(1)) if m else float("nan")
    accepted = number("Accepted flit rate")
    return Point(load, True, number("Packet latency"), accepted)


def fastnet_point(cfg: str, pattern: str, load: float) -> Point:
    """Run fastnet on the same BookSim2 config file (a deadlock, possible with anynet's VCs as in BookSim2, is a
    load not carried)."""
    try:
        ds = fastnet.run(read_file(MATRIX / cfg, overrides(pattern, load)))
    except DeadlockError:
        return Point(load, False, float("nan"), float("nan"))
    latency = float(ds.packet_latency_mean)
    return Point(load, not bool(ds.unstable), latency, float(ds.accepted_phits_per_node_cycle))


# ---------------------------------------------------------------- saturation by bisection

def bisect(measure: Callable[[float], Point]) -> list[Point]:
    """Points at ZERO_LOAD, 1.0 and the bisection between them (see the module docstring)."""
    points = [measure(ZERO_LOAD)]
    top = measure(1.0)
    points.append(top)
    if top.carried:
        return points
    lo, hi = ZERO_LOAD, 1.0
    while hi - lo >= PRECISION * lo:
        mid = round((lo + hi) / 2, 5)
        p = measure(mid)
        points.append(p)
        lo, hi = (mid, hi) if p.carried else (lo, mid)
    return points


class Summary(NamedTuple):
    zero_load: float
    last_carried: float  # load
    saturation: float  # accepted at last_carried
    first_not_carried: float  # load (nan if 1.0 is carried)


def summarize(points: list[Point]) -> Summary:
    zero = next(p for p in points if p.load == ZERO_LOAD)
    carried = [p for p in points if p.carried]
    last = max(carried, key=lambda p: p.load)
    above = [p.load for p in points if not p.carried and p.load > last.load]
    return Summary(zero.latency, last.load, last.accepted, min(above, default=float("nan")))


def half_load(s: Summary) -> float:
    return round(s.saturation / 2, 4)


def zero_load_ok(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= max(ZERO_LOAD_CYCLES, ZERO_LOAD_REL * theirs)


def saturation_ok(ours: float, ref: Summary) -> bool:
    inside = ref.saturation <= ours and (math.isnan(ref.first_not_carried) or ours < ref.first_not_carried)
    return inside or abs(ours - ref.saturation) <= SATURATION_REL * ref.saturation


# ---------------------------------------------------------------- CSV

FIELDS = ["cfg", "pattern", "load", "stable", "latency", "accepted", "kind"]


def write_points(path: Path, rows: list[dict], header: str) -> None:
    with path.open("w", newline="") as f:
        f.write(f"# {header}\n")
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


def read_points(path: Path) -> tuple[dict[tuple[str, str], list[Point]], dict[tuple[str, str], Point]]:
    """(bisection points, half-saturation point) per (cfg, pattern)."""
    with path.open() as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    sweeps: dict[tuple[str, str], list[Point]] = {}
    halves: dict[tuple[str, str], Point] = {}
    for r in rows:
        p = Point(float(r["load"]), r["stable"] == "True", float(r["latency"]), float(r["accepted"]))
        key = (r["cfg"], r["pattern"])
        if r["kind"] == "half":
            halves[key] = p
        else:
            sweeps.setdefault(key, []).append(p)
    return sweeps, halves


def _rows(cfg: str, pattern: str, points: list[Point], half: Point) -> list[dict]:
    out = [{"cfg": cfg, "pattern": pattern, **p._asdict(), "kind": "bisect"} for p in points]
    return out + [{"cfg": cfg, "pattern": pattern, **half._asdict(), "kind": "half"}]


def measure_booksim(binary: str, cfg: str, pattern: str) -> list[dict]:
    points = bisect(lambda x: booksim_point(binary, cfg, pattern, x))
    half = booksim_point(binary, cfg, pattern, half_load(summarize(points)))
    print(cfg, pattern, summarize(points), half, flush=True)
    return _rows(cfg, pattern, points, half)


def measure_fastnet(cfg: str, pattern: str, half_at: float) -> list[dict]:
    points = bisect(lambda x: fastnet_point(cfg, pattern, x))
    half = fastnet_point(cfg, pattern, half_at)
    print(cfg, pattern, summarize(points), half, flush=True)
    return _rows(cfg, pattern, points, half)


def cases() -> list[tuple[str, str, str]]:
    return [(row, cfg, pattern) for row, cfg, adversarial in ROWS
            for pattern in ("uniform", *((adversarial,) if isinstance(adversarial, str) else adversarial))]


def chosen(cfg: str, pattern: str, rows: list[str] | None) -> bool:
    """--rows names a config (all its patterns) or one series as config:pattern."""
    return not rows or cfg in rows or f"{cfg}:{pattern}" in rows


def booksim_commit(binary: str, given: str | None) -> str:
    """The commit BookSim2 was built from: --commit, else its source tree's git HEAD."""
    if given:
        return given
    src = Path(binary).resolve().parent
    out = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


# ---------------------------------------------------------------- the table

def table(ref: dict, ref_half: dict, ours: dict, ours_half: dict) -> tuple[str, list[bool]]:
    rows, verdicts = [], []
    for row, cfg, pattern in cases():
        b, f = summarize(ref[(cfg, pattern)]), summarize(ours[(cfg, pattern)])
        zl, sat = zero_load_ok(f.zero_load, b.zero_load), saturation_ok(f.saturation, b)
        verdicts.append(zl and sat)
        bracket = f"{b.saturation:.3f} [{b.last_carried:.3g}, {b.first_not_carried:.3g})"
        bh, fh = ref_half[(cfg, pattern)], ours_half[(cfg, pattern)]
        rows.append([row, pattern, f"{b.zero_load:.1f}", f"{f.zero_load:.1f}", bracket, f"{f.saturation:.3f}",
                     f"{100 * (f.saturation - b.saturation) / b.saturation:+.1f} %", f"{bh.load:.3g}",
                     f"{bh.latency:.1f}", f"{fh.latency:.1f}", "yes" if zl and sat else "**no**"])
    header = ["row", "pattern", "zero-load BookSim2", "zero-load fastnet",
              "saturation BookSim2 [carried, not carried)", "saturation fastnet", "difference", "half load",
              "latency BookSim2", "latency fastnet", "within tolerance"]
    return markdown_table(header, rows), verdicts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--booksim", help="BookSim2 binary: measure BookSim2 again (booksim_matrix_ref.csv)")
    ap.add_argument("--rows", nargs="+", metavar="CFG", help="measure only these configs (e.g. fattree_k4n3.cfg) "
                    "or series (flatfly_k4n2c4.cfg:tornado); the other rows of the CSVs are kept")
    ap.add_argument("--commit", help="with --booksim: the commit it was built from, when its source tree is not a "
                                     "git checkout (a snapshot)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.booksim:
        todo = [(cfg, p) for _, cfg, p in cases() if chosen(cfg, p, args.rows)]
        with ProcessPoolExecutor(args.workers) as ex:
            runs = ex.map(measure_booksim, *zip(*[(args.booksim, cfg, p) for cfg, p in todo]))
            rows = [r for rs in runs for r in rs]
        if args.rows and REF_CSV.exists():
            with REF_CSV.open() as f:
                rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))
                        if (r["cfg"], r["pattern"]) not in todo] + rows
        write_points(REF_CSV, rows, f"BookSim2 booksim/booksim2 commit {booksim_commit(args.booksim, args.commit)}")
    ref, ref_half = read_points(REF_CSV)
    todo = [(cfg, p) for _, cfg, p in cases() if chosen(cfg, p, args.rows)]
    with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as ex:
        runs = ex.map(measure_fastnet, *zip(*[(cfg, p, ref_half[(cfg, p)].load) for cfg, p in todo]))
        rows = [r for rs in runs for r in rs]
    if args.rows and OURS_CSV.exists():
        with OURS_CSV.open() as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))
                    if (r["cfg"], r["pattern"]) not in todo] + rows
    write_points(OURS_CSV, rows, f"fastnet {fastnet.__version__}")
    ours, ours_half = read_points(OURS_CSV)
    text, verdicts = table(ref, ref_half, ours, ours_half)
    with REF_CSV.open() as f:
        commit = f.readline().strip("# \n")
    body = (f"{sum(verdicts)} of {len(verdicts)} rows within tolerance. {commit}, built here with -O3. "
            f"{__doc__.split(chr(10) + chr(10), 1)[1].split('    python')[0].strip()}\n\n{text}")
    write_section("booksim_matrix", body)


if __name__ == "__main__":
    main()
