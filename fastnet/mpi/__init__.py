"""MPI applications on the simulated network (seed 003, PPT): rank programs, protocols, collectives, trace replay.

Data flows one way: a source gives a `Trace`, `program.lower` turns it into op arrays, `build.compile_mpi` into
the `Mpi` tuple, and the kernels advance every rank inside the cycle loop (engine/generate.py: GEN_MPI).

| module | what |
|---|---|
| `calls.py` | the program every source produces: per-rank `Call` lists and communicators (`Trace`) |
| `generators.py` | built-in programs (`[workload] kind = "mpi"`, `program = ...`) |
| `traces/` | readers of real traces (OTF2, DUMPI ASCII) into a `Trace`, and writers for tests |
| `program.py` | Trace -> op arrays: blocking calls as their non-blocking op and a wait, gaps as computation, the collective algorithm chosen by size |
| `schema.py` | the `[mpi]` section (protocol thresholds, algorithm choices) and `[workload]`'s MPI keys and jobs |
| `build.py` | config -> the `Mpi` tuple (ranks to nodes, pools) |
| `state.py` | the `Mpi` tuple, record layouts and codes |
| `kernel.py` | the rank state machines: matching, eager and rendezvous protocols, waits, computation |
| `collectives.py` | each collective algorithm as rounds of messages, expanded lazily per rank and step |
| `results.py` | execution time, per-rank and per-call results; the report of ranks that wait forever |

This package's `__init__`, `calls`, `schema` and `traces` import no kernels (`fastnet info` stays fast).
"""
