"""Common mistakes raise PyTorch's exception type: each call below runs under torch and under ember with the same
arguments; both must raise, ember an exception of (a subclass of) the built-in type torch raises, with a message."""

import warnings

import numpy as np
import pytest
import torch

import ember

F = lambda m: m.nn.functional  # noqa: E731


def raised(lib, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (compared in test_warnings_match.py)
        try:
            call(lib)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return e
    return None


def builtin_base(error: type) -> type:
    """The built-in exception a torch exception is (torch.linalg.LinAlgError: RuntimeError)."""
    return next(b for b in error.__mro__ if b.__module__ == "builtins")


def sgd(m):
    return m.optim.SGD([m.nn.Parameter(m.ones(2))], lr=0.1)


def data(m):
    return m.utils.data


def stream(m):
    class Stream(m.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    return Stream()


MISTAKES = {
    # shapes
    "matmul shapes": lambda m: m.ones(2, 3) @ m.ones(4, 5),
    "matmul of vectors of two lengths": lambda m: m.matmul(m.ones(3), m.ones(4)),
    "mm of a 3-D tensor": lambda m: m.mm(m.ones(2, 3, 4), m.ones(4, 5)),
    "bmm batch sizes": lambda m: m.bmm(m.ones(2, 3, 4), m.ones(3, 4, 5)),
    "Linear in_features": lambda m: m.nn.Linear(3, 4)(m.ones(2, 5)),
    "cat shapes": lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]),
    "cat of nothing": lambda m: m.cat([]),
    "stack shapes": lambda m: m.stack([m.ones(2, 3), m.ones(2, 4)]),
    "stack of nothing": lambda m: m.stack([]),
    "view size": lambda m: m.ones(2, 3).view(4, 2),
    "view of a non-contiguous tensor": lambda m: m.ones(2, 3).t().view(6),
    "reshape size": lambda m: m.ones(2, 3).reshape(5),
    "expand size": lambda m: m.ones(2, 3).expand(3, 3),
    "broadcast": lambda m: m.ones(2, 3) + m.ones(4),
    "outer of a matrix": lambda m: m.outer(m.ones(2, 2), m.ones(2)),
    "int() of several elements": lambda m: int(m.ones(3)),
    "float() of several elements": lambda m: float(m.ones(2)),
    "item() of several elements": lambda m: m.ones(3).item(),
    "tensor of a list of vectors": lambda m: m.tensor([m.ones(2), m.ones(2)]),
    "mT of a vector": lambda m: m.ones(2).mT,
    "H of a 3-D tensor": lambda m: m.ones(2, 3, 4).H,
    "mH of a vector": lambda m: m.ones(2).mH,
    "pad of odd length": lambda m: F(m).pad(m.ones(1, 2, 3), (1,)),
    "flip of a dim twice": lambda m: m.flip(m.ones(2, 2), (0, -2)),
    "tile negative": lambda m: m.ones(2).tile(-1, 2),
    "zeros of a string size": lambda m: m.zeros("a"),
    "ones of a float size": lambda m: m.ones(2.5),
    "numel of a list": lambda m: m.numel([1]),
    "isclose of two dtypes": lambda m: m.isclose(m.ones(2, dtype=m.long), m.ones(2)),
    "allclose of two dtypes": lambda m: m.allclose(m.ones(2), m.ones(2, dtype=m.float64)),
    "Hardtanh bounds out of order": lambda m: m.nn.Hardtanh(2, 1),
    "Hardtanh bounds equal": lambda m: m.nn.Hardtanh(0.5, 0.5),  # (the function takes equal bounds)
    "hardtanh bounds out of order": lambda m: m.nn.functional.hardtanh(m.ones(2), 2, 1),
    "instance_norm of a vector": lambda m: m.nn.functional.instance_norm(m.ones(4)),
    "instance_norm of a vector, running statistics": lambda m: m.nn.functional.instance_norm(
        m.ones(4), m.zeros(4), m.ones(4), use_input_stats=False),
    "Generator seed of a float": lambda m: m.Generator().manual_seed(1.5),
    "manual_seed of a string": lambda m: m.manual_seed("x"),
    "to cuda": lambda m: m.ones(2).to("cuda"),
    "cuda()": lambda m: m.nn.Linear(2, 2).cuda(),
    "created on cuda": lambda m: m.ones(2, device="cuda"),
    # dims
    "sum dim": lambda m: m.ones(2, 3).sum(dim=2),
    "transpose dim": lambda m: m.ones(2, 3).transpose(0, 2),
    "softmax dim": lambda m: m.ones(2, 3).softmax(dim=5),
    "softmax without dim": lambda m: m.softmax(m.ones(3)),
    "Tensor.softmax without dim": lambda m: m.ones(3).softmax(),
    "gather dim": lambda m: m.ones(2, 3).gather(2, m.tensor([[0]])),
    # dtypes
    "cross_entropy of integer logits": lambda m: F(m).cross_entropy(m.ones(2, 3, dtype=m.long), m.tensor([0, 1])),
    "cross_entropy float class targets": lambda m: F(m).cross_entropy(m.ones(2, 3), m.tensor([0.0, 1.0])),
    "cross_entropy int32 targets": lambda m: F(m).cross_entropy(m.ones(2, 3), m.tensor([0, 1], dtype=m.int32)),
    "nll_loss int32 targets": lambda m: F(m).nll_loss(m.ones(2, 3), m.tensor([0, 1], dtype=m.int32)),
    "mse_loss of integers": lambda m: F(m).mse_loss(m.ones(3, dtype=m.long), m.ones(3, dtype=m.long)),
    "smooth_l1_loss of integers": lambda m: F(m).smooth_l1_loss(m.ones(3, dtype=m.long), m.ones(3, dtype=m.long)),
    "huber_loss of integers": lambda m: F(m).huber_loss(m.ones(3, dtype=m.long), m.ones(3, dtype=m.long)),
    "kl_div of integers": lambda m: F(m).kl_div(m.ones(3), m.ones(3, dtype=m.long), reduction="sum"),
    "binary_cross_entropy long target": lambda m: F(m).binary_cross_entropy(m.ones(2) / 2, m.tensor([1, 0])),
    "binary_cross_entropy double target": lambda m: F(m).binary_cross_entropy(m.ones(3) / 2,
                                                                               m.ones(3, dtype=m.float64)),
    "binary_cross_entropy of integers": lambda m: F(m).binary_cross_entropy(m.ones(3, dtype=m.long),
                                                                             m.ones(3, dtype=m.long)),
    "binary_cross_entropy_with_logits long target": lambda m: F(m).binary_cross_entropy_with_logits(
        m.ones(3), m.ones(3, dtype=m.long)),
    "binary_cross_entropy_with_logits of integers": lambda m: F(m).binary_cross_entropy_with_logits(
        m.ones(3, dtype=m.long), m.ones(3, dtype=m.long)),
    "binary_cross_entropy weight shape": lambda m: F(m).binary_cross_entropy(m.ones(3) / 2, m.ones(3),
                                                                              weight=m.ones(4)),
    "binary_cross_entropy target shape": lambda m: F(m).binary_cross_entropy(m.ones(3, 1) / 2, m.ones(3)),
    "softmax of integers": lambda m: m.arange(3).softmax(0),
    "log_softmax of integers": lambda m: F(m).log_softmax(m.ones(2, 3, dtype=m.long), 0),
    "randn of an integer dtype": lambda m: m.randn(3, dtype=m.long),
    "rand of an integer dtype": lambda m: m.rand(3, dtype=m.int32),
    "normal_ of an integer tensor": lambda m: m.ones(3, dtype=m.long).normal_(),
    "uniform_ of an integer tensor": lambda m: m.ones(3, dtype=m.long).uniform_(),
    "exp_ of an integer tensor": lambda m: m.arange(3).exp_(),
    "sqrt_ of an integer tensor": lambda m: m.arange(3).sqrt_(),
    "sigmoid_ of a bool tensor": lambda m: m.ones(3, dtype=m.bool).sigmoid_(),
    "bitwise and of floats": lambda m: m.ones(3) & m.ones(3),
    "bitwise or of an int and a float": lambda m: m.ones(3, dtype=m.long) | 1.5,
    "masked_select with a float mask": lambda m: m.ones(2).masked_select(m.tensor([1.0, 0.0])),
    "scatter src dtype": lambda m: m.zeros(3).scatter(0, m.tensor([0]), m.ones(1, dtype=m.float64)),
    "requires_grad of integers": lambda m: m.ones(3, dtype=m.long).requires_grad_(),
    "float index": lambda m: m.ones(4)[m.tensor([0.0, 1.0])],
    # indices
    "gather index": lambda m: m.ones(2, 3).gather(1, m.tensor([[3], [0]])),
    "gather negative index": lambda m: m.ones(2, 3).gather(1, m.tensor([[-1], [0]])),
    "scatter index": lambda m: m.zeros(2, 3).scatter(1, m.tensor([[3]]), 1.0),
    "scatter_add index": lambda m: m.zeros(3).scatter_add(0, m.tensor([3]), m.ones(1)),
    "index_select index": lambda m: m.ones(4).index_select(0, m.tensor([4])),
    "index_select dim 1 index": lambda m: m.ones(2, 4).index_select(1, m.tensor([4])),
    "index_add index of a vector": lambda m: m.zeros(3).index_add(0, m.tensor([3]), m.ones(1)),
    "index_add negative index": lambda m: m.zeros(3).index_add_(0, m.tensor([-1]), m.ones(1)),
    "index_add index of a matrix": lambda m: m.zeros(3, 2).index_add(0, m.tensor([3]), m.ones(1, 2)),
    "index_add middle dim index": lambda m: m.zeros(2, 3, 2).index_add(1, m.tensor([3]), m.ones(2, 1, 2)),
    "index_copy index": lambda m: m.zeros(3).index_copy(0, m.tensor([3]), m.ones(1)),
    "tensor index": lambda m: m.ones(4)[m.tensor([4])],
    "integer index": lambda m: m.ones(4)[4],
    "embedding index": lambda m: m.nn.Embedding(3, 2)(m.tensor([0, 3])),
    "embedding negative index": lambda m: F(m).embedding(m.tensor([-1]), m.ones(3, 2)),
    "embedding_bag index": lambda m: F(m).embedding_bag(m.tensor([0, 5]), m.ones(3, 2), m.tensor([0])),
    "embedding_bag 2-D index": lambda m: F(m).embedding_bag(m.tensor([[10]]), m.ones(3, 2)),
    "cross_entropy target class": lambda m: F(m).cross_entropy(m.ones(2, 3), m.tensor([0, 3])),
    "nll_loss target class": lambda m: F(m).nll_loss(m.ones(2, 3), m.tensor([0, 5])),
    "one_hot too few classes": lambda m: F(m).one_hot(m.tensor([0, 3]), num_classes=2),
    # arguments
    "cross_entropy reduction": lambda m: F(m).cross_entropy(m.ones(2, 3), m.tensor([0, 1]), reduction="avg"),
    "mse_loss reduction": lambda m: F(m).mse_loss(m.ones(3), m.ones(3), reduction="avg"),
    "MSELoss reduction": lambda m: m.nn.MSELoss(reduction="avg")(m.ones(3), m.ones(3)),
    "kl_div reduction": lambda m: F(m).kl_div(m.ones(3), m.ones(3), reduction="foo"),
    "label_smoothing above one": lambda m: F(m).cross_entropy(m.ones(2, 3), m.tensor([0, 1]), label_smoothing=1.5),
    "cross_entropy batch sizes": lambda m: F(m).cross_entropy(m.ones(2, 3), m.tensor([0, 1, 2])),
    "mse_loss shapes not broadcastable": lambda m: F(m).mse_loss(m.ones(3), m.ones(4)),
    "normal_ negative std": lambda m: m.ones(3).normal_(0, -1),
    "normal negative std": lambda m: m.normal(0.0, -1.0, (3,)),
    "normal negative std tensor": lambda m: m.normal(m.zeros(3), -m.ones(3)),
    "init.normal_ negative std": lambda m: m.nn.init.normal_(m.ones(3), 0, -1),
    "uniform_ bounds out of order": lambda m: m.ones(3).uniform_(2, 1),
    "init.uniform_ bounds out of order": lambda m: m.nn.init.uniform_(m.ones(3), 2, 1),
    "bernoulli_ p above one": lambda m: m.zeros(2).bernoulli_(1.5),
    "exponential_ negative lambda": lambda m: m.ones(2).exponential_(-1.0),
    "arange step sign": lambda m: m.arange(5, 0, 1),
    "arange zero step": lambda m: m.arange(0, 5, 0),
    "linspace negative steps": lambda m: m.linspace(0, 1, -1),
    "multinomial too many without replacement": lambda m: m.multinomial(m.ones(3), 4),
    # layers and modules
    "Conv2d padding -1": lambda m: m.nn.Conv2d(1, 1, 3, padding=-1)(m.ones(1, 1, 5, 5)),
    "Conv2d stride 0": lambda m: m.nn.Conv2d(1, 1, 3, stride=0)(m.ones(1, 1, 5, 5)),
    "Conv2d dilation 0": lambda m: m.nn.Conv2d(1, 1, 3, dilation=0)(m.ones(1, 1, 5, 5)),
    "ConvTranspose2d stride 0": lambda m: m.nn.ConvTranspose2d(1, 1, 3, stride=0)(m.ones(1, 1, 5, 5)),
    "Conv2d channels": lambda m: m.nn.Conv2d(3, 4, 3)(m.ones(1, 2, 5, 5)),
    "Conv2d input smaller than the kernel": lambda m: m.nn.Conv2d(1, 1, 5)(m.ones(1, 1, 3, 3)),
    "Conv2d groups": lambda m: m.nn.Conv2d(3, 4, 3, groups=2),
    "BatchNorm1d one value per channel": lambda m: m.nn.BatchNorm1d(3)(m.ones(1, 3)),
    "BatchNorm2d channels": lambda m: m.nn.BatchNorm2d(3)(m.ones(2, 4, 2, 2)),
    "LayerNorm shape": lambda m: m.nn.LayerNorm(4)(m.ones(2, 3)),
    "Dropout p": lambda m: m.nn.Dropout(p=2.0),
    "LSTM input size": lambda m: m.nn.LSTM(3, 4)(m.ones(5, 2, 6)),
    "MultiheadAttention heads": lambda m: m.nn.MultiheadAttention(5, 2),
    "load_state_dict missing key": lambda m: m.nn.Linear(2, 2).load_state_dict({"weight": m.ones(2, 2)}),
    "load_state_dict unexpected key": lambda m: m.nn.Linear(2, 2).load_state_dict(
        {"weight": m.ones(2, 2), "bias": m.ones(2), "extra": m.ones(1)}),
    "load_state_dict shape": lambda m: m.nn.Linear(2, 2).load_state_dict({"weight": m.ones(3, 2),
                                                                           "bias": m.ones(2)}),
    "Module without forward": lambda m: m.nn.Module()(m.ones(1)),
    "Module attribute": lambda m: m.nn.Linear(2, 2).foo,
    "register_buffer of a number": lambda m: m.nn.Linear(2, 2).register_buffer("x", 3),
    "tensor assigned to a Parameter": lambda m: setattr(m.nn.Linear(2, 2), "weight", m.ones(2, 2)),
    # autograd
    "backward of a non-scalar": lambda m: (m.ones(3, requires_grad=True) * 2).backward(),
    "backward without grad": lambda m: m.ones(3).sum().backward(),
    "in-place on a leaf": lambda m: m.ones(3, requires_grad=True).add_(1),
    "numpy() of a tensor requiring grad": lambda m: m.ones(3, requires_grad=True).numpy(),
    "detach_ of a view": lambda m: m.ones(3, requires_grad=True)[:2].detach_(),
    "detach_ of a view of a constant": lambda m: m.ones(3)[:2].detach_(),
    # optimizers and schedulers
    "SGD negative lr": lambda m: m.optim.SGD([m.nn.Parameter(m.ones(2))], lr=-1.0),
    "Adam betas": lambda m: m.optim.Adam([m.nn.Parameter(m.ones(2))], betas=(1.5, 0.9)),
    "optimizer of no parameters": lambda m: m.optim.SGD([], lr=0.1),
    "optimizer of one tensor": lambda m: m.optim.SGD(m.nn.Parameter(m.ones(2)), lr=0.1),
    "optimizer of a non-leaf": lambda m: m.optim.SGD([m.ones(2, requires_grad=True) * 2], lr=0.1),
    "parameter in two groups": lambda m: (lambda p: m.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1))(
        m.nn.Parameter(m.ones(2))),
    "optimizer load_state_dict groups": lambda m: sgd(m).load_state_dict({"state": {}, "param_groups": []}),
    "LBFGS step without closure": lambda m: m.optim.LBFGS([m.nn.Parameter(m.ones(2))]).step(),
    "scheduler of a non-optimizer": lambda m: m.optim.lr_scheduler.StepLR(3, 1),
    "scheduler resumed without initial_lr": lambda m: m.optim.lr_scheduler.StepLR(sgd(m), 1, last_epoch=3),
    "ReduceLROnPlateau mode": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(sgd(m), mode="foo"),
    "ReduceLROnPlateau factor": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(sgd(m), factor=1.0),
    "OneCycleLR without total steps": lambda m: m.optim.lr_scheduler.OneCycleLR(sgd(m), 1.0),
    "LambdaLR lambdas per group": lambda m: m.optim.lr_scheduler.LambdaLR(sgd(m), [lambda e: 1, lambda e: 1]),
    # data
    "TensorDataset sizes": lambda m: data(m).TensorDataset(m.ones(3), m.ones(4)),
    "DataLoader batch_size 0": lambda m: data(m).DataLoader(data(m).TensorDataset(m.ones(3)), batch_size=0),
    "DataLoader shuffle and sampler": lambda m: data(m).DataLoader(
        data(m).TensorDataset(m.ones(3)), shuffle=True, sampler=data(m).SequentialSampler(range(3))),
    "DataLoader batch_sampler and batch_size": lambda m: data(m).DataLoader(
        data(m).TensorDataset(m.ones(3)), batch_size=2, batch_sampler=data(m).BatchSampler(range(3), 2, False)),
    "DataLoader negative num_workers": lambda m: data(m).DataLoader(data(m).TensorDataset(m.ones(3)),
                                                                    num_workers=-1),
    "DataLoader prefetch_factor without workers": lambda m: data(m).DataLoader(data(m).TensorDataset(m.ones(3)),
                                                                               prefetch_factor=2),
    "DataLoader shuffle of a stream": lambda m: data(m).DataLoader(stream(m), shuffle=True),
    "DataLoader len of a stream": lambda m: len(data(m).DataLoader(stream(m))),
    "DataLoader batch of ragged tensors": lambda m: list(data(m).DataLoader([m.ones(2), m.ones(3)], batch_size=2)),
    "random_split lengths": lambda m: data(m).random_split(range(5), [2, 2]),
    "ConcatDataset of nothing": lambda m: data(m).ConcatDataset([]),
    "ConcatDataset of a stream": lambda m: data(m).ConcatDataset([stream(m)]),
    "BatchSampler batch_size 0": lambda m: data(m).BatchSampler(range(3), 0, False),
}


