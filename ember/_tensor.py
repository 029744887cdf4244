"""The Tensor: an array plus the autograd metadata that ties it into the graph.

Only the tensor's own state lives here (properties, hooks, ``backward``). The
math — every op — lives in ``ember/ops/``; the Tensor methods and operators that
call the ops are inherited from one mixin per op family (``ember/_tensor_methods/``).

Storage: ``_data`` holds an array of the array module (``ember._backend.xp``).
``_vc`` is the version counter, a one-element list shared by a tensor and its
views, bumped by every in-place change; backward compares it with the version
a node saw when it saved the tensor.
"""

from __future__ import annotations

import copy
import numbers
import warnings
from collections.abc import Callable
from typing import Any

from . import _dtype, _inference, _warnings
from ._arg_aliases import accept_torch_names_in_methods
from ._backend import xp
from ._device import CPU, META, check_device
from ._device import device as _device_type
from ._dtype import np_kind
from ._layout import strided
from ._memory_format import channels_last, channels_last_3d, strides_in_channels_last_order
from ._meta import as_laid_out, is_meta, no_data_error
from ._meta import made as _meta_made
from ._missing import MissingTensorMethods
from ._shown_name import shown_as_pytorchs
from ._size import Size, c_type_name, parsed_int
from ._tensor_methods import (
    ActivationMethods,
    ComplexMethods,
    ConversionMethods,
    CumulativeMethods,
    DistanceMethods,
    ElementwiseMethods,
    GammaMethods,
    IndexingMethods,
    IndexUpdateMethods,
    InplaceMethods,
    LinalgCompatMethods,
    LinalgMethods,
    LookupMethods,
    MatrixMethods,
    MemoryMethods,
    MovementMethods,
    PointwiseMethods,
    ReductionMethods,
    SamplingMethods,
    ShapeMethods,
    SortingMethods,
    SpecialMethods,
    StatisticsMethods,
    UnaryMethods,
    ViewInplaceMethods,
    named_as_tensor_methods,
)
from ._transform_scopes import scopes as _transform_scopes
from ._uninitialized import UnmaterializedArray, uninitialized_error


class _AutogradHooks:
    """What Tensor needs of autograd, installed by ``ember.autograd`` when it loads (``install_autograd``).

    Tensor knows the edge protocol — a non-leaf's gradient flows to ``(grad_fn, _output_nr)``, a leaf's to its
    accumulator — but not the graph or the engine, which build on Tensor: this module imports neither.
    """

    __slots__ = ("leaf_edge", "input_edge", "refresh_view", "base_requires_grad", "backward", "is_grad_enabled")

    def __init__(self) -> None:
        def not_loaded(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("ember.autograd is not loaded: import ember before using its tensors")

        self.leaf_edge: Callable[[Tensor], tuple] = not_loaded
        self.refresh_view: Callable[[Tensor], None] = not_loaded
        self.base_requires_grad: Callable[[Tensor, bool], None] = not_loaded
        self.backward: Callable[..., None] = not_loaded
        self.is_grad_enabled: Callable[[], bool] = not_loaded


_autograd = _AutogradHooks()


def install_autograd(*, leaf_edge: Callable[[Tensor], tuple], input_edge: Callable[[Tensor], tuple],
                     refresh_view: Callable[[Tensor], None], base_requires_grad: Callable[[Tensor, bool], None],
                     backward: Callable[..., None], is_grad_enabled: Callable[[], bool]) -> None:
    """``leaf_edge(t)``: a leaf's (AccumulateGrad, 0), made on first use; ``input_edge(t)``: any tensor's edge (a
    view's grad_fn made current first); ``refresh_view(t)``: an out-of-date view's grad_fn made again from its
    base's history; ``base_requires_grad(t, value)``: a root's views without history told its new flag;
    ``backward``: ``ember.autograd.backward``; ``is_grad_enabled``: this thread's grad mode."""
    _autograd.leaf_edge = leaf_edge
    _autograd.input_edge = input_edge
    _autograd.refresh_view = refresh_view
    _autograd.base_requires_grad = base_requires_grad
    _autograd.backward = backward
    _autograd.is_grad_enabled = is_grad_enabled


# PyTorch's warning (once per process) when float(t) or complex(t) reads a tensor that requires grad
SCALAR_OF_GRAD_TENSOR = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                         "Consider using tensor.detach() first.")


