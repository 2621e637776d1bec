"""Clone classes: the connected components of the clone-pair graph."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .fragment import Fragment

if TYPE_CHECKING:  # report.py imports this module
    from .report import ClonePair


@dataclass(frozen=True)
class CloneClass:
    """Fragments connected by clone pairs (a connected component)."""

    id: int
    fragments: tuple[Fragment, ...]
    pairs: int
    clone_type: str
    """The least specific type among the class's pairs (every member is at least this close)."""


def clone_classes(pairs: Sequence[ClonePair], type_order: Sequence[str]) -> tuple[CloneClass, ...]:
    """Group pairs into classes; `type_order` runs from most to least specific type name.

    A class's type is the least specific type among its pairs."""
    import networkx as nx  # imported here: it is slow to import and only classes need it

    graph = nx.Graph()
    graph.add_edges_from((pair.a, pair.b) for pair in pairs)
    components = sorted(
        (
            sorted(nodes, key=lambda f: (f.file, f.start_line))
            for nodes in nx.connected_components(graph)
        ),
        key=lambda nodes: (nodes[0].file, nodes[0].start_line),
    )
    component_of = {id(f): index for index, nodes in enumerate(components) for f in nodes}
    rank = {name: i for i, name in enumerate(type_order)}
    edges = [0] * len(components)
    loosest: list[str | None] = [None] * len(components)
    for pair in pairs:
        index = component_of[id(pair.a)]
        edges[index] += 1
        name = pair.clone_type.name
        current = loosest[index]
        if current is None or rank.get(name, len(rank)) > rank.get(current, len(rank)):
            loosest[index] = name
    return tuple(
        CloneClass(
            id=index + 1,
            fragments=tuple(nodes),
            pairs=edges[index],
            clone_type=loosest[index] or "",
        )
        for index, nodes in enumerate(components)
    )
