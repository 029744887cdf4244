"""Programs set their own attributes on tensors and parameters, as PyTorch allows: Megatron-style
``param.sequence_parallel = True``, a ``_no_weight_decay`` flag read when building parameter groups, a name for
logging. A view or a result of an op does not inherit them, as in PyTorch."""

import copy
import pickle

import pytest
import torch

import ember


@pytest.mark.parametrize("fw", [torch, ember], ids=["torch", "ember"])
def test_attributes_set_on_tensors_and_parameters_are_kept_and_not_inherited(fw):
    layer = fw.nn.Linear(3, 2)
    layer.weight.sequence_parallel = True
    layer.bias._no_weight_decay = True
    decay = [n for n, p in layer.named_parameters() if not getattr(p, "_no_weight_decay", False)]
    assert decay == ["weight"] and layer.weight.sequence_parallel is True
    t = fw.zeros(4)
    t.label = "activations"
    assert t.label == "activations" and t.__dict__ == {"label": "activations"}
    assert not hasattr(t.view(2, 2), "label") and not hasattr(t + 1, "label")
    with pytest.raises(AttributeError, match="has no attribute 'misspelt'"):
        t.misspelt  # noqa: B018 - reading an attribute never set is still an error


def test_a_parameter_keeps_its_attributes_through_pickle_as_in_pytorch():
    for fw in (torch, ember):
        p = fw.nn.Parameter(fw.ones(2))
        p.tag = "shared"
        q = pickle.loads(pickle.dumps(p))
        assert q.tag == "shared" and isinstance(q, fw.nn.Parameter), fw.__name__


def test_deepcopy_copies_a_tensors_attributes_as_pytorch_does():
    for fw in (torch, ember):
        t, p = fw.zeros(2), fw.nn.Parameter(fw.zeros(2))
        t.label, p.label = ["x"], "y"
        t2 = copy.deepcopy(t)
        assert t2.label == ["x"] and t2.label is not t.label, fw.__name__
        assert getattr(copy.deepcopy(p), "label", None) is None, fw.__name__  # PyTorch's Parameter drops them


DEVICE_FLAGS = ("is_cpu", "is_cuda", "is_xpu", "is_mps", "is_meta", "is_xla", "is_ipu", "is_maia", "is_mtia",
                "is_vulkan", "is_mkldnn", "is_quantized", "is_nested")


def test_device_flags_answer_as_on_a_pytorch_cpu_tensor():
    """A DCGAN-style device check, `if (input.is_cuda or input.is_xpu) and ngpu > 1`, takes the CPU path."""
    for make in (lambda fw: fw.ones(2, 3), lambda fw: fw.nn.Parameter(fw.zeros(4)), lambda fw: fw.arange(3)[1:]):
        e, t = make(ember), make(torch)
        assert {f: getattr(e, f) for f in DEVICE_FLAGS} == {f: getattr(t, f) for f in DEVICE_FLAGS}
    x = ember.ones(2)
    assert not ((x.is_cuda or x.is_xpu) and 2 > 1)


@pytest.mark.parametrize("make", [
    "fw.arange(4.)", "fw.arange(6.)[2:]", "fw.arange(6.).reshape(2, 3).t()", "fw.nn.Parameter(fw.ones(3))",
    "fw.ones(3, requires_grad=True) * 2", "fw.ones(3, dtype=fw.int64)",
])
def test_copy_copy_shares_the_memory_as_pytorchs(make):
    """copy.copy(t) is a leaf of t's class on t's memory in PyTorch (an in-place change to one shows in the other,
    a non-leaf's copy requires grad without grad_fn); ember's copied the data."""
    seen = []
    for fw in (torch, ember):
        t = eval(make, {"fw": fw})
        c = copy.copy(t)
        with fw.no_grad():
            c.add_(1)
        seen.append((type(c).__name__, c.requires_grad, c.grad_fn is None, c.grad is None,
                     c.data_ptr() == t.data_ptr(), c.stride(), c.storage_offset(), t.tolist(), c.tolist()))
    assert seen[1] == seen[0]
