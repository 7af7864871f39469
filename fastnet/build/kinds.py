"""The topology kinds: one registry entry each, with its `[topology]` keys, its builder and its size formula.

Everything else about a kind is read from here: config validation (`keys`, `forms`), `build_router_graph` and
`network_size` below, the kind codes the routing kernels branch on (`K_*`, stored in Routes.ip[IP_KIND]), which
kinds route by algebra instead of a distance table (`algebra`: "never", "large" above the table's budget,
"cached" above the size of a table a cache holds, or "always"; the algebra itself is in build/routing.py and
kernels/minimal.py), and `fastnet info`'s list of kinds.
docs/developing.md lists the files a new kind touches.
"""

from __future__ import annotations

from typing import Any

from ..checks import Check, boolean, choice, even, integer, integer_list, integer_or_auto, string
from ..registry import Registry
from . import dragonfly, fattree, hyperx, slimfly, torus
from .network import RouterGraph


def _group_shape(v: Any) -> str | None:  # dragonfly: "auto", [a] or [routers per row, rows]
    if v == "auto" or (isinstance(v, list) and len(v) in (1, 2) and integer_list(1)(v) is None):
        return None
    return "must be \"auto\" or a list of 1 or 2 integers >= 1 ([a], or [routers per row, rows])"


def _edges(v: Any) -> str | None:
    if isinstance(v, list) and all(
        isinstance(e, list) and len(e) in (2, 3, 4) and all(integer(0)(x) is None for x in e[:2])
        and (len(e) == 2 or e[2] in ("local", "global")) and (len(e) < 4 or integer(1)(e[3]) is None) for e in v
    ):
        return None
    return ("must be a list of [u, v] pairs of router ids >= 0, each optionally with a link class and then a length "
            "(its latency in multiples of the class's, an integer >= 1): [u, v, \"global\"], [u, v, \"local\", 3]")


def _per_dimension(v: Any) -> str | None:  # torus links, hyperx trunking: one count, or one per dimension
    if integer(1)(v) is None or (isinstance(v, list) and v and integer_list(1)(v) is None):
        return None
    return "must be an integer >= 1 (every dimension), or a list of integers >= 1 (one per dimension)"


def _int_or_counts(v: Any) -> str | None:  # graph p: one count, or one per router (0 allowed)
    if integer(1)(v) is None or (isinstance(v, list) and v and integer_list(0)(v) is None):
        return None
    return "must be an integer >= 1, or a list of integers >= 0 (one per router)"


def _graph():  # networkx, imported only when a graph or jellyfish is built (build/__init__.py)
    from . import graph

    return graph


def _grid_keys(dims: list[int]) -> dict[str, tuple[Any, Check]]:
    return {"dims": (dims, integer_list(2)), "links": (1, _per_dimension), "p": (1, integer(1))}


def _torus_like(kind: str) -> dict[str, Any]:
    """The builder and size formula of a kind build/torus.py builds (torus, mesh, twisted torus)."""
    def build(t: dict[str, Any]) -> RouterGraph:
        return torus.build(kind, t["dims"], t["p"], t.get("twist", 0), t["links"], t.get("express", 0))

    def size(t: dict[str, Any]) -> tuple[int, int, int]:
        return torus.size(kind, t["dims"], t["p"], t["links"], t.get("express", 0))
    return {"build": build, "size": size}


TOPOLOGIES = Registry("topology kind")  # declared in the order of their codes (the kernels' K_*)
K_GRAPH = TOPOLOGIES.add(
    "graph", "any router graph: an edge list, a file of one, or a networkx graph (build/graph.py)",
    keys={"edges": ([], _edges), "file": ("", string), "p": (1, _int_or_counts)},  # or a networkx `graph`:
    # config.resolve turns it into edges and p (build/graph.py resolve_graph)
    build=lambda t: _graph().edge_list(t["edges"], t["file"], t["p"]),
    size=lambda t: None,  # known once the edges are read
    algebra="never")
K_DRAGONFLY = TOPOLOGIES.add(
    "dragonfly", "groups of a routers, all-to-all (or rows and columns), h global links each (build/dragonfly.py)",
    keys={
        "p": (4, integer(1)),
        "a": (8, integer(2)),
        "h": (4, integer(1)),
        "g": ("auto", integer_or_auto(2)),  # auto: a*h + 1 groups (one global link per group pair)
        "arrangement": ("consecutive", choice("consecutive", "palmtree")),
        "group_shape": ("auto", _group_shape),  # auto = [a]: all-to-all groups; [n1, n2]: n2 rows of n1 routers,
        # all-to-all along rows and columns (Aries: [16, 6]); the product must be a (build/dragonfly.py)
        "global_bundle": (1, integer(1)),  # physical global ports per logical global link (Aries: 4)
    },
    build=lambda t: dragonfly.build(t["p"], t["a"], t["h"], t["g"], t["arrangement"], t["group_shape"],
                                    t["global_bundle"]),
    size=lambda t: dragonfly.size(t["p"], t["a"], t["h"], t["g"], t["group_shape"], t["global_bundle"]),
    algebra="always")  # its graph's shortest paths include global-global detours that break its VC classes
