"""What a cache miss costs on this machine, against the size of the memory it lands in: the floor under the cost of
a packet-hop on a network whose state is gigabytes (perf/README.md, "Scale").

    python perf/memory_latency.py [--sizes-mb 4,8,16,256,1024,4096,6144] [--no-readme]

For each size, an int64 array of that many bytes (numpy asks for 2 MB pages, as for the simulation's arrays):
- dependent: a pointer chase through one random cycle over the whole array, each load's address the value of the
  one before (a packet-at-a-time engine's chain: ready VC -> its head packet -> its output port -> ...), on one
  thread, and as one chase per thread at once from random points of the cycle (a partitioned engine: each thread
  still walks its own routers' chains), in ns per load of all of them together;
- independent: the same number of loads at random addresses known in advance (what a batched engine could issue),
  on one thread and on every thread (numba prange);
- one line a page: a chase through one 64-byte line of each 4 kB page of the array, in random order: the data is a
  64th of the array (in cache up to a few hundred MB), the pages as many as the array's: what a load costs whose
  data is in cache and whose page is not in the TLB. In this virtual machine the TLB behaves as if the guest's
  2 MB pages were backed by the host in 4 kB ones, a miss walking both page tables (perf/README.md, "Scale").
Nanoseconds per load, best of three; rewrites the `latency` section of perf/README.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange

ROOT = Path(__file__).resolve().parents[1]
LOADS = 4_000_000  # per measurement (2,000,000 for the chase: it takes ~0.3 us a load at 4 GB)
REPEAT = 3


@njit(cache=True)
def link_cycle(nxt: np.ndarray, order: np.ndarray) -> None:
    """nxt[i]: the slot after i in `order`, one cycle through them all."""
    n = len(order)
    for i in range(n - 1):
        nxt[order[i]] = order[i + 1]
    nxt[order[n - 1]] = order[0]


def random_cycle(n: int, seed: int) -> np.ndarray:
    """next[i] for one cycle through all n slots in random order, in an array numpy allocates (on 2 MB pages, as the
    simulation's state: numba's own allocations inside a kernel get 4 kB pages)."""
    nxt = np.empty(n, np.int64)
    link_cycle(nxt, np.random.default_rng(seed).permutation(n))
    return nxt


@njit(cache=True)
def chase(nxt: np.ndarray, e: int, steps: int) -> int:
    """`steps` loads from slot e, each at the slot the one before read."""
    for _ in range(steps):
        e = nxt[e]
    return e


@njit(cache=True, parallel=True)
def chase_parallel(nxt: np.ndarray, starts: np.ndarray, steps: int) -> int:
    """One chase of `steps` loads per start, each start on a thread of its own."""
    ends = np.empty(len(starts), np.int64)
    for k in prange(len(starts)):
        e = starts[k]
        for _ in range(steps):
            e = nxt[e]
        ends[k] = e
    return ends.sum()


@njit(cache=True)
def gather(a: np.ndarray, idx: np.ndarray) -> int:
    s = 0
    for i in range(len(idx)):
        s += a[idx[i]]
    return s


@njit(cache=True, parallel=True)
def gather_parallel(a: np.ndarray, idx: np.ndarray) -> int:
    s = 0
    for i in prange(len(idx)):
        s += a[idx[i]]
    return s


def ns_per_load(f, *args, loads: int) -> float:
    """Best of REPEAT calls (the machine is shared)."""
    best = float("inf")
    for _ in range(REPEAT):
        t = time.perf_counter()
        f(*args)
        best = min(best, time.perf_counter() - t)
    return best / loads * 1e9


def page_cycle(n: int, seed: int) -> tuple[np.ndarray, int]:
    """An int64 array of n slots in which one random line of each 4 kB page holds the index of the next page's,
    one cycle through all pages in random order; and the first index."""
    per_page = 4096 // 8
    pages = n // per_page
    rng = np.random.default_rng(seed)
    slot = np.arange(pages, dtype=np.int64) * per_page + rng.integers(0, per_page // 8, pages) * 8
    order = rng.permutation(pages)
    a = np.zeros(n, np.int64)
    a[slot[order]] = slot[np.roll(order, -1)]
    return a, int(slot[0])


def measure(mb: int) -> tuple[float, float, float, float, float]:
    n = mb * 2**20 // 8
    nxt = random_cycle(n, 3)
    steps = min(LOADS // 2, 20 * n)
    chase(nxt, 0, 1000)
    dependent = ns_per_load(chase, nxt, 0, steps, loads=steps)
    threads = numba.get_num_threads()
    starts = np.random.default_rng(2).integers(0, n, threads)
    chase_parallel(nxt, starts, 10)
    dependent_all = ns_per_load(chase_parallel, nxt, starts, steps // threads, loads=steps // threads * threads)
    idx = np.random.default_rng(1).integers(0, n, LOADS)
    gather(nxt, idx[:10])
    gather_parallel(nxt, idx[:10])
    one = ns_per_load(gather, nxt, idx, loads=LOADS)
    two = ns_per_load(gather_parallel, nxt, idx, loads=LOADS)
    del nxt, idx
    a, first = page_cycle(n, 4)
    page_steps = min(LOADS // 2, 20 * (n // 512))
    chase(a, first, 1000)
    paged = ns_per_load(chase, a, first, page_steps, loads=page_steps)
    return dependent, dependent_all, one, two, paged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-mb", default="4,8,16,256,1024,4096,6144")
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args()
    threads = numba.get_num_threads()
    rows = [f"| array | dependent, 1 thread (ns) | dependent, {threads} chases on {threads} threads (ns) "
            f"| independent, 1 thread (ns) | independent, {threads} threads (ns) "
            "| dependent, one line a 4 kB page (ns) |",
            "|---:|---:|---:|---:|---:|---:|"]
    for mb in (int(x) for x in args.sizes_mb.split(",")):
        dep, dep_all, one, two, paged = measure(mb)
        rows.append(f"| {mb:,} MB | {dep:.0f} | {dep_all:.0f} | {one:.1f} | {two:.1f} | {paged:.0f} |")
        print(rows[-1], flush=True)
    body = (f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {threads} threads, "
            f"Python {platform.python_version()} by `python perf/memory_latency.py`.\n\n" + "\n".join(rows))
    if not args.no_readme:
        sys.path.insert(0, str(ROOT / "docs"))
        from markers import replace_section

        replace_section(ROOT / "perf" / "README.md", "latency", body)


if __name__ == "__main__":
    main()
