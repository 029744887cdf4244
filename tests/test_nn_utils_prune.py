"""nn.utils.prune against torch: masks, weight_orig/weight_mask keys, gradients through the mask, iterative
pruning (PruningContainer), global pruning, removal, custom methods and errors."""

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as tprune
from nn_oracle import ember_state
from oracle import assert_close
from test_nn_utils_norms import LAYERS, train_both

import ember
import ember.nn as nn
import ember.nn.utils.prune as prune


def pair(layer="conv2d"):
    torch.manual_seed(0)
    tm, em = LAYERS[layer][0](torch.nn), LAYERS[layer][0](nn)
    em.load_state_dict(ember_state(tm))
    return em, tm


def same_state(em, tm):
    assert list(em.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        assert_close(em.state_dict()[k], v, msg=k)


STEPS = {
    "l1-fraction": [("l1_unstructured", dict(name="weight", amount=0.3))],
    "l1-count": [("l1_unstructured", dict(name="weight", amount=7))],
    "l1-twice": [("l1_unstructured", dict(name="weight", amount=0.3)),
                 ("l1_unstructured", dict(name="weight", amount=0.5))],
    "ln-structured": [("ln_structured", dict(name="weight", amount=0.34, n=2, dim=0))],
    "ln-then-l1": [("ln_structured", dict(name="weight", amount=1, n=1, dim=1)),
                   ("l1_unstructured", dict(name="weight", amount=0.2))],
    "l1-then-ln": [("l1_unstructured", dict(name="weight", amount=0.2)),
                   ("ln_structured", dict(name="weight", amount=1, n=float("inf"), dim=-1))],
    "identity": [("identity", dict(name="weight"))],
    "bias": [("l1_unstructured", dict(name="bias", amount=1)), ("identity", dict(name="weight"))],
}


@pytest.mark.parametrize("steps", list(STEPS))
@pytest.mark.parametrize("layer", ["conv2d", "linear"])
def test_pruning_trains_as_torch(layer, steps):
    em, tm = pair(layer)
    for fn, kw in STEPS[steps]:
        getattr(prune, fn)(em, **kw)
        getattr(tprune, fn)(tm, **kw)
    same_state(em, tm)
    assert prune.is_pruned(em) and isinstance(em.weight, ember.Tensor)
    train_both(em, tm, LAYERS[layer][1], steps=3)
    for name in {kw["name"] for _, kw in STEPS[steps]}:
        prune.remove(em, name)
        tprune.remove(tm, name)
    same_state(em, tm)
    assert not prune.is_pruned(em) and isinstance(em.weight, nn.Parameter)


def test_importance_scores_global_and_custom_mask():
    em, tm = pair("linear")
    scores = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    prune.l1_unstructured(em, "weight", 0.5, importance_scores=ember.tensor(scores))
    tprune.l1_unstructured(tm, "weight", 0.5, importance_scores=torch.tensor(scores))
    same_state(em, tm)
    em2, tm2 = pair("conv1d")
    prune.global_unstructured([(em, "weight"), (em2, "weight"), (em2, "bias")], prune.L1Unstructured, amount=0.4)
    tprune.global_unstructured([(tm, "weight"), (tm2, "weight"), (tm2, "bias")], tprune.L1Unstructured, amount=0.4)
    same_state(em, tm)
    same_state(em2, tm2)
    assert isinstance(next(iter(em2._forward_pre_hooks.values())), prune.CustomFromMask)
    container = next(iter(em._forward_pre_hooks.values()))
    assert isinstance(container, prune.PruningContainer) and len(container) == 2
    mask = np.array([[1, 0, 1, 0, 1]] * 4, dtype=np.float32)
    em3, tm3 = pair("linear")
    prune.custom_from_mask(em3, "weight", ember.tensor(mask))
    tprune.custom_from_mask(tm3, "weight", torch.tensor(mask))
    same_state(em3, tm3)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(em3, "bias")], prune.LnStructured, amount=1, n=2, dim=0)


def test_random_methods_prune_the_right_amount():
    ember.manual_seed(0)
    m = prune.random_unstructured(nn.Linear(10, 10), "weight", amount=0.25)
    assert int(m.weight_mask.sum().item()) == 75
    prune.random_unstructured(m, "weight", amount=10)  # among the 75 kept
    assert int(m.weight_mask.sum().item()) == 65
    c = prune.random_structured(nn.Conv2d(2, 6, 3), "weight", amount=2, dim=0)
    kept = c.weight_mask.sum(dim=(1, 2, 3)).numpy()
    assert sorted(kept.tolist()) == [0, 0, 18, 18, 18, 18]
    out = prune.RandomUnstructured(amount=0.5).prune(ember.ones(4, 4))
    assert out.sum().item() == 8


def test_custom_method_and_errors():
    class EveryOther(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    em = nn.Linear(3, 4)
    EveryOther.apply(em, "bias")
    assert em.bias_mask.tolist() == [0, 1, 0, 1]
    assert prune.is_pruned(nn.Sequential(nn.ReLU(), em))
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(em, "weight")
    with pytest.raises(ValueError, match="amount=1.5 should either be a float in the range"):
        prune.l1_unstructured(em, "weight", amount=1.5)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.l1_unstructured(em, "weight", amount="x")
    with pytest.raises(ValueError, match="amount=13 should be smaller than the number of parameters to prune=12"):
        prune.l1_unstructured(em, "weight", amount=13)
    assert "weight" in em._parameters and "weight_orig" not in em._parameters  # rolled back
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional tensors"):
        prune.ln_structured(nn.Linear(2, 2), "bias", amount=1, n=2, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2 for tensor of size"):
        prune.ln_structured(nn.Linear(2, 2), "weight", amount=1, n=2, dim=2)
