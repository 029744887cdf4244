"""``ember.nn.utils``: gradient clipping, flat parameter vectors, weight and spectral normalization (hooks,
``parametrize``, ``parametrizations``), batch norm folding (``fusion``), ``skip_init``, and ``rnn`` (packed
sequences)."""

from . import fusion, parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["fusion", "parametrizations", "parametrize", "rnn", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_",
           "clip_grads_with_norm_", "get_total_norm", "parameters_to_vector", "vector_to_parameters", "weight_norm",
           "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init"]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
