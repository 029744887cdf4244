"""``skip_init``: a module built without running its initialisation."""

from __future__ import annotations

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialised: built on the meta device
    (no memory, no initialisation draws) and then given empty memory on ``device`` (default CPU), for weights that
    will be overwritten (``load_state_dict``, a custom init). As PyTorch's, it needs ``module_cls`` to take a
    ``device`` argument. The generator is left where it was."""
    if not inspect.isclass(module_cls):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    return module_cls(*args, **{**kwargs, "device": "meta"}).to_empty(device=final_device)
