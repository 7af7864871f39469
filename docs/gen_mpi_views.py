"""The "What the architect sees" figures of docs/mpi.md: the Gantt timeline and the communication matrix of a real
trace (sst-macro's testbgp DUMPI trace, 7 ranks and 1,344 calls, from ../shared/reference/traces), replayed on the
embedded default network (the 1,056-node dragonfly) and drawn by `fastnet plot` from the run's store, as a user
would.

    python docs/gen_mpi_views.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = Path(os.environ.get("FASTNET_SHARED", ROOT.parent / "shared")) / "reference" / "traces" / \
    "sstmacro_testbgp_dumpi"
IMG = ROOT / "docs" / "img"


def fastnet(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "fastnet", *args], capture_output=True, text=True, check=True)
    return out.stdout


def main() -> None:
    if not TRACE.exists():
        sys.exit(f"{TRACE} not found: this figure replays a trace from ../shared (set FASTNET_SHARED)")
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "testbgp.zarr"
        print(fastnet("run", "--set", "workload.kind=trace", "--set", f"workload.file={TRACE}", "--set",
                      "routing.algorithm=min", "--set", "sim.max_cycles=1000000000", "--out", str(store))
              .splitlines()[-2])
        for y, name in (("timeline", "mpi_timeline_testbgp.png"), ("comm_matrix_bytes", "mpi_matrix_testbgp.png")):
            print(fastnet("plot", str(store), "-o", str(IMG / name), "--y", y).strip())


if __name__ == "__main__":
    main()
