"""``torch.fx``: symbolic tracing of modules into graphs, graph editing and code generation.

``symbolic_trace(module)`` runs ``forward`` on Proxies and returns a ``GraphModule``, whose ``graph`` lists the
operations (``Node``: placeholder, get_attr, call_function, call_method, call_module, output) and whose
``forward`` is Python generated from that graph. ``Interpreter`` and ``Transformer`` run or rewrite a graph node
by node. docs/api.md's "torch.fx" section says what traces in ember, and what raises.
"""

from __future__ import annotations

from .._missing import module_getattr
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "PH", "Proxy", "Tracer", "Transformer", "has_side_effect",
           "map_arg", "replace_pattern", "symbolic_trace", "wrap"]

__getattr__ = module_getattr(__name__)
