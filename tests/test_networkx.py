"""networkx in and out: a networkx graph as a `graph` topology, and GraphML / edge-list export of every kind.

The judged round trip: topology kind -> networkx -> fastnet `graph` topology -> GraphML (`fastnet info --export`)
-> networkx is isomorphic to the first networkx graph, routers and nodes, link classes and latencies included.
"""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
import xarray as xr
from networkx.algorithms import isomorphism as iso
from typer.testing import CliRunner

import fastnet
from fastnet import ConfigError
from fastnet.build import from_networkx, to_networkx
from fastnet.topology import build_network
from fastnet.build.graph import write_network
from fastnet.cli import app
from fastnet.config import TOPOLOGIES, resolve

# distinct latencies per class, so that a link that lost its class would no longer match
LINKS = {"latency_injection": 1, "latency_local": 2, "latency_global": 5}

CASES = {
    "dragonfly": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2},
    "dragonfly_parallel": {"kind": "dragonfly", "p": 1, "a": 2, "h": 2, "g": 2},  # 2 global links per router pair
    "slimfly": {"kind": "slimfly", "q": 3},
    "torus": {"kind": "torus", "dims": [2, 3], "p": 2},  # radix 2: two links between X neighbours
    "mesh": {"kind": "mesh", "dims": [3, 2], "p": 1},
    "twisted_torus": {"kind": "twisted_torus", "dims": [4, 3], "twist": 2, "p": 1},
    "fattree": {"kind": "fattree", "k": 2, "n": 3},
    "fattree_m_port": {"kind": "fattree", "form": "m_port_n_tree", "m": 4, "n": 2},
    "hyperx": {"kind": "hyperx", "dims": [3, 2], "trunking": [1, 2], "p": 2},  # two links per pair in Y
    # links 1, 2 and 3 times the local latency long: the graph keeps each link's length
    "hyperx_distance": {"kind": "hyperx", "dims": [4], "p": 1, "distance_latency": True},
    "jellyfish": {"kind": "jellyfish", "switches": 10, "radix": 5, "p": 2, "seed": 3},
    "graph": {"kind": "graph", "edges": [list(e) for e in nx.petersen_graph().edges()], "p": 2},
}


def config(topology: dict) -> dict:
    return {"topology": topology, "links": dict(LINKS)}


def node_match(a: dict, b: dict) -> bool:
    return a.get("type") == b.get("type") and a.get("p") == b.get("p")


def isomorphic(G: nx.Graph, H: nx.Graph) -> bool:
    """Same structure (parallel links counted), router vs node, nodes per router, link class and latency."""
    if G.is_multigraph() != H.is_multigraph() or G.number_of_edges() != H.number_of_edges():
        return False
    match = iso.categorical_multiedge_match if G.is_multigraph() else iso.categorical_edge_match
    return nx.is_isomorphic(G, H, node_match=node_match,
                            edge_match=match(["link_class", "latency"], [None, None]))


def toml_of(cfg: dict) -> str:
    """A resolved graph config as TOML (JSON arrays of ints and strings are TOML arrays)."""
    topo = cfg["topology"]
    lines = ["[topology]", 'kind = "graph"', f"edges = {json.dumps(topo['edges'])}", f"p = {json.dumps(topo['p'])}",
             "[links]"] + [f"{k} = {v}" for k, v in LINKS.items()]
    return "\n".join(lines) + "\n"


def test_every_topology_kind_is_covered():
    assert {c["kind"] for c in CASES.values()} == set(TOPOLOGIES.names)


