"""RPC's backend names, options and constants (``torch.distributed.rpc.BackendType``,
``TensorPipeRpcBackendOptions``, ``torch.distributed.rpc.constants``).

ember has one RPC engine, MPI point-to-point messages (``agent.py``). ``BackendType.TENSORPIPE`` (PyTorch's only
backend) selects it, so PyTorch scripts run unchanged. Of the options only ``rpc_timeout`` and
``num_worker_threads`` matter; ``init_method`` (the rendezvous) is accepted and not needed: MPI's launcher
already connected the workers. ``device_maps``/``devices`` describe GPUs, which ember does not have.
"""

from __future__ import annotations

import enum
from datetime import timedelta

from .constants import DEFAULT_INIT_METHOD, DEFAULT_NUM_WORKER_THREADS, DEFAULT_RPC_TIMEOUT_SEC


class BackendType(enum.Enum):
    """The RPC backends: PyTorch's only one, TENSORPIPE (ember runs it over MPI)."""

    TENSORPIPE = "TENSORPIPE"


class RpcBackendOptions:
    """Options every backend takes: the default timeout of a call (seconds; 0 means none) and the init method."""

    def __init__(self, rpc_timeout: float = DEFAULT_RPC_TIMEOUT_SEC, init_method: str = DEFAULT_INIT_METHOD) -> None:
        self.rpc_timeout = rpc_timeout.total_seconds() if isinstance(rpc_timeout, timedelta) else float(rpc_timeout)
        self.init_method = init_method


class TensorPipeRpcBackendOptions(RpcBackendOptions):
    """PyTorch's TensorPipe options; ``num_worker_threads`` is the size of the pool that runs incoming calls."""

    def __init__(self, *, num_worker_threads: int = DEFAULT_NUM_WORKER_THREADS,
                 rpc_timeout: float = DEFAULT_RPC_TIMEOUT_SEC, init_method: str = DEFAULT_INIT_METHOD,
                 device_maps: dict | None = None, devices: list | None = None, _transports=None,
                 _channels=None) -> None:
        super().__init__(rpc_timeout, init_method)
        if num_worker_threads < 1:
            raise ValueError(f"num_worker_threads must be positive, got {num_worker_threads}")
        self.num_worker_threads = int(num_worker_threads)
        self.device_maps = dict(device_maps or {})
        self.devices = list(devices or [])

    def set_device_map(self, to: str, device_map: dict) -> None:
        """Recorded only: ember runs on the CPU, where every tensor already is."""
        self.device_maps.setdefault(to, {}).update(device_map)

    def set_devices(self, devices: list) -> None:
        self.devices = list(devices)