# PyTorch's error for the pre-0.4 stochastic functions' Tensor.reinforce, which says what replaces it
_REINFORCE_REMOVED = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""
# PyTorch's warning for the pre-0.4 volatile flag (Variable(x, volatile=True), x.volatile = True)
VOLATILE_REMOVED = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."


@shown_as_pytorchs("torch")  # <class 'torch.Tensor'> where torch is ember
@named_as_tensor_methods  # x.sum(foo=1)'s TypeError names Tensor.sum, not the mixin that defines it
@accept_torch_names_in_methods  # x.mul(other=y), x.sum(axis=0, keepdims=True), as PyTorch accepts
class Tensor(
    ElementwiseMethods, UnaryMethods, PointwiseMethods, ActivationMethods, ReductionMethods, StatisticsMethods,
    CumulativeMethods, ShapeMethods, ViewInplaceMethods, MovementMethods, IndexingMethods, IndexUpdateMethods,
    LookupMethods, LinalgMethods, LinalgCompatMethods, MatrixMethods, DistanceMethods, SortingMethods,
    SamplingMethods, InplaceMethods, GammaMethods, SpecialMethods, ComplexMethods, ConversionMethods, MemoryMethods,
    MissingTensorMethods,  # (last: any of ember's own definitions comes first)
):
    """A multi-dimensional array that can record the operations applied to it."""

    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad",
        "_grad_fn",  # (``grad_fn``: a view out of date since its base changed in place reads it again first)
        "_output_nr",
        "_vc",
        "_base",
        "_view_version",  # (views only, as _view_creation) the version their grad_fn is current at
        "_view_creation",  # (views only) None, "no_grad", (function name, output number) or ("of", the one of the
        # view it was made from, its own op's name): for PyTorch's in-place errors (ops/copy_slices.py)
        "_grad_accumulator",
        "_hooks",
        "_post_acc_hooks",
        "_retains_grad",
        "_grad_slot",
        "__weakref__",
        "__dict__",  # a program's own attributes (``param.sequence_parallel = True``), as PyTorch allows
    )

    # Tensors win over NumPy arrays in mixed arithmetic (ndarray + Tensor -> Tensor.__radd__).
    __array_priority__ = 1000
    is_sparse = False  # a sparse COO tensor is an ember._sparse.SparseTensor

    @property
    def layout(self):
        """``torch.strided`` (``torch.sparse_coo`` for a sparse tensor)."""
        return strided

    def __init__(self, *args: Any, device=None) -> None:
        """PyTorch's legacy constructor: ``Tensor(2, 3)`` is uninitialised, ``Tensor([1, 2])`` /
        ``Tensor(ndarray)`` convert to the default float dtype, ``Tensor(t)`` is a view of ``t``
        (``ember/_legacy.py``). New code uses ``ember.tensor``, ``ember.empty``, ``ember.as_tensor``."""
        from ._legacy import tensor_init

        tensor_init(self, args, device)

    def _init(self, array, requires_grad: bool = False) -> None:
        _fill(self, array, None, 0)
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _make(cls, array, grad_fn=None, output_nr: int = 0) -> Tensor:
        """Wrap an array without copying (internal constructor, no validation)."""
        t = cls.__new__(cls)
        _fill(t, array, grad_fn, output_nr)
        return t

    # ----------------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        return _new_tuple(Size, self._data.shape)  # (NumPy's shape: ints already, not checked again)

    def size(self, dim: int | None = None):
        """The shape, or the length of one dimension."""
        if dim is None:
            return _new_tuple(Size, self._data.shape)
        if not self._data.ndim:
            raise no_dimensions(dim)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_np(self._data.dtype)

    @property
    def device(self):
        return META if is_meta(self._data) else CPU  # (a sparse tensor's data is no array: on the CPU)

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return not is_meta(self._data)

    @property
    def is_meta(self) -> bool:
        return is_meta(self._data)

    # The other devices' and layouts' flags, False as on PyTorch's dense CPU tensors (a device check such as
    # ``if input.is_cuda or input.is_xpu`` runs the CPU path).
    is_xpu = is_mps = is_xla = is_ipu = is_maia = is_mtia = is_vulkan = is_cuda
    is_mkldnn = is_quantized = is_nested = is_cuda

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element, as ``element_size()``."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """``numel() * element_size()``: the bytes of the elements the tensor shows (a view or an expanded tensor
        counts its own elements, not its storage's), as PyTorch's."""
        return int(self._data.size) * self._data.itemsize

    def is_floating_point(self) -> bool:
        return np_kind(self._data.dtype) == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the elements lie in row-major order without gaps; with ``memory_format=torch.channels_last``
        (or ``channels_last_3d``), in that order instead (channels fastest), as PyTorch's strides would say."""
        data = self._data
        if _meta_made[0] and not data.flags.c_contiguous and is_meta(data):  # (laid out as PyTorch reports it)
            data = as_laid_out(data)
        if memory_format is channels_last or memory_format is channels_last_3d:
            return strides_in_channels_last_order(data, memory_format)
        return bool(data.flags.c_contiguous)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # ----------------------------------------------------------------- autograd state
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            if value:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value:
            check_can_require_grad(self, REFUSED_BY_ATTRIBUTE)
        if value and self._vc.__class__ is not list and not _inference.state.enabled:
            raise RuntimeError(_inference.REQUIRES_GRAD_OUTSIDE)
        if self._base is None and bool(value) != self._requires_grad:
            _autograd.base_requires_grad(self, bool(value))
        elif not value and self._base is not None and self._base._requires_grad and self._grad_fn is None \
                and self._grad_accumulator is None:
            return  # a view without history of a tensor that requires grad: PyTorch's reads its base's flag
        if value and self._base is not None and self._grad_fn is None:
            # a view without history (made under no_grad, or in grad mode while its base needed no gradient), told
            # to require grad itself, is a leaf that keeps its gradient, as PyTorch's (its own flag; the one it takes
            # from its base gives it none, even once that base requires grad): its accumulator says so. It stays a
            # no_grad view for PyTorch's in-place errors. (torchdiffeq's states are such views: autograd.grad
            # w.r.t. them must not call them history-less)
            _autograd.leaf_edge(self)
        if value and not self._requires_grad and self._grad_fn is None and _transform_scopes.stack:
            # a leaf made inside a torch.func transform's function: at the transform's level in PyTorch, none of
            # the caller's tensors (the scope's own: its gradient's results do not depend on it outside)
            _transform_scopes.stack[-1].own([self])
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad:
            check_can_require_grad(self, REFUSED_BY_METHOD)
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf). A view whose base (or another view of it) changed in
        place since its ``grad_fn`` was made reads it again from the base's history, as PyTorch regenerates it:
        a view made before its base first needed a gradient then needs one too."""
        fn = self._grad_fn
        if self._base is not None and self._view_version != self._vc[0] and (fn is not None or self._requires_grad):
            _autograd.refresh_view(self)
            return self._grad_fn
        return fn

    @grad_fn.setter
    def grad_fn(self, fn) -> None:
        self._grad_fn = fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        """This tensor's position among the outputs of its ``grad_fn`` (``x.unbind()[1]``: 1); 0 for a leaf, as
        PyTorch's."""
        fn = self.grad_fn
        return self._output_nr if fn is not None and fn is self._grad_fn else 0

    @property
    def volatile(self) -> bool:
        """Always False, with PyTorch's warning: ``volatile`` (before PyTorch 0.4) has no effect; setting it only
        warns (``with torch.no_grad():`` is what it meant)."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value: bool) -> None:
        warnings.warn(VOLATILE_REMOVED, UserWarning, stacklevel=2)

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient; None, with PyTorch's warning, on a non-leaf that does not retain it."""
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            _warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                           "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                           "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
                           "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                           "instead. See github.com/pytorch/pytorch/pull/30531 for more information.")
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: grad {Size(value._data.shape)} "
                    f"vs tensor {Size(self._data.shape)}"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: grad {value.dtype} vs tensor {self.dtype}"
                )
        self._grad = value

    @property
    def _version(self) -> int:
        if self._vc.__class__ is not list:
            raise RuntimeError(_inference.NO_VERSION)
        return self._vc[0]

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made under ``inference_mode()``, or a view of one. Outside
        inference mode it cannot be changed in place, saved for backward or made to require grad."""
        return self._vc.__class__ is not list

    def _bump_version(self) -> None:
        self._vc[0] += 1

    @property
    def data(self) -> Tensor:
        """The same storage, detached from the graph; in-place changes through it are not tracked (an inference
        tensor's is one too)."""
        out = Tensor._make(self._data)
        if self._vc.__class__ is not list:
            out._vc = _inference.DetachedInferenceCounter((0,))
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        # PyTorch's set_data: a tensor only, and one that can carry a gradient when this one requires grad (an
        # integer or bool tensor put into a parameter would leave it requiring grad with no gradient possible)
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {c_type_name(value)}")
        if self._requires_grad and np_kind(value._data.dtype) not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        self._data = value._data

    def detach(self) -> Tensor:
        """A tensor sharing storage and version counter, outside the graph."""
        out = Tensor._make(self._data)
        # (an inference tensor's: one that may change in place outside inference mode, as PyTorch's)
        out._vc = self._vc if self._vc.__class__ is list else _inference.DetachedInferenceCounter((0,))
        return out

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place; a view is PyTorch's RuntimeError (``detach()`` it)."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        return self._detach_in_place()

    def _detach_in_place(self) -> Tensor:
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn.retain_grad_of(self)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
        from .utils.hooks import RemovableHandle

        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn.register_pre_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        return RemovableHandle(self._hooks, hook)

    @property
    def _backward_hooks(self):
        """PyTorch's attribute: None until a hook is registered (``register_hook``), then an OrderedDict of the
        hooks that ``backward`` calls with this tensor's gradient, in order. Differences: a snapshot (PyTorch's is
        the live dict), keyed by position (PyTorch's by its handles' ids), read only (register and remove hooks
        through ``register_hook`` and its handle)."""
        from collections import OrderedDict

        if self.grad_fn is not None:
            pre = self.grad_fn._pre_hooks
            hooks = None if pre is None else pre.get(self._output_nr)
        else:
            hooks = self._hooks
        return None if hooks is None else OrderedDict(enumerate(hooks))

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]):
        """Call ``hook(tensor)`` after backward has accumulated into this leaf's ``.grad``."""
        from .utils.hooks import RemovableHandle

        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        return RemovableHandle(self._post_acc_hooks, hook)

    def _edge(self):
        """Where this tensor's gradient flows: (node, output_nr)."""
        if self._grad_fn is not None and self._base is None:
            return (self._grad_fn, self._output_nr)
        return _autograd.input_edge(self)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs=None) -> None:
        """Compute the gradient of this tensor w.r.t. graph leaves, accumulating into ``.grad``.

        Args:
            gradient: d(something)/d(self); may be omitted only for a one-element tensor.
            retain_graph: keep saved tensors so the graph can be walked again (default False).
            create_graph: not supported (ember does not differentiate through backward).
            inputs: accumulate only into these leaves.
        """
        _autograd.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    # ----------------------------------------------------------------- conversion
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        if is_meta(self._data):
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._data.item() if self._data.ndim == 0 else self._data.reshape(()).item()

    def tolist(self):
        if is_meta(self._data):
            raise no_data_error()
        return self._data.tolist()

    def numpy(self, *, force: bool = False):
        """The underlying array (shared memory). A bfloat16 tensor is PyTorch's TypeError (NumPy has no
        bfloat16; ``.float().numpy()`` gives its values)."""
        if self._data.dtype.name == "bfloat16":
            raise TypeError("Got unsupported ScalarType BFloat16")
        if is_meta(self._data):
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                            "host memory first.")
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        return self._data

    def __array__(self, dtype=None, copy=None):
        """``numpy.asarray(t)``, and NumPy functions given a tensor (``np.mean([loss, ...])``, ``np.clip(action,
        ...)``): ``numpy()``'s array, so a tensor that requires grad is its RuntimeError (detach first), as
        PyTorch's."""
        if is_meta(self._data):
            raise no_data_error()
        if self._requires_grad:
            self.numpy()  # (PyTorch's error: the array would leave the graph without a word)
        return self._data if dtype is None else self._data.astype(dtype)

    def __array_wrap__(self, array):
        """A NumPy ufunc's result on a tensor (``np.exp(t)``, ``np.add(t, 1)``, ``np.sqrt(t)``) as a tensor sharing
        the array's memory (``from_numpy``), a bool result as uint8, as PyTorch's ``__array_wrap__`` gives it. It
        takes the array alone, as PyTorch's does, so NumPy 2 gives the same DeprecationWarning for each result
        ("``__array_wrap__`` must accept context and return_scalar arguments")."""
        from ._creation import from_numpy

        if array.dtype == bool:
            array = array.astype("uint8")  # (PyTorch's workaround from before it had bool tensors, kept)
        return from_numpy(array)

    def _python_number(self, c_type: str | None = None):
        """The one element, for ``float(t)``, ``int(t)``: more elements are PyTorch's ValueError (``item()``'s
        is a RuntimeError). Read as a real ``c_type`` (``float``'s "double", ``int``'s "int64_t"), a complex element
        gives its real part where its imaginary part is 0, and PyTorch's RuntimeError naming the type otherwise."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self.item()
        if c_type is not None and isinstance(value, complex):
            if value.imag:
                raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
            return value.real
        return value

    def _warn_scalar_of_grad_tensor(self) -> None:
        """PyTorch warns, once per process, when ``float(t)`` or ``complex(t)`` reads a tensor that requires grad
        in grad mode (the number leaves the graph); ``int(t)``, ``bool(t)``, ``t.item()`` never warn."""
        if self._requires_grad and _autograd.is_grad_enabled():
            _warnings.warn_once(SCALAR_OF_GRAD_TENSOR)

    def __float__(self) -> float:
        self._warn_scalar_of_grad_tensor()
        return float(self._python_number("double"))

    def __int__(self) -> int:
        return int(self._python_number("int64_t"))

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def is_nonzero(self) -> bool:
        """The truth of a one-element tensor (``bool(t)``, ``torch.is_nonzero``); an empty tensor or one of more
        elements is PyTorch's RuntimeError, its wording naming which."""
        if self._data.size != 1:
            values = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {values} is ambiguous")
        return bool(self.item())

    def __bool__(self) -> bool:
        return self.is_nonzero()

    def __hash__(self) -> int:
        return id(self)

    def __contains__(self, element) -> bool:
        """``x in t``: whether any element of ``t`` equals ``x`` (a number or a tensor, broadcast), as PyTorch."""
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((element == self).any().item())
        raise RuntimeError(
            f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __repr__(self) -> str:
        from ._tensor_str import meta_repr, tensor_repr

        return meta_repr(self) if is_meta(self._data) else tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec) if spec else repr(self)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        from ._shared_memory import register

        register(cls)  # multiprocessing sends it as shared memory, as it sends a Tensor

    def __reduce_ex__(self, proto):
        """``pickle``: a copy of the data, its strides and offset, dtype, class and ``requires_grad``."""
        from ._tensor_pickle import reduce_tensor

        return reduce_tensor(self)

    def __copy__(self):
        """``copy.copy``: a leaf sharing this tensor's memory, as PyTorch's (see ``shallow_copy``)."""
        from ._tensor_pickle import shallow_copy

        return shallow_copy(self)

    def __deepcopy__(self, memo):
        """A copy of the data (views copied together share it) and of ``.grad``; a non-leaf is refused."""
        from ._tensor_pickle import deepcopy_array

        out = (type(self) if self.is_sparse else Tensor)._make(deepcopy_array(self, memo))
        out._requires_grad = self._requires_grad
        if self._grad is not None:
            out._grad = copy.deepcopy(self._grad, memo)
        if self.__dict__:  # a program's own attributes, copied as PyTorch copies them
            out.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = out
        return out

    # ----------------------------------------------------------------- device moves
    def cpu(self) -> Tensor:
        if is_meta(self._data):
            raise no_data_error()
        return self

    def cuda(self, device=None, non_blocking: bool = False) -> Tensor:
        check_device("cuda" if device is None else device if not isinstance(device, int) else f"cuda:{device}")
        return self

    def pin_memory(self, device=None) -> Tensor:
        """``self``: ember's tensors are ordinary CPU memory, which its data loading reads as PyTorch's pinned
        memory. ``device`` is PyTorch's deprecated argument (a DeprecationWarning, as there); the CPU is no
        accelerator to pin for (PyTorch's RuntimeError)."""
        if device is not None:
            _warnings.warn("The argument 'device' of Tensor.pin_memory() is deprecated. Please do not pass this "
                           "argument.", DeprecationWarning)
            self.is_pinned(device)  # (PyTorch's asks it too, with its own warning)
            if (device if isinstance(device, _device_type) else _device_type(device)).type == "cpu":
                raise RuntimeError("CPU device type not an accelerator.")
            check_device(device)
        return self

    def record_stream(self, s) -> None:
        """Raises NotImplementedError, as PyTorch for a CPU tensor: a tensor records the accelerator streams
        that use it (so its memory is not reused early), and a CPU tensor has none."""
        raise NotImplementedError("Could not run 'aten::record_stream' with arguments from the 'CPU' backend: "
                                  "a CPU tensor is used by no stream (ember computes on the CPU only).")

    def reinforce(self, reward) -> None:
        """Removed from PyTorch (before 0.4): raises its RuntimeError, which shows the ``torch.distributions``
        replacement (``-m.log_prob(action) * reward``)."""
        raise RuntimeError(_REINFORCE_REMOVED)

    def is_pinned(self, device=None) -> bool:
        """False: ember's tensors are ordinary CPU memory (``pin_memory`` has nothing to pin), as a tensor that
        was never pinned in PyTorch. ``device`` is PyTorch's deprecated argument (a DeprecationWarning, as
        there)."""
        if device is not None:
            _warnings.warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this "
                           "argument.", DeprecationWarning)
        return False


