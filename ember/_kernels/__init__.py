"""ember's kernel layer: the loops behind the ops, apart from the readable ops that call them.

An op file (``ember/ops``, ``ember/nn/_ops``) keeps its forward and backward as a few lines of array math and
calls a kernel for the memory-bound work. A kernel has two implementations: a compiled one (numba, in the modules
here) and the NumPy reference in the op's own module, which is also the fallback when numba cannot be imported.
``policy`` (``policy.py``) decides which runs, and every threshold or algorithm choice (threads, blocks, Winograd,
col2im) is one of its fields. ``_jit.py`` loads numba on the first compiled kernel a program needs.
"""

from .policy import KernelPolicy, policy

__all__ = ["KernelPolicy", "policy"]