K_SLIMFLY = TOPOLOGIES.add(
    "slimfly", "the MMS Slim Fly of seed 004: 2q² routers, diameter 2 (build/slimfly.py)",
    keys={"q": (5, integer(3)),
          "p": ("auto", integer_or_auto(1))},  # auto: floor(k'/2), the full-bandwidth value of seed 004 §4.2
    build=lambda t: slimfly.build(t["q"], t["p"]),
    size=lambda t: slimfly.size(t["q"], t["p"]),
    algebra="cached")
K_TORUS = TOPOLOGIES.add("torus", "a k-ary n-cube with wrap-around links (build/torus.py)", keys=_grid_keys([8, 8]),
                         **_torus_like("torus"), algebra="cached")
K_MESH = TOPOLOGIES.add("mesh", "a grid without wrap-around links (build/torus.py)",
                        keys={**_grid_keys([8, 8]), "express": (0, integer(0))},  # BookSim2's cmesh express
                        # channels, each `express` x links.latency long (0: none)
                        **_torus_like("mesh"), algebra="large")
K_TWISTED_TORUS = TOPOLOGIES.add(
    "twisted_torus", "a 2-D torus whose second (Y) dimension's wrap-around links are shifted in X (build/torus.py)",
    keys={"dims": ([8, 4], integer_list(2, 2)), "twist": (4, integer(0)), "links": (1, _per_dimension),
          "p": (1, integer(1))},
    **_torus_like("twisted_torus"), algebra="never")
K_FATTREE = TOPOLOGIES.add(
    "fattree", "a k-ary n-tree or an m-port n-tree (build/fattree.py)", title="fat tree",
    keys={  # `form` picks the keys (forms)
        "form": ("k_ary_n_tree", choice("k_ary_n_tree", "m_port_n_tree")),
        "k": (4, integer(2)),  # k_ary_n_tree: children and parents per switch
        "m": (4, even(4)),  # m_port_n_tree: ports per switch
        "n": (3, integer(1)),  # levels of switches
    },
    forms={"k_ary_n_tree": ("k", "n"), "m_port_n_tree": ("m", "n")},  # form -> the keys that apply
    build=lambda t: fattree.build(t["form"], t["n"], k=t.get("k", 0), m=t.get("m", 0)),
    size=lambda t: fattree.size(t["form"], t["n"], k=t.get("k", 0), m=t.get("m", 0)),
    algebra="cached")
K_JELLYFISH = TOPOLOGIES.add(
    "jellyfish", "a random regular graph of switches (build/graph.py)",
    keys={"switches": (16, integer(2)), "radix": (6, integer(2)), "p": (2, integer(1)), "seed": (1, integer(0))},
    build=lambda t: _graph().jellyfish(t["switches"], t["radix"], t["p"], t["seed"]),
    size=lambda t: (t["switches"], t["switches"] * (t["radix"] - t["p"]), t["switches"] * t["p"]),
    algebra="never")
K_HYPERX = TOPOLOGIES.add(
    "hyperx", "all-to-all in every dimension; BookSim2's flattened butterfly (build/hyperx.py)",
    keys={"dims": ([4, 4], integer_list(2)), "trunking": (1, _per_dimension), "p": (4, integer(1)),
          "distance_latency": (False, boolean)},  # defaults: BookSim2's flatfly k = 4, n = 2, c = 4
    build=lambda t: hyperx.build(t["dims"], t["trunking"], t["p"], t["distance_latency"]),
    size=lambda t: hyperx.size(t["dims"], t["trunking"], t["p"]),
    algebra="always")  # cheaper than a table lookup at any size; kernels/routing.py relies on it


def topology_schema(kind: str, form: Any = None) -> dict[str, tuple[Any, Check]]:
    """The keys of a kind (with `form` when the kind has forms; None: the default form)."""
    entry = TOPOLOGIES[kind]
    forms = entry.attrs.get("forms")
    if not forms:
        return entry.keys
    form = entry.keys["form"][0] if form is None else form
    return {"form": entry.keys["form"], **{k: entry.keys[k] for k in forms[form]}}


def build_router_graph(topo: dict[str, Any]) -> RouterGraph:
    """The router graph of a resolved `[topology]` table."""
    return TOPOLOGIES[topo["kind"]].build(topo)


def network_size(topo: dict[str, Any]) -> tuple[int, int, int] | None:
    """(routers, ports, nodes) of a resolved `[topology]` table, by formula and without building it (the memory
    check refuses a network too large to build before its build exhausts the machine); None for an edge list,
    whose size is known once read. Ports count node ports too, as Network.n_ports."""
    size = TOPOLOGIES[topo["kind"]].size(topo)
    if size is None:
        return None
    routers, network_ports, nodes = size
    return routers, network_ports + nodes, nodes
