"""While a vmap runs, ember's public functions dispatch on BatchedTensors.

On entering the outermost vmap, the public functions' bindings (and those of the internal ops the layers call) in
every loaded ember module are replaced by stand-ins (``ember/_rebind.py``) that pass plain arguments straight
through and send BatchedTensors to ``dispatch``; leaving the outermost vmap puts the functions back. Random
functions' stand-ins also apply vmap's ``randomness``. A function imported into a user's own module before vmap
keeps the plain binding: on a BatchedTensor it reads the array, and vmap runs the whole function once per example
(PyTorch's fallback, with its warning); a public function given to vmap itself (``vmap(torch.dot)``) is replaced
by its stand-in.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

from .._rebind import Rebinding, public_functions
from ._batched import _State, dispatch, top_level

# key -> rule(name, op, level, args, kwargs, mode) for random ops (``_rules_random.py``)
RANDOM_RULES: dict[str, Callable] = {}


def _stand_in(original, key: str):
    if key in RANDOM_RULES:
        from ._rules_random import random_dispatch

        def stand_in(*args, **kwargs):
            if not _State.levels:
                return original(*args, **kwargs)
            return random_dispatch(key, original, stand_in, args, kwargs)
    else:
        # The rules get the stand-in as the op: called on the batch values, which are batched tensors of the
        # levels below in nested vmaps, it dispatches again; on plain tensors it is the original.
        def stand_in(*args, **kwargs):
            level = top_level(args, kwargs)
            if level == 0:
                return original(*args, **kwargs)
            return dispatch(key, stand_in, args, kwargs, level)
    functools.update_wrapper(stand_in, original)
    return stand_in


_rebinding = Rebinding(_stand_in, internal=True)
enter, refresh, exit = _rebinding.enter, _rebinding.refresh, _rebinding.exit


def stand_in_for(func: Callable) -> Callable:
    """The stand-in of ``func`` where it is one of ember's public functions (``vmap(torch.dot)``: the function object
    itself, which no module binding leads to, so rebinding alone would leave it plain), else ``func``."""
    hit = public_functions().get(id(func))
    if hit is None or hit[0] is not func:
        return func
    stand_in = _rebinding.stand_in(func, hit[1])
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return stand_in

    def checked(*args, **kwargs):
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            return func(*args, **kwargs)  # a call the function refuses (an argument missing): its own TypeError
        return stand_in(*args, **kwargs)

    return checked
