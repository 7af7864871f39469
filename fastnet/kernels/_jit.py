"""All numba options in one place. Kernels use `@jit`; set FASTNET_NUMBA_CACHE=0 to compile without the cache."""

from __future__ import annotations

import os

import numba

CACHE = os.environ.get("FASTNET_NUMBA_CACHE", "1") != "0"

jit = numba.njit(cache=CACHE, nogil=True)

jit_parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)

# Small helpers called inside hot loops are inlined at numba-IR level: a non-inlined call that receives the
# State/Topology NamedTuples pays reference counting on every array they hold (measured: 20-300 ns per call).
jit_inline = numba.njit(cache=CACHE, nogil=True, inline="always")
