"""``torch.special``'s Bessel functions of the first and second kinds (``bessel_j0`` ``bessel_j1`` ``bessel_y0``
``bessel_y1``), the modified ones of the second kind (``modified_bessel_k0`` / ``k1`` and their exp(x)-scaled
forms) and Airy's ``airy_ai``: functions PyTorch computes with no gradient, in the input's dtype (integers in the
default float dtype; float16, bfloat16 and complex inputs are PyTorch's NotImplementedError, ``bessel_fns._checked``).

The approximations are the Cephes library's (S. L. Moshier's), which PyTorch's kernels also evaluate, here with
NumPy in the input's dtype so that float32 results round as PyTorch's do:

- J0, J1 up to |x| = 5: a rational function of x^2 times the factors that vanish at the first zeros; beyond,
  Hankel's form sqrt(2 / (pi x)) (P cos(x - phase) - 5/x Q sin(x - phase)), P and Q rational in 25 / x^2.
- Y0, Y1 up to x = 5: a rational function plus (2/pi) log(x) J(x) (Y1 also -2 / (pi x)); beyond, Hankel's form with
  sin and cos exchanged. Negative arguments are NaN, 0 gives -inf.
- K0, K1 up to x = 2: a Chebyshev series in x^2 - 2 and the logarithmic term in I0 / I1; beyond, exp(-x) / sqrt(x)
  times a Chebyshev series in 8/x - 2. The scaled forms are these times exp(x). Negative arguments are NaN, 0 gives
  +inf.
- Ai: the Maclaurin series of Ai = c1 f - c2 g for -2.09 <= x < 2.09, the asymptotic forms (rational in 1/zeta,
  zeta = 2/3 |x|^(3/2)) beyond: an exponentially decaying one for x >= 2.09 (0 past x = 103.892), an oscillating one
  for x < -2.09; +-inf give NaN, as PyTorch's.
"""

from __future__ import annotations

import math

from .._backend import quiet, xp
from .._meta import iterator_layout, kept_layout
from .._tensor import Tensor
from .bessel_fns import _checked
from .special_fns import _i0_64, _i1_64

# --- Hankel's asymptotic forms of J and Y: P and Q, numerator and denominator (highest power first) ---------------
_P0_NUM = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
           5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
           9.99999999999999997821e-01)
_P0_DEN = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
           5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
           1.00000000000000000218e+00)
_Q0_NUM = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
           -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
           -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_Q0_DEN = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
           7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
           2.42005740240291393179e+02)
_P1_NUM = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
           5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
           1.00000000000000000254e+00)
_P1_DEN = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
           5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
           9.99999999999999997461e-01)
_Q1_NUM = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
           3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
           2.11688757100572135698e+02, 2.52070205858023719784e+01)
_Q1_DEN = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
           9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
           3.36093607810698293419e+02)

# --- J and Y up to 5: rational functions of x^2 ----------------------------------------------------------------
_J0_NUM = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
           9.70862251047306323952e+15)
_J0_DEN = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
           1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
           3.18121955943204943306e+16, 1.71086294081043136091e+18)
_J0_ZEROS_SQ = (5.78318596294678452118e+00, 3.04712623436620863991e+01)  # squares of J0's first two zeros
_J1_NUM = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
           3.68295732863852883286e+15)
_J1_DEN = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
           2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
           8.95222336184627338078e+16, 5.32278620332680085395e+18)
_J1_ZEROS_SQ = (1.46819706421238932572e+01, 4.92184563216946036703e+01)
_Y0_NUM = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
           -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
           4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_DEN = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
           8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
           2.50596256172653059228e+17)
_Y1_NUM = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
           -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_DEN = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
           1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
           6.87141087355300489866e+16, 3.97270608116560655612e+18)

# --- K: Chebyshev coefficients, in x^2 - 2 on (0, 2] and in 8/x - 2 beyond ----------------------------------------
_K0_NEAR = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
            1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
            1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
            -5.35327393233902768720e-01)
_K0_FAR = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
           -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
           6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
           -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
           1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
           -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
           2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
           -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
           2.44030308206595545468e+00)
_K1_NEAR = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
            -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
            -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
            -3.53155960776544875667e-01, 1.52530022733894777053e+00)
_K1_FAR = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
           1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
           -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
           3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
           -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
           2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
           -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
           1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
           2.72062619048444266945e+00)

# --- Ai's asymptotic forms: rational in 1/zeta for x >= 2.09, in 1/zeta^2 (times 1/zeta for g) for x < -2.09 --------
_AI_NUM = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
           1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
           1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AI_DEN = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
           1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
           1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AF_NUM = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
           -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
           -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)
_AF_DEN = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
           9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
           4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AG_NUM = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
           9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
           5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
           8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AG_DEN = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
           5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
           4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
           4.91834570062930015649e-09)

