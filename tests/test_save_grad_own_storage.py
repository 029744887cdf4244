"""A ``.grad`` is a storage of its own, as in PyTorch: ember keeps an optimizer's gradients end to end in one flat
buffer (``ember.autograd.grad_store``), and saving one ``.grad`` in PyTorch's format wrote that whole buffer (pickling
and ``copy.deepcopy`` copied it whole). Saved files hold what PyTorch's hold (the same storages, of the same sizes),
load as PyTorch's do, and genuine views still share their storage."""

import copy
import io
import pickle
import zipfile

import numpy as np
import pytest
import torch

import ember


def _models(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(60, 50), lib.nn.Linear(50, 3))
    opt = lib.optim.SGD(m.parameters(), lr=0.1)  # (ember: the parameters' gradients in one store)
    m(lib.ones(4, 60)).sum().backward()
    opt.step()
    return m


def _objects(lib, m):
    grads = [p.grad for p in m.parameters()]
    g = m[0].weight.grad
    x = lib.arange(10.0)
    return {
        "one grad": m[1].bias.grad,
        "list of grads": {"g": grads},
        "state dict of grads": {n: p.grad for n, p in m.named_parameters()},
        "a grad and its views": [g, g[1:], g[:, 2]],
        "a row of a grad": g[1],
        "a tensor and its view": [x, x[1:]],
    }


def _save(lib, obj):
    buf = io.BytesIO()
    if lib is ember:
        ember.save(obj, buf, format="torch")
    else:
        torch.save(obj, buf)
    return buf.getvalue()


def _storage_sizes(data: bytes) -> list[int]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return sorted(i.file_size for i in z.infolist() if "/data/" in i.filename)


CASES = list(_objects(torch, _models(torch)))


@pytest.mark.parametrize("case", CASES)
def test_saved_storages_are_pytorchs(case):
    theirs, ours = _objects(torch, _models(torch))[case], _objects(ember, _models(ember))[case]
    t_file, e_file = _save(torch, theirs), _save(ember, ours)
    assert _storage_sizes(e_file) == _storage_sizes(t_file)
    # the same zip layout (64-byte aligned members): the files differ by their pickles' sizes, up to alignment
    t_pkl, e_pkl = (zipfile.ZipFile(io.BytesIO(x)).getinfo("archive/data.pkl").file_size for x in (t_file, e_file))
    assert abs((len(e_file) - len(t_file)) - (e_pkl - t_pkl)) < 64
    loaded_t = torch.load(io.BytesIO(t_file))
    loaded_e = torch.load(io.BytesIO(e_file))  # PyTorch reads ember's file as its own
    flat_t = loaded_t if isinstance(loaded_t, (list, dict)) else [loaded_t]
    flat_e = loaded_e if isinstance(loaded_e, (list, dict)) else [loaded_e]
    if isinstance(flat_t, dict):
        flat_t, flat_e = list(flat_t.values()), list(flat_e.values())
    flat_t = [y for x in flat_t for y in (x if isinstance(x, list) else [x])]
    flat_e = [y for x in flat_e for y in (x if isinstance(x, list) else [x])]
    for a, b in zip(flat_t, flat_e, strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5)
        assert (b.untyped_storage().nbytes(), b.storage_offset(), b.stride()) == (
            a.untyped_storage().nbytes(), a.storage_offset(), a.stride())


def test_tied_views_of_a_grad_load_tied():
    m = _models(ember)
    g = m[0].weight.grad
    a, b = torch.load(io.BytesIO(_save(ember, [g, g[1:]])))
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    a, b = ember.load(io.BytesIO(_save(ember, [g, g[1:]])))
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    a[1, 0] = 5.0
    assert b[0, 0].item() == 5.0


def test_a_grads_storage_is_its_own():
    mt, me = _models(torch), _models(ember)
    for pt, pe in zip(mt.parameters(), me.parameters(), strict=True):
        for gt, ge in ((pt.grad, pe.grad), (pt.grad.view(-1)[1:], pe.grad.view(-1)[1:])):
            assert ge.untyped_storage().nbytes() == gt.untyped_storage().nbytes()
            assert ge.storage_offset() == gt.storage_offset()
    g0, g1 = (p.grad for p in list(me.parameters())[:2])
    assert g0.untyped_storage().data_ptr() != g1.untyped_storage().data_ptr()


def test_pickle_and_deepcopy_of_a_grad_copy_its_own_bytes():
    me, mt = _models(ember), _models(torch)
    ge, gt = me[1].bias.grad, mt[1].bias.grad
    assert len(pickle.dumps(ge)) < 4 * ge.numel() + 1000
    back = pickle.loads(pickle.dumps([ge, ge[1:]]))
    assert back[0].untyped_storage().nbytes() == gt.untyped_storage().nbytes()
    c = copy.deepcopy([ge, ge[1:]])
    assert c[0].untyped_storage().nbytes() == gt.untyped_storage().nbytes()
    assert c[0].untyped_storage().data_ptr() == c[1].untyped_storage().data_ptr()
    np.testing.assert_allclose(c[1].numpy(), gt[1:].numpy(), rtol=1e-5, atol=1e-5)


def test_as_strided_and_dtype_views_of_a_grad_count_from_its_own_start():
    # (as_strided's storage_offset counted from the store's buffer: offset 0 read another parameter's gradient)
    mt, me = _models(torch), _models(ember)
    gt, ge = mt[1].weight.grad, me[1].weight.grad
    np.testing.assert_allclose(ge.as_strided((2, 3), (1, 2), 0).numpy(), gt.as_strided((2, 3), (1, 2), 0).numpy(),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        ge.as_strided((ge.numel() + 1,), (1,), 0)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        gt.as_strided((gt.numel() + 1,), (1,), 0)
    bt, be = mt[1].bias.grad, me[1].bias.grad  # 3 floats: as float64 refused for the size, in both
    for b in (bt, be):
        assert b.view(-1)[:2].view(torch.float64 if b is bt else ember.float64).shape == (1,)
