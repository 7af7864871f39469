"""Open-loop traffic: patterns.py compiles a destination pattern for the kernels (its PATTERNS registry names
them), openloop.py is the Bernoulli sources."""