_TWO_OVER_PI = 2 / math.pi
_SQRT_TWO_OVER_PI = math.sqrt(2 / math.pi)
_ONE_OVER_SQRT_PI = 1 / math.sqrt(math.pi)
_AI_0, _AI_PRIME_0 = 0.355028053887817239260, 0.258819403792806798405  # Ai(0), -Ai'(0)


def _poly(coefficients, z):
    """The polynomial with these coefficients (highest power first) at z, by Horner's rule in z's dtype."""
    total = xp.zeros_like(z)
    for c in coefficients:
        total = total * z + c
    return total


def _chebyshev(coefficients, y):
    """Clenshaw's sum of the Chebyshev series (Cephes' ``chbevl``: coefficients highest order first, the constant
    term halved) at y / 2."""
    previous, current = xp.zeros_like(y), xp.full_like(y, coefficients[0])
    before = xp.zeros_like(y)
    for c in coefficients[1:]:
        before, previous = previous, current
        current = y * previous - before + c
    return 0.5 * (current - before)


def _hankel(x, p_num, p_den, q_num, q_den, phase: float, sine_first: bool):
    """sqrt(2 / (pi x)) (P(x) c(x - phase) -+ 5/x Q(x) s(x - phase)) for x > 5: J's form (c = cos, s = sin, minus)
    or, with ``sine_first``, Y's (c = sin, s = cos, plus)."""
    five_over_x = 5.0 / x
    w = five_over_x * five_over_x
    p = _poly(p_num, w) / _poly(p_den, w)
    q = five_over_x * (_poly(q_num, w) / _poly(q_den, w))
    shifted = x - phase
    if sine_first:
        return (p * xp.sin(shifted) + q * xp.cos(shifted)) * _SQRT_TWO_OVER_PI / xp.sqrt(x)
    return (p * xp.cos(shifted) - q * xp.sin(shifted)) * _SQRT_TWO_OVER_PI / xp.sqrt(x)


def _j0(x):
    a = xp.abs(x)
    a2 = a * a
    near = (a2 - _J0_ZEROS_SQ[0]) * (a2 - _J0_ZEROS_SQ[1]) * _poly(_J0_NUM, a2) / _poly(_J0_DEN, a2)
    near = xp.where(a < 1e-5, 1.0 - a2 / 4.0, near)
    return xp.where(a <= 5.0, near, _hankel(a, _P0_NUM, _P0_DEN, _Q0_NUM, _Q0_DEN, math.pi / 4, False))


def _j1(x):
    a = xp.abs(x)
    a2 = a * a
    near = _poly(_J1_NUM, a2) / _poly(_J1_DEN, a2) * a * (a2 - _J1_ZEROS_SQ[0]) * (a2 - _J1_ZEROS_SQ[1])
    out = xp.where(a <= 5.0, near, _hankel(a, _P1_NUM, _P1_DEN, _Q1_NUM, _Q1_DEN, 3 * math.pi / 4, False))
    return xp.where(x < 0, -out, out)  # J1 is odd


def _y_domain(x, y_near, far):
    """Y's value: ``y_near`` up to 5, the asymptotic ``far`` beyond; -inf at 0, NaN below."""
    out = xp.where(x <= 5.0, y_near, far)
    return xp.where(x == 0, -xp.inf, xp.where(x < 0, xp.nan, out))


def _y0(x):
    x2 = x * x
    near = _poly(_Y0_NUM, x2) / _poly(_Y0_DEN, x2) + _TWO_OVER_PI * xp.log(x) * _j0(x)
    return _y_domain(x, near, _hankel(x, _P0_NUM, _P0_DEN, _Q0_NUM, _Q0_DEN, math.pi / 4, True))


def _y1(x):
    x2 = x * x
    near = x * (_poly(_Y1_NUM, x2) / _poly(_Y1_DEN, x2)) + _TWO_OVER_PI * (_j1(x) * xp.log(x) - 1.0 / x)
    return _y_domain(x, near, _hankel(x, _P1_NUM, _P1_DEN, _Q1_NUM, _Q1_DEN, 3 * math.pi / 4, True))


def _k(order: int, x, scaled: bool):
    """K0 or K1 at x, times exp(x) if ``scaled``: +inf at 0, NaN below."""
    near_series, far_series, i_n = (_K0_NEAR, _K0_FAR, _i0_64) if order == 0 else (_K1_NEAR, _K1_FAR, _i1_64)
    series = _chebyshev(near_series, x * x - 2.0)
    i_x = i_n(x.astype(xp.float64)).astype(x.dtype)
    log_half_x = xp.log(0.5 * x)
    near = series - log_half_x * i_x if order == 0 else log_half_x * i_x + series / x
    far = _chebyshev(far_series, 8.0 / x - 2.0) / xp.sqrt(x)
    if scaled:
        near = near * xp.exp(x)
    else:
        far = xp.exp(-x) * far
    out = xp.where(x <= 2.0, near, far)
    return xp.where(x == 0, xp.inf, xp.where(x < 0, xp.nan, out))


