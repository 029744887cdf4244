"""In-place writes into an expanded tensor (elements sharing memory), as PyTorch allows and refuses them: a basic
index copies into its view, refused only where that view's own elements overlap (``x.expand(2, 3)[0] = 1`` writes
both rows, ``[:, 0] = 1`` is refused); an index with tensors is an ``index_put_``, as are ``index_fill_``,
``masked_fill_`` and ``index_put_``, which check no overlap and write only the positions they select; ``add_``,
``copy_``, ``index_copy_``, ``scatter_`` and the others refuse."""

import warnings

import pytest

from tests.oracle import assert_same_outcome


def _expanded(m):
    return m.zeros(1, 3).expand(2, 3)


def _written(write):
    def run(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = _expanded(m)
            write(m, x)
            return x.clone()
    return run


CASES = {
    "x[0] = 1": lambda m, x: x.__setitem__(0, 1.0),
    "x[0, 0] = 1": lambda m, x: x.__setitem__((0, 0), 1.0),
    "x[0] = t": lambda m, x: x.__setitem__(0, m.arange(3.0)),
    "x[:, 0] = 1": lambda m, x: x.__setitem__((slice(None), 0), 1.0),
    "x[...] = 1": lambda m, x: x.__setitem__(Ellipsis, 1.0),
    "x[:] = t": lambda m, x: x.__setitem__(slice(None), m.ones(3)),
    "x[mask] = 1": lambda m, x: x.__setitem__(m.tensor([[True, False, True], [False, False, False]]), 1.0),
    # a lone True copies into x.unsqueeze(0), which overlaps; False writes nothing; a bool among other indices
    # is one of index_put_'s tensors
    "x[True] = 1": lambda m, x: x.__setitem__(True, 1.0),
    "x[False] = 1": lambda m, x: x.__setitem__(False, 1.0),
    "x[0, True] = t": lambda m, x: x.__setitem__((0, True), m.arange(3.0)),
    "x[idx] = 1": lambda m, x: x.__setitem__(m.tensor([0]), 1.0),
    "x[:, idx] = 1": lambda m, x: x.__setitem__((slice(None), m.tensor([0, 2])), 1.0),
    "x[:, idx] = t": lambda m, x: x.__setitem__((slice(None), m.tensor([0, 2])), m.tensor([4.0, 5.0])),
    "index_fill_(0)": lambda m, x: x.index_fill_(0, m.tensor([0]), 1.0),
    "index_fill_(1)": lambda m, x: x.index_fill_(1, m.tensor([0, -1]), 1.0),
    "index_fill_(1, 0-d tensor)": lambda m, x: x.index_fill_(1, m.tensor([0]), m.tensor(2.0)),
    "masked_fill_": lambda m, x: x.masked_fill_(m.tensor([True, False, True]), 1.0),
    "masked_fill_ beyond x": lambda m, x: x.masked_fill_(m.ones(3, 2, 3, dtype=m.bool), 1.0),
    "index_put_": lambda m, x: x.index_put_((m.tensor([0]), m.tensor([1])), m.tensor(1.0)),
    "index_put_ accumulate": lambda m, x: x.index_put_((m.tensor([0]), m.tensor([1])), m.tensor(1.0), True),
    "index_put_ accumulate twice": lambda m, x: x.index_put_((m.tensor([0, 1]), m.tensor([1, 1])), m.tensor([1.0, 2.0]),
                                                             True),
    "fill_": lambda m, x: x.fill_(1.0),
    "add_": lambda m, x: x.add_(1.0),
    "copy_": lambda m, x: x.copy_(m.ones(2, 3)),
    "index_copy_": lambda m, x: x.index_copy_(1, m.tensor([0]), m.ones(2, 1)),
    "index_add_": lambda m, x: x.index_add_(1, m.tensor([0]), m.ones(2, 1)),
    "scatter_": lambda m, x: x.scatter_(1, m.tensor([[0], [1]]), 1.0),
    "masked_scatter_": lambda m, x: x.masked_scatter_(m.tensor([True, False, True]), m.ones(6)),
    "put_": lambda m, x: x.put_(m.tensor([0]), m.tensor([1.0])),
}


@pytest.mark.parametrize("name", CASES)
def test_write_into_an_expanded_tensor_as_pytorch(name):
    assert_same_outcome(_written(CASES[name]))


def test_a_column_expanded_writes_through_its_column_view():
    def run(m):
        x = m.zeros(3, 1).expand(3, 4)
        x[:, 0] = m.arange(3.0)
        return x.clone()
    assert_same_outcome(run)


def test_the_writes_reach_the_expanded_tensors_base():
    def run(m):
        base = m.zeros(1, 3)
        base.expand(2, 3)[1] = m.arange(3.0)
        base.expand(2, 3).index_fill_(1, m.tensor([2]), 7.0)
        return base
    assert_same_outcome(run)
