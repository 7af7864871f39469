"""Locate the records of a binary DUMPI file's call stream (traces/dumpi.py `_body`), compiled: each record's
length depends on the bytes before it, so the walk is a loop, and a Python one over a 256-rank trace's 1.9 M
records cost a second and a half.

A record's key is its function id << 8 | mask (the first 3 bytes, big-endian). Per key, the tables give what
dumpi.py `_bulk_plan` says of its records: `size` the bytes before Waitall's requests or the statuses (the whole
record with neither), -1 for a key not yet planned, 0 for records read field by field; `requests` the offset of
the requests' int32 count (0: none); `status` the bytes per status when they are recorded (0: none).
"""

from __future__ import annotations

import numpy as np

from fastnet.kernels._jit import jit, jit_inline


@jit_inline
def _int32(data: np.ndarray, p: int) -> int:
    """The big-endian int32 at data[p:p + 4]."""
    u = (np.int64(data[p]) << 24) | (np.int64(data[p + 1]) << 16) | (np.int64(data[p + 2]) << 8) | data[p + 3]
    return u - (u >> 31 << 32)


@jit
def locate_records(data: np.ndarray, pos: int, end: int, size: np.ndarray, requests: np.ndarray,
                   status: np.ndarray, offsets: np.ndarray, n: int) -> tuple[int, int]:
    """Walk the records from byte `pos` (uint8 `data`, up to `end`) while each is one read in bulk, writing their
    offsets into offsets[n:]. Stops at a record whose key the tables do not plan (size <= 0), one that would run
    past `end`, or when `offsets` is full; returns the byte it stopped at and the offsets written in all."""
    while pos + 4 <= end and n < len(offsets):  # (4 bytes: what the Python reader reads to take the key)
        key = (np.int64(data[pos]) << 16) | (np.int64(data[pos + 1]) << 8) | data[pos + 2]
        if key >= len(size) or size[key] <= 0:
            break
        m = size[key]
        if pos + m > end:
            break
        if requests[key]:
            m += 4 * max(_int32(data, pos + requests[key]), 0)
        if status[key]:
            if pos + m + 4 > end:
                break
            m += 4 + status[key] * max(_int32(data, pos + m), 0)
        if pos + m > end:
            break
        offsets[n] = pos
        n += 1
        pos += m
    return pos, n
