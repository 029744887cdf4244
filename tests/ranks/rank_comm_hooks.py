"""DDP communication hooks on every rank, each against the default path, and PowerSGD training a real model (run at
2 ranks by tests/test_reducer_on_ranks.py, 3 by tests/test_on_ranks.py). A hook out of step across ranks: tests/dist_scripts/hook_out_of_step.py.
"""

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from ember.nn.parallel import DistributedDataParallel as DDP


def build(width=24):
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(10, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 3))


def grads_after(model, step, rank, dtype=np.float32, loss="cross_entropy"):
    gen = np.random.default_rng(100 * step + rank)
    x, y = ember.tensor(gen.normal(size=(16, 10)).astype(dtype)), ember.tensor(gen.integers(0, 3, size=16))
    model.zero_grad()
    out = model(x)
    if loss == "cross_entropy":
        nn.functional.cross_entropy(out, y).backward()
    else:  # regression: unlike cross-entropy's, the last layer's gradient has full rank
        nn.functional.mse_loss(out, ember.cos(out.detach() * 7 + y.unsqueeze(1))).backward()
    return [p.grad.numpy().copy() for p in model.parameters()]


def same_on_every_rank(arrays, process_group) -> bool:
    gathered = [None] * process_group.get_world_size()
    process_group.all_gather_object(gathered, [a.tobytes() for a in arrays])
    return all(g == gathered[0] for g in gathered)


def test_allreduce_hook_equals_the_default_path_bit_for_bit(rank):
    plain = DDP(build(), bucket_cap_mb=0.001)  # several buckets
    hooked = DDP(build(), bucket_cap_mb=0.001)
    hooked.register_comm_hook(None, default_hooks.allreduce_hook)
    same = [all(np.array_equal(a, b) for a, b in zip(grads_after(plain, step, rank), grads_after(hooked, step, rank)))
            for step in range(3)]
    assert all(same), f"allreduce_hook differs from the default at steps {[i for i, s in enumerate(same) if not s]}"


def test_a_hook_whose_future_holds_a_new_tensor(rank):
    """A Future's tensor that is not the bucket's own buffer is copied into it (as PyTorch's reducer does): here
    twice the average, exactly."""
    plain = DDP(build(), bucket_cap_mb=0.001)
    hooked = DDP(build(), bucket_cap_mb=0.001)
    hooked.register_comm_hook(None, lambda state, bucket: default_hooks.allreduce_hook(state, bucket).then(
        lambda fut: fut.value() * 2))
    for step in range(2):
        for a, b in zip(grads_after(plain, step, rank), grads_after(hooked, step, rank)):
            np.testing.assert_array_equal(b, 2 * a)


@pytest.mark.parametrize("name,rtol", [("fp16", 2e-3), ("bf16", 2e-2)])
def test_compression_hooks_within_their_precision(name, rtol, rank, process_group):
    hook = {"fp16": default_hooks.fp16_compress_hook, "bf16": default_hooks.bf16_compress_hook}[name]
    plain = DDP(build(), bucket_cap_mb=0.001)
    model = DDP(build(), bucket_cap_mb=0.001)
    model.register_comm_hook(process_group.group.WORLD, hook)
    errors, identical = [], []
    for step in range(2):
        exact, got = grads_after(plain, step, rank), grads_after(model, step, rank)
        errors += [np.abs(x - y).max() / (np.abs(x).max() + 1e-12) for x, y in zip(exact, got)]
        identical.append(same_on_every_rank(got, process_group))
    assert max(errors) <= rtol, f"{name}: error {max(errors):.3g} of the scale"
    assert all(identical), f"{name}: replicas differ"


@pytest.mark.parametrize("name", ["fp16", "bf16"])
def test_compression_hooks_average_in_the_half_type_as_pytorch_does(name, rank, world, process_group):
    """PyTorch's hook rounds each rank's bucket to the half type, divides it by the world size there and all-reduces
    it in the half type (each addition rounded); the same arithmetic on every rank's own gradients, in rank order."""
    torch = pytest.importorskip("torch")
    hook = {"fp16": default_hooks.fp16_compress_hook, "bf16": default_hooks.bf16_compress_hook}[name]
    half = {"fp16": torch.float16, "bf16": torch.bfloat16}[name]
    model = DDP(build(), bucket_cap_mb=0.001)
    model.register_comm_hook(None, hook)
    got = grads_after(model, 0, rank)
    everyone = [None] * world
    process_group.all_gather_object(everyone, grads_after(build(), 0, rank))  # each rank's own, not averaged
    expected = []
    for i in range(len(got)):
        parts = [torch.from_numpy(grads[i]).to(half).div_(world) for grads in everyone]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        expected.append(total.float().numpy())
    differ = [i for i, (a, b) in enumerate(zip(got, expected)) if not np.array_equal(a, b)]
    assert not differ, f"{name}: parameters {differ} differ from PyTorch's half-precision average"


