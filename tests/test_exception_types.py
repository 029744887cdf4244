"""Errors have PyTorch's exception types: the same call raises the same type in ember and in torch."""

import numpy as np
import pytest
import torch

import ember


def raised(fn) -> type | None:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return None


def same_type(ember_fn, torch_fn) -> type:
    expected = raised(torch_fn)
    assert expected is not None, "the PyTorch call must fail"
    got = raised(ember_fn)
    assert got is expected, f"ember raised {got}, PyTorch {expected}"
    return got


@pytest.mark.parametrize("data", [["a"], ("a", "b"), [["a"]], "a", [1, "a"], [[1], ["a"]], [1.0, "x"], b"ab",
                                  [b"a"], [None], None, {"a": 1}, {1, 2}, [1, object()], [[1, 2], [3]]],
                         ids=lambda v: repr(v).split(" at 0x")[0])  # (the same ids every run: no address)
def test_tensor_from_non_numeric_data(data):
    same_type(lambda: ember.tensor(data), lambda: torch.tensor(data))


@pytest.mark.parametrize("make", [
    lambda m: m.empty(10**12), lambda m: m.zeros(10**12), lambda m: m.ones(2**20, 2**20),
    lambda m: m.empty(2**62, 2**62), lambda m: m.full((10**12,), 1.0), lambda m: m.randn(2**40, 2**40),
    lambda m: m.arange(10**13),
], ids=["empty", "zeros", "ones", "overflow", "full", "randn", "arange"])
def test_huge_allocations_are_runtime_errors(make):
    assert same_type(lambda: make(ember), lambda: make(torch)) is RuntimeError


@pytest.mark.parametrize("write", [
    lambda t, m: t.add_(1), lambda t, m: t.mul_(2), lambda t, m: t.copy_(m.ones(3, 3)), lambda t, m: t.normal_(),
    lambda t, m: t.exp_(), lambda t, m: t.clamp_(0, 1), lambda t, m: t.sub_(m.ones(3, 3)),
], ids=["add_", "mul_", "copy_", "normal_", "exp_", "clamp_", "sub_"])
def test_writing_in_place_to_an_expanded_tensor(write):
    def run(m):
        return write(m.zeros(3, 1).expand(3, 3), m)

    assert same_type(lambda: run(ember), lambda: run(torch)) is RuntimeError
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        run(ember)


def test_a_clone_of_an_expanded_tensor_is_writable():
    t = ember.arange(3.0).reshape(3, 1).expand(3, 2).clone()
    t.add_(1)
    np.testing.assert_array_equal(t.numpy(), [[1, 1], [2, 2], [3, 3]])


def test_a_loaded_optimizer_state_of_the_wrong_shape_names_the_parameter():
    def run(m, names=False):
        model = m.nn.Linear(3, 2)
        other = m.nn.Linear(4, 2)
        opt = m.optim.SGD(other.parameters(), lr=0.1, momentum=0.9)
        other(m.ones(1, 4)).sum().backward()
        opt.step()
        sd = opt.state_dict()
        if names:
            sd["param_groups"][0]["param_names"] = ["weight", "bias"]
        opt2 = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt2.load_state_dict(sd)
        model(m.ones(1, 3)).sum().backward()
        opt2.step()  # PyTorch fails here, at the first step

    same_type(lambda: run(ember), lambda: run(torch))
    with pytest.raises(RuntimeError, match=r"'momentum_buffer' of parameter 0 has shape \[2, 4\].*\[2, 3\]"):
        run(ember)
    with pytest.raises(RuntimeError, match=r"parameter 0 \('weight'\)"):
        run(ember, names=True)


@pytest.mark.parametrize("state", [lambda m: m.zeros(10, dtype=m.uint8), lambda m: m.zeros(64),
                                   lambda m: [1, 2]], ids=["wrong-size", "not-bytes", "list"])
def test_setting_a_malformed_rng_state(state):
    same_type(lambda: ember.set_rng_state(state(ember)), lambda: torch.set_rng_state(state(torch)))
    same_type(lambda: ember.Generator().set_state(state(ember)), lambda: torch.Generator().set_state(state(torch)))


def test_rng_state_round_trips():
    g = ember.Generator().manual_seed(5)
    g.numpy_draw("random", 3)
    state = g.get_state()
    a = g.numpy_draw("random", 4)
    np.testing.assert_array_equal(ember.Generator().set_state(state).numpy_draw("random", 4), a)
