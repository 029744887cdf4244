"""The storage of an uninitialised parameter or buffer (``nn.UninitializedParameter``, a lazy module's weight before
its first forward): an array of no elements that refuses to be computed with, so that every op given such a tensor
raises PyTorch's ValueError, without a check on the ops' common path.

PyTorch refuses them in its ``__torch_function__`` (every torch function and Tensor method). ember's ops compute on
``tensor._data``: this array's NumPy ufuncs and array functions raise (``__array_ufunc__``,
``__array_function__``), and so do writes into it (``__setitem__``, ``fill``: in-place ops, ``nn.init``); an op
whose result NumPy derives from it without either (a view, a copy: NumPy keeps the subclass) is refused where the
result is wrapped (``_tensor._fill``, the path an array other than a plain ndarray takes). A factory that takes it
as its template (``zeros_like``, ``rand_like``, ...) refuses it where factories are wrapped (``refuse_template``,
called by ``_creation._allocating``); the methods that make a new tensor from it (``new_zeros``, ...) or return it
(``contiguous``, ``detach_``) are refused by its class (``nn.parameter._UninitializedMethods``). What only reads
metadata (``dtype``, ``device``, ``requires_grad``, ``size()``) and conversions of the module (``to``,
``float()``: ``astype`` keeps the subclass) still work, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

from ._backend import xp


class UnmaterializedArray(xp.ndarray):
    """An uninitialised tensor's array; ``kind``: its tensor's class name, which the error names."""

    kind = "UninitializedParameter"

    def __array_finalize__(self, obj: Any) -> None:
        self.kind = getattr(obj, "kind", UnmaterializedArray.kind)

    def __array_ufunc__(self, ufunc, method: str, *inputs: Any, **kwargs: Any):
        raise uninitialized_error(self.kind, f"<built-in method {ufunc.__name__}>")

    def __array_function__(self, func, types, args, kwargs):
        raise uninitialized_error(self.kind, f"<built-in method {func.__name__}>")

    # writes in place (an in-place op or an ``nn.init`` function: ``a[...] = v``, ``a.fill(v)``) refuse too
    def __setitem__(self, index: Any, value: Any) -> None:
        raise uninitialized_error(self.kind, "<slot wrapper '__setitem__' of 'torch._C.TensorBase' objects>")

    def fill(self, value: Any) -> None:
        raise uninitialized_error(self.kind, "<method 'fill_' of 'torch._C.TensorBase' objects>")


def unmaterialized(array: xp.ndarray, kind: str) -> UnmaterializedArray:
    """``array`` (of no elements) as an uninitialised tensor's storage."""
    out = array.view(UnmaterializedArray)
    out.kind = kind
    return out


def uninitialized_error(kind: str, where: str) -> ValueError:
    """PyTorch's error for an uninitialised parameter or buffer (its class ``kind``) used in ``where`` (the
    function or method, as PyTorch shows it)."""
    return ValueError(f"Attempted to use an uninitialized parameter in {where}. This error happens when you are "
                      f"using a `LazyModule` or explicitly manipulating `torch.nn.parameter.{kind}` objects. When "
                      "using LazyModules Call `forward` with a dummy batch to initialize the parameters before "
                      "calling torch functions")


def refuse_template(value: Any, factory: str) -> None:
    """PyTorch's error where ``value``, a factory's first argument (``zeros_like(t)``), is an uninitialised tensor:
    its shape is not known yet."""
    data = getattr(value, "_data", None)
    if data.__class__ is UnmaterializedArray:
        raise uninitialized_error(data.kind, f"<built-in method {factory} of type object>")
