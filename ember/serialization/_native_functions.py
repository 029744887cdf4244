"""The paths pickle gives PyTorch's functions implemented in C, which their public namespaces re-export.

``pickle`` names a function by its ``__module__`` and ``__name__``: ``torch.nn.functional.gelu`` is the C function
``torch._C._nn.gelu`` (``GLOBAL 'torch._C._nn gelu'`` in a file ``torch.save`` wrote), ``torch.special.erf`` is
``torch._C._special.special_erf``; the functions written in Python (``F.relu``) keep their public path. ember's
writer of PyTorch's format names ember's counterparts with PyTorch's paths (the same bytes as ``torch.save``), and
its reader takes both spellings. The table lists, per public namespace, the names PyTorch implements in C.
"""

from __future__ import annotations

# public namespace: (the C module pickle names, the names there implemented in C, under their public name)
_NATIVE = {
    "torch.nn.functional": ("torch._C._nn", frozenset("""
        avg_pool2d avg_pool3d elu_ gelu hardtanh_ leaky_relu_ linear logsigmoid one_hot
        scaled_dot_product_attention softplus softshrink
    """.split())),
    "torch.special": ("torch._C._special", frozenset("""
        airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t chebyshev_polynomial_u
        chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc erfcx erfinv exp2 expit expm1
        gammainc gammaincc gammaln hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e
        laguerre_polynomial_l legendre_polynomial_p log1p log_ndtr log_softmax logit logsumexp
        modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 multigammaln ndtr ndtri
        polygamma psi round scaled_modified_bessel_k0 scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t
        shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc
        softmax spherical_bessel_j0 xlog1py xlogy zeta
    """.split())),
    "torch.fft": ("torch._C._fft", frozenset("""
        fft fft2 fftfreq fftn fftshift hfft hfft2 hfftn ifft ifft2 ifftn ifftshift ihfft ihfft2 ihfftn irfft
        irfft2 irfftn rfft rfft2 rfftfreq rfftn
    """.split())),
    "torch.linalg": ("torch._C._linalg", frozenset("""
        cholesky cholesky_ex cond cross det diagonal eig eigh eigvals eigvalsh householder_product inv inv_ex
        ldl_factor ldl_factor_ex ldl_solve lstsq lu lu_factor lu_factor_ex lu_solve matmul matrix_exp
        matrix_norm matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd
        svdvals tensorinv tensorsolve vander vecdot vector_norm
    """.split())),
}
# the C function's name where it is not the public one with the C module's prefix (``torch.special.erf``:
# ``special_erf``)
_PREFIX = {"torch.nn.functional": "", "torch.special": "special_", "torch.fft": "fft_", "torch.linalg": "linalg_"}
_RENAMED = {("torch.nn.functional", "logsigmoid"): "log_sigmoid"}
_PUBLIC = {(_NATIVE[public][0], _RENAMED.get((public, name), _PREFIX[public] + name)): (public, name)
           for public in _NATIVE for name in _NATIVE[public][1]}


def pickled_global(module: str, name: str) -> tuple[str, str]:
    """The module and name pickle writes for PyTorch's public function ``module.name``: its C module's where
    PyTorch implements it in C (``("torch._C._nn", "gelu")`` for ``torch.nn.functional.gelu``), else as given."""
    native = _NATIVE.get(module)
    if native is None or name not in native[1]:
        return module, name
    return native[0], _RENAMED.get((module, name), _PREFIX[module] + name)


def public_path(path: str) -> str:
    """The public ``module.name`` of the function a file names by its C path (``torch._C._nn.gelu``:
    ``torch.nn.functional.gelu``); any other path as it is."""
    module, _, name = path.rpartition(".")
    public = _PUBLIC.get((module, name))
    return path if public is None else f"{public[0]}.{public[1]}"