@pytest.mark.parametrize("call", MISTAKES.values(), ids=MISTAKES.keys())
def test_raises_torch_type(call):
    expected, got = raised(torch, call), raised(ember, call)
    assert expected is not None, "PyTorch accepts this call: the case tests nothing"
    assert got is not None, f"ember accepted what PyTorch refuses with {type(expected).__name__}: {expected}"
    assert isinstance(got, builtin_base(type(expected))), \
        f"ember raised {type(got).__name__} ({got}), PyTorch {type(expected).__name__} ({expected})"
    assert str(got) or isinstance(got, KeyError), "ember's error says nothing"


NORM_DTYPE_MISTAKES = {
    # a float64 batch (NumPy's default) through float32 layers, and parameters of another dtype
    "batch_norm float64 input": lambda m: m.nn.BatchNorm1d(4)(m.ones(3, 4, dtype=m.float64)),
    "batch_norm eval float64 input": lambda m: m.nn.BatchNorm2d(4).eval()(m.ones(2, 4, 3, 3, dtype=m.float64)),
    "batch_norm float64 running stats": lambda m: F(m).batch_norm(m.ones(3, 4), m.zeros(4, dtype=m.float64),
                                                                  m.ones(4, dtype=m.float64), training=True),
    "batch_norm bfloat16 weight": lambda m: F(m).batch_norm(m.ones(3, 4), None, None, m.ones(4, dtype=m.bfloat16),
                                                            training=True),
    "batch_norm weight float64, running float32": lambda m: F(m).batch_norm(
        m.ones(3, 4, dtype=m.float64), m.zeros(4), m.ones(4), m.ones(4, dtype=m.float64), training=True),
    "layer_norm float64 input": lambda m: m.nn.LayerNorm(3)(m.ones(2, 3, dtype=m.float64)),
    "layer_norm float64 weight": lambda m: F(m).layer_norm(m.ones(2, 3), (3,), m.ones(3, dtype=m.float64)),
    "group_norm float64 input": lambda m: m.nn.GroupNorm(2, 4)(m.ones(2, 4, 3, dtype=m.float64)),
    "instance_norm float64 input": lambda m: m.nn.InstanceNorm1d(4, affine=True)(m.ones(2, 4, 3, dtype=m.float64)),
}


