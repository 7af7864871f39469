"""The config a command's arguments name: a config file (fastnet TOML or BookSim2), `--set` overrides and
`--machine`. The commands that take them (cli.py's run and info, throughput/command.py) import it from here."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from . import booksim as _booksim
from . import config as _config


def config_from_args(config: Optional[Path], overrides: list[str], machine: Optional[str] = None) -> dict[str, Any]:
    """A resolved config: `unresolved_config` checked and filled in with the documented defaults."""
    return _config.resolve(unresolved_config(config, overrides, machine))


def unresolved_config(config: Optional[Path], overrides: list[str], machine: Optional[str] = None) -> dict[str, Any]:
    """The config a command's arguments name, before `resolve`: the file, then each --set override. A BookSim2
    config (docs/booksim.md) is converted first; its `--set key=value` items without a section are BookSim2 keys.
    Without a file, --set overrides apply to the documented defaults (docs/config.md), as `fastnet.run(dict)`
    does, so no key of the embedded example leaks into another network; with no --set either, it is the embedded
    example (configs/default.toml, BookSim2's dragonfly reference run). `machine` (--machine) names the machine
    preset (fastnet/machines) underneath the file and the overrides, in place of one the file names."""
    if config is not None and _booksim.is_booksim_file(config):
        raw = _booksim.read_file(config, [s for s in overrides if _booksim.is_override(s)])
        overrides = [s for s in overrides if not _booksim.is_override(s)]
    elif config is not None:
        raw = _config.read_toml(config)
    elif overrides or machine is not None:
        raw = {}
    else:
        raw = _config.read_toml(_config.DEFAULT_CONFIG)
    if machine is not None:  # the command line's choice, as --set machine.name would be
        raw = _config.merge(raw, {"machine": {"name": machine}})
    return _config.merge(raw, _config.parse_set(overrides))
