"""``ember.distributed.rpc``: PyTorch's ``torch.distributed.rpc`` over MPI point-to-point messages.

    import ember.distributed.rpc as rpc
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world_size)
    y = rpc.rpc_sync("worker0", ember.add, args=(x, 1))        # runs on worker0, result here
    rref = rpc.remote("worker0", Model)                        # the model lives on worker0
    rpc.shutdown()                                             # waits for every worker's outstanding work

Layers: ``constants.py`` and ``options.py`` (defaults, backend names, options), ``agent.py`` (the MPI agent:
listener thread and call pool), ``_wire.py`` (what is pickled), ``api.py`` (init/shutdown/calls), ``rref.py``
(RRef, ``remote``), ``functions.py`` (``async_execution``) and ``_grad_context.py`` (what
``ember.distributed.autograd`` records as tensors cross workers). See docs/api.md, "RPC", for the threading
model and the differences from PyTorch.
"""

from . import constants, functions
from .agent import WorkerInfo
from .api import get_worker_info, init_rpc, is_initialized, rpc_async, rpc_sync, shutdown
from .options import BackendType, RpcBackendOptions, TensorPipeRpcBackendOptions
from .rref import RRef, remote


def is_available() -> bool:
    """Whether RPC can run here (mpi4py importable)."""
    from .. import comm

    return comm.is_available()


__all__ = ["BackendType", "RRef", "RpcBackendOptions", "TensorPipeRpcBackendOptions", "WorkerInfo", "constants",
           "functions", "get_worker_info", "init_rpc", "is_available", "is_initialized", "remote", "rpc_async",
           "rpc_sync", "shutdown"]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
