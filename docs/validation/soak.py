"""Deadlock freedom: every routing of the validation runs, past saturation, for at least 50,000 cycles.

Each run ends with fastnet's audit (every packet in exactly one place, injected = delivered + in flight +
queued, every VC's credits balanced) and runs under the watchdog, which would stop a deadlocked run with a
DeadlockError instead of letting it spin. A row here means neither fired.
"""

from common import markdown_table, run_points, write_csv, write_section

from booksim_torus import config as torus_config
from dragonfly_routing import config as dragonfly_config
from slimfly_seed004 import config as slimfly_config

CYCLES = {"warmup": 1000, "measure": 50000, "drain": 0}


def soak(cfg: dict) -> dict:
    return {**cfg, "sim": {**CYCLES, "watchdog": 20000}}


def main() -> None:
    points = []
    for r in ("min", "val", "ugal_l"):
        for p in ("uniform", "slimfly_worst"):
            points.append(({"topology": "slimfly q=13", "routing": r, "pattern": p, "load": 0.71},
                           soak(slimfly_config(r, p, 100))))
    for r in ("min", "val", "ugal_l", "ugal_g"):
        for p in ("uniform", "group_adversarial"):
            points.append(({"topology": "dragonfly 1056", "routing": r, "pattern": p, "load": 1.0},
                           soak(dragonfly_config(p, r, 1.0))))
    for r in ("dor", "adaptive"):
        for p in ("uniform", "bitcomp", "transpose", "tornado"):
            points.append(({"topology": "torus 8x8", "routing": r, "pattern": p, "load": 1.0},
                           soak(torus_config(p, r, 1.0))))

    def metrics(ds):
        return {"cycles": int(ds.cycles), "delivered": int(ds.packets_delivered),
                "in_flight": int(ds.packets_in_flight), "queued": int(ds.packets_queued),
                "accepted": float(ds.accepted_phits_per_node_cycle), "wall_s": round(ds.attrs["wall_seconds"], 1)}

    rows = run_points(points, metrics)
    write_csv("soak", rows)
    body = (f"{len(rows)} runs at the highest load of each validation, {CYCLES['measure'] + CYCLES['warmup']} "
            "cycles each; every one passed the end-of-run audit with the watchdog on (no deadlock).\n\n"
            + markdown_table(["topology", "routing", "pattern", "load", "cycles", "delivered", "in flight",
                              "queued at sources", "accepted"],
                             [[r["topology"], r["routing"], r["pattern"], r["load"], r["cycles"], r["delivered"],
                               r["in_flight"], r["queued"], r["accepted"]] for r in rows]))
    write_section("soak", body)


if __name__ == "__main__":
    main()
