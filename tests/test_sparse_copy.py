"""``copy_`` between sparse COO tensors against PyTorch's (entries, size, coalesced flag and dtype taken from the
source, the destination returned), the error between a dense and a sparse tensor, the legacy type string of a sparse
tensor, and ``load_state_dict`` into a module's sparse buffer (APPNP's propagation matrix)."""

import pytest
import torch
from oracle import assert_same_error

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")  # torch's, from sparse_coo_tensor

def _coo(m, size=(2, 3), dtype=None):
    return m.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], size, dtype=dtype)


def _state(t):
    return (t.layout is not None, tuple(t.shape), str(t.dtype).replace("ember", "torch"), t.is_coalesced(),
            t._indices().tolist(), t._values().tolist())


@pytest.mark.parametrize("src", ["coalesced, larger, float64", "uncoalesced, same size", "empty"])
def test_sparse_copy_takes_the_sources_entries(src):
    def run(m):
        dst = _coo(m)
        if src == "coalesced, larger, float64":
            source = m.sparse_coo_tensor([[3], [1]], [7.0], (4, 3), dtype=m.float64)
        elif src == "uncoalesced, same size":
            source = m.sparse_coo_tensor([[1, 0, 1], [0, 0, 0]], [1.5, 2.5, 3.5], (2, 3))
        else:
            source = m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.long), m.zeros(0), (5, 3))
        version = dst._version
        out = dst.copy_(source)
        assert out is dst and dst._version > version
        source._values().mul_(10)  # the copy is its own: the source's values changed afterwards stay out
        return _state(dst)

    assert run(ember) == run(torch)


@pytest.mark.parametrize("direction", ["dense into sparse", "sparse into dense"])
def test_copy_between_dense_and_sparse_is_pytorchs_error(direction):
    def run(m):
        if direction == "dense into sparse":
            _coo(m).copy_(m.ones(2, 3))
        else:
            m.ones(2, 3).copy_(_coo(m, dtype=m.float64))

    assert_same_error(run)


def test_sparse_type_string():
    for m in (ember, torch):
        assert _coo(m).type() == "torch.sparse.FloatTensor"
        assert _coo(m, dtype=m.float64).type() == "torch.sparse.DoubleTensor"
        assert m.ones(1).type() == "torch.FloatTensor"


def test_load_state_dict_into_a_sparse_buffer():
    def run(m):
        module = m.nn.Module()
        module.register_buffer("A", _coo(m))
        state = {k: v * 2 for k, v in module.state_dict().items()}
        module.load_state_dict(state)
        return _state(module.A), module.A.to_dense().tolist()

    assert run(ember) == run(torch)
