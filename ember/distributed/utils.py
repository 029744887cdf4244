"""``torch.distributed.utils``: the module-state broadcast that DistributedDataParallel starts with, which training
libraries call on their own (Lightning's DDP strategy, before validating or testing a model it did not wrap)."""

from __future__ import annotations

from collections.abc import Container

from .._missing import module_getattr
from . import process_group as _process_group


def _sync_module_states(module, process_group: _process_group.ProcessGroup | None, broadcast_bucket_size: int,
                        src: int, params_and_buffers_to_ignore: Container[str], broadcast_buffers: bool = True
                        ) -> None:
    """Copy rank ``src``'s parameters (and buffers, with ``broadcast_buffers``) of ``module`` into every rank's,
    leaving out those named in ``params_and_buffers_to_ignore`` (collective over ``process_group``; None: the default
    group). ``broadcast_bucket_size`` is accepted: ember sends them in one broadcast."""
    from ..nn.parallel.distributed import broadcast_from_rank0

    group = _process_group.resolve(process_group, "_sync_module_states")
    tensors = [p for name, p in module.named_parameters() if name not in params_and_buffers_to_ignore]
    if broadcast_buffers:
        tensors += [b for name, b in module.named_buffers() if name not in params_and_buffers_to_ignore]
    broadcast_from_rank0(group.comm, tensors, src)


__getattr__ = module_getattr(__name__)
