"""``ember.cuda``: ember computes on the CPU, so this is PyTorch's CUDA module on a machine without a GPU.

``is_available()`` is False and ``device_count()`` is 0, so the usual
``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the CPU.
What PyTorch answers without a GPU is answered the same way: seeding and
``empty_cache`` are no-ops, memory counters are 0. Functions that
need a device (``current_device``, ``synchronize``, ``set_device``, ...) raise
``CudaUnavailableError``, a RuntimeError that is also an AssertionError, the
type PyTorch raises on a build without CUDA. Creating or moving tensors to
"cuda" raises a RuntimeError from ``ember._device.check_device``.
"""

from __future__ import annotations

from .._device import OutOfMemoryError as OutOfMemoryError  # (torch.cuda.OutOfMemoryError is torch's)
from .._device import needs_device
from .._legacy import cuda_types
from .._missing import module_getattr


class CudaUnavailableError(RuntimeError, AssertionError):
    """A CUDA-only function was called; ember has no GPU backend."""


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


# PyTorch's flag behind is_initialized(), which library code reads directly (reversible layers test it before
# saving the CUDA generators' states): never set here, as no CUDA context is ever made
_initialized = False


def _is_in_bad_fork() -> bool:
    """False: PyTorch's answer to "was CUDA initialised before this process forked?" (seeding helpers, DeLU's
    among them, read it before touching the CUDA generators); no CUDA context is ever made here, so no fork is bad."""
    return False


def is_bf16_supported() -> bool:
    return False


def manual_seed(seed: int) -> None:
    """No-op: there is no CUDA generator (``ember.manual_seed`` seeds the CPU one)."""


def manual_seed_all(seed: int) -> None:
    """No-op, like ``manual_seed``."""


def seed() -> None:
    """No-op, like ``manual_seed``."""


def seed_all() -> None:
    """No-op, like ``manual_seed``."""


def empty_cache() -> None:
    """No-op: there is no CUDA memory to release."""


def memory_allocated(device=None) -> int:
    """0: no CUDA memory is ever allocated (as PyTorch reports without a GPU)."""
    return 0


def max_memory_allocated(device=None) -> int:
    """0, like ``memory_allocated``."""
    return 0


def memory_reserved(device=None) -> int:
    """0, like ``memory_allocated``."""
    return 0


def max_memory_reserved(device=None) -> int:
    """0, like ``memory_allocated``."""
    return 0


def reset_peak_memory_stats(device=None) -> None:
    """No-op: there are no CUDA peak statistics to reset (``max_memory_allocated()`` stays 0)."""


def reset_max_memory_allocated(device=None) -> None:
    """No-op, like ``reset_peak_memory_stats``."""


def memory_stats(device=None) -> dict:
    """Empty: no CUDA memory statistics (PyTorch answers the same without a GPU)."""
    return {}


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """Raises KeyError, as PyTorch's CPU build: the summary is built from ``memory_stats()``, which holds no
    statistics without a GPU (its first look-up, ``"allocated_bytes.all.current"``, fails)."""
    stats = memory_stats(device)
    return stats["allocated_bytes.all.current"]


def get_arch_list() -> list[str]:
    """No CUDA architectures: ember is not built for any."""
    return []


def get_rng_state_all() -> list:
    """No CUDA generators: an empty list."""
    return []


def set_rng_state(new_state, device="cuda") -> None:
    """Nothing to set: as on a CPU-only PyTorch, which defers the call until CUDA starts (it never does)."""


def set_rng_state_all(new_states) -> None:
    """Nothing to set (see ``set_rng_state``)."""


def _unavailable(name: str):
    return needs_device("cuda", name, CudaUnavailableError)


current_device = _unavailable("current_device")
synchronize = _unavailable("synchronize")
set_device = _unavailable("set_device")
get_device_name = _unavailable("get_device_name")
get_device_properties = _unavailable("get_device_properties")
get_device_capability = _unavailable("get_device_capability")
current_stream = _unavailable("current_stream")
default_stream = _unavailable("default_stream")
mem_get_info = _unavailable("mem_get_info")
get_rng_state = _unavailable("get_rng_state")
initial_seed = _unavailable("initial_seed")
ipc_collect = _unavailable("ipc_collect")
init = _unavailable("init")


def _device_class(name: str, what: str) -> type:
    """A CUDA class (for annotations and ``isinstance``) whose creation raises CudaUnavailableError, as PyTorch
    without CUDA raises a RuntimeError."""

    def __init__(self, *args, **kwargs) -> None:
        _unavailable(name)()

    return type(name, (), {"__init__": __init__, "__doc__": f"{what}: creating one needs a GPU, and ember has none.",
                           "__module__": __name__})


CUDAGraph = _device_class("CUDAGraph", "A captured CUDA graph")
Stream = _device_class("Stream", "A CUDA stream")
Event = _device_class("Event", "A CUDA event")
graph = _device_class("graph", "The context that captures a CUDA graph")


class StreamContext:
    """``with torch.cuda.StreamContext(stream):``, the stream of a block: with ``None`` (what code passes when it
    has no stream, as on the CPU) it does nothing, as in PyTorch; a stream needs a GPU (CudaUnavailableError)."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        if self.stream is not None:
            _unavailable("StreamContext")()

    def __exit__(self, *exc) -> bool:
        return False


def stream(stream) -> StreamContext:
    """``with torch.cuda.stream(s):``: ``StreamContext(s)``."""
    return StreamContext(stream)


class device:
    """``with torch.cuda.device(i):``, the CUDA device for a block: entering it with a device index (0, "cuda:1")
    raises CudaUnavailableError, as PyTorch without CUDA raises; ``device(-1)`` (no device) does nothing."""

    def __init__(self, device) -> None:
        index = getattr(device, "index", device)
        if isinstance(device, str):
            index = int(device.partition(":")[2] or 0) if device.startswith("cuda") else -1
        self.idx = -1 if index is None else int(index)

    def __enter__(self) -> None:
        if self.idx >= 0:
            _unavailable("device")()

    def __exit__(self, *exc) -> bool:
        return False


# Legacy CUDA tensor types: ``isinstance(x, torch.cuda.FloatTensor)`` is False, constructing one a TypeError.
_types = cuda_types()
FloatTensor, DoubleTensor, HalfTensor = _types["FloatTensor"], _types["DoubleTensor"], _types["HalfTensor"]
ByteTensor, CharTensor, ShortTensor = _types["ByteTensor"], _types["CharTensor"], _types["ShortTensor"]
IntTensor, LongTensor, BoolTensor = _types["IntTensor"], _types["LongTensor"], _types["BoolTensor"]
BFloat16Tensor = _types["BFloat16Tensor"]

__getattr__ = module_getattr(__name__)  # torch.cuda.amp loads on first use; a missing name says torch.cuda.X
