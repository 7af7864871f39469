"""Virtual-channel layout: which VCs each hop of each routing may use, so that no routing can deadlock.

A routing assigns every hop a VC *class* (kernels/routing.py computes it from the packet's route state); this
module decides, per input-port class (injection, local, global), how many classes exist and which VC range
each class owns. Schemes, with the classes they need:

| topology | routing | class of a hop | classes (local / global) |
|---|---|---|---|
| dragonfly | min | global hops already taken (Kim et al.; seed 000 Table IV) | 2 / 1 |
| dragonfly | val, ugal_l, ugal_g | global hops already taken | 3 / 2 |
| dragonfly | ugal_l, ugal_g with `ugal_vcs = "separate"` | minimal packets: class 3 on a local hop before the global one, then 0 (global), 2 (local) | 4 / 2 |
| dragonfly, 2-D groups | as above | as above; a class's local hops (up to 2) stay in one group, row then column (kernels/minimal.py) | as above |
| torus | dor | dateline partition of the current dimension | 2 |
| torus | val, ugal | 2 x phase + dateline partition (DOR in each phase) | 4 |
| torus | adaptive | escape DOR with dateline (2 VCs), adaptive on the rest (Duato) | 2 + >= 1 |
| mesh | dor, dor_express / val, ugal / adaptive | 0 / phase / escape VC 0 + adaptive rest | 1 / 2 / 1 + >= 1 |
| mesh, hyperx | xy_yx, adaptive_xy_yx | the packet's order: 0 lowest dimension first, 1 highest first; each class is dimension-ordered, and a packet never changes class | 2 |
| hyperx | dor | 0: one hop per dimension, dimensions in increasing order, so no cycle of channels | 1 |
| hyperx | val, ugal | phase: dimension order to the intermediate, then to the destination; a packet moves from class 0 to 1, never back | 2 |
| hyperx | ugal_l with `order = "xy_yx"` | 2 x order (0 XY, 1 YX, drawn at the source) + phase: each order's class pair is dimension-ordered phase by phase, as BookSim2's ugal_xyyx_flatfly's VC quarters | 4 |
| fat tree | any | 0: up*/down* paths cannot form a cycle | 1 |
| any other, hyperx min | min / val, ugal / ksp | hop index (distance classes) | D / 2D / hop limit |
| any other, hyperx min, with `routing.vc_classes = "any"` | min / val, ugal | none: every VC on every hop, as BookSim2's anynet; it can deadlock (the watchdog reports it) | 1 |

Within a class the channel dependencies must be acyclic too: a 2-D dragonfly group (build/dragonfly.py) has a row
and a column hop in one class, and dimension order (row links only ever wait on column links) keeps them so.

Each class gets `vcs // classes` VCs (the adaptive class takes what the escape classes leave); with
`routing.vc_classes = "halves"`, two dateline, phase or order classes take BookSim2's halves, [0, V - 1 - V // 2]
and [V // 2, V - 1], which share a VC when V is odd (and can then deadlock, as BookSim2's). A port class with
fewer VCs than its routing needs is refused at build time with a one-line error saying how many it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..registry import ROUTINGS, VALIANT_ROUTINGS, XY_YX_ROUTINGS
from .kinds import TOPOLOGIES
from .network import GLOBAL, LOCAL, NODE, Network
from .routing import Routes, diameter

# VC-class rules the kernel applies (kernels/routing.py: vc_class)
VCP_HOP, VCP_DRAGONFLY, VCP_NONE, VCP_DATELINE, VCP_ESCAPE = 0, 1, 2, 3, 4

GRID = ("torus", "mesh")


@dataclass
class VcLayout:
    policy: int  # VCP_*
    vcs: dict[int, int]  # VCs per input-port class (NODE / LOCAL / GLOBAL)
    ranges: np.ndarray  # int32[3, classes, 2]: (first VC, VC count) per port class and VC class
    hop_limit: int  # longest route in hops (ksp), else 0


def check_routing(net: Network, routing: str) -> None:
    kinds = ROUTINGS[routing].attrs.get("kinds")
    if kinds and net.kind not in kinds:
        names = [TOPOLOGIES[k].attrs.get("title", k) for k in kinds]
        needs = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        raise ConfigError("routing.algorithm", f"{routing} needs a {needs} (topology is {net.kind})")


def _needs(net: Network, routes: Routes, rcfg: dict[str, Any]) -> tuple[int, int, int, int, int]:
    """(policy, local classes, global classes, escape classes, hop limit)."""
    needs = _classes(net, routes, rcfg)
    if rcfg.get("vc_classes") == "halves" and net.kind not in (*GRID, "hyperx"):
        raise ConfigError("routing.vc_classes", f"halves splits the VCs of a torus, mesh or HyperX routing's two "
                          f"classes as BookSim2 does (topology is {net.kind}): use hop")
    if rcfg.get("vc_classes", "hop") != "any":
        return needs
    if needs[0] != VCP_HOP or rcfg["algorithm"] == "ksp":
        raise ConfigError("routing.vc_classes", f"any replaces distance classes (min, val or ugal on a graph); "
                          f"{rcfg['algorithm']} routing on a {net.kind} has VC classes of its own")
    return VCP_NONE, 1, 1, 0, 0  # BookSim2's anynet: every VC on every hop, channels may wait in a cycle


def _classes(net: Network, routes: Routes, rcfg: dict[str, Any]) -> tuple[int, int, int, int, int]:
    routing, kind = rcfg["algorithm"], net.kind
    D = max(diameter(routes), 1)
    if routing == "ksp":
        limit = D + 1 if rcfg["hop_limit"] == "auto" else rcfg["hop_limit"]
        if limit < D:  # packets between the farthest routers would have no path, and be dropped as unroutable
            raise ConfigError("routing.hop_limit", f"must be at least the network's diameter, {D} hops (got {limit}): "
                              "no path of fewer hops joins its farthest routers")
        return VCP_HOP, limit, limit, 0, limit
    if kind == "fattree":
        return VCP_NONE, 1, 1, 0, 0
    if kind == "dragonfly" and routing in ("min", *VALIANT_ROUTINGS):
        if routing == "min":
            return VCP_DRAGONFLY, 2, 1, 0, 0
        return VCP_DRAGONFLY, 4 if routing != "val" and rcfg.get("ugal_vcs") == "separate" else 3, 2, 0, 0
    if kind == "hyperx" and routing in ("dor", *VALIANT_ROUTINGS, *XY_YX_ROUTINGS):  # dimension order, in one or
        # two phases, or in one of two orders
        phases = 2 if routing in (*VALIANT_ROUTINGS, *XY_YX_ROUTINGS) else 1
        if rcfg.get("order") == "xy_yx":  # ugal_l: the order's half, then the phase's half of it
            phases = 4
        return VCP_DATELINE, phases, phases, 0, 0
    if kind in GRID and ROUTINGS[routing].attrs.get("ordered"):
        wrap = 2 if kind == "torus" else 1  # dateline partitions per dimension
        if routing == "adaptive":
            return VCP_ESCAPE, wrap + 1, wrap + 1, wrap, 0
        phases = 2 if routing in (*VALIANT_ROUTINGS, *XY_YX_ROUTINGS) else 1  # (xy_yx: its order as the phase)
        return VCP_DATELINE, wrap * phases, wrap * phases, 0, 0
    classes = 2 * D if routing in VALIANT_ROUTINGS else D
    return VCP_HOP, classes, classes, 0, 0


def vc_layout(net: Network, routes: Routes, router: dict[str, Any], rcfg: dict[str, Any]) -> VcLayout:
    check_routing(net, rcfg["algorithm"])
    policy, c_local, c_global, escape, limit = _needs(net, routes, rcfg)
    has_global = bool((net.port_class == GLOBAL).any())
    need = {NODE: 1, LOCAL: c_local, GLOBAL: c_global}
    # auto: vcs_global and vcs_injection follow an explicit `vcs`; otherwise each is the fewest its ports need
    vcs = {LOCAL: need[LOCAL] if router["vcs"] == "auto" else router["vcs"]}
    for cls, key in ((GLOBAL, "vcs_global"), (NODE, "vcs_injection")):
        given = router[key]
        if given == "auto":
            given = router["vcs"] if router["vcs"] != "auto" else (need[cls] if cls == GLOBAL else vcs[LOCAL])
        vcs[cls] = given if (cls != GLOBAL or has_global) else vcs[LOCAL]
    for cls, key in ((LOCAL, "vcs"), (GLOBAL, "vcs_global")):
        if vcs[cls] < need[cls]:
            where = f" on {'global' if cls == GLOBAL else 'local'} ports" if has_global else ""
            raise ConfigError(f"router.{key}", f"{rcfg['algorithm']} routing on this {net.kind} needs at least "
                              f"{need[cls]} VCs{where} to be deadlock-free (got {vcs[cls]})")
    n_classes = max(c_local, c_global, 1)
    ranges = np.zeros((3, n_classes, 2), dtype=np.int32)
    ranges[NODE, 0] = (0, vcs[NODE])
    for cls, c in ((LOCAL, c_local), (GLOBAL, c_global)):
        V = vcs[cls]
        if escape:  # one VC per escape class, the adaptive class takes the rest
            for e in range(escape):
                ranges[cls, e] = (e, 1)
            ranges[cls, escape] = (escape, V - escape)
        elif c == 2 and policy == VCP_DATELINE and rcfg.get("vc_classes") == "halves":  # BookSim2's halves:
            ranges[cls, 0], ranges[cls, 1] = (0, V - V // 2), (V // 2, V - V // 2)  # with V odd, sharing a VC
        else:
            per = V // c
            for k in range(c):
                ranges[cls, k] = (k * per, per)
    return VcLayout(policy=policy, vcs=vcs, ranges=ranges, hop_limit=limit)
