"""MPI applications on the simulated network (seed 003, PPT): rank programs, protocols, collectives, trace replay.

| module | what |
|---|---|
| `calls.py` | the program every source produces: per-rank `Call` lists and communicators (`Trace`) |
| `traces/` | readers of real traces (OTF2, DUMPI ASCII) into a `Trace`, and writers for tests |
"""
