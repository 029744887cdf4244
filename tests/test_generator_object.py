"""``ember.Generator`` as an object against ``torch.Generator``: its device, repr, ``manual_seed`` returning itself,
``initial_seed``, ``get_state``/``set_state`` and ``clone_state`` (a generator in the same state, drawing the same
numbers independently), the CUDA-graph methods PyTorch's CPU generator refuses, ``default_generator`` (what
``manual_seed`` returns) and the errors for a state that is not a byte tensor or a device that has no generator."""

import copy
import pickle
import re

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_generator_methods(m):
    g = m.Generator()
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    assert g.device == m.device("cpu") and m.Generator(device=m.device("cpu")).device.type == "cpu"
    assert re.fullmatch(rf"<{m.__name__}\._C\.Generator object at 0x[0-9a-f]+>", repr(g))
    state = g.get_state()
    first = m.rand(3, generator=g)
    assert g.set_state(state) is g
    assert m.equal(m.rand(3, generator=g), first)
    clone = g.clone_state()
    assert clone is not g and clone.initial_seed() == 5
    assert m.equal(m.rand(4, generator=clone), m.rand(4, generator=g))
    for copy_of in (copy.deepcopy, lambda g: pickle.loads(pickle.dumps(g))):
        copied = copy_of(g)
        assert m.equal(m.rand(2, generator=copied), m.rand(2, generator=g))
    with pytest.raises(NotImplementedError, match="graphsafe_get_state is not supported in this Generator"):
        g.graphsafe_get_state()
    with pytest.raises(NotImplementedError, match="graphsafe_set_state is not supported in this Generator"):
        g.graphsafe_set_state(clone)
    assert isinstance(m.Generator().seed(), int)
    assert m.manual_seed(7) is m.default_generator and m.default_generator.initial_seed() == 7


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_generator_refusals(m):
    g = m.Generator()
    with pytest.raises(TypeError, match=rf"^RNG state must be a {m.__name__}\.ByteTensor$"):
        g.set_state(m.zeros(3))
    with pytest.raises(TypeError, match=rf"^expected a {m.__name__}\.ByteTensor, but got list$"):
        g.set_state([1, 2])
    with pytest.raises(RuntimeError, match="^META device type not an accelerator.$"):
        m.Generator("meta")
    with pytest.raises(RuntimeError):
        m.Generator("cuda")  # (neither has CUDA here)
    with pytest.raises(RuntimeError, match="^Expected one of cpu, cuda"):
        m.Generator("nope")


def test_the_same_streams():
    e, t = ember.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    np.testing.assert_array_equal(ember.rand(5, generator=e.clone_state()).numpy(),
                                  torch.rand(5, generator=t.clone_state()).numpy())
    np.testing.assert_array_equal(e.get_state().numpy(), t.get_state().numpy())


def _seeded(call, m):
    """(the seed it leaves, or the error type and message) of ``call(m)``."""
    try:
        return call(m).initial_seed()
    except (TypeError, RuntimeError, ValueError) as error:
        return type(error), str(error)


_SEEDS = [-1, -(1 << 63), -(1 << 63) - 1, (1 << 64) - 1, 1 << 64, 3.0, 3.5, True, "5", None,
          np.int64(5), np.uint64(1 << 63), np.float64(2.0), "tensor0", "tensor1", "float tensor"]


def _seed_for(m, seed):
    as_tensor = {"tensor0": lambda: m.tensor(5), "tensor1": lambda: m.tensor([5]), "float tensor": lambda: m.tensor(5.0)}
    return as_tensor[seed]() if isinstance(seed, str) and seed in as_tensor else seed


@pytest.mark.parametrize("seed", _SEEDS, ids=repr)
def test_generator_manual_seed_takes_a_python_int_only_as_pytorchs(seed):
    """Generator.manual_seed refuses a tensor, a float, a bool, a NumPy integer, and a seed outside [-2**63, 2**64),
    with PyTorch's errors; the module-level manual_seed converts with int() first, as PyTorch's."""
    for call in (lambda m: m.Generator().manual_seed(_seed_for(m, seed)), lambda m: m.manual_seed(_seed_for(m, seed))):
        assert _seeded(call, ember) == _seeded(call, torch)


def test_generator_manual_seed_takes_no_keyword_as_pytorchs():
    for m in (ember, torch):
        with pytest.raises(TypeError):
            m.Generator().manual_seed(seed=3)
    assert ember.manual_seed(seed=3).initial_seed() == torch.manual_seed(seed=3).initial_seed() == 3
