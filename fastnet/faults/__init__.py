"""Failures: links and routers down from the start or at given cycles (the `[faults]` section, docs/faults.md).

schema.py reads the section, plan.py checks every fault state of a run against its routing and applies them
between cycles, kernel.py is what a failure does to the packets and credits of the running network.
"""
