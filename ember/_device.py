"""``ember.device``: ember computes on the CPU; "cuda" names a device it does not have."""

from __future__ import annotations


class device:
    """A device name, like ``torch.device``. Only ``cpu`` can hold tensors in ember."""

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string like 'cpu' or 'cuda:0', got {type!r}")
        name, _, idx = type.partition(":")
        if name not in ("cpu", "cuda", "mps", "meta"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, mps, meta device type at start of device string: {type}"
            )
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


CPU = device("cpu")


class _NoDeviceError(RuntimeError, AssertionError):
    """A device ember does not have: an AssertionError as PyTorch's CPU build raises ("Torch not compiled with
    CUDA enabled"), and a RuntimeError as its GPU build raises where no GPU is found."""


def check_device(dev) -> None:
    """Raise a clear error for any device other than the CPU."""
    if dev is None:
        return
    d = dev if isinstance(dev, device) else device(dev)
    if d.type != "cpu":
        if d.type == "meta":
            why = ("ember has no meta device (tensors with a shape and no data, for building large models before "
                   "loading their weights): create them on the CPU")
        else:
            probe = {"cuda": "cuda", "mps": "backends.mps"}.get(d.type)
            why = f"no {d.type.upper()} is available to ember. Use device='cpu'" + (
                f" (ember.{probe}.is_available() is False)" if probe else "")
        raise _NoDeviceError(f"ember computes on the CPU only, but device '{d}' was requested: {why}.")