@pytest.mark.parametrize("call", NORM_DTYPE_MISTAKES.values(), ids=NORM_DTYPE_MISTAKES.keys())
def test_normalisation_parameter_dtypes_as_pytorchs_kernels(call):
    want, got = raised(torch, call), raised(ember, call)
    assert want is not None and got is not None, (want, got)
    assert type(got) is type(want) and str(got) == str(want)


def test_normalisation_of_half_precision_input_with_float32_parameters_runs():
    # mixed precision: computed in float32, the result in the input's dtype
    import numpy as np

    data = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        x = lib.tensor(data).bfloat16()
        outs = [lib.nn.BatchNorm1d(4)(x[:, :, 0]), lib.nn.BatchNorm1d(4)(x), lib.nn.GroupNorm(2, 4)(x),
                lib.nn.LayerNorm(5)(x.half()), F(lib).batch_norm(x.double(), None, None, training=True)]
        assert [o.dtype for o in outs] == [lib.bfloat16] * 3 + [lib.float16, lib.float64]
        results.append([o.float().detach().numpy() for o in outs])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


ARRAY = np.ones((2, 3, 4, 4), dtype=np.float32)
MODULE_CALLS_WITH_AN_ARRAY = {
    "Linear": lambda m: m.nn.Linear(4, 2)(ARRAY),
    "Conv2d": lambda m: m.nn.Conv2d(3, 2, 3)(ARRAY),
    "BatchNorm2d": lambda m: m.nn.BatchNorm2d(3)(ARRAY),
    "Sequential": lambda m: m.nn.Sequential(m.nn.Linear(4, 2), m.nn.ReLU())(ARRAY),
    "LSTM": lambda m: m.nn.LSTM(4, 2)(ARRAY[0, 0]),
    "Embedding": lambda m: m.nn.Embedding(3, 2)(np.array([1])),
    "CrossEntropyLoss": lambda m: m.nn.CrossEntropyLoss()(ARRAY[0, 0], np.array([0, 1, 2, 3])),
    "Linear of a list": lambda m: m.nn.Linear(1, 1)([[1.0]]),
}


