"""``ember.device``: ember computes on the CPU; "cuda" names a device it does not have; "meta" makes tensors with
a shape and a dtype and no data (``ember/_meta.py``)."""

from __future__ import annotations

# the device types PyTorch's ``torch.device`` parses (its CPU build too): a device of any of them can be named,
# and only the CPU (and meta, in the factories) holds tensors (``check_device``: PyTorch's CPU build refuses the
# others when a tensor is made or moved there)
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    """A device name, like ``torch.device`` (any of PyTorch's device types). Only ``cpu`` can hold tensors in
    ember."""

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string like 'cpu' or 'cuda:0', got {type!r}")
        name, _, idx = type.partition(":")
        if name not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                               f"{name}")
        self.type = name
        self.index = int(idx) if idx else index

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        # A device equals only a device: PyTorch's answers NotImplemented for a string, so `device == "cpu"` is
        # False there and code such as `if device == "auto":` relies on it not parsing the string.
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        """``with torch.device("meta"):``: the default device of the factories (``empty``, ``zeros``, a layer's
        parameters ...) inside the block, as ``set_default_device``."""
        check_device(self, allow_meta=True)
        _entered.append(_default[0])
        _default[0] = self
        return self

    def __exit__(self, *exc) -> None:
        _default[0] = _entered.pop()


CPU = device("cpu")
META = device("meta")
_default = [CPU]  # the default device (set_default_device, a device's ``with`` block)
_entered: list = []  # the defaults that the enclosing ``with device(...)`` blocks replaced


def default_device() -> device:
    return _default[0]


def set_default(dev) -> None:
    """``set_default_device``: None and the CPU restore the CPU; meta makes the factories' tensors meta ones."""
    check_device(dev, allow_meta=True)
    _default[0] = CPU if dev is None else dev if isinstance(dev, device) else device(dev)


def on_meta(dev) -> bool:
    """Whether a factory given ``device=dev`` makes a meta tensor (None: the default device decides)."""
    if dev is None:
        return _default[0].type == "meta"
    return (dev.type if isinstance(dev, device) else str(dev).partition(":")[0]) == "meta"


class _NoDeviceError(RuntimeError, AssertionError):
    """A device ember does not have: an AssertionError as PyTorch's CPU build raises ("Torch not compiled with
    CUDA enabled"), and a RuntimeError as its GPU build raises where no GPU is found."""


class OutOfMemoryError(RuntimeError):
    """``torch.OutOfMemoryError`` (also ``torch.cuda.OutOfMemoryError``): an accelerator's allocation failed.

    Programs catch it around a step to retry with a smaller batch; ember computes on the CPU and never raises it
    (a NumPy allocation that fails raises Python's ``MemoryError``)."""

    __module__ = "ember"


def needs_device(backend: str, name: str, error: type[Exception]):
    """``torch.<backend>.<name>``, a function that needs an accelerator ember does not have: calling it raises
    ``error`` (an AssertionError and a RuntimeError, the types PyTorch raises on a build without that backend)."""

    def fn(*args, **kwargs):
        raise error(f"torch.{backend}.{name}() needs a {backend.upper()} device: ember computes on the CPU only "
                    f"(ember.{backend}.is_available() is False). Use device='cpu'.")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Raises {error.__name__}: ``torch.{backend}.{name}`` needs a {backend.upper()} device, and ember "
                  "has none.")
    return fn


def check_device(dev, allow_meta: bool = False) -> None:
    """Raise a clear error for any device other than the CPU (and the meta device where the caller makes meta
    tensors: ``allow_meta``)."""
    if dev is None:
        return
    d = dev if isinstance(dev, device) else device(dev)
    if d.type != "cpu" and not (allow_meta and d.type == "meta"):
        if d.type == "meta":
            why = ("ember makes meta tensors (a shape and no data) only in its factories (empty, zeros, a layer's "
                   "parameters ...), Tensor.new_*, Tensor.to, Module.to and Module.to_empty: create this one on the "
                   "CPU")
        else:
            probe = {"cuda": "cuda", "mps": "backends.mps", "xpu": "xpu"}.get(d.type)
            why = f"no {d.type.upper()} is available to ember. Use device='cpu'" + (
                f" (ember.{probe}.is_available() is False)" if probe else "")
        raise _NoDeviceError(f"ember computes on the CPU only, but device '{d}' was requested: {why}.")
