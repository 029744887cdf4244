"""``torch._C``: the few names of PyTorch's C++ binding that pure-Python libraries on the torch API call.

PyTorch's ``torch._C`` reaches its C++ core, which ember does not have (ember is NumPy underneath), so ember does
not mirror it. These names are here because libraries that public programs import call them on their ordinary
paths, and each has a meaning ember can give exactly:

- ``_log_api_usage_once(event)``: PyTorch reports the event to its C++ API-usage logger, which does nothing
  unless a program registers a C++ handler; for the user it is a no-op returning None. torchmetrics calls it
  when a metric is built, torchvision when its models are.
- ``_LinAlgError``: the class PyTorch names ``torch.linalg.LinAlgError`` (the same object), which torchdiffeq
  catches under its ``torch._C`` name.
- ``_TensorMeta``: the metaclass of ``torch.Tensor`` (``type(torch.Tensor)``; ember's Tensor is a plain Python
  class, so it is ``type``), which Lightning's checkpoint loader imports for its annotations.
- ``_are_functorch_transforms_active()``: whether a ``torch.func`` transform (``grad``, ``vjp``, ``jvp``,
  ``vmap`` and those built on them) is running its function in this thread; kornia asks it before writing in place.
- ``PyTorchFileReader``: the reader of a ``torch.save`` archive's records, ``torch.PyTorchFileReader`` (the same
  class, as in PyTorch), which lazy checkpoint loaders (lit-gpt's) open under its ``torch._C`` name.
- ``_nn._parse_to(*args, **kwargs)``: how ``Module.to`` reads its arguments, ``(device, dtype, non_blocking,
  memory_format)``; Lightning's and accelerate's overrides of ``to`` call it.

Any other name raises ember's MissingFeatureError (an AttributeError: ``hasattr(torch._C, name)`` is False,
as libraries probe it) with the reason and the names that exist.
"""

from __future__ import annotations

from .._missing import OUT_OF_SCOPE, MissingFeatureError
from .._tensor import Tensor
from ..linalg import LinAlgError as _LinAlgError  # noqa: F401 (torch._C's name for it)

_TensorMeta = type(Tensor)


def _log_api_usage_once(event: str) -> None:
    """Record that the API ``event`` names was used, once per process: PyTorch hands it to a C++ logger that
    does nothing unless a handler is registered from C++, so a Python program sees no effect. Also a no-op here;
    ``event`` must be a string, as PyTorch's binding requires."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")  # (PyTorch's binding's words)


def _are_functorch_transforms_active() -> bool:
    """Whether a ``torch.func`` transform is running its function in this thread, as PyTorch's."""
    from ..func._scope import transforms_active

    return transforms_active()


PROVIDED = ("PyTorchFileReader", "_LinAlgError", "_TensorMeta", "_are_functorch_transforms_active",
            "_log_api_usage_once", "_nn._parse_to")


def refuse(module: str, name: str):
    """``module.name`` (``torch._C`` or one of its submodules), which ember does not have: a protocol probe
    (``__wrapped__``) gets the usual AttributeError, a name PyTorch's binding has MissingFeatureError with the
    reason and what ember's ``torch._C`` offers."""
    if name.startswith("__"):
        return AttributeError(f"module '{module.replace('torch', 'ember', 1)}' has no attribute '{name}'")
    return MissingFeatureError(f"{module}.{name} is not implemented in ember: {OUT_OF_SCOPE['torch._C']} (ember's "
                               f"torch._C has only {', '.join(PROVIDED)}, which pure-Python libraries call)")


def __getattr__(name: str):
    if name == "PyTorchFileReader":  # (its module loads the serialization code: on first use)
        from ..serialization._file_reader import PyTorchFileReader

        return PyTorchFileReader
    raise refuse("torch._C", name)


from . import _nn  # noqa: E402, F401  (after ``refuse``, which it uses)