@pytest.mark.parametrize("call", MODULE_CALLS_WITH_AN_ARRAY.values(), ids=MODULE_CALLS_WITH_AN_ARRAY.keys())
def test_a_module_called_with_a_numpy_array_names_the_conversion(call):
    """A NumPy batch fed to a model: PyTorch's exception type (its ops' TypeError, or the AttributeError of modules
    that read input.dim() first), and a message naming the module and how to convert (not ndarray's missing
    '_data')."""
    want, got = raised(torch, call), raised(ember, call)
    assert want is not None and isinstance(got, builtin_base(type(want))), (want, got)
    assert isinstance(got, TypeError) and "must be Tensor, not" in str(got) and "ember.from_numpy" in str(got)
    assert got.__cause__ is None and got.__suppress_context__, "the traceback would show the array's missing _data"


@pytest.mark.parametrize("name,args", [("sum", ()), ("sigmoid", ()), ("softmax", (1,)), ("exp", ())])
@pytest.mark.parametrize("data", [ARRAY, [1.0, 2.0]], ids=["ndarray", "list"])
def test_a_function_given_an_array_for_its_tensor_says_so_as_pytorch_does(name, args, data):
    with pytest.raises(TypeError) as want:
        getattr(torch, name)(data, *args)
    with pytest.raises(TypeError) as got:
        getattr(ember, name)(data, *args)
    assert str(got.value).startswith(str(want.value)), (str(got.value), str(want.value))


