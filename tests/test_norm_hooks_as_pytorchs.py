"""The hooks PyTorch's weight reparametrizations register besides their forward pre-hook: ``spectral_norm`` records
its version in a state dict's metadata and reads a state dict saved before it (solving for ``weight_v``);
``parametrizations.weight_norm`` loads the old API's ``weight_g``/``weight_v``; ``remove_spectral_norm`` removes
them. Counts and behaviour against PyTorch."""

from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember

HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
              "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


def _counts(m):
    return {k: len(getattr(m, k)) for k in HOOK_DICTS}


def _as_ember(sd):
    out = OrderedDict((k, ember.tensor(v.detach().numpy())) for k, v in sd.items())
    if hasattr(sd, "_metadata"):
        out._metadata = sd._metadata
    return out


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4)),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 4)),
    lambda lib: lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4)),
    lambda lib: lib.nn.utils.weight_norm(lib.nn.Linear(3, 4)),
], ids=["spectral_norm", "parametrizations.spectral_norm", "parametrizations.weight_norm", "weight_norm"])
@pytest.mark.filterwarnings("ignore:.torch.nn.utils.weight_norm. is deprecated:FutureWarning")
def test_hook_counts_as_pytorchs(make):
    assert _counts(make(ember)) == _counts(make(torch))


def test_remove_spectral_norm_removes_its_hooks():
    """Difference from PyTorch: its remove_spectral_norm misses the load pre-hook (PyTorch wraps it when registering,
    and the isinstance check then fails), so a plain Linear state dict no longer loads there; ember removes both."""
    for lib in (torch, ember):
        m = lib.nn.utils.remove_spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4)))
        assert (len(m._forward_pre_hooks), len(m._state_dict_hooks)) == (0, 0)
        assert "spectral_norm" not in m.state_dict()._metadata[""]
    m.load_state_dict(ember.nn.Linear(3, 4).state_dict())


def test_spectral_norm_records_its_version_in_the_metadata():
    for lib in (torch, ember):
        model = lib.nn.Sequential(lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4)))
        meta = model.state_dict()._metadata
        assert meta["0"]["spectral_norm"] == {"weight.version": 1}
        assert "spectral_norm" not in meta[""]


def _old_spectral_state_dict():
    """A spectral-normed layer's state dict as PyTorch saved it before version 1: ``weight`` itself saved."""
    torch.manual_seed(0)
    m = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 5))  # (a 5 x 4 weight: W^T W invertible, v unique)
    m(torch.randn(2, 4))  # a training forward: u, v and weight consistent
    sd = m.state_dict()
    sd["weight"] = m.weight.detach().clone()
    sd["weight_v"] = torch.zeros_like(sd["weight_v"])  # (unusable: the hook solves for it)
    sd._metadata[""].pop("spectral_norm")
    return sd


def test_spectral_norm_reads_a_state_dict_saved_before_its_version_1():
    sd = _old_spectral_state_dict()
    mt = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 5))
    me = ember.nn.utils.spectral_norm(ember.nn.Linear(4, 5))
    rt = mt.load_state_dict(sd)
    re = me.load_state_dict(_as_ember(sd))
    assert (list(re.missing_keys), list(re.unexpected_keys)) == (list(rt.missing_keys), list(rt.unexpected_keys))
    np.testing.assert_allclose(me.weight_v.numpy(), mt.weight_v.numpy(), rtol=1e-4, atol=1e-5)
    mt.eval(), me.eval()
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(me(ember.tensor(x)).detach().numpy(), mt(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_spectral_norm_old_state_dict_missing_keys_as_pytorchs():
    sd = _old_spectral_state_dict()
    del sd["weight_u"]
    errors = []
    for lib, d in ((torch, sd.copy()), (ember, _as_ember(sd))):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(4, 5))
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(d)
        errors.append(str(e.value).split("\n", 1)[1])
        r = lib.nn.utils.spectral_norm(lib.nn.Linear(4, 5)).load_state_dict(d.copy(), strict=False)
        errors.append((sorted(r.missing_keys), sorted(r.unexpected_keys)))
    assert errors[2:] == errors[:2]


def test_a_current_state_dict_without_metadata_loads_as_it_is():
    for lib in (torch, ember):
        src, dst = (lib.nn.utils.spectral_norm(lib.nn.Linear(5, 4)) for _ in range(2))
        sd = OrderedDict(src.state_dict())  # (no _metadata)
        dst.load_state_dict(sd)
        assert lib.equal(dst.weight_v, src.weight_v)


@pytest.mark.filterwarnings("ignore:.torch.nn.utils.weight_norm. is deprecated:FutureWarning")
def test_parametrized_weight_norm_loads_the_old_apis_state_dict():
    torch.manual_seed(0)
    old = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4)).state_dict()
    mt = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 4))
    me = ember.nn.utils.parametrizations.weight_norm(ember.nn.Linear(3, 4))
    mt.load_state_dict(old.copy())
    me.load_state_dict(_as_ember(old))
    np.testing.assert_allclose(me.weight.detach().numpy(), mt.weight.detach().numpy(), rtol=1e-6)
    assert sorted(me.state_dict()) == sorted(mt.state_dict())
