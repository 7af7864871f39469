"""Closed-loop workloads: causal, application-like traffic whose result is an execution time.

Chosen with the `[workload]` config section (`kind` = open_loop | sr | gups | a2a | o2a | a2o | graph500).

| module | what |
|---|---|
| `schema.py` | the `[workload]` keys of these kinds, defaults and checks (the MPI kinds': mpi/schema.py) |
| `build.py` | config -> the `Workload` tuple (task mapping, pools, Graph500 timing and root) |
| `state.py` | the `Workload` tuple, record layouts (`msg`, `tk`, `wc`, `table`), kind codes |
| `messages.py` | the message layer: Send, packetisation as injection links free, reassembly, Wait counts |
| `micro.py` | seed 002's micro-kernels: o2a, a2o, a2a, sr, gups |
| `graph500_model.py` | seed 000's equations 1-19, one function each |
| `graph500.py` | seed 000's BFS model as the paper describes it (default) |
| `graph500_fogsim.py` | the same model as FOGSim v4 codes it (`variant = "fogsim"`) |
| `results.py` | the per-wave / per-level tables and scalars added to the results dataset |

This package's `__init__` and `schema` import no kernels (`fastnet info` stays fast).
"""
