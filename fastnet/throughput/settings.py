"""The `[throughput]` config section: what the throughput models evaluate on the config's topology.

    [throughput]
    pattern = "random"        # random, perm, or any engine pattern (uniform, permutation, tornado, ...)
    x = 1                     # X of random(X) / perm(X)
    k = 1                     # paths per flow: k shortest within max_hops
    samples = 10              # random patterns averaged (seed 001 uses 36)
    models = ["mmf", "mcf", "hm", "jm"]   # also "waterfill" (single-path MMF, needs k = 1)
    max_hops = "auto"         # longest router path allowed; auto = diameter + 1 (as routing.hop_limit)
    path_order = "random"     # which paths win ties in length: random, or port (= the engine's ksp routing)
    link_capacity = 1.0       # router-router links, each direction
    host_capacity = 1.0       # host-router links, each direction
    seed = 1                  # patterns of sample i use (seed, i); path tie-breaks use seed
    confidence = 0.95         # of the interval reported around each mean

config.py registers the section (EXTRA_SECTIONS), so `fastnet run` accepts configs that carry it; this module
imports only the checks and the engine's pattern names, so that config.py can import it.
"""

from __future__ import annotations

import copy
from typing import Any

from ..checks import check_section, choice, integer, integer_or_auto, real
from ..errors import ConfigError
from ..traffic.patterns import PATTERNS

MODEL_PATTERNS = ("random", "perm")  # seed 001's random(X) and perm(X) (patterns.py), beside the engine's patterns
ALL_PATTERNS = MODEL_PATTERNS + PATTERNS.names
MODEL_NAMES = ("mmf", "mcf", "hm", "jm", "waterfill")
DEFAULT_MODELS = ["mmf", "mcf", "hm", "jm"]


def _models(v: Any) -> str | None:
    if isinstance(v, list) and v and all(m in MODEL_NAMES for m in v) and len(set(v)) == len(v):
        return None
    return "must be a non-empty list of distinct names from " + ", ".join(MODEL_NAMES)


SECTION: dict[str, tuple[Any, Any]] = {
    "pattern": ("random", choice(*ALL_PATTERNS)),
    "x": (1, integer(1)),
    "k": (1, integer(1, 64)),
    "samples": (10, integer(1, 10_000)),
    "models": (list(DEFAULT_MODELS), _models),
    "max_hops": ("auto", integer_or_auto(1)),
    "path_order": ("random", choice("random", "port")),
    "link_capacity": (1.0, real(0.0, 1e12, lo_open=True)),
    "host_capacity": (1.0, real(0.0, 1e12, lo_open=True)),
    "seed": (1, integer(0, 2**63 - 1)),
    "confidence": (0.95, real(0.0, 1.0, lo_open=True)),
}


def resolve_section(given: Any) -> dict[str, Any]:
    out = check_section("throughput", copy.deepcopy(given), SECTION)
    if out["confidence"] >= 1.0:
        raise ConfigError("throughput.confidence", "must be a number in (0, 1) (got 1)")
    if "waterfill" in out["models"] and out["k"] != 1:
        raise ConfigError("throughput.models", f"waterfill is max-min fairness for single-path routing and "
                          f"needs throughput.k = 1 (got k = {out['k']})")
    return out

