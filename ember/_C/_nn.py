"""``torch._C._nn``: of PyTorch's binding to its neural-network functions, only ``_parse_to``, the reading of
``Module.to``'s arguments that Lightning's and accelerate's ``to`` overrides call (the functions themselves are
``torch.nn.functional``'s)."""

from __future__ import annotations

from .._to_args import parse_to as _parse_to  # noqa: F401 (PyTorch's name for it)


def __getattr__(name: str):
    from . import refuse

    raise refuse("torch._C._nn", name)
