"""Machine presets: real systems (seed 003) shipped as TOML configs, one file per machine in this folder.

A config starts from a preset with `[machine] name = "trinity"` (or `fastnet run --machine trinity`); everything
else in the config, then every `--set`, overrides the preset's keys. Each preset's first comment line is its
title (`fastnet machines` lists it); the comments below it cite where each number comes from.

Adding a machine: write `<name>.toml` here (title line, sources, then ordinary config sections) and a line for it
in docs/machines.md; tests/test_machines.py resolves and builds every preset.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ..errors import ConfigError

PRESETS = Path(__file__).parent


def names() -> list[str]:
    return sorted(p.stem for p in PRESETS.glob("*.toml"))


def _path(name: Any) -> Path:
    if not isinstance(name, str) or name not in names():
        raise ConfigError("machine.name", f"unknown machine {name!r}; allowed: " + ", ".join(names()))
    return PRESETS / f"{name}.toml"


def title(name: str) -> str:
    """The preset's first comment line."""
    first = _path(name).read_text().splitlines()[0]
    return first.lstrip("#").strip()


def preset(name: str) -> dict[str, Any]:
    """The preset's config sections (unresolved)."""
    return tomllib.loads(_path(name).read_text())


def resolve_machine(section: Any) -> dict[str, Any]:
    """The `[machine]` section: only `name`, one of the presets."""
    if not isinstance(section, dict):
        raise ConfigError("machine", "must be a table with a name, e.g. [machine] name = \"trinity\"")
    unknown = [k for k in section if k != "name"]
    if unknown:
        raise ConfigError(f"machine.{unknown[0]}", "unknown key; allowed: name")
    _path(section.get("name"))
    return {"name": section["name"]}
