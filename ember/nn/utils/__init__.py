"""``ember.nn.utils``: gradient clipping, flat parameter vectors, weight and spectral normalization (hooks,
``parametrize``, ``parametrizations``), and ``rnn`` (packed sequences)."""

from . import parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["parametrizations", "parametrize", "rnn", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_",
           "clip_grads_with_norm_", "get_total_norm", "parameters_to_vector", "vector_to_parameters", "weight_norm",
           "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
