"""All numba options in one place. Kernels use `@jit`; set FASTNET_NUMBA_CACHE=0 to compile without the cache."""

from __future__ import annotations

import os

import numba

CACHE = os.environ.get("FASTNET_NUMBA_CACHE", "1") != "0"

jit = numba.njit(cache=CACHE, nogil=True)

jit_parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)