_ndarray, _scalar = xp.ndarray, xp.generic
_new_tuple = tuple.__new__  # (a Size of a NumPy shape, without Size.__new__'s check)
_inference_active = _inference.active


# PyTorch words its refusal of an integer or bool tensor that is to require gradients by the way it was asked:
REFUSED_BY_FACTORY = "Only Tensors of floating point and complex dtype"  # a factory's requires_grad=, Parameter(t)
REFUSED_BY_ATTRIBUTE = "only Tensors of floating point and complex dtype"  # t.requires_grad = True
REFUSED_BY_METHOD = "only Tensors of floating point dtype"  # t.requires_grad_()


def check_can_require_grad(t: Tensor, refused: str) -> None:
    """PyTorch's RuntimeError where ``t`` (neither floating nor complex) is to require gradients; ``refused`` is
    its first words, one of the ``REFUSED_BY_*`` above. ember adds the dtype and the usual fix."""
    if np_kind(t._data.dtype) not in "fc":
        raise RuntimeError(f"{refused} can require gradients, but this tensor has dtype {t.dtype}; convert it "
                           "first, e.g. t.float().requires_grad_()")


def _empty_strides(array):
    """``array`` (which has no elements) with PyTorch's contiguous strides: NumPy makes every stride of a new empty
    array 0, PyTorch computes them as for a non-empty tensor, a dimension of size 0 counted as 1
    (``torch.empty(2, 0, 3).stride() == (3, 3, 1)``); views of it (transposes, permutes) then permute them as
    PyTorch's do. An empty view of memory that holds elements (of an expanded tensor: ``x.expand(0, 4)[:, 0]``)
    keeps its strides, 0 as PyTorch's."""
    base = array.base
    while base.__class__ is _ndarray:  # (storage.root_array, which builds on Tensor)
        if base.size:
            return array
        base = base.base
    strides, step = [], array.itemsize
    for n in reversed(array.shape):
        strides.append(step)
        step *= max(n, 1)
    return xp.lib.stride_tricks.as_strided(array, strides=tuple(reversed(strides)), writeable=array.flags.writeable)


