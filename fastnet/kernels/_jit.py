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
import numba.extending
from numba.core import cgutils

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

# Small helpers called inside hot loops are inlined at numba-IR level: a non-inlined call passes each array of
# its arguments as a dozen scalars and touches its reference count (UGAL's decision as a call cost 1.76x MIN's
# time per cycle, inlined 1.34x).
jit_inline = numba.njit(cache=CACHE, nogil=True, inline="always")


@numba.extending.intrinsic
def borrow(typingctx, tup):
    """The same tuple with each array's reference count pointer cleared: numba increments and decrements the
    count of every array in a tuple each time an inlined stage receives it (atomic operations, over half of a
    busy cycle's time when measured), and with no count to touch they cost a branch. Only for a kernel's
    entry: the caller owns the arrays for the whole call, and nothing borrowed may outlive it."""
    if not isinstance(tup, numba.types.BaseTuple):
        return None

    def codegen(context, builder, sig, args):
        out = args[0]
        for i, ty in enumerate(sig.args[0].types):
            if isinstance(ty, numba.types.Array):
                ary = context.make_array(ty)(context, builder, builder.extract_value(out, i))
                ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
                ary.parent = cgutils.get_null_value(ary.parent.type)
                out = builder.insert_value(out, ary._getvalue(), i)
        return out

    return tup(tup), codegen
