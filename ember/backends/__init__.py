"""``ember.backends``: PyTorch's backend switches, answered as by a CPU-only build that uses none of them.

Programs set these flags for speed or reproducibility (``cudnn.benchmark = True``,
``cudnn.deterministic = True``, ``cuda.matmul.allow_tf32 = True``) and ask what
is available (``mps.is_available()``). ember keeps the values and acts on none:
it computes on the CPU with NumPy, which is deterministic and uses no cuDNN,
TF32, MPS or oneDNN. Every ``is_available()`` here is False.
"""

from __future__ import annotations

from .._missing import module_getattr
from . import cuda, cudnn, mha, mkl, mkldnn, mps, openmp

__all__ = ["cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "openmp"]

__getattr__ = module_getattr(__name__)
