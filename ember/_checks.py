"""``torch._check`` and its kin: the assertions model and library code writes so that the graph compiler can
reason about sizes (``torch._check(x.size(0) > 0, lambda: "...")``). Eagerly, as here, each tests a Python bool and
raises its error type with ``message()`` (a callable, evaluated only on failure) or PyTorch's default message; the
tensor form tests that every element of a bool tensor is true."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable

_DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? If so, please report "
            "an enhancement request to PyTorch.)")


def _check_with(error_type: type[Exception], cond: bool, message: Callable[[], str] | None) -> None:
    """Raise ``error_type(message())`` (PyTorch's default message without one) where ``cond`` is False; ``cond``
    must be a bool (a tensor is PyTorch's TypeError, pointing at ``_check_tensor_all``)."""
    from ._tensor import Tensor

    if not isinstance(cond, builtins.bool):
        if isinstance(cond, Tensor):
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                            "torch._check_tensor_all() to assert that all elements are true.")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not issubclass(error_type, Exception) or issubclass(error_type, Warning):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, got {error_type}")
    if message is not None and not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(_DEFAULT if message is None else str(message()))


def _check(cond: bool, message: Callable[[], str] | None = None) -> None:
    """RuntimeError where ``cond`` is False."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond: bool, message: Callable[[], str] | None = None) -> None:
    """IndexError where ``cond`` is False."""
    _check_with(IndexError, cond, message)


def _check_value(cond: bool, message: Callable[[], str] | None = None) -> None:
    """ValueError where ``cond`` is False."""
    _check_with(ValueError, cond, message)


def _check_type(cond: bool, message: Callable[[], str] | None = None) -> None:
    """TypeError where ``cond`` is False."""
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond: bool, message: Callable[[], str] | None = None) -> None:
    """NotImplementedError where ``cond`` is False."""
    _check_with(NotImplementedError, cond, message)


def _check_tensor_all_with(error_type: type[Exception], cond, message: Callable[[], str] | None = None) -> None:
    """``error_type`` unless every element of the bool tensor ``cond`` is true."""
    from ._dtype import bool_
    from ._tensor import Tensor

    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype != bool_:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    _check_with(error_type, cond.all().item(), message)


def _check_tensor_all(cond, message: Callable[[], str] | None = None) -> None:
    """RuntimeError unless every element of the bool tensor ``cond`` is true."""
    _check_tensor_all_with(RuntimeError, cond, message)


def _check_is_size(i, message: Callable[[], str] | None = None, *, max=None) -> None:
    """RuntimeError unless ``i`` is a size (``i >= 0``, and ``i <= max`` where given); deprecated in PyTorch 2.13
    (its FutureWarning) for ``_check(i >= 0)``."""
    warnings.warn("_check_is_size will be removed in a future PyTorch release along with guard_size_oblivious.     "
                  "Use _check(i >= 0) instead.", FutureWarning, stacklevel=2)
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _assert_async(input, assert_msg: str | None = None) -> None:
    """``torch._assert_async``: RuntimeError unless the one-element tensor ``input`` is nonzero, ``assert_msg`` (if
    given) its message. PyTorch's CUDA form reports a failure later, its CPU form at once, as here (ember computes on
    the CPU); kornia checks its class labels with it."""
    from ._tensor import Tensor

    if not isinstance(input, Tensor):
        raise TypeError(f"_assert_async(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not input.is_nonzero():
        raise RuntimeError("Expected Tensor with single nonzero value, but got zero" if assert_msg is None
                           else assert_msg)
