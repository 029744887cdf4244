"""A view made before its base first needed a gradient follows the base, as PyTorch's does.

``base = zeros(4); v = base[:2]; base.add_(w)``: ``v`` now requires grad, its ``grad_fn`` is read from the base's
history (``AsStridedBackward0``) and ``v.sum().backward()`` reaches ``w``; the same for a view of a view, and when
the in-place op goes through another view of the base (ember/ops/copy_slices.py: ``watch_view``/``follow_base``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests.oracle import check, outcomes


def _base_add(m, w):
    base = m.zeros(4)
    v = base[:2]
    base.add_(m.cat([w, w]))
    return v * 3, base


def _view_of_view(m, w):
    base = m.zeros(3, 4)
    vv = base[1:][:, ::2]  # made before the base needs a gradient
    v = base.t()
    base.mul_(1.5).add_(w)
    return vv * vv, v[1] * 2


def _other_view_copy(m, w):
    base = m.zeros(4)
    a, b = base[:2], base[2:]
    b.copy_(w)
    return a + 1, base * base, b * 2


def _other_view_then_inplace_on_stale(m, w):
    base = m.zeros(2, 3)
    a, b = base[0], base[1]
    b.add_(w)
    assert not a.is_leaf  # (PyTorch regenerates a's grad_fn here; an in-place op before that is its leaf error)
    a.mul_(2).add_(w * w)  # a follows the base now: this in-place op is recorded too
    return base, a, b


def _setitem_on_base(m, w):
    base = m.ones(3, 2)
    col = base[:, 1]
    base[0] = w * 3
    return col * col


def _setitem_through_other_view(m, w):
    buf = m.zeros(4, 2)
    rows = [buf[i] for i in range(4)]  # all made before any gradient
    for i, r in enumerate(rows):
        _ = r.grad_fn  # (as above: PyTorch needs it read before an in-place op on the view)
        r.copy_(w * (i + 1))
    return sum((r * r).sum() for r in rows), buf


CASES = {"base_add": _base_add, "view_of_view": _view_of_view, "other_view_copy": _other_view_copy,
         "other_view_then_inplace": _other_view_then_inplace_on_stale, "setitem_on_base": _setitem_on_base,
         "setitem_through_other_view": _setitem_through_other_view}
SPECS = {"base_add": [(2,)], "view_of_view": [(3, 4)], "other_view_copy": [(2,)], "other_view_then_inplace": [(3,)],
         "setitem_on_base": [(2,)], "setitem_through_other_view": [(2,)]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_view_made_before_follows_its_base(name):
    check(CASES[name], SPECS[name], dtype=np.float64)


def test_requires_grad_and_grad_fn_as_pytorchs():
    """Read on the view itself, before any op uses it: PyTorch's flags and node name."""
    seen = []
    for m in (ember, torch):
        w = m.ones(2, requires_grad=True)
        base = m.zeros(4)
        v, vv, other = base[:2], base[:2][1:], base[2:]
        assert not v.requires_grad and v.is_leaf, m
        other.copy_(w)
        seen.append([(t.requires_grad, t.is_leaf, t.grad_fn.name()) for t in (v, vv, other)])
    assert seen[0] == seen[1], seen
    assert seen[1][0] == (True, False, "AsStridedBackward0")


def test_no_gradient_when_the_change_is_not_recorded():
    for m in (ember, torch):
        base = m.zeros(3)
        v = base[1:]
        with m.no_grad():
            base.add_(m.ones(3, requires_grad=True))
        base.add_(1)  # recorded mode, but nothing needs a gradient
        assert not v.requires_grad and v.grad_fn is None and not base.requires_grad, m


def test_integer_view_stays_without_gradient():
    for m in (ember, torch):
        base = m.zeros(4)
        iv = base.view(m.int32)  # a view of another dtype that cannot take a gradient
        base.add_(m.ones(4, requires_grad=True))
        assert not iv.requires_grad, m


def test_multi_output_view_used_after_its_base_changed_is_pytorchs_error():
    def unbind_part(m):
        b = m.ones(2, 2, requires_grad=True) * 1
        parts = b.unbind(0)
        b.add_(1)
        return parts[0] * 1

    def view_of_split_part(m):
        b = m.ones(4, 2, requires_grad=True) * 1
        v = b.split(2)[1][1:]
        b[0].mul_(2)
        return v * 1

    for fn in (unbind_part, view_of_split_part):
        (e, _), (t, _) = outcomes(fn)
        assert isinstance(t, RuntimeError) and isinstance(e, RuntimeError), (e, t)
        assert str(e).replace("SplitWithSizes", "Split") == str(t).replace(
            "SplitWithSizes", "Split"), (str(e), str(t))


def test_many_short_lived_views_of_a_long_lived_base_are_not_kept():
    """The base keeps weak references to the views it may have to update, dropping the dead ones as it goes."""
    mask = ember.ones(8, 8)
    for t in range(1, 500):
        (mask[:t % 8 + 1, :t % 8 + 1] * 2).sum()
    watched = mask._vc[1] if len(mask._vc) > 1 else None
    assert watched is None or len(watched.refs) <= 2 * watched.limit


def test_many_live_views_of_a_base_are_swept_only_when_their_list_has_doubled():
    """With every view alive, a sweep drops nothing: the next one waits until the list has doubled (at least 32),
    so that noting n live views costs O(n) in all, not a sweep of the whole list at each new view."""
    base = ember.ones(300, 2)
    views, limits = [], []
    for i in range(300):
        views.append(base[i])
        watched = base._vc[1]
        assert len(watched.refs) == i + 1 <= watched.limit, (i, watched.limit)
        limits.append(watched.limit)
    assert sorted(set(limits)) == [32, 66, 134, 270, 542]


def test_views_of_a_detached_alias_follow_their_own_base():
    """``d = base.detach()`` shares base's version counter: base first needing a gradient moves base's views, not
    d's; d's follow d when it needs one."""
    seen = []
    for m in (ember, torch):
        base = m.zeros(4)
        d = base.detach()
        dv, v = d[:2], base[2:]
        base.add_(m.ones(4, requires_grad=True))
        first = (v.requires_grad, dv.requires_grad)
        d.mul_(m.full((4,), 2.0, requires_grad=True))
        seen.append((first, dv.requires_grad, dv.grad_fn.name()))
    assert seen[0] == seen[1] == ((True, False), True, "AsStridedBackward0"), seen