def _fill(t: Tensor, array, grad_fn, output_nr: int) -> None:
    """Set every field of a new tensor (the one place that lists them)."""
    if array.__class__ is not _ndarray:
        if isinstance(array, _scalar):
            # NumPy answers arithmetic on 0-d arrays and full reductions with a scalar, which is read-only;
            # a tensor owns writable memory (``acc = 0.0; acc += loss; acc += loss`` writes to it in place).
            array = xp.array(array)
        elif array.__class__ is UnmaterializedArray:
            # an op's result derived from an uninitialised parameter's storage (a view, a copy): PyTorch's refusal
            raise uninitialized_error(array.kind, "<built-in method of torch._C.TensorBase>")
    elif not array.size and array.ndim and not any(array.strides) and not (_meta_made[0] and is_meta(array)):
        array = _empty_strides(array)  # (a meta array's strides are all 0: its recorded layout is PyTorch's)
    t._data = array
    t._grad = None
    t._grad_fn = grad_fn
    t._output_nr = output_nr
    t._vc = [0] if not _inference_active[0] else _inference.new_counter()  # (an inference tensor's: _inference.py)
    t._base = None
    t._grad_accumulator = None  # the leaf's AccumulateGrad, made on its first recorded op
    t._hooks = None
    t._post_acc_hooks = None
    t._retains_grad = False
    t._grad_slot = None  # (GradStore, index): where backward puts the first gradient (autograd/grad_store.py)
    t._requires_grad = grad_fn is not None


