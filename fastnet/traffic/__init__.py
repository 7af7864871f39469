"""Open-loop traffic: patterns.py compiles a destination pattern for the kernels, openloop.py is the Bernoulli
sources. PATTERNS here is the one list of the patterns' names, which config.py's `[traffic] pattern` and the
`[throughput]` section (throughput/settings.py) accept; this file imports nothing, so the config's checks can
read it without loading the kernels."""

PATTERNS = (
    "uniform", "permutation", "bitcomp", "transpose", "tornado", "shift", "hotspot",
    "group_adversarial", "slimfly_worst",
)