def _airy_series(x):
    """Ai(x) = Ai(0) f(x) + Ai'(0) g(x) by the Maclaurin series of f and g, each element summed until its next term
    of f is below the dtype's epsilon relative to f."""
    eps = xp.finfo(x.dtype).eps
    cube = x * x * x
    f, g = xp.ones_like(x), x.copy()
    m, n, k = xp.ones_like(x), x.copy(), xp.ones_like(x)
    active = xp.ones(x.shape, dtype=bool)
    while active.any():
        m_next = m * cube / (k + 1) / (k + 2)
        n_next = n * cube / (k + 2) / (k + 3)
        f_next = f + m_next
        m, n, k = xp.where(active, m_next, m), xp.where(active, n_next, n), xp.where(active, k + 3, k)
        f, g = xp.where(active, f_next, f), xp.where(active, g + n_next, g)
        active &= xp.abs(m / f) > eps  # (a NaN argument stops at once: NaN > eps is False)
    return _AI_0 * f - _AI_PRIME_0 * g


def _airy_ai(x):
    positive = xp.where(x >= 2.09, x, 2.09)  # (the branches computed off their domain are discarded)
    zeta = 2.0 * positive * xp.sqrt(positive) / 3.0
    decaying = (_ONE_OVER_SQRT_PI * (_poly(_AI_NUM, 1.0 / zeta) / _poly(_AI_DEN, 1.0 / zeta))
                / (2.0 * xp.sqrt(xp.sqrt(positive)) * xp.exp(zeta)))
    negative = xp.where(x < -2.09, x, -2.09)
    zeta = -2.0 * negative * xp.sqrt(-negative) / 3.0
    z = 1.0 / zeta
    z2 = z * z
    f = _poly(_AF_NUM, z2) / _poly(_AF_DEN, z2)
    g = _poly(_AG_NUM, z2) / _poly(_AG_DEN, z2)
    phase = zeta + 0.25 * math.pi
    oscillating = (_ONE_OVER_SQRT_PI / xp.sqrt(xp.sqrt(-negative))
                   * (xp.sin(phase) * (1.0 + z2 * f) - xp.cos(phase) * (z * g)))
    in_series = (x >= -2.09) & (x < 2.09) | xp.isnan(x)
    out = xp.where(x < -2.09, oscillating, xp.where(in_series, _airy_series(xp.where(in_series, x, 0.0)), decaying))
    out = xp.where(x > 103.892, 0.0, out)
    return xp.where(xp.isinf(x), xp.nan, out).astype(x.dtype, copy=False)


def _evaluate(kernel, x, name: str, argument: str = "input") -> Tensor:
    """``kernel`` on x's array in the dtype the function computes in (no gradient: the result has no history)."""
    a = _checked(x, name, argument)
    with quiet():
        out = xp.asarray(kernel(a), dtype=a.dtype)
    # (the layout PyTorch's unary TensorIterator gives: x's order, a size-1 dimension's stride too)
    return Tensor._make(iterator_layout(kept_layout(out, a), (a,)))


def bessel_j0(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order 0 (no gradient)."""
    return _evaluate(_j0, input, "bessel_j0")


def bessel_j1(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order 1 (no gradient)."""
    return _evaluate(_j1, input, "bessel_j1")


def bessel_y0(input: Tensor) -> Tensor:
    """The Bessel function of the second kind of order 0 (NaN below 0, -inf at 0; no gradient)."""
    return _evaluate(_y0, input, "bessel_y0")


def bessel_y1(input: Tensor) -> Tensor:
    """The Bessel function of the second kind of order 1 (NaN below 0, -inf at 0; no gradient)."""
    return _evaluate(_y1, input, "bessel_y1")


def modified_bessel_k0(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order 0 (NaN below 0, +inf at 0; no gradient)."""
    return _evaluate(lambda a: _k(0, a, scaled=False), input, "modified_bessel_k0")


def modified_bessel_k1(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order 1 (NaN below 0, +inf at 0; no gradient)."""
    return _evaluate(lambda a: _k(1, a, scaled=False), input, "modified_bessel_k1")


def scaled_modified_bessel_k0(x: Tensor) -> Tensor:
    """exp(x) K0(x), finite where K0 underflows (NaN below 0, +inf at 0; no gradient)."""
    return _evaluate(lambda a: _k(0, a, scaled=True), x, "scaled_modified_bessel_k0", "x")


def scaled_modified_bessel_k1(x: Tensor) -> Tensor:
    """exp(x) K1(x), finite where K1 underflows (NaN below 0, +inf at 0; no gradient)."""
    return _evaluate(lambda a: _k(1, a, scaled=True), x, "scaled_modified_bessel_k1", "x")


def airy_ai(x: Tensor) -> Tensor:
    """Airy's function Ai (NaN at +-inf, as PyTorch's; no gradient)."""
    return _evaluate(_airy_ai, x, "airy_ai", "x")