def no_dimensions(dim: int) -> IndexError:
    """PyTorch's error for ``size(dim)`` or ``stride(dim)`` of a 0-d tensor (which has no dimension to wrap)."""
    return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dim; IndexError like PyTorch's when out of range."""
    n = ndim if ndim > 0 else 1  # (not max(): a builtin call per dim argument of every op)
    if dim.__class__ is not int:  # (a NumPy integer, a 0-d tensor as its int; a float or a bool: PyTorch's error)
        try:
            dim = parsed_int(dim)
        except TypeError:
            raise TypeError(f"argument 'dim' must be int, not {c_type_name(dim)}") from None
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def wrap_dims_once(dims, ndim: int, wrap_all_first: bool = False) -> tuple[int, ...]:
    """Each of ``dims`` wrapped (``_wrap_dim``), in order; PyTorch's RuntimeError at the first one that repeats a dim
    before it. As PyTorch reads the list: each dim wrapped before the next is looked at (squeeze, flip), or, with
    ``wrap_all_first`` (the reductions), every dim wrapped, its IndexError first, then the repeats looked for."""
    if wrap_all_first:
        dims = [_wrap_dim(d, ndim) for d in dims]
    wrapped: list[int] = []
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.append(w)
    return tuple(wrapped)


__all__ = ["Tensor", "xp"]
