"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, packed input) and their single-step cells.

Each layer and direction runs as one fused op (``ember/nn/_ops/rnn.py``): a time loop in forward, hand-written
backpropagation through time in backward. Parameter names, shapes, order and initialisation are PyTorch's.
"""

from __future__ import annotations

import math
import numbers
import weakref
from typing import TYPE_CHECKING, Any

from ... import _creation, _warnings
from ..._tensor import Tensor
from ...autograd.graph import shown_as
from ...ops.indexing import index_select
from ...ops.shape import cat, stack
from .. import init
from .._ops.dropout import dropout as _dropout
from .._ops.rnn import GATES, rnn_layer
from ..utils.rnn import PackedSequence
from .linear import _empty_param
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _dtype_name(t: Tensor) -> str:
    return f"torch.{str(t.dtype).split('.')[-1]}"


# each RNN's weak references to the weights its ``_flat_weights`` was read from (see RNNBase._init_flat_weights)
_READ_FROM: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU: ``mode`` is "LSTM", "GRU", "RNN_TANH" or "RNN_RELU".

    Parameters per layer l and direction (suffix ``_reverse`` for the backward one): ``weight_ih_l{l}``
    (gates*hidden, input), ``weight_hh_l{l}`` (gates*hidden, hidden or proj_size), ``bias_ih_l{l}``,
    ``bias_hh_l{l}`` and, for LSTM with ``proj_size > 0``, ``weight_hr_l{l}`` (proj_size, hidden); all
    initialised U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch.
    """

    if TYPE_CHECKING:  # forward returns (output, h_n) or, for LSTM, (output, (h_n, c_n))
        def __call__(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]: ...  # type: ignore[override]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        if mode not in GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            _warnings.warn_in("torch.nn.modules.rnn", "dropout option adds dropout after all but last recurrent "
                              "layer, so non-zero dropout expects num_layers greater than 1, but got "
                              f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)  # (once per class)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {"weight_ih": (gate_size, layer_input), "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    setattr(self, kind + suffix, _empty_param(*shape, dtype=dtype, device=device))
                    names.append(kind + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Kept for PyTorch compatibility: a no-op (there is no cuDNN weight buffer to compact)."""

    # The weights forward computes with are the list ``_flat_weights``, as in PyTorch: assigning a weight updates
    # it, and so does assigning the list itself (``higher`` gives an RNN its fast weights that way); a weight
    # replaced otherwise (``torch.func.functional_call``, a parametrization, a move to the meta device) is seen by
    # its identity at the next forward, and the list is read again. The weak references to the weights the list
    # was read from are kept beside the module (``_READ_FROM``), not in its ``__dict__`` as PyTorch's
    # ``_flat_weight_refs``: ``torch.save`` of the whole module stores that dict, and weak references do not store.
    def _init_flat_weights(self) -> None:
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names]
        _READ_FROM[self] = [weakref.ref(w) if w is not None else None for w in self._flat_weights]

    def __setattr__(self, attr: str, value: Any) -> None:
        if hasattr(self, "_flat_weights_names") and attr in self._flat_weights_names:
            self._flat_weights[self._flat_weights_names.index(attr)] = value
        super().__setattr__(attr, value)

    def _weights_have_changed(self) -> bool:
        refs = _READ_FROM.get(self)
        if refs is None:  # a copy, or a module loaded whole: read the list from its own weights
            return True
        params = self._parameters  # (read directly: Module's __getattr__ per weight would cost each forward)
        for ref, name in zip(refs, self._flat_weights_names, strict=True):
            weight = params[name] if name in params else getattr(self, name, None)
            if weight is not None and ref is not None and ref() is not weight:
                return True
        return False

    def _update_flat_weights(self) -> None:
        if self._weights_have_changed():
            self._init_flat_weights()

    def _apply_to_tensors(self, convert, moves=None):
        out = super()._apply_to_tensors(convert, moves)
        self._init_flat_weights()  # (a move to or from the meta device replaces the parameters)
        return out

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._init_flat_weights()  # (as PyTorch's: the list read again from the weights)

    @property
    def all_weights(self) -> list[list[Tensor]]:
        """The parameters per layer and direction, in PyTorch's order (w_ih, w_hh, b_ih, b_hh, w_hr)."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------------ forward
    def _name(self) -> str:
        return type(self).__name__

    def _check_input(self, data: Tensor, packed: bool) -> None:
        w = self._flat_weights[0]
        if data.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({_dtype_name(data)}) does not match weight dtype "
                             f"({_dtype_name(w)}). Convert input: input.to({_dtype_name(w)}), or convert model: "
                             f"model.to({_dtype_name(data)})")
        expected = 2 if packed else 3
        if data.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {data.dim()}")
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {data.shape[-1]}")

    def _state_shapes(self, batch: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (layers, batch, real_hidden), (layers, batch, self.hidden_size)

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | tuple[Tensor, Tensor] | None = None):
        """(output, h_n) — LSTM: (output, (h_n, c_n)). ``input`` is (T, B, input_size) ((B, T, ...) with
        ``batch_first``), (T, input_size) unbatched, or a PackedSequence (then so is ``output``); ``hx`` defaults
        to zeros of shape (num_layers * directions, B, hidden) (LSTM: a pair, h of size proj_size if set)."""
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        batched, batch_dim = True, 0 if self.batch_first else 1
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            batch_sizes = batch_sizes.tolist()
            batch = batch_sizes[0]
            if hx is not None and sorted_indices is not None:  # states are given in the caller's batch order
                hx = tuple(index_select(h, 1, sorted_indices) for h in hx) if lstm \
                    else index_select(hx, 1, sorted_indices)
        else:
            if input.dim() not in (2, 3):
                tail = " tensor instead" if self.mode.startswith("RNN") else " instead"
                raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
            batched = input.dim() == 3
            hx = self._check_state_dims(hx, batched)
            if not batched:
                input = input.unsqueeze(batch_dim)
            if self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[:2]
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            batch_sizes = [batch] * steps
            data = input
        self._update_flat_weights()
        self._check_input(data, packed)
        h_shape, c_shape = self._state_shapes(batch)
        if hx is None:
            h0 = _creation.zeros(*h_shape, dtype=data.dtype)
            c0 = _creation.zeros(*c_shape, dtype=data.dtype) if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            self._check_state_size(h0, h_shape, "Expected hidden[0] size {}, got {}" if lstm else None)
            if lstm:
                self._check_state_size(c0, c_shape, "Expected hidden[1] size {}, got {}")
        if not packed:
            data = data.reshape(len(batch_sizes) * batch, self.input_size)
        out, h_n, c_n = self._run(data, h0, c0, batch_sizes)
        if packed:
            output = PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices)
            if unsorted_indices is not None:
                h_n = index_select(h_n, 1, unsorted_indices)
                c_n = index_select(c_n, 1, unsorted_indices) if lstm else None
        else:
            output = out.reshape(len(batch_sizes), batch, out.shape[-1])
            if self.batch_first:
                output = output.transpose(0, 1)
            if not batched:
                output, h_n = output.squeeze(batch_dim), h_n.squeeze(1)
                c_n = c_n.squeeze(1) if lstm else None
        return output, ((h_n, c_n) if lstm else h_n)

    def _check_state_dims(self, hx, batched: bool):
        """PyTorch's checks that the states match a batched (3-D) or unbatched (2-D) input; unsqueezes the latter."""
        if hx is None:
            return None
        want = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if self.mode == "LSTM":
            if hx[0].dim() != want or hx[1].dim() != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            return hx if batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        if hx.dim() != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor")
        return hx if batched else hx.unsqueeze(1)

    @staticmethod
    def _check_state_size(h: Tensor, expected: tuple, msg: str | None) -> None:
        if tuple(h.shape) != expected:
            raise RuntimeError((msg or "Expected hidden size {}, got {}").format(expected, list(h.shape)))

    def _run(self, data: Tensor, h0: Tensor, c0: Tensor | None, batch_sizes: list[int]):
        """All layers and directions over packed rows ``data``: (out rows, h_n, c_n)."""
        directions = 2 if self.bidirectional else 1
        hs, cs = [], []
        layer_in = data
        flat, all_weights = iter(self._flat_weights), []
        for names in self._all_weights:  # the flat list per layer and direction
            all_weights.append([next(flat) for _ in names])
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                ws = all_weights[k]  # [w_ih, w_hh, (b_ih, b_hh,) (w_hr)]
                b_ih, b_hh = (ws[2], ws[3]) if self.bias else (None, None)
                w_hr = ws[-1] if self.proj_size > 0 else None
                out, h, c = rnn_layer(layer_in, h0[k], None if c0 is None else c0[k], ws[0], ws[1], b_ih, b_hh,
                                      w_hr, self.mode, batch_sizes, reverse=direction == 1)
                outs.append(out)
                hs.append(h)
                cs.append(c)
            layer_in = outs[0] if directions == 1 else cat(outs, 1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_in = _dropout(layer_in, self.dropout, True)
        return layer_in, stack(hs, 0), (stack(cs, 0) if c0 is not None else None)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (``nonlinearity="relu"``: ReLU).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``; ``forward(input, hx=None) -> (output, h_n)``.
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, PyTorch's gate order (i, f, g, o); ``proj_size > 0`` projects h_t to that size.

    ``forward(input, (h0, c0)=None) -> (output, (h_n, c_n))``.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit, PyTorch's gate order (r, z, n) with n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).

    ``forward(input, hx=None) -> (output, h_n)``.
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """One time step: ``weight_ih`` (chunks*hidden, input), ``weight_hh`` (chunks*hidden, hidden), ``bias_ih``,
    ``bias_hh``; initialised U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = _empty_param(num_chunks * hidden_size, input_size, dtype=dtype, device=device)
        self.weight_hh = _empty_param(num_chunks * hidden_size, hidden_size, dtype=dtype, device=device)
        if bias:
            self.bias_ih = _empty_param(num_chunks * hidden_size, dtype=dtype, device=device)
            self.bias_hh = _empty_param(num_chunks * hidden_size, dtype=dtype, device=device)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _step(self, mode: str, input: Tensor, states: tuple):
        """Validate, run one step of ``mode``; returns (h', c') with c' None except for LSTM."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, s in enumerate(states):
            if s is not None and s.dim() not in (1, 2):
                what = f"hx[{i}]" if mode == "LSTM" else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        batch = input.shape[0]
        states = [_creation.zeros(batch, self.hidden_size, dtype=input.dtype) if s is None
                  else (s if batched else s.unsqueeze(0)) for s in states]
        for i, s in enumerate(states):
            if s.shape[0] != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden{i} batch size {s.shape[0]}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, "
                                   f"expected {self.hidden_size}")
        _, h, c = rnn_layer(input, states[0], states[1] if mode == "LSTM" else None, self.weight_ih,
                            self.weight_hh, self.bias_ih, self.bias_hh, None, mode, [batch])
        if mode in _CELL_NODE_NAMES:  # the node of the step's last op in PyTorch's cell (as a printed h shows it)
            shown_as(h, _CELL_NODE_NAMES[mode])
        if not batched:
            h, c = h.squeeze(0), (None if c is None else c.squeeze(0))
        return h, c


# PyTorch's cells end in their last gate op: h = tanh(...) or relu(...), GRU's h = n + z * (h - n). (LSTM's h and c,
# MulBackward0 and AddBackward0 there, are two outputs of ember's one node, which keeps its own name.)
_CELL_NODE_NAMES = {"RNN_TANH": "TanhBackward0", "RNN_RELU": "ReluBackward0", "GRU": "AddBackward0"}


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (``nonlinearity="relu"``: ReLU); input (B, I) or (I,)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, (hx,))[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: ``forward(input, (h, c)=None) -> (h', c')``; input (B, I) or (I,)."""

    if TYPE_CHECKING:
        def __call__(self, *args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]: ...  # type: ignore[override]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        return self._step("LSTM", input, (None, None) if hx is None else tuple(hx))


class GRUCell(RNNCellBase):
    """One GRU step: ``forward(input, hx=None) -> h'``; input (B, I) or (I,)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step("GRU", input, (hx,))[0]
