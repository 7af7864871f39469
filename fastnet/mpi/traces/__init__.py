"""Readers of real MPI traces into a `Trace` (see fastnet/mpi/calls.py), and writers that turn a `Trace` into files.

| module | what |
|---|---|
| `otf2.py` | `read_otf2`: an OTF2 archive (Score-P) through the `otf2` package |
| `dumpi_ascii.py` | `read_dumpi_ascii`: the per-rank text `dumpi2ascii -a` prints for a DUMPI trace |
| `write.py` | `write_otf2`, `write_dumpi_ascii`: a `Trace` as either format (tests, users) |
| `names.py` | which MPI functions move no data (`noop`), shared by the readers |

To add a format: one module here with `read_<format>(path) -> Trace`, one entry in `READERS`, and a rule in
`detect_format` if its files can be told apart by content. The `otf2` package is imported only inside the OTF2
functions, so that importing fastnet stays fast.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from fastnet.errors import ConfigError
from fastnet.mpi.calls import Trace


class TraceError(ConfigError):
    """A trace cannot be read; `field` is the file (with `:line` where one is known)."""

    def __init__(self, where: str | Path, message: str):
        super().__init__(str(where), message)


# The readers import TraceError from this module, so they come after it.
from fastnet.mpi.traces.dumpi_ascii import read_dumpi_ascii  # noqa: E402
from fastnet.mpi.traces.otf2 import read_otf2  # noqa: E402

READERS: dict[str, Callable[[str | Path], Trace]] = {"otf2": read_otf2, "dumpi_ascii": read_dumpi_ascii}

BINARY_DUMPI = ("binary DUMPI (.bin/.meta) is not read yet: convert each rank with sst-dumpi's "
                "`dumpi2ascii -a PREFIX-NNNN.bin > PREFIX-NNNN.txt` and read the .txt files")
_RANK_FILE = re.compile(r"^(?P<prefix>.*)-(?P<rank>\d+)\.txt$")


def read_trace(path: str | Path, format: str = "auto") -> Trace:
    """Read a trace; `format` is a key of READERS, or "auto" to tell the formats apart by content."""
    if format == "auto":
        format = detect_format(path)
    if format not in READERS:
        raise TraceError(path, f"unknown trace format {format!r}; known: auto, {', '.join(READERS)}")
    return READERS[format](path)


def detect_format(path: str | Path) -> str:
    """The READERS key for `path` (a file or a directory), or a TraceError saying why none fits."""
    p = Path(path)
    if not p.exists():
        raise TraceError(p, "no such file or directory")
    if p.is_dir():
        return _detect_dir(p)
    if p.suffix in (".bin", ".meta"):
        raise TraceError(p, BINARY_DUMPI)
    head = p.read_bytes()[:4096]
    if p.suffix == ".otf2" or b"OTF2" in head[:8]:
        return "otf2"
    if b"DUMPI" in head[:8]:
        raise TraceError(p, BINARY_DUMPI)
    if _looks_like_dumpi_ascii(head):
        return "dumpi_ascii"
    raise TraceError(p, "not a trace format fastnet reads: expected an OTF2 anchor file (*.otf2) "
                        "or DUMPI ASCII text (dumpi2ascii output, *-NNNN.txt)")


def _looks_like_dumpi_ascii(head: bytes) -> bool:
    for raw in head.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line:
            return line.startswith("version=") or bool(re.match(r"^MPIO?_\w+ entering at walltime ", line))
    return False


def _detect_dir(p: Path) -> str:
    anchors = sorted(p.glob("*.otf2"))
    if len(anchors) == 1:
        return "otf2"
    if len(anchors) > 1:
        raise TraceError(p, f"holds {len(anchors)} OTF2 anchor files ({', '.join(a.name for a in anchors)}); "
                            "name one")
    texts = [f for f in p.glob("*.txt") if _RANK_FILE.match(f.name) and _looks_like_dumpi_ascii(f.read_bytes()[:4096])]
    metas = sorted(p.glob("*.meta"))
    if metas or any(p.glob("*.bin")):
        # sst-dumpi ships a reference .txt of rank 0 next to its .bin files: only a full set of texts counts.
        numprocs = _meta_numprocs(metas[0]) if metas else None
        if texts and numprocs == len(texts):
            return "dumpi_ascii"
        have = f" (only {len(texts)} of {numprocs} ranks have a .txt)" if texts and numprocs else ""
        raise TraceError(p, BINARY_DUMPI + have)
    if texts:
        return "dumpi_ascii"
    raise TraceError(p, "holds no OTF2 anchor file (*.otf2) and no DUMPI ASCII files (*-NNNN.txt)")


def _meta_numprocs(meta: Path) -> int | None:
    m = re.search(r"^numprocs=(\d+)$", meta.read_text(errors="replace"), re.M)
    return int(m.group(1)) if m else None


__all__ = ["READERS", "TraceError", "detect_format", "read_dumpi_ascii", "read_otf2", "read_trace"]
