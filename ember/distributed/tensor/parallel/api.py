"""``parallelize_module``: apply tensor-parallel styles to a module or to its submodules by name."""

from __future__ import annotations

import fnmatch
import sys
import warnings

from ...._warnings import warn_in
from ...device_mesh import DeviceMesh, current_mesh
from .style import ParallelStyle


def parallelize_module(module, device_mesh: DeviceMesh | None = None, parallelize_plan=None, *,
                       src_data_rank: int | None = 0):
    """Parallelise ``module`` in place over a 1-D ``device_mesh`` and return it.

    ``parallelize_plan`` is one ``ParallelStyle`` (applied to ``module`` itself) or a dict from submodule
    names to styles; a name is a dotted path whose parts may use ``*`` wildcards (``"layers.*.mlp.fc1"``),
    as in PyTorch. Parameters are distributed from mesh rank ``src_data_rank`` (None: each rank keeps its
    own values). A plan key that matches no submodule is skipped with a warning, as in PyTorch. Collective:
    every rank of the mesh must call it with the same plan."""
    mesh = device_mesh if device_mesh is not None else current_mesh("parallelize_module")
    if parallelize_plan is None:
        warnings.warn("No parallelize_plan is provided and auto-parallel is not supported at the moment, so this "
                      "parallelize_module call will do nothing.", stacklevel=2)
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        if mesh.ndim != 1:
            raise ValueError(f"parallelize_module: tensor parallelism needs a 1-D device mesh, got a {mesh.ndim}-d "
                             "one (slice it: mesh['tp'])")
        parallelize_plan.src_data_rank = src_data_rank
        return parallelize_plan._apply(module, mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(f"Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for parallelize_plan, "
                        f"{type(parallelize_plan)} found!")
    for path, style in parallelize_plan.items():
        if path == "":
            parallelize_module(module, mesh, style, src_data_rank=src_data_rank)
            continue
        first, _, rest = path.partition(".")
        matched = [child for name, child in module.named_children() if fnmatch.fnmatch(name, first)]
        if not matched:
            message = (f"Parallelize plan key '{path}' could not be resolved: no submodule matching token '{first}' "
                       f"in module {module}, skipping this plan entry.")
            if sys._getframe(1).f_code is parallelize_module.__code__:
                # a nested key's part, reached by the recursion: PyTorch's stacklevel=2 then names its own api.py's
                # frame, so the filters programs write for that module apply (the line shown is the program's)
                warn_in("torch.distributed.tensor.parallel.api", message)
            else:
                warnings.warn(message, stacklevel=2)
            continue
        for child in matched:
            parallelize_module(child, mesh, {rest: style} if rest else style, src_data_rank=src_data_rank)
    return module