# ops whose first input is a NumPy array: PyTorch converts none silently (ember used to compute on the array for
# ops that reach their node directly, and to raise AttributeError for functionals reading input.dtype first)
FUNCTIONS_GIVEN_AN_ARRAY = {
    "relu": lambda m: m.relu(ARRAY), "F.relu": lambda m: F(m).relu(ARRAY), "F.gelu": lambda m: F(m).gelu(ARRAY),
    "F.silu": lambda m: F(m).silu(ARRAY), "F.elu": lambda m: F(m).elu(ARRAY),
    "F.leaky_relu": lambda m: F(m).leaky_relu(ARRAY), "F.hardtanh": lambda m: F(m).hardtanh(ARRAY),
    "F.linear": lambda m: F(m).linear(ARRAY, m.ones(2, 4)), "F.dropout": lambda m: F(m).dropout(ARRAY),
    "F.pad": lambda m: F(m).pad(ARRAY, (1, 1)), "F.relu of a float": lambda m: F(m).relu(1.0),
    "ReLU module": lambda m: m.nn.ReLU()(ARRAY),
}


@pytest.mark.parametrize("call", FUNCTIONS_GIVEN_AN_ARRAY.values(), ids=FUNCTIONS_GIVEN_AN_ARRAY.keys())
def test_an_op_given_an_array_for_its_input_raises_typeerror_as_torch(call):
    want, got = raised(torch, call), raised(ember, call)
    assert isinstance(want, TypeError), want
    assert isinstance(got, TypeError) and "must be Tensor, not" in str(got), got


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "greater_equal", "less_equal", "not_equal"])
@pytest.mark.parametrize("other", [ARRAY[0, 0, 0], "a", None, [1.0, 1.0, 1.0, 1.0]], ids=["ndarray", "str", "None",
                                                                                        "list"])
def test_comparison_functions_refuse_other_operands_as_torch(name, other):
    """``t.eq(x)`` / ``torch.eq(t, x)`` of something no tensor or number: TypeError (ember's returned
    NotImplemented); the operators keep Python's fallback (``t == "a"`` is False)."""
    for call in (lambda m: getattr(m.ones(4), name)(other), lambda m: getattr(m, name)(m.ones(4), other)):
        want, got = raised(torch, call), raised(ember, call)
        assert isinstance(want, TypeError) and isinstance(got, TypeError), (want, got)
    assert (ember.ones(4) == "a") is False and (ember.ones(4) != None) is True  # noqa: E711
    assert (torch.ones(4) == "a") is False and (torch.ones(4) != None) is True  # noqa: E711
