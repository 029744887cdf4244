"""PyTorch's ``grad_fn._saved_<name>`` attributes: the tensors (and arguments) a node saved for backward.

PyTorch exposes what each node saved under the names of its derivative formula (``MulBackward0._saved_self``,
``_saved_other``; ``ExpBackward0._saved_result``; ``SumBackward0._saved_self_sym_sizes``), and programs that
inspect the autograd graph read them (torchviz's ``show_saved``, the "autograd mechanics" notes). An op's node
class declares them next to its formula, as class attributes:

    _saved_self = saved_tensor(0)    # saved[0], as a tensor
    _saved_other = saved_tensor(1, number_as_tensor=True)

so ``dir(grad_fn)`` lists them, as PyTorch's. A saved input reads back as PyTorch's does: a leaf is the leaf
itself; another input is a tensor of the graph at that input's place (PyTorch gives the caller's own object);
a saved output is a new tensor over the output's memory whose ``grad_fn`` is the node, as PyTorch's (``y is
y.grad_fn._saved_result`` is False there too). An entry no computed gradient reads (``Node.saved_for``) was not
saved: None, as PyTorch's. After backward freed the node, and for a tensor changed in place since it was saved,
reading one is PyTorch's error.
"""

from __future__ import annotations

from typing import Any

from .._backend import xp
from .._tensor import Tensor
from .graph import _RELEASED_MSG, AccumulateGrad, Node, Unread, _modified_message, entry_tensor
from .saved_hooks import _Packed


def saved_value(node: Node, position: int, number_as_tensor: bool = False) -> Any:
    """The entry at ``position`` of ``node.saved`` as PyTorch's ``_saved_<name>`` gives it (the module's docstring).
    ``number_as_tensor``: a Python number there reads as the 0-d tensor PyTorch wraps it in (``x * 2``'s
    ``_saved_other`` is ``tensor(2)``), not as the number (``x ** 2``'s ``_saved_exponent`` is ``2``)."""
    saved = node.saved
    if saved is None:
        raise RuntimeError(_RELEASED_MSG)
    value = saved[position]
    if type(value) is Unread:
        return None
    if type(value) is _Packed:  # saved through saved-tensor hooks: what their unpack hook gives back
        return value.unpack(value.value)
    if not isinstance(value, xp.ndarray):
        return Tensor._make(xp.asarray(value)) if number_as_tensor and isinstance(value, (bool, int, float,
                                                                                        complex)) else value
    for counter, version, array, (source, k) in node._saved_versions:
        if k != position:
            continue
        if counter[0] != version:
            raise RuntimeError(_modified_message(node, array, (source, k), counter, version))
        if source is not None and not isinstance(source, int) and source[0].__class__ is AccumulateGrad:
            leaf = source[0].variable
            if leaf is not None and leaf._data is value:  # a leaf: the caller's tensor itself, as PyTorch's
                return leaf
        return entry_tensor(node, value, source, counter)
    return Tensor._make(value)  # an intermediate the formula reads (neither an input nor an output)


class saved_tensor:
    """Descriptor: ``node.saved[position]`` read as PyTorch's ``grad_fn._saved_<name>`` (``saved_value``)."""

    __slots__ = ("position", "number_as_tensor")

    def __init__(self, position: int, number_as_tensor: bool = False) -> None:
        self.position = position
        self.number_as_tensor = number_as_tensor

    def __get__(self, node: Node | None, owner: type | None = None) -> Any:
        if node is None:
            return self
        return saved_value(node, self.position, self.number_as_tensor)


def input_sizes(node: Node) -> tuple:
    """PyTorch's ``_saved_self_sym_sizes`` of an op of one tensor input: the input's shape (kept after backward)."""
    return tuple(node.input_shapes[0])
