"""Where a replay of the largest shared trace (sst-macro's testbgp, DUMPI binary: 7 ranks, 1,344 calls) spends its
time, stage by stage: on a 4x4 torus first (the first run in the process: imports and cache loads included),
then on the default dragonfly, each with its cProfile. perf/README.md "MPI" has the numbers.

    python perf/replay_profile.py [shared folder]     # default: ../shared next to this checkout, or FASTNET_SHARED
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path


def trace_path() -> Path:
    given = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("FASTNET_SHARED")
    shared = Path(given) if given else Path(__file__).resolve().parents[1] / ".." / "shared"
    return shared / "reference" / "traces" / "sstmacro_testbgp_dumpi"


def profile(cfg: dict) -> None:
    from fastnet.results import to_dataset
    from fastnet.sim import compile_kernels, prepare, simulate

    prof = cProfile.Profile()
    prof.enable()
    t0 = time.perf_counter()
    s = prepare(cfg)
    t1 = time.perf_counter()
    compile_kernels(s)
    t2 = time.perf_counter()
    simulate(s)
    t3 = time.perf_counter()
    ds = to_dataset(s, wall_seconds=t3 - t0)
    t4 = time.perf_counter()
    prof.disable()
    print(f"{cfg.get('topology', 'default dragonfly')}: prepare {t1 - t0:.2f} s, kernels {t2 - t1:.2f} s, "
          f"simulate {t3 - t2:.2f} s, dataset {t4 - t3:.2f} s; {int(ds.execution_cycles):,} cycles, "
          f"{int(ds.mpi_events):,} MPI events")
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(18)
    print(text.getvalue())


def main() -> None:
    t0 = time.perf_counter()
    import fastnet  # noqa: F401  (its import is part of a replay's time)

    print(f"import fastnet: {time.perf_counter() - t0:.2f} s")
    for topo in ({"kind": "torus", "dims": [4, 4]}, None):
        cfg: dict = {"workload": {"kind": "trace", "file": str(trace_path())}, "sim": {"max_cycles": 10**12}}
        if topo:
            cfg["topology"] = topo
        profile(cfg)


if __name__ == "__main__":
    main()