@pytest.mark.parametrize("name", ["fp16", "bf16"])
def test_compress_wrappers_around_allreduce_equal_the_compression_hooks(name, rank, process_group):
    """PyTorch's ``fp16_compress_wrapper(allreduce_hook)`` is ``fp16_compress_hook`` (its documentation says so):
    the wrapped plain hook averages in the half type, bit for bit as the compression hook; a wrapped PowerSGD hook
    trains as well (its buffer in the half type)."""
    hook = {"fp16": default_hooks.fp16_compress_hook, "bf16": default_hooks.bf16_compress_hook}[name]
    wrapper = {"fp16": default_hooks.fp16_compress_wrapper, "bf16": default_hooks.bf16_compress_wrapper}[name]
    hooked = DDP(build(), bucket_cap_mb=0.001)
    hooked.register_comm_hook(None, hook)
    wrapped = DDP(build(), bucket_cap_mb=0.001)
    wrapped.register_comm_hook(None, wrapper(default_hooks.allreduce_hook))
    for step in range(2):
        for a, b in zip(grads_after(hooked, step, rank), grads_after(wrapped, step, rank)):
            np.testing.assert_array_equal(b, a)
    powersgd = DDP(build(), bucket_cap_mb=0.001)
    state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=1, start_powerSGD_iter=2)
    powersgd.register_comm_hook(state, wrapper(powerSGD_hook.powerSGD_hook))
    grads = [grads_after(powersgd, step, rank) for step in range(3)]
    assert all(np.isfinite(g).all() and g.dtype == np.float32 for step in grads for g in step)
    assert same_on_every_rank(grads[-1], process_group)


def test_full_rank_powersgd_equals_the_plain_all_reduce(rank, process_group):
    # After the plain start iterations. In float64, and with a regression loss: Gram-Schmidt cannot recover a
    # direction the gradient lacks (cross-entropy's last-layer gradient has rank classes - 1) and loses float32's
    # digits on ill-conditioned gradients.
    state = powerSGD_hook.PowerSGDState(None, matrix_approximation_rank=24, start_powerSGD_iter=2,
                                        min_compression_rate=0.01)
    plain64 = DDP(build().double(), bucket_cap_mb=0.001)
    model = DDP(build().double(), bucket_cap_mb=0.001)
    model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    errors, identical = [], []
    for step in range(5):
        exact = grads_after(plain64, step, rank, np.float64, loss="mse")
        got = grads_after(model, step, rank, np.float64, loss="mse")
        errors.append(max(np.abs(x - y).max() / (np.abs(x).max() + 1e-300) for x, y in zip(exact, got)))
        identical.append(same_on_every_rank(got, process_group))
    assert max(errors) < 1e-8, f"full-rank PowerSGD differs by {errors} of the scale (per step)"
    assert all(identical), "powerSGD: replicas differ"
    assert state.iter == 5 and state.compression_stats()[1] > 0, (state.iter, state.compression_stats())
    with pytest.raises(RuntimeError, match="only be called once"):
        model.register_comm_hook(None, default_hooks.allreduce_hook)


def test_powersgd_state_holds_tensors_as_pytorchs_does(rank):
    """PowerSGDState's error_dict, p_memory_dict and q_memory_dict hold tensors (PyTorch's do; a program may read
    the error's norm or save the state), one per bucket: the error as long as the bucket, P and Q as the matrices'
    rows and columns times the rank."""
    state = powerSGD_hook.PowerSGDState(None, matrix_approximation_rank=2, start_powerSGD_iter=2)
    model = DDP(build())  # one bucket: (24 x 10, 24 x 24 compressed; 3 x 24 and the biases not)
    model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    for step in range(3):
        grads_after(model, step, rank)
    numel = sum(p.numel() for p in model.parameters())
    for held, size in ((state.error_dict, numel), (state.p_memory_dict, 2 * (24 + 24)),
                       (state.q_memory_dict, 2 * (10 + 24))):
        assert list(held) == [0] and isinstance(held[0], ember.Tensor), held
        assert held[0].shape == (size,) and held[0].dtype == ember.float32, held[0].shape
    assert float(state.error_dict[0].norm()) > 0


def test_misused_hooks_are_refused_with_pytorchs_exception_types(rank):
    fresh = DDP(build())
    with pytest.raises(ValueError):
        fresh.register_comm_hook(None, lambda bucket: None)  # one parameter, not (state, bucket)
    with pytest.raises(TypeError):
        fresh.register_comm_hook(None, 5)
    fresh.register_comm_hook(None, lambda state, bucket: bucket.buffer())  # not a Future
    with pytest.raises(TypeError, match="must return a torch.futures.Future"):
        grads_after(fresh, 0, rank)


def test_powersgd_trains_digits_within_one_and_a_half_points_of_plain_ddp(rank, world):
    # scikit-learn's digits, an MLP, rank-4 compression (from the 10th iteration) against plain DDP from the same
    # start on the same batches
    datasets = pytest.importorskip("sklearn.datasets")
    digits = datasets.load_digits()
    x_all = (digits.data / 16.0).astype(np.float32)
    y_all = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(x_all))
    train, test = order[:1400], order[1400:]
    mine = train[rank::world]

    def train_model(hook_state=None):
        ember.manual_seed(0)
        model = DDP(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10)))
        if hook_state is not None:
            model.register_comm_hook(hook_state, powerSGD_hook.powerSGD_hook)
        optimizer = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        gen = np.random.default_rng(1)
        for _ in range(12):
            shuffled = mine[gen.permutation(len(mine))]
            for i in range(0, len(shuffled) - 31, 32):
                idx = shuffled[i:i + 32]
                loss = nn.functional.cross_entropy(model(ember.tensor(x_all[idx])), ember.tensor(y_all[idx]))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        with ember.no_grad():
            predicted = model.module(ember.tensor(x_all[test])).argmax(1).numpy()
        return 100.0 * float((predicted == y_all[test]).mean())

    plain = train_model()
    state = powerSGD_hook.PowerSGDState(None, matrix_approximation_rank=4, start_powerSGD_iter=10)
    compressed = train_model(state)
    rate = state.compression_stats()[0]
    assert rate > 5, f"compression rate {rate:.1f}"
    assert plain > 90 and abs(plain - compressed) <= 1.5, f"plain DDP {plain:.2f}% vs PowerSGD {compressed:.2f}%"
