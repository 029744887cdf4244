"""``ember.cuda.random``: the module PyTorch defines its CUDA generators' functions in
(``torch.cuda.random.manual_seed`` is ``torch.cuda.manual_seed``). They are ``ember.cuda``'s, answering as PyTorch
does without a GPU: seeding and setting states do nothing, ``get_rng_state_all()`` is empty, ``get_rng_state`` and
``initial_seed`` need a device."""

from __future__ import annotations

from .._missing import module_getattr
from . import (
               get_rng_state,
               get_rng_state_all,
               initial_seed,
               manual_seed,
               manual_seed_all,
               seed,
               seed_all,
               set_rng_state,
               set_rng_state_all,
)

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]

__getattr__ = module_getattr(__name__)
