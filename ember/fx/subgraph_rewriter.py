"""``torch.fx.subgraph_rewriter.replace_pattern``: replace every match of a pattern graph by a replacement graph.

``pattern`` and ``replacement`` are functions (traced with ``symbolic_trace``) or GraphModules taking the same
inputs. A match is a set of nodes of ``gm``'s graph computing what the pattern's nodes compute from any values
bound to the pattern's inputs (op, target and constant arguments equal; a pattern input matches a graph value
or a constant argument, the same one at each of its uses); the nodes inside it other than the matched output
must have no users outside it. Matches do not overlap (the first found, in graph order, wins); each replacement
goes before the first user of the value it replaces. ``gm`` is recompiled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .graph_module import GraphModule
from .node import Node


class Match(NamedTuple):
    """``anchor``: the graph node matched by the pattern's output; ``nodes_map``: pattern node -> graph node."""

    anchor: Node
    nodes_map: dict[Node, Node]


def _match(p: Any, g: Any, nodes_map: dict[Node, Node]) -> bool:
    """Whether graph value ``g`` computes what pattern value ``p`` does, extending ``nodes_map``."""
    if isinstance(p, Node) and p.op == "placeholder":  # a pattern input binds a graph value or a constant
        if p in nodes_map:
            bound = nodes_map[p]
            return bound is g if isinstance(g, Node) or isinstance(bound, Node) else type(bound) is type(g) and \
                bound == g
        if isinstance(g, Node) and any(v is g for v in nodes_map.values()):
            return False
        nodes_map[p] = g
        return True
    if isinstance(p, Node):
        if not isinstance(g, Node):
            return False
        if p in nodes_map:
            return nodes_map[p] is g
        if p.op != g.op or p.target != g.target or len(p.args) != len(g.args) or p.kwargs.keys() != g.kwargs.keys():
            return False
        nodes_map[p] = g
        return all(_match(a, b, nodes_map) for a, b in zip(p.args, g.args)) and \
            all(_match(p.kwargs[k], g.kwargs[k], nodes_map) for k in p.kwargs)
    if isinstance(p, (tuple, list)):
        return type(p) is type(g) and len(p) == len(g) and all(_match(a, b, nodes_map) for a, b in zip(p, g))
    if isinstance(p, dict):
        return isinstance(g, dict) and p.keys() == g.keys() and all(_match(p[k], g[k], nodes_map) for k in p)
    return type(p) is type(g) and p == g


def _as_graph_module(fn: Callable | GraphModule) -> GraphModule:
    from ._symbolic_trace import symbolic_trace

    return fn if isinstance(fn, GraphModule) else symbolic_trace(fn)


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule,
                    replacement: Callable | GraphModule) -> list[Match]:
    """Replace each non-overlapping match of ``pattern`` in ``gm`` by ``replacement``; the matches."""
    pattern_graph = _as_graph_module(pattern).graph
    replacement_graph = _as_graph_module(replacement).graph
    p_placeholders = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    p_output = next(n for n in pattern_graph.nodes if n.op == "output")
    if not isinstance(p_output.args[0], Node):
        raise NotImplementedError("replace_pattern in ember matches patterns that return one value; this pattern "
                                  f"returns {p_output.args[0]!r}")
    p_anchor = p_output.args[0]
    r_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(r_placeholders) != len(p_placeholders):
        raise ValueError(f"replace_pattern: the pattern takes {len(p_placeholders)} inputs, the replacement "
                         f"{len(r_placeholders)}")
    graph = gm.graph
    matches: list[Match] = []
    taken: set[Node] = set()
    for node in list(graph.nodes):
        nodes_map: dict[Node, Node] = {}
        if node in taken or not _match(p_anchor, node, nodes_map):
            continue
        inner = {p: g for p, g in nodes_map.items() if p.op != "placeholder"}
        if set(inner.values()) & taken:
            continue
        inside = set(inner.values())
        if any(user not in inside for p, g in inner.items() if p is not p_anchor for user in g.users):
            continue  # an intermediate value is used outside the match: it cannot be replaced
        taken |= inside
        matches.append(Match(node, nodes_map))
    replaced: dict[Node, Node] = {}  # an earlier match's anchor -> its replacement, for later matches' inputs
    for anchor, nodes_map in matches:
        val_map = {r: replaced.get(nodes_map[p], nodes_map[p]) for r, p in zip(r_placeholders, p_placeholders)}
        # before the anchor's first user, as PyTorch places it (after the anchor if it has none)
        first_user = next((n for n in graph.nodes if n in anchor.users), anchor.next)
        with graph.inserting_before(first_user):
            result = graph.graph_copy(replacement_graph, val_map)
        if not isinstance(result, Node):
            raise NotImplementedError("replace_pattern in ember takes replacements that return one value")
        anchor.replace_all_uses_with(result)
        replaced[anchor] = result
        for p in reversed(list(pattern_graph.nodes)):
            g = nodes_map.get(p)
            if g is not None and p.op not in ("placeholder", "output") and not g.users:
                graph.erase_node(g)
    gm.recompile()
    return matches
