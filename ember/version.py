"""``ember.version``: PyTorch's ``torch.version`` for ember.

``__version__`` names the PyTorch API level ember implements, with ember's own
version as the local segment: ``"2.13.0+ember0.1.0"``, a ``TorchVersion`` (it
compares as a version, and ``packaging.version.Version`` parses it). ``cuda``
and ``hip`` are None and ``debug`` False, as in a CPU-only PyTorch build. Under
``python -m ember.compat`` this is also ``torch.__version__``.
"""

from __future__ import annotations

from ._missing import module_getattr
from .torch_version import TorchVersion

API_LEVEL = "2.13.0"  # the PyTorch release whose API and behaviour ember's tests compare against
EMBER_VERSION = "0.1.0"  # ember's own version (ember.__version__; pyproject.toml)

__version__ = TorchVersion(f"{API_LEVEL}+ember{EMBER_VERSION}")
cuda: str | None = None
hip: str | None = None
debug: bool = False

__getattr__ = module_getattr(__name__)
