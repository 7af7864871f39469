"""All numba options in one place. Kernels use `@jit`; helpers called inside loops use `@jit_inline`.

numba's cache only checks the source file of the function it compiled, not the files of the functions it
inlined or the constants it froze: editing kernels/routing.py would leave a stale cycle loop in the cache. So
the cache lives in a directory named after a hash of every source file kernels are built from. Set
FASTNET_NUMBA_CACHE=0 to compile without the cache, or NUMBA_CACHE_DIR to choose the directory yourself.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

CACHE = os.environ.get("FASTNET_NUMBA_CACHE", "1") != "0"
_PACKAGE = Path(__file__).resolve().parents[1]
_KERNEL_SOURCES = ("kernels", "traffic", "build", "workloads")


def _source_hash() -> str:
    digest = hashlib.sha1()
    for folder in _KERNEL_SOURCES:
        for path in sorted((_PACKAGE / folder).glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "fastnet"
    if not os.access(base.parent if not base.exists() else base, os.W_OK):
        base = _PACKAGE / "__pycache__"
    return base / f"numba-{_source_hash()}"


if CACHE and not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = str(_cache_dir())

jit = numba.njit(cache=CACHE, nogil=True)

jit_parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)

# Small helpers called inside hot loops are inlined at numba-IR level: a non-inlined call that receives the
# State/Topology NamedTuples pays reference counting on every array they hold (measured: 20-300 ns per call).
jit_inline = numba.njit(cache=CACHE, nogil=True, inline="always")
