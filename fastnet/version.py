"""fastnet's version, `fastnet.__version__`: the installed distribution's, or 0.0.0+src from a source tree. A leaf
module, so that what records the version in a result (results.py, sweeps/, throughput/) need not import the
`fastnet` package's `__init__`, which imports them back."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("fastnet")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+src"
