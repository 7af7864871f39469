"""Exceptions that fastnet reports to users as one line (the CLI turns them into exit code 2)."""

from __future__ import annotations

from pathlib import Path


class FastnetError(Exception):
    """Base class of errors reported as one line without a traceback."""


class ConfigError(FastnetError):
    """A config value is missing, unknown or out of range; `field` is its dotted name."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


class TraceError(ConfigError):
    """An MPI trace cannot be read (fastnet/mpi/traces); `field` is the file (with `:line` where one is known)."""

    def __init__(self, where: str | Path, message: str):
        super().__init__(str(where), message)


class DeadlockError(FastnetError):
    """Packets are in flight and no phit moved for `sim.watchdog` cycles."""

    def __init__(self, cycle: int, blocked: list[tuple[int, int, int]]):
        self.cycle = cycle
        self.blocked = blocked
        where = ", ".join(f"(router {r}, port {p}, vc {v})" for r, p, v in blocked[:4]) or "none found"
        super().__init__(f"deadlock detected at cycle {cycle}: no phit moved; blocked: {where}")


class WorkloadError(FastnetError):
    """A closed-loop workload stalled, failed, or did not finish within sim.max_cycles."""


class ConservationError(FastnetError):
    """Packets were lost or duplicated: a simulator bug, never a user error."""
