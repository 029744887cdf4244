"""The meta device's tensors: a shape and a dtype, no data (PyTorch's ``device="meta"``).

Programs use it to build a large model without memory, then give the parameters real storage and initialise
them: ``with torch.device("meta"): model = Net()``, then ``model.to_empty(device="cpu")`` and an init (or
``load_state_dict(..., assign=True)``). Here a meta tensor is a tensor whose array is a view, all strides 0, of
one shared placeholder element (``_PLACEHOLDER``): it takes no memory whatever its shape, in-place writes into it
(a layer's initialisation under ``device("meta")``) land in that element and mean nothing, and reading its values
(``tolist``, ``item``, ``numpy``, printing them, moving it to the CPU) is PyTorch's error.

A random fill of a meta tensor (``uniform_``, ``normal_``, the ``nn.init`` schemes, so a layer built under
``device("meta")``) draws nothing, as PyTorch's meta kernels: the random state afterwards is PyTorch's. A meta
tensor's ``new_*`` tensors are meta tensors unless given another device, and ``Module.to("meta")`` moves a module
there.

Differences from PyTorch: an op on meta tensors computes on the placeholder and returns a CPU tensor of
meaningless values (PyTorch computes only the result's shape and dtype, on the meta device).
"""

from __future__ import annotations

import numpy as np

# one element of the widest dtype (complex128), which every meta array views in its own dtype
_PLACEHOLDER = np.zeros(16, np.uint8)


def meta_array(shape, dtype) -> np.ndarray:
    """A writable array of ``shape`` and ``dtype`` that takes no memory: every element is the placeholder."""
    dtype = np.dtype(dtype)
    element = _PLACEHOLDER[:dtype.itemsize].view(dtype).reshape(())
    return np.lib.stride_tricks.as_strided(element, tuple(shape), (0,) * len(shape), writeable=True)


def is_meta(array) -> bool:
    """Whether ``array`` is a meta tensor's (a view of the placeholder, as every view of one is)."""
    return type(array) is np.ndarray and array.base is not None and np.may_share_memory(array, _PLACEHOLDER)


def no_data_error() -> NotImplementedError:
    """PyTorch's error for reading a meta tensor's values (``.cpu()``, ``.tolist()``, ``to("cpu")``)."""
    return NotImplementedError("Cannot copy out of meta tensor; no data!")