@pytest.mark.parametrize("case", CASES)
def test_round_trip_networkx_fastnet_graphml_networkx(case, tmp_path):
    net = build_network(config(CASES[case]))
    G0 = to_networkx(net, terminals=True)
    R, N = net.n_routers, net.n_nodes
    assert G0.number_of_nodes() == R + N
    assert G0.number_of_edges() == sum(net.link_counts().values())
    assert [d["type"] for _, d in G0.nodes(data=True)].count("node") == N
    assert G0.is_multigraph() == (case in ("torus", "dragonfly_parallel", "hyperx"))

    # networkx -> fastnet: the resolved config holds the edge list, not the graph object
    cfg = resolve({"topology": {"kind": "graph", "graph": G0}, "links": dict(LINKS)})
    assert "graph" not in cfg["topology"] and json.loads(json.dumps(cfg)) == cfg
    net1 = build_network(cfg)
    assert (net1.n_routers, net1.n_nodes, net1.link_counts()) == (R, N, net.link_counts())

    # fastnet -> GraphML through the CLI, from the config alone
    toml = tmp_path / "graph.toml"
    toml.write_text(toml_of(cfg))
    out = tmp_path / "net.graphml"
    result = CliRunner().invoke(app, ["info", str(toml), "--json", "--export", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["routers"] == R

    # GraphML -> networkx
    G2 = nx.read_graphml(out, node_type=int)
    assert isomorphic(G0, G2)
    # and once more through fastnet, from GraphML's string labels
    G3 = to_networkx(build_network({"topology": {"kind": "graph", "graph": nx.read_graphml(out)},
                                    "links": dict(LINKS)}), terminals=True)
    assert isomorphic(G0, G3)


@pytest.mark.parametrize("case", CASES)
def test_graphml_keeps_every_attribute(case, tmp_path):
    net = build_network(config(CASES[case]))
    G0 = to_networkx(net, terminals=True)
    write_network(net, tmp_path / "net.graphml")
    G = nx.read_graphml(tmp_path / "net.graphml", node_type=int)
    assert dict(G.nodes(data=True)) == dict(G0.nodes(data=True))
    key = lambda e: (e[0], e[1], sorted(e[2].items()))  # noqa: E731
    assert sorted(map(key, G.edges(data=True))) == sorted(map(key, G0.edges(data=True)))
    assert G.graph["kind"] == net.kind
    groups = {d["group"] for _, d in G.nodes(data=True)}
    if net.kind in ("dragonfly", "slimfly", "fattree"):
        assert len(groups) > 1
    routers = [d for _, d in G.nodes(data=True) if d["type"] == "router"]
    if net.kind in ("torus", "mesh", "twisted_torus", "hyperx"):
        dims = CASES[case]["dims"]
        coords = [tuple(map(int, d["coordinates"].split(","))) for d in routers]
        assert coords[1] == (1,) + (0,) * (len(dims) - 1)  # x varies fastest
        assert sorted(coords) == sorted(np.ndindex(*dims))
    else:
        assert all("coordinates" not in d for d in routers)


@pytest.mark.parametrize("case", CASES)
def test_edge_list_round_trip(case, tmp_path):
    net = build_network(config(CASES[case]))
    path = tmp_path / "net.edges"
    write_network(net, path)
    back = build_network({"topology": {"kind": "graph", "file": str(path)}, "links": dict(LINKS)})
    assert isomorphic(to_networkx(net, terminals=True), to_networkx(back, terminals=True))
    # networkx reads it too, with the documented call
    data = [("link_class", str)] + [("length", int)] * ("distance" in case)
    G = nx.read_edgelist(path, nodetype=int, data=data, create_using=nx.MultiGraph)
    assert G.number_of_edges() == net.link_counts()["local"] + net.link_counts()["global"]


def test_node_and_edge_attributes_are_honoured():
    G = nx.cycle_graph(["a", "b", "c", "d"])
    G.nodes["a"]["p"] = 3
    G.nodes["c"]["p"] = 0
    G.edges["a", "b"]["link_class"] = "global"
    G.edges["c", "d"]["length"] = 3  # 3 x links.latency_local
    cfg = resolve({"topology": {"kind": "graph", "graph": G, "p": 2}, "links": {"latency_local": 2}})
    assert cfg["topology"]["p"] == [3, 2, 0, 2]  # sorted labels; p fills routers without the attribute
    assert cfg["topology"]["edges"] == [[0, 1, "global"], [0, 3], [1, 2], [2, 3, "local", 3]]
    net = build_network(cfg)
    assert net.n_nodes == 7 and net.link_counts() == {"injection": 7, "local": 3, "global": 1}
    c, d = net.port_router == 2, net.port_peer_router == 3
    assert net.port_latency[c & d].tolist() == [6]
    assert sorted(net.port_latency[net.port_peer_router == 1]) == [1, 2]  # global, local
    # terminal nodes (type "node") give the counts, as in fastnet's own export
    H = nx.path_graph(3)
    H.add_node("t0", type="node")
    H.add_edge("t0", 2)
    assert resolve({"topology": {"kind": "graph", "graph": H, "p": 5}})["topology"]["p"] == [0, 0, 1]
    assert from_networkx(H).nodes_per_router.tolist() == [0, 0, 1]


def _bad(G, **topology):
    return {"topology": {"kind": "graph", "graph": G, **topology}}


def _with(G: nx.Graph, fn) -> nx.Graph:
    fn(G)
    return G


@pytest.mark.parametrize("cfg,field,words", [
    (_bad(nx.Graph()), "topology.graph", "empty"),
    (_bad(nx.Graph([(0, 1), (2, 3)])), "topology.graph", "not connected"),
    (_bad(nx.Graph([(0, 1), (1, 1)])), "topology.graph", "self loop"),
    (_bad(_with(nx.path_graph(3), lambda G: G.nodes[1].update(p=1.5))), "topology.graph", "p must be an integer"),
    (_bad(_with(nx.path_graph(3), lambda G: G.nodes[1].update(p="2"))), "topology.graph", "p must be an integer"),
    (_bad(nx.path_graph(3), p=1.5), "topology.p", "integer"),
    (_bad(nx.path_graph(3, create_using=nx.DiGraph)), "topology.graph", "undirected"),
    (_bad([(0, 1)]), "topology.graph", "networkx"),
    (_bad(_with(nx.path_graph(3), lambda G: G.edges[0, 1].update(link_class="optical"))), "topology.graph",
     "link_class"),
    (_bad(_with(nx.path_graph(3), lambda G: G.add_edges_from([(0, "t"), (1, "t")]) or
                G.nodes["t"].update(type="node"))), "topology.graph", "exactly one link"),
    (_bad(_with(nx.path_graph(3), lambda G: G.edges[0, 1].update(length=0))), "topology.graph", "length"),
    (_bad(_with(nx.path_graph(3), lambda G: G.edges[0, 1].update(length=1.5))), "topology.graph", "length"),
    (_bad(nx.path_graph(3), edges=[[0, 1]]), "topology.graph", "exactly one"),
    (_bad(nx.empty_graph(2)), "topology.graph", "no links"),
    (_bad(_with(nx.path_graph(2), lambda G: G.nodes[0].update(p=0) or G.nodes[1].update(p=0))), "topology.graph",
     "no router has nodes"),
])
def test_bad_graphs_name_the_field(cfg, field, words):
    with pytest.raises(ConfigError) as e:
        build_network(cfg)
    assert e.value.field == field and words in str(e.value)


def test_a_sweep_over_a_networkx_graph_stores_it_as_edges():
    """A sweep stores its spec as JSON: a networkx graph in its base was a TypeError; it becomes the same edges
    and p a run's config gets."""
    from fastnet.sweeps.spec import load_spec

    spec = load_spec({"base": {"topology": {"kind": "graph", "graph": nx.petersen_graph(), "p": 2}},
                      "sweep": {"traffic.load": [0.1, 0.2]}})
    assert "graph" not in spec.base["topology"] and len(spec.base["topology"]["edges"]) == 15
    assert json.loads(spec.to_json())["base"]["topology"]["p"] == 2


def test_a_config_that_is_not_a_table_is_one_config_error():
    for bad in ([1, 2], 5):
        with pytest.raises(ConfigError, match="config: must be a table of sections"):
            fastnet.run(bad)
        with pytest.raises(ConfigError, match="spec: must be a table of base and sweep"):
            fastnet.sweep(bad)


def test_bad_edge_lists(tmp_path):
    path = tmp_path / "g.edges"
    path.write_text("# p = 1 2\n0 1\n1 2\n")
    with pytest.raises(ConfigError, match="topology.file: 2 node counts"):
        build_network({"topology": {"kind": "graph", "file": str(path)}})
    path.write_text("0 1\n1 x\n")
    with pytest.raises(ConfigError, match="topology.file: .*:2: expected"):
        build_network({"topology": {"kind": "graph", "file": str(path)}})
    with pytest.raises(ConfigError, match="topology.p: 2 node counts"):
        build_network({"topology": {"kind": "graph", "edges": [[0, 1], [1, 2]], "p": [1, 1]}})
    with pytest.raises(ConfigError, match="topology.edges"):
        build_network({"topology": {"kind": "graph", "edges": [[0, 1, "optical"]]}})
    path.write_text("0 1 glbal\n1 2\n2 0\n")  # a class misspelt was taken as local; a weight is still ignored
    with pytest.raises(ConfigError, match="topology.file: .*:1: the third column is a link class"):
        build_network({"topology": {"kind": "graph", "file": str(path)}})
    path.write_text("0 1 2.5\n1 2 global\n2 0\n")
    assert build_network({"topology": {"kind": "graph", "file": str(path)}}).n_routers == 3
    path.write_text("0 1 local 0\n1 2\n2 0\n")  # a length is an integer >= 1
    with pytest.raises(ConfigError, match="topology.file: .*:1: the fourth column is the link's length"):
        build_network({"topology": {"kind": "graph", "file": str(path)}})
    with pytest.raises(ConfigError, match="topology.edges"):
        build_network({"topology": {"kind": "graph", "edges": [[0, 1, "local", 0], [1, 2]]}})
    for topology, field in [({"edges": [[0, 0], [0, 1], [1, 2]]}, "topology.edges"),  # it named `topology`
                            ({"file": str(path)}, "topology.file")]:
        path.write_text("0 1\n1 1\n1 2\n")
        with pytest.raises(ConfigError, match="to itself: self-loops") as e:
            build_network({"topology": {"kind": "graph", **topology}})
        assert e.value.field == field
    result = CliRunner().invoke(app, ["info", "--export", str(tmp_path / "net.dot")])
    assert result.exit_code == 2 and "--export" in result.output


def test_run_with_networkx_equals_edge_list(tmp_path):
    G = nx.relabel_nodes(nx.petersen_graph(), {i: f"r{i}" for i in range(10)})
    for i in range(10):
        G.nodes[f"r{i}"]["p"] = 1 + i % 2
    for u, v in [("r0", "r5"), ("r2", "r7")]:
        G.edges[u, v]["link_class"] = "global"
    edges = [[int(u[1:]), int(v[1:])] + (["global"] if d.get("link_class") == "global" else [])
             for u, v, d in G.edges(data=True)]
    rest = {"links": {"latency_global": 3}, "traffic": {"load": 0.2},
            "sim": {"warmup": 100, "measure": 200, "drain": 2000}}
    ds = fastnet.run({"topology": {"kind": "graph", "graph": G}, **rest})
    ref = fastnet.run({"topology": {"kind": "graph", "edges": edges, "p": [1 + i % 2 for i in range(10)]}, **rest})
    assert ds.attrs["nodes"] == 15 and ds.attrs["routers"] == 10
    assert json.loads(ds.attrs["config"])["topology"] == {"kind": "graph", "edges": edges,
                                                         "p": [1, 2] * 5, "file": ""}
    assert ds.attrs["config"] == ref.attrs["config"]
    assert ds.packets_delivered.item() > 0
    xr.testing.assert_identical(ds.drop_attrs(), ref.drop_attrs())
    from fastnet.store import write_dataset

    write_dataset(ds, tmp_path / "run.zarr")  # the config attribute is plain data
    assert json.loads(xr.open_zarr(tmp_path / "run.zarr").attrs["config"]) == json.loads(ds.attrs["config"])


def test_a_configs_file_names_are_found_next_to_it_when_not_in_the_working_directory(tmp_path, monkeypatch):
    """`fastnet run sub/ring.toml` from elsewhere finds the edge list beside the config (as the BookSim2 converter
    finds a network_file); a file of that name in the working directory comes first."""
    from fastnet.config import read_toml
    from fastnet.sweeps.spec import load_spec

    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ring.edges").write_text("0 1\n1 2\n2 3\n3 0\n")
    (sub / "ring.toml").write_text('[topology]\nkind = "graph"\nfile = "ring.edges"\n')
    (sub / "spec.toml").write_text('[base.topology]\nkind = "graph"\nfile = "ring.edges"\n\n'
                                   '[sweep]\n"traffic.load" = [0.1]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert build_network(resolve(read_toml("../sub/ring.toml"))).n_routers == 4
    assert build_network(resolve(load_spec("../sub/spec.toml").configs()[0])).n_routers == 4
    (elsewhere / "ring.edges").write_text("0 1\n1 2\n2 0\n")
    assert build_network(resolve(read_toml("../sub/ring.toml"))).n_routers == 3
    assert read_toml(sub / "ring.toml")["topology"]["file"] == "ring.edges"
