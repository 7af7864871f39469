"""The `[faults]` config section: links and routers down from the start or at given cycles (registered in
config.EXTRA_SECTIONS). docs/faults.md describes the model; fastnet/faults/plan.py turns the section into a plan.

    [faults]
    links = [[3, 17], [40, 41]]       # router pairs: every link between them is down from cycle 0
    routers = [12]                    # a router and all its links (table routings, fat-tree updown)
    fraction = 0.05                   # and 5 % of the links of link_class, drawn with seed
    link_class = "global"             # "any", "local" or "global"
    seed = 1
    events = [[5000, "fail", 3, 4], [9000, "recover", 3, 4], [7000, "fail", 12]]   # a link [.., u, v],
                                      # or a router [.., r]
    file = "faults.toml"              # the same keys from a TOML file (merged under the ones given here)
    allow_disconnected = false        # true: traffic that cannot reach its destination is dropped and counted
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ..checks import Check, boolean, check_section, choice, integer, real, string
from ..errors import ConfigError

FAULT_LINK_CLASSES = ("any", "local", "global")
ACTIONS = ("fail", "recover")


def _pairs(v: Any) -> str | None:
    if isinstance(v, list) and all(isinstance(e, list) and len(e) == 2 and integer(0)(e[0]) is None
                                   and integer(0)(e[1]) is None for e in v):
        return None
    return "must be a list of [u, v] pairs of router ids >= 0"


def _routers(v: Any) -> str | None:
    if isinstance(v, list) and all(integer(0)(x) is None for x in v):
        return None
    return "must be a list of router ids >= 0"


def _events(v: Any) -> str | None:
    if isinstance(v, list) and all(
        isinstance(e, list) and len(e) in (3, 4) and integer(0)(e[0]) is None and e[1] in ACTIONS
        and all(integer(0)(x) is None for x in e[2:]) for e in v
    ):
        return None
    return ('must be a list of [cycle, "fail" | "recover", u, v] (a link) or [cycle, "fail" | "recover", r] (a '
            'router), with cycle, u, v, r integers >= 0')


SCHEMA: dict[str, tuple[Any, Check]] = {
    "links": ([], _pairs),
    "routers": ([], _routers),
    "fraction": (0.0, real(0.0, 1.0)),
    "link_class": ("any", choice(*FAULT_LINK_CLASSES)),
    "seed": (1, integer(0, 2**63 - 1)),
    "events": ([], _events),
    "file": ("", string),
    "allow_disconnected": (False, boolean),
}


def resolve_faults(given: Any) -> dict[str, Any]:
    """Check the section (and the file it names, whose keys the section's own override) and fill defaults."""

    if not isinstance(given, dict):
        raise ConfigError("faults", "must be a table")
    if given.get("file"):
        path = given["file"]
        if not isinstance(path, str):
            raise ConfigError("faults.file", f"must be a string (got {path!r})")
        p = Path(path)
        try:
            if not p.is_file():
                raise ConfigError("faults.file", f"no such file: {p}")
            with p.open("rb") as f:
                from_file = tomllib.load(f)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as e:
            raise ConfigError("faults.file", f"{p} is not a readable TOML file ({e})") from None
        from_file = from_file.get("faults", from_file)  # a bare table, or one with a [faults] section
        if not isinstance(from_file, dict) or "file" in from_file:
            raise ConfigError("faults.file", f"{p} must hold the [faults] keys other than file")
        for key in from_file:
            if key not in SCHEMA:
                raise ConfigError(f"faults.{key}", f"unknown key (in {p}); allowed: " + ", ".join(SCHEMA))
        given = {**from_file, **given}
    return check_section("faults", given, SCHEMA)


