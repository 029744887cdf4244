"""``ember.__config__``: what ember was built with, as ``torch.__config__.show()`` reports PyTorch's build.

ember is Python on NumPy: the report names ember's and NumPy's versions and the BLAS and LAPACK NumPy was
built against (what ember's matrix products and decompositions run on), and ember's thread count.
"""

from __future__ import annotations

import platform

# (through ember's array module, which tunes OpenBLAS's threads before NumPy loads it: a plain ``import numpy`` here,
# the first module ``ember/__init__`` imports, would load it untuned)
from ._backend import xp


def show() -> str:
    """A human-readable report of ember's build (PyTorch's lists its compiler, BLAS and build flags)."""
    from . import _parallel, version

    lines = ["ember built with:", f"  - ember {version.EMBER_VERSION} (PyTorch API {version.__version__})",
             f"  - Python {platform.python_version()}", f"  - NumPy {xp.__version__}"]
    try:
        dependencies = xp.show_config(mode="dicts").get("Build Dependencies", {})
    except TypeError:  # (NumPy before 1.26 prints its configuration and has no dicts mode)
        dependencies = {}
    for library in ("blas", "lapack"):
        info = dependencies.get(library, {})
        if info.get("found"):
            lines.append(f"  - {library.upper()}: {info.get('name')} {info.get('version')}")
    lines.append(f"  - threads: {_parallel.get_num_threads()}")
    return "\n".join(lines) + "\n"
