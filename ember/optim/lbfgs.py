"""L-BFGS: a quasi-Newton method that re-evaluates the model through a closure, with an optional
strong-Wolfe line search (the algorithm of Nocedal & Wright, "Numerical Optimization", ch. 3 and 7).

All parameters are handled as one flat vector (of the parameters' common dtype); the curvature
history is a list of flat vectors kept in the state of the first parameter, as PyTorch keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._backend import xp
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer, check_nonneg


class LBFGS(Optimizer):
    """L-BFGS.

    ``step(closure)`` runs up to ``max_iter`` iterations, each of which picks a direction from the last
    ``history_size`` curvature pairs (two-loop recursion) and moves along it: by ``lr`` (the first
    iteration ever: ``lr * min(1, 1 / sum|grad|)``), or by the step a strong-Wolfe line search finds.
    ``closure`` must clear the gradients, compute the loss, call ``backward()`` and return the loss;
    it is called once per evaluation (several times per ``step``). ``step`` returns the first loss.

    Args:
        params: parameters to optimize (a single group: LBFGS has no per-group options).
        lr: learning rate (default: 1).
        max_iter: iterations per ``step`` (default: 20).
        max_eval: closure evaluations per ``step`` (default: ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient element is at most this (default: 1e-7).
        tolerance_change: stop when the loss or the step changes less than this (default: 1e-9).
        history_size: curvature pairs remembered (default: 100).
        line_search_fn: None (fixed step ``lr``) or ``"strong_wolfe"``.

    State (under the first parameter): ``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``,
    ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss`` and ``al``.
    """

    _state_shaped_like_params = False  # its history and direction span all parameters, flattened

    def __init__(self, params: Iterable, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        check_nonneg(lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, got {line_search_fn!r}")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size,
                        line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # ----------------------------------------------------------------- the flat vector
    def _flat_grad(self):
        """Every parameter's gradient end to end (zeros for a parameter without one; a sparse one made dense,
        as in PyTorch)."""
        return xp.concatenate([xp.zeros(p._data.size, p._data.dtype) if p._grad is None
                               else (p._grad._data.to_dense() if p._grad.is_sparse else p._grad._data).reshape(-1)
                               for p in self._params])

    def _move(self, t, d) -> None:
        """theta <- theta + t * d, parameter by parameter."""
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += (p._data.dtype.type(t) * d[offset:offset + n]).reshape(p._data.shape)
            p._vc[0] += 1
            offset += n

    def _values(self) -> list:
        return [p._data.copy() for p in self._params]

    def _restore(self, values: list) -> None:
        for p, v in zip(self._params, values):
            p._data[...] = v
            p._vc[0] += 1

    def _evaluate(self, closure: Callable) -> float:
        with enable_grad():
            loss = closure()
        return _value(loss)

    # ----------------------------------------------------------------- step
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` re-evaluates the model (required)."""
        if closure is None:
            raise TypeError("LBFGS.step() needs a closure that re-evaluates the model and returns the loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = _value(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if xp.abs(g).max() <= tol_grad:  # already optimal
            return orig_loss

        d, t = _array(state.get("d")), _number(state.get("t"))
        old_dirs = [_array(y) for y in state.get("old_dirs", [])]
        old_stps = [_array(s) for s in state.get("old_stps", [])]
        ro = [_number(r) for r in state.get("ro", [])]
        h_diag = _number(state.get("H_diag"))
        prev_g, prev_loss = _array(state.get("prev_flat_grad")), state.get("prev_loss")
        one = g.dtype.type(1)
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -g, [], [], [], one
            else:
                y, s = g - prev_g, d * g.dtype.type(t)
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only when the curvature condition holds
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(one / ys)
                    h_diag = ys / y.dot(y)
                al = state.setdefault("al", [None] * history_size)
                d = _two_loop(g, old_dirs, old_stps, ro, h_diag, al)
            prev_g = g.copy()
            prev_loss = loss
            # the first step ever is scaled down: nothing is known of the curvature yet
            t = min(1.0, float(one / xp.abs(g).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = g.dot(d)
            if gtd > -tol_change:  # not a descent direction
                break
            ls_evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                start = self._values()

                def evaluate(step_size: float, d=d, start=start):
                    self._move(step_size, d)
                    f = self._evaluate(closure)
                    grad = self._flat_grad()
                    self._restore(start)
                    return f, grad

                loss, g, t, ls_evals = strong_wolfe(evaluate, t, d, loss, g, gtd, max_ls=max_eval - evals)
                self._move(t, d)
                done = xp.abs(g).max() <= tol_grad
            else:
                self._move(t, d)
                done = False
                if n_iter != max_iter:
                    loss = self._evaluate(closure)
                    g = self._flat_grad()
                    done = xp.abs(g).max() <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or done:
                break
            if xp.abs(d * g.dtype.type(t)).max() <= tol_change or abs(loss - prev_loss) < tol_change:
                break  # no more progress

        state["d"], state["t"] = _tensor(d), t
        state["old_dirs"], state["old_stps"] = [_tensor(y) for y in old_dirs], [_tensor(s) for s in old_stps]
        state["ro"], state["H_diag"] = [_tensor(r) for r in ro], _tensor(h_diag)
        state["prev_flat_grad"], state["prev_loss"] = _tensor(prev_g), prev_loss
        if "al" in state:
            state["al"] = [None if a is None else _tensor(a) for a in state["al"]]
        return orig_loss


def _two_loop(g, old_dirs, old_stps, ro, h_diag, al):
    """The L-BFGS direction -H g, H the inverse-Hessian estimate from the history (two-loop recursion)."""
    q = -g
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q -= al[i] * old_dirs[i]
    r = q * h_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r += (_number(al[i]) - be_i) * old_stps[i]
    return r


def _array(value):
    return value._data if isinstance(value, Tensor) else value


def _number(value):
    """A 0-d state tensor as a NumPy scalar of its dtype (Python numbers pass through)."""
    return value._data[()] if isinstance(value, Tensor) else value


def _tensor(value):
    """What the state holds: tensors for arrays and NumPy scalars (as PyTorch's state does; a float64 scalar is a
    Python float by ``isinstance``, not by its type)."""
    if value is None or value.__class__ in (int, float):
        return value
    return Tensor._make(xp.array(value))


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clipped to ``bounds``
    (default: between x1 and x2); the middle of the bounds when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = xp.sqrt(d2_square)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step size t along d meeting the strong Wolfe conditions
    (f(t) <= f + c1 t gtd and |f'(t)| <= c2 |gtd|): bracket such a step, then zoom into the bracket
    with cubic interpolation (Nocedal & Wright, algorithms 3.5 and 3.6).

    ``evaluate(t)`` returns (loss, flat gradient) at the parameters plus t * d and leaves the parameters
    as they were. Returns (loss, gradient, t, evaluations).
    """
    d_norm = xp.abs(d).max()
    f_new, g_new = evaluate(t)
    evals, gtd_new = 1, g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done, ls_iter = False, 0
    # 1. bracketing: grow t until the step is too long (loss rose, or the slope turned up), or good
    while ls_iter < max_ls:
        too_long = f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev)
        if not too_long and abs(gtd_new) <= -c2 * gtd:
            bracket, done = [(t, f_new, g_new, gtd_new)], True
            break
        if too_long or gtd_new >= 0:
            bracket = [(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new, gtd_new)]
            break
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d), ls_iter + 1
    if ls_iter >= max_ls:
        bracket = [(0, f, g, None), (t, f_new, g_new, None)]
    # 2. zoom: shrink the bracket [low, high] (low: the lower loss) until a point satisfies both conditions
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    insufficient = False
    while not done and ls_iter < max_ls:
        (ta, fa, _, ga), (tb, fb, _, gb) = bracket
        if abs(tb - ta) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(ta, fa, ga, tb, fb, gb)
        top, bottom = max(ta, tb), min(ta, tb)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:  # too close to an end: move away unless the last try helped
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d), ls_iter + 1
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = (t, f_new, g_new, gtd_new)
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = (t, f_new, g_new, gtd_new)
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


def _value(loss: Any) -> float:
    """The closure's loss as a float, read in no-grad mode as PyTorch's step reads it (``float()`` of a loss that
    requires grad warns in grad mode)."""
    with no_grad():
        return float(loss)
