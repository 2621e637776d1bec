"""Clone classes: the connected components of the clone-pair graph."""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from .report import CloneClass, ClonePair


def clone_classes(pairs: Sequence[ClonePair], type_order: Sequence[str]) -> tuple[CloneClass, ...]:
    """Group pairs into classes; `type_order` runs from most to least specific type name."""
    graph = nx.Graph()
    for pair in pairs:
        graph.add_edge(pair.a, pair.b, clone_type=pair.clone_type.name)
    rank = {name: i for i, name in enumerate(type_order)}
    classes = []
    components = sorted(
        nx.connected_components(graph),
        key=lambda nodes: min((f.file, f.start_line) for f in nodes),
    )
    for number, nodes in enumerate(components, start=1):
        sub = graph.subgraph(nodes)
        types = [data["clone_type"] for _, _, data in sub.edges(data=True)]
        classes.append(
            CloneClass(
                id=number,
                fragments=tuple(sorted(nodes, key=lambda f: (f.file, f.start_line))),
                pairs=sub.number_of_edges(),
                clone_type=max(types, key=lambda name: rank.get(name, len(rank))),
            )
        )
    return tuple(classes)
