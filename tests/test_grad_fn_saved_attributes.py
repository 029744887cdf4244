"""``grad_fn._saved_<name>`` against PyTorch: the tensors (and arguments) a node saved for backward, under the names
of PyTorch's derivative formulas, as programs that inspect the autograd graph read them ("autograd mechanics",
torchviz's ``show_saved``): which names ``dir(grad_fn)`` lists, each value (shape, dtype, values, whether it is
the leaf itself, requires_grad, its grad_fn's name), None for what was not saved, and PyTorch's errors after the
graph is freed and for a saved tensor changed in place."""

import numpy as np
import pytest
import torch

import ember


def _describe(value, leaves: dict):
    """What a program can observe of one saved attribute's value, comparable across the two libraries."""
    if value is None or isinstance(value, (bool, int, float, str, tuple)):
        return value
    return ("tensor", tuple(value.shape), str(value.dtype).rpartition(".")[2],
            next((name for name, leaf in leaves.items() if value is leaf), None), value.requires_grad,
            None if value.grad_fn is None else value.grad_fn.name(), value.detach().double().numpy().round(5).tolist())


def _inputs(lib):
    gen = np.random.default_rng(0)
    x = lib.tensor(gen.standard_normal(3).astype(np.float32), requires_grad=True)
    w = lib.tensor(gen.standard_normal(3).astype(np.float32), requires_grad=True)
    m = lib.tensor(gen.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    b = lib.tensor(gen.standard_normal(4).astype(np.float32), requires_grad=True)
    return {"x": x, "w": w, "m": m, "b": b}


CASES = {
    "mul": lambda lib, t: t["x"] * t["w"],
    "mul_int": lambda lib, t: t["x"] * 2,
    "mul_float_left": lambda lib, t: 2.5 * t["x"],
    "mul_constant": lambda lib, t: t["x"] * t["w"].detach(),
    "div": lambda lib, t: t["x"] / t["w"],
    "div_int": lambda lib, t: t["x"] / 2,
    "pow_number": lambda lib, t: t["x"] ** 2,
    "pow_tensors": lambda lib, t: t["x"].abs() ** t["w"],
    "pow_number_base": lambda lib, t: 2 ** t["x"],
    "exp": lambda lib, t: t["x"].exp(),
    "exp_": lambda lib, t: (t["x"] * 1).exp_(),
    "addcmul": lambda lib, t: t["x"].addcmul(t["w"], t["x"], value=0.5),
    "addcmul_constant": lambda lib, t: t["x"].addcmul(t["w"], t["m"][0].detach() * 2, value=3),
    "addcmul_": lambda lib, t: (t["x"] * 1).addcmul_(t["w"], t["x"], value=-2),
    "addcdiv": lambda lib, t: t["x"].addcdiv(t["w"], t["x"], value=2),
    "addcdiv_": lambda lib, t: (t["x"] * 1).addcdiv_(t["w"], t["x"], value=1.5),
    "atan2": lambda lib, t: lib.atan2(t["x"], t["w"]),
    "atan2_": lambda lib, t: (t["x"] * 1).atan2_(t["w"]),
    "tanh": lambda lib, t: t["x"].tanh(),
    "sigmoid": lambda lib, t: t["x"].sigmoid(),
    "sqrt": lambda lib, t: t["x"].abs().sqrt(),
    "rsqrt": lambda lib, t: t["x"].abs().rsqrt(),
    "reciprocal": lambda lib, t: t["x"].reciprocal(),
    "log": lambda lib, t: t["x"].abs().log(),
    "sin": lambda lib, t: t["x"].sin(),
    "cos": lambda lib, t: t["x"].cos(),
    "abs": lambda lib, t: t["x"].abs(),
    "relu": lambda lib, t: lib.nn.functional.relu(t["x"]),
    "relu_method": lambda lib, t: t["m"].relu(),
    "softmax": lambda lib, t: lib.softmax(t["m"], 1),
    "log_softmax": lambda lib, t: lib.nn.functional.log_softmax(t["x"], 0),
    "mm": lambda lib, t: t["m"] @ t["m"].t(),
    "mv": lambda lib, t: t["m"] @ t["x"],
    "dot": lambda lib, t: t["x"].dot(t["w"]),
    "bmm": lambda lib, t: lib.bmm(t["m"].unsqueeze(0), t["m"].t().unsqueeze(0)),
    "linear": lambda lib, t: lib.nn.functional.linear(t["m"][:2, :], t["m"], t["b"]),
    "linear_no_bias": lambda lib, t: lib.nn.functional.linear(t["x"].unsqueeze(0), t["m"]),
    "add": lambda lib, t: t["x"] + t["w"],
    "add_alpha": lambda lib, t: lib.add(t["x"], t["w"], alpha=3),
    "sub": lambda lib, t: t["x"] - t["w"],
    "sum": lambda lib, t: t["m"].sum(),
    "sum_dims": lambda lib, t: t["m"].sum((0, 1), keepdim=True),
    "mean": lambda lib, t: t["x"].mean(),
    "mean_dim": lambda lib, t: t["m"].mean(1),
    "prod": lambda lib, t: t["x"].prod(),
    "view": lambda lib, t: t["m"].view(12),
    "expand": lambda lib, t: t["x"].expand(2, 3),
    "threshold": lambda lib, t: lib.nn.functional.threshold(t["x"], 0.1, 2.0),
    "gelu": lambda lib, t: lib.nn.functional.gelu(t["x"]),
    "gelu_tanh": lambda lib, t: lib.nn.functional.gelu(t["m"], approximate="tanh"),
    "leaky_relu": lambda lib, t: lib.nn.functional.leaky_relu(t["x"], 0.2),
    "leaky_relu_of_constant": lambda lib, t: lib.nn.functional.leaky_relu(t["x"].detach() * t["w"]),
    "silu": lambda lib, t: lib.nn.functional.silu(t["x"] * 2),
    "elu": lambda lib, t: lib.nn.functional.elu(t["x"], 0.5),
    "selu": lambda lib, t: lib.nn.functional.selu(t["x"]),
    "softplus": lambda lib, t: lib.nn.functional.softplus(t["x"], 2.0, 10.0),
    "hardtanh": lambda lib, t: lib.nn.functional.hardtanh(t["x"], -0.5, 0.5),
    "relu6": lambda lib, t: lib.nn.functional.relu6(t["x"]),
    "hardswish": lambda lib, t: lib.nn.functional.hardswish(t["x"]),
    "hardsigmoid": lambda lib, t: lib.nn.functional.hardsigmoid(t["x"]),
    "mish": lambda lib, t: lib.nn.functional.mish(t["x"]),
    "clamp": lambda lib, t: t["x"].clamp(-0.5, 2),
    "clamp_min_only": lambda lib, t: lib.clamp(t["x"] * 2, min=0.1),
    "clamp_max_only": lambda lib, t: t["x"].clamp(max=1),
    "clamp_min": lambda lib, t: t["x"].clamp_min(0.25),
    "clamp_max": lambda lib, t: t["x"].clamp_max(-0.25),
    "clamp_tensors": lambda lib, t: t["x"].clamp(t["w"] - 1, t["w"] + 1),
    "clamp_tensor_min_leaf": lambda lib, t: lib.clamp(t["x"], min=t["w"]),
    "clamp_tensor_max_constant": lambda lib, t: lib.clamp(t["x"] * 2, max=t["w"].detach()),
    "clamp_min_tensor": lambda lib, t: t["x"].clamp_min(t["w"]),
    "clamp_max_tensor": lambda lib, t: t["x"].clamp_max(t["w"] * 2),
    "prelu": lambda lib, t: lib.nn.functional.prelu(t["m"], t["w"]),
    "prelu_one_slope": lambda lib, t: lib.nn.functional.prelu(t["m"].unsqueeze(2), t["b"][:1]),
    "prelu_1d": lambda lib, t: lib.nn.functional.prelu(t["x"], t["w"][:1]),
    # losses and layer_norm, whose nodes keep something else than PyTorch's (derivatives, normalised rows)
    "mse_loss": lambda lib, t: lib.nn.functional.mse_loss(t["m"], t["m"].detach().sin()),
    "mse_loss_of_target": lambda lib, t: lib.nn.functional.mse_loss(t["m"].exp(), t["m"], reduction="sum"),
    "smooth_l1_loss": lambda lib, t: lib.nn.functional.smooth_l1_loss(t["m"], t["m"].detach().cos(),
                                                                      reduction="none", beta=0.5),
    "huber_loss": lambda lib, t: lib.nn.functional.huber_loss(t["m"], t["m"].detach().cos(), delta=2.0),
    "binary_cross_entropy": lambda lib, t: lib.nn.functional.binary_cross_entropy(
        t["m"].sigmoid(), t["m"].detach().cos().abs(), weight=t["x"].detach().abs()),
    "binary_cross_entropy_unweighted": lambda lib, t: lib.nn.functional.binary_cross_entropy(
        t["m"].sigmoid(), t["m"].detach().cos().abs(), reduction="sum"),
    "bce_with_logits": lambda lib, t: lib.nn.functional.binary_cross_entropy_with_logits(
        t["m"], t["m"].detach().cos().abs(), weight=t["x"].detach(), pos_weight=t["w"].detach().abs()),
    "bce_with_logits_pos_weight_only": lambda lib, t: lib.nn.functional.binary_cross_entropy_with_logits(
        t["m"], t["m"].detach().cos().abs(), pos_weight=t["w"].detach().abs()),
    "bce_with_logits_weight_only": lambda lib, t: lib.nn.functional.binary_cross_entropy_with_logits(
        t["m"], t["m"].detach().cos().abs(), weight=t["x"].detach().abs(), reduction="none"),
    "nll_loss": lambda lib, t: lib.nn.functional.nll_loss(t["m"].log_softmax(1), lib.tensor([0, 2, 1, 2]),
                                                          weight=t["x"].detach().abs(), ignore_index=1),
    "nll_loss_of_leaf_unreduced": lambda lib, t: lib.nn.functional.nll_loss(t["m"], lib.tensor([0, 2, 1, 2]),
                                                                            reduction="none"),
    "nll_loss_sum": lambda lib, t: lib.nn.functional.nll_loss(t["m"], lib.tensor([0, 2, 1, 2]), reduction="sum"),
    "cross_entropy": lambda lib, t: lib.nn.functional.cross_entropy(t["m"], lib.tensor([0, 2, 1, 2]),
                                                                    weight=t["x"].detach().abs()),
    "nll_loss_2d": lambda lib, t: lib.nn.functional.nll_loss(t["m"].reshape(1, 4, 3, 1),
                                                             lib.tensor([[[0], [3], [1]]])),
    "nll_loss_3d": lambda lib, t: lib.nn.functional.nll_loss(t["m"].reshape(1, 4, 3), lib.tensor([[0, 3, 1]])),
    # (unreduced, weighted, ignoring a class: the total weight PyTorch saves is 0 without a reduction, the weights of
    # the targets not ignored with one, for each kernel's node)
    "nll_loss_2d_unreduced": lambda lib, t: lib.nn.functional.nll_loss(
        t["m"].reshape(1, 4, 3, 1), lib.tensor([[[0], [3], [1]]]), weight=t["b"].detach().abs(),
        reduction="none"),
    "nll_loss_3d_sum_ignored": lambda lib, t: lib.nn.functional.nll_loss(
        t["m"].reshape(1, 4, 3), lib.tensor([[0, 3, 1]]), weight=t["b"].detach().abs(), ignore_index=3,
        reduction="sum"),
    # (a single sample's (C,) scores: the target's weight whatever the reduction, 0 for an ignored one)
    "nll_loss_1d_unreduced": lambda lib, t: lib.nn.functional.nll_loss(t["x"], lib.tensor(2), reduction="none"),
    "nll_loss_1d_unreduced_weighted": lambda lib, t: lib.nn.functional.nll_loss(
        t["x"], lib.tensor(1), weight=t["w"].detach().abs(), reduction="none"),
    "nll_loss_1d_unreduced_ignored": lambda lib, t: lib.nn.functional.nll_loss(
        t["x"], lib.tensor(1), weight=t["w"].detach().abs(), ignore_index=1, reduction="none"),
    "nll_loss_1d_unreduced_half": lambda lib, t: lib.nn.functional.nll_loss(
        t["x"].half(), lib.tensor(0), weight=t["w"].detach().abs().half(), reduction="none"),
    "cross_entropy_1d_unreduced": lambda lib, t: lib.nn.functional.cross_entropy(
        t["x"], lib.tensor(0), weight=t["w"].detach().abs(), reduction="none"),
    "cross_entropy_unreduced_weighted": lambda lib, t: lib.nn.functional.cross_entropy(
        t["m"], lib.tensor([0, 2, 1, 2]), weight=t["x"].detach().abs(), reduction="none"),
    "layer_norm": lambda lib, t: lib.nn.functional.layer_norm(t["m"], (3,), t["w"], t["x"]),
    "layer_norm_two_dims": lambda lib, t: lib.nn.functional.layer_norm(t["m"] * 2, (4, 3)),
    "layer_norm_no_bias": lambda lib, t: lib.nn.functional.layer_norm(t["m"].unsqueeze(0), [3], t["w"] * 2),
    "layer_norm_module": lambda lib, t: lib.nn.LayerNorm(3)(t["m"]),
    "logsigmoid": lambda lib, t: lib.nn.functional.logsigmoid(t["m"]),
    # a negative dim: saved as given, which PyTorch's ``_saved_dim`` reads as unsigned 64-bit (-1: 2**64 - 1)
    "narrow_negative_dim": lambda lib, t: t["m"].narrow(-1, 1, 2),
    "select_negative_dim": lambda lib, t: t["m"].select(-2, 1),
    "max_negative_dim": lambda lib, t: t["m"].max(-1)[0],
    "min_negative_dim_keepdim": lambda lib, t: t["m"].min(-2, keepdim=True)[0],
    "max_negative_dim_of_0d": lambda lib, t: (t["x"].sum() * 1).max(-1)[0],
    "softmax_negative_dim": lambda lib, t: t["m"].softmax(-1),
    "log_softmax_negative_dim": lambda lib, t: lib.log_softmax(t["m"], -2),
    "sum_negative_dim": lambda lib, t: t["m"].sum(-1),
    "sum_dims_one_negative": lambda lib, t: t["m"].sum((-1, 0), keepdim=True),
    "mean_negative_dim_list": lambda lib, t: t["m"].mean([-2]),
    "amax_negative_dim": lambda lib, t: t["m"].amax(-1),
    "amin_negative_dims": lambda lib, t: t["m"].amin((-2, -1)),
    "gather_negative_dim": lambda lib, t: t["m"].gather(-1, lib.tensor([[0, 2], [1, 1], [2, 0], [0, 0]])),
    "index_select_negative_dim": lambda lib, t: t["m"].index_select(-1, lib.tensor([2, 0])),
    "index_add_negative_dim": lambda lib, t: t["m"].index_add(-1, lib.tensor([2, 0]), t["m"][:, :2] * 2),
    "scatter_negative_dim": lambda lib, t: t["m"].scatter(-1, lib.tensor([[0], [2]]), t["m"][:2, :1] * 2),
    "scatter_value_negative_dim": lambda lib, t: t["m"].scatter(-2, lib.tensor([[0, 3]]), 2.0),
    "scatter_add_negative_dim": lambda lib, t: t["m"].scatter_add(-1, lib.tensor([[1], [2]]), t["m"][:2, :1] * 2),
    "scatter_reduce": lambda lib, t: t["x"].scatter_reduce(0, lib.tensor([0, 0, 2]), t["w"], "sum"),
    "scatter_reduce_amax_negative_dim": lambda lib, t: t["m"].scatter_reduce(
        -1, lib.tensor([[0, 0], [2, 1]]), t["m"][:2, 1:] * 2, "amax", include_self=False),
    "scatter_reduce_": lambda lib, t: (t["x"] * 1).scatter_reduce_(-1, lib.tensor([1, 1]), t["w"][:2], "prod"),
    "index_reduce": lambda lib, t: t["m"].index_reduce(0, lib.tensor([0, 3, 0]), t["m"][1:] * 2, "prod"),
    "index_reduce_amax_negative_dim": lambda lib, t: t["m"].index_reduce(
        -1, lib.tensor([2, 0]), t["m"][:, :2].detach(), "amax", include_self=False),
    "index_reduce_": lambda lib, t: (t["m"] * 1).index_reduce_(-2, lib.tensor([1, 1]), t["m"][:2], "mean"),
    # value-selecting ops: the dim as given, the indices returned, what else each node lists
    "sort": lambda lib, t: t["m"].sort(-1)[0],
    "sort_stable_descending": lambda lib, t: t["m"].sort(dim=0, descending=True, stable=True)[0],
    "sort_0d": lambda lib, t: t["x"][1].sort()[0],
    "topk": lambda lib, t: t["m"].topk(2, -1)[0],
    "topk_smallest_dim0": lambda lib, t: t["m"].topk(3, 0, largest=False)[0],
    "kthvalue": lambda lib, t: t["m"].kthvalue(2, -1)[0],
    "kthvalue_keepdim": lambda lib, t: t["m"].kthvalue(3, 0, keepdim=True)[0],
    "median_dim": lambda lib, t: t["m"].median(-2)[0],
    "nanmedian_dim": lambda lib, t: t["m"].nanmedian(1, keepdim=True)[0],
    "mode": lambda lib, t: t["m"].mode(-1)[0],
    "cummax": lambda lib, t: t["m"].cummax(-1)[0],
    "cummin": lambda lib, t: (t["m"] * 2).cummin(0)[0],
    # index and mask ops: the index, mask or condition as given, the dim as given
    "index_copy": lambda lib, t: t["m"].index_copy(-1, lib.tensor([2, 0]), t["m"][:, :2] * 2),
    "index_copy_constant_source": lambda lib, t: t["m"].index_copy(0, lib.tensor(1), t["m"][:1].detach()),
    "index_fill": lambda lib, t: t["m"].index_fill(-1, lib.tensor([0, 2]), 2.0),
    "index_fill_tensor": lambda lib, t: t["m"].index_fill(0, lib.tensor([3]), t["x"].sum()),
    "take": lambda lib, t: t["m"].take(lib.tensor([[0, -1], [5, 2]])),
    "put": lambda lib, t: t["m"].put(lib.tensor([0, -1]), t["w"][:2]),
    "put_accumulate_constant_source": lambda lib, t: t["m"].put(lib.tensor([1, 1]), t["w"][:2].detach(),
                                                                accumulate=True),
    "masked_fill": lambda lib, t: t["x"].masked_fill(lib.tensor([True, False, True]), 2.0),
    "masked_fill_tensor": lambda lib, t: t["m"].masked_fill(lib.tensor([True, False, True]), t["x"].sum()),
    "where": lambda lib, t: lib.where(t["x"] > 0, t["x"], t["w"]),
    "where_number": lambda lib, t: lib.where(lib.tensor([True, False, True]), t["x"], 0.0),
    "embedding": lambda lib, t: lib.nn.functional.embedding(lib.tensor([[0, 2], [3, 3]]), t["m"]),
    "embedding_padding_scaled": lambda lib, t: lib.nn.functional.embedding(
        lib.tensor([0, 2, 2]), t["m"] * 2, padding_idx=-1, scale_grad_by_freq=True),
    # views: the dim as given, split's size as given
    "split_negative_dim": lambda lib, t: t["m"].split(2, -1)[1],
    "split_larger_size": lambda lib, t: t["m"].split(10)[0],
    "split_sizes_negative_dim": lambda lib, t: t["m"].split([1, 2], -1)[0],
    "chunk": lambda lib, t: t["m"].chunk(3, -2)[0],
    "unbind_negative_dim": lambda lib, t: t["m"].unbind(-1)[2],
    "unbind": lambda lib, t: t["m"].unbind()[0],
    "unsqueeze_negative_dim": lambda lib, t: t["m"].unsqueeze(-1),
    "unsqueeze_negative_dim_first": lambda lib, t: t["m"].t().unsqueeze(-3),
    "unsqueeze": lambda lib, t: t["x"].unsqueeze(1),
    "index_none": lambda lib, t: t["m"][:, None],
    "index_ellipsis_none": lambda lib, t: t["m"][..., None, :],
    # running ops: the dim as given, the input and result where the formula reads them
    "cumsum_negative_dim": lambda lib, t: t["m"].cumsum(-1),
    "cumprod": lambda lib, t: t["m"].cumprod(0),
    "cumprod_negative_dim": lambda lib, t: (t["m"] * 2).cumprod(-2),
    "logcumsumexp_negative_dim": lambda lib, t: t["m"].logcumsumexp(-1),
    # var / std: the dims as given (None over all), the correction as PyTorch's overload reads it
    "var": lambda lib, t: t["m"].var(),
    "var_dim": lambda lib, t: t["m"].var(1),
    "var_dims_negative_keepdim": lambda lib, t: lib.var(t["m"], (-1, 0), keepdim=True),
    "var_unbiased_false": lambda lib, t: t["m"].var(unbiased=False),
    "var_dim_unbiased_false": lambda lib, t: t["m"].var(0, False),
    "var_correction": lambda lib, t: t["m"].var(-1, correction=2),
    "var_correction_float": lambda lib, t: t["m"].var(correction=0.5),
    "var_keepdim_only": lambda lib, t: t["m"].var(keepdim=True),
    "var_positional_unbiased": lambda lib, t: t["m"].var(False),
    "var_empty_dims": lambda lib, t: t["m"].var([]),
    "std": lambda lib, t: t["m"].std(),
    "std_dim_correction": lambda lib, t: t["m"].std(-1, correction=0, keepdim=True),
    "var_mean": lambda lib, t: lib.var_mean(t["m"], 1)[0],
    "std_mean": lambda lib, t: lib.std_mean(t["m"], unbiased=False)[0],
    "std_mean_of_mean": lambda lib, t: lib.std_mean(t["m"], (0, -1))[1],
    "logsumexp_negative_dim": lambda lib, t: t["m"].logsumexp(-1),
    "logsumexp_dims_keepdim": lambda lib, t: lib.logsumexp(t["m"], (1, 0), keepdim=True),
    # norms: the order as given ("fro" as 2, None as 2.0), the dims as given
    "norm": lambda lib, t: t["m"].norm(),
    "norm_dim": lambda lib, t: t["m"].norm(dim=1),
    "norm_order_negative_dim": lambda lib, t: t["m"].norm(p=3, dim=-1, keepdim=True),
    "norm_float_order": lambda lib, t: lib.norm(t["m"], 2.0),
    "norm_none_order": lambda lib, t: t["m"].norm(None, (0, 1)),
    "norm_inf": lambda lib, t: t["m"].norm(float("inf"), 0),
    "norm_negative_order": lambda lib, t: t["x"].norm(-1),
    "vector_norm": lambda lib, t: lib.linalg.vector_norm(t["m"], 1, -1),
    "vector_norm_default": lambda lib, t: lib.linalg.vector_norm(t["m"]),
    "prod_negative_dim": lambda lib, t: t["m"].prod(-1),
    "prod_dim_keepdim": lambda lib, t: t["m"].prod(0, keepdim=True),
    # views and moves: their arguments as given
    "squeeze": lambda lib, t: t["m"].unsqueeze(1).squeeze(),
    "squeeze_negative_dim": lambda lib, t: t["m"].unsqueeze(1).squeeze(-2),
    "squeeze_dim": lambda lib, t: t["m"].unsqueeze(0).squeeze(0),
    "squeeze_dims": lambda lib, t: t["m"].unsqueeze(0).squeeze((0, -1)),
    "transpose_negative_dim": lambda lib, t: t["m"].transpose(-1, 0),
    "transpose_reversed": lambda lib, t: t["m"].transpose(1, 0),
    "transpose_same_dim": lambda lib, t: t["m"].transpose(1, 1),
    "transpose_in_order": lambda lib, t: t["m"].unsqueeze(0).transpose(0, 2),
    "transpose_0d": lambda lib, t: t["x"].sum().transpose(0, -1),
    "swapaxes": lambda lib, t: t["m"].swapaxes(0, 1),
    "mT": lambda lib, t: t["m"].mT,
    "permute_negative_dim": lambda lib, t: t["m"].permute(-1, 0),
    "permute": lambda lib, t: t["m"].permute(1, 0),
    "movedim_negative_dim": lambda lib, t: t["m"].movedim(0, -1),
    "flip_negative_dim": lambda lib, t: t["m"].flip(-1),
    "flip_dims": lambda lib, t: t["m"].flip(0, 1),
    "roll_negative": lambda lib, t: t["m"].roll(-1, -1),
    "roll_dims": lambda lib, t: t["m"].roll((1, 2), (0, 1)),
    "roll_flat": lambda lib, t: t["m"].roll(2),
    "unfold_negative_dim": lambda lib, t: t["m"].unfold(-1, 2, 1),
    "unfold": lambda lib, t: t["m"].unfold(0, 2, 2),
    "diagonal": lambda lib, t: t["m"].diagonal(),
    "diagonal_negative_dims": lambda lib, t: t["m"].diagonal(1, -1, 0),
    "glu": lambda lib, t: lib.nn.functional.glu(t["m"], 0),
    "glu_negative_dim": lambda lib, t: lib.nn.functional.glu(t["m"][:, :2]),
    # added products: beta and alpha as given, the operands each other's gradient reads
    "addmv": lambda lib, t: lib.addmv(t["b"], t["m"], t["x"]),
    "addmv_scaled": lambda lib, t: lib.addmv(t["b"], t["m"], t["x"], beta=2, alpha=0.5),
    "addmv_constant_vec": lambda lib, t: t["b"].addmv(t["m"], t["x"].detach(), alpha=True),
    "addmm_beta_0": lambda lib, t: lib.addmm(t["b"][:, None], t["m"], t["m"].t(), beta=0),
    "addr": lambda lib, t: lib.addr(t["m"], t["b"], t["x"], alpha=2),
    "baddbmm": lambda lib, t: lib.baddbmm(t["b"][None, :, None], t["m"][None], t["x"][None, :, None], alpha=3),
    # a 0-d input's gather and index_select: PyTorch's one node, its index as given
    "gather_0d": lambda lib, t: t["x"][0].gather(0, lib.tensor(0)),
    "gather_0d_vector_index": lambda lib, t: t["x"].sum().gather(-1, lib.tensor([0, 0])),
    "index_select_0d": lambda lib, t: t["x"][1].index_select(0, lib.tensor([0])),
    "index_select_0d_scalar_index": lambda lib, t: t["x"].sum().index_select(-1, lib.tensor(0)),
    "reshape_alias": lambda lib, t: t["m"].t().reshape(3, 2, 2),
    "reshape_copy": lambda lib, t: t["m"].t().reshape(2, 2, 3),
    "addbmm": lambda lib, t: lib.addbmm(t["b"][:, None], t["m"][None], t["x"][None, :, None], beta=0.5),
}


def _saved(lib, case):
    t = _inputs(lib)
    fn = CASES[case](lib, t).grad_fn
    names = sorted(n for n in dir(fn) if n.startswith("_saved_"))
    return fn.name(), {n: _describe(getattr(fn, n), t) for n in names}


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_attributes_as_torch(case):
    name, want = _saved(torch, case)
    got_name, got = _saved(ember, case)
    assert got_name == name
    # PyTorch also lists the sizes and strides its matrix products keep for their layout, which ember has no use for
    want = {k: v for k, v in want.items() if not k.endswith(("_sym_strides", "_mat1_sym_sizes", "_mat2_sym_sizes"))
            and not (k == "_saved_self_sym_sizes" and name in ("MmBackward0",))}
    assert got == want


def _freed_error(lib, read):
    x = lib.ones(3, requires_grad=True)
    y = x.exp() * x
    y.sum().backward()
    with pytest.raises(RuntimeError) as err:
        read(y)
    return str(err.value)


@pytest.mark.parametrize("read", [lambda y: y.grad_fn._saved_self, lambda y: y.grad_fn._saved_other,
                                  lambda y: y.grad_fn.next_functions[0][0]._saved_result])
def test_freed_graph_is_torch_error(read):
    assert "Trying to backward through the graph a second time" in _freed_error(torch, read)
    assert _freed_error(ember, read) == _freed_error(torch, read)


def _after_backward(lib):
    """What reads back after backward freed the graph: a number saved as a number (``_saved_exponent``), None for an
    entry never saved (the operand a number multiplies), a dim and sizes; PyTorch's error for a saved tensor, and for
    a number saved as a 0-d tensor (``x * 2``'s ``_saved_other``)."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0])
    outs = {"pow": x ** 2, "times_two": x * 2, "times_c": x * c, "c_times": c * x, "sum": x.sum(0), "exp": x.exp()}
    read = {"pow": ["_saved_exponent", "_saved_self"], "times_two": ["_saved_self", "_saved_other"],
            "times_c": ["_saved_self", "_saved_other"], "c_times": ["_saved_self", "_saved_other"],
            "sum": ["_saved_self_sym_sizes"], "exp": ["_saved_result"]}
    seen = []
    for key, out in outs.items():
        out.sum().backward()
        for name in read[key]:
            try:
                value = getattr(out.grad_fn, name)
            except RuntimeError as err:
                value = str(err)[:60]
            seen.append((key, name, value if value is None or isinstance(value, str) else repr(value)))
    return seen


def test_numbers_and_unsaved_entries_read_after_backward_as_torch():
    assert _after_backward(ember) == _after_backward(torch)


def test_retained_graph_still_readable():
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        y.sum().backward(retain_graph=True)
        assert y.grad_fn._saved_result.grad_fn is y.grad_fn
        assert lib.equal(y.grad_fn._saved_result, y)


def _changed_in_place(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    with lib.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError) as err:
        _ = y.grad_fn._saved_result
    return str(err.value)


def test_saved_tensor_changed_in_place_is_torch_error():
    assert _changed_in_place(ember) == _changed_in_place(torch)


def test_saved_result_shares_the_output():
    """A saved output is a new tensor over the output's memory and version counter, the node its grad_fn."""
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        y = x.tanh()
        r = y.grad_fn._saved_result
        assert r is not y and r.grad_fn is y.grad_fn and r.output_nr == 0 and not r.is_leaf
        assert r._version == y._version == 0


def test_through_saved_tensor_hooks():
    """Saved through saved-tensor hooks, a saved tensor reads as what the unpack hook gives back."""
    for lib in (torch, ember):
        x = lib.arange(3.0, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: ("packed", t), lambda p: p[1] + 10):
            y = x * x
        assert y.grad_fn._saved_self.tolist() == [10.0, 11.0, 12.0]


PACKING_CASES = {
    "mm": lambda lib, t: t["m"].mm(t["m"].t() * 2),
    "matmul": lambda lib, t: t["m"] @ t["x"].unsqueeze(1),
    "bmm": lambda lib, t: lib.bmm(t["m"].unsqueeze(0), (t["m"].t() * 3).unsqueeze(0)),
    "mul": lambda lib, t: t["x"] * (t["w"] * 2),
    "div": lambda lib, t: t["x"] / t["w"],
    "clamp_tensors": lambda lib, t: t["x"].clamp(t["w"] - 1, t["w"] + 1),
    "clamp_min_tensor": lambda lib, t: t["x"].clamp_min(t["w"] * 3),
    "linear": lambda lib, t: lib.nn.functional.linear(t["m"][:2] * 2, t["m"], t["b"]),
    "linear_no_bias": lambda lib, t: lib.nn.functional.linear(t["m"] * 2, t["m"]),
    "linear_module": lambda lib, t: lib.nn.Linear(3, 2)(t["m"]),
}


def _packed(lib, case):
    """What a saved-tensor pack hook sees, in order (each tensor's shape and values): PyTorch's nodes save their
    variables in the order of their names (``mm``: ``mat2``, then ``self``), which an offloading or byte-counting
    hook observes."""
    t = _inputs(lib)
    seen = []
    lib.manual_seed(0)  # (a module's parameters)
    with lib.autograd.graph.saved_tensors_hooks(
            lambda a: seen.append((tuple(a.shape), a.detach().double().numpy().round(5).tolist())) or a.clone(),
            lambda a: a):
        out = PACKING_CASES[case](lib, t)
    grads = lib.autograd.grad(out.sum(), [t["x"], t["w"], t["m"]], allow_unused=True)
    return seen, [None if g is None else g.double().numpy().round(5).tolist() for g in grads]


@pytest.mark.parametrize("case", sorted(PACKING_CASES))
def test_pack_hook_sees_saved_tensors_in_torch_order(case):
    assert _packed(ember, case) == _packed(torch, case)


def _take_of_changed_input(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 1
    z = y.take(lib.tensor([0, 2]))
    with lib.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError) as err:
        z.sum().backward()
    return str(err.value)


def test_take_saved_input_changed_in_place_is_torch_error():
    """take saves its input, as PyTorch's node: changed in place before backward, PyTorch's error."""
    assert "modified by an inplace operation" in _take_of_changed_input(torch)
    assert "modified by an inplace operation" in _take_of_changed_input(ember)


def test_unknown_name_is_attribute_error():
    for lib in (torch, ember):
        y = lib.ones(3, requires_grad=True).exp()
        with pytest.raises(AttributeError):
            _ = y.grad_fn._saved_self  # (exp saves its result, not its input)
        assert "_saved_versions" not in dir(y.grad_fn)


@pytest.mark.parametrize("case", ["mul", "pow_number", "pow_tensors", "exp", "relu", "mm", "softmax", "prod", "gelu",
                                  "leaky_relu", "threshold", "clamp", "clamp_min"])
def test_raw_saved_names_as_torch(case):
    def names(lib):
        fn = CASES[case](lib, _inputs(lib)).grad_fn
        return sorted(n for n in dir(fn) if n.startswith("_raw_saved_"))

    assert names(ember) == names(torch)


def _raw_hooks(lib):
    """The autograd-mechanics notes' per-tensor hooks: ``grad_fn._raw_saved_self.register_hooks(pack, unpack)``."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    packed = []
    raw.register_hooks(lambda t: packed.append(t.tolist()) or ("kept", t * 1), lambda p: p[1] * 10)
    seen = y.grad_fn._saved_self
    out = [packed, seen.tolist(), seen.requires_grad, seen.grad_fn is None, raw.unpack().tolist()]
    for register in (lambda: raw.register_hooks(lambda t: t, lambda t: t),):
        with pytest.raises(RuntimeError) as err:
            register()
        out.append(str(err.value))
    y.sum().backward()
    out.append(x.grad.tolist())  # (2 * (10 x) per element: backward read the unpacked tensor)
    with pytest.raises(RuntimeError) as err:
        raw.register_hooks(lambda t: t, lambda t: t)
    out.append(str(err.value))
    return out


def test_raw_saved_register_hooks_as_torch():
    assert _raw_hooks(ember) == _raw_hooks(torch)




def _entry(value):
    """A saved entry as ``_describe`` sees it, a number saved as a 0-d tensor (``x * 2``'s ``_saved_other``) as
    its number, which ``unpack()`` gives."""
    if isinstance(value, ember.Tensor) and not value.requires_grad and value.ndim == 0:
        return value.item()
    return _describe(value, {})


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_raw_saved_tensor_unpacks_its_saved_entry(case):
    """``_raw_saved_<name>.unpack()`` reads the entry ``_saved_<name>`` reads (checked against PyTorch above), for
    every name the node lists: a raw name pointing at another slot (the result for ``2 ** x``'s exponent) gives a
    pack hook registered on it, and backward after it, another tensor."""
    fn = CASES[case](ember, _inputs(ember)).grad_fn
    raw = sorted(n for n in dir(fn) if n.startswith("_raw_saved_"))
    assert raw == sorted("_raw" + n for n in dir(fn) if n.startswith("_saved_") and hasattr(fn, "_raw" + n))
    for name in raw:
        assert _entry(getattr(fn, name).unpack()) == _entry(getattr(fn, name.replace("_raw_saved_", "_saved_")))


def _node_classes():
    from ember.autograd.graph import Node

    found, todo = set(), [Node]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted(found, key=lambda c: (c.__module__, c.__qualname__))


def test_every_node_class_raw_and_saved_names_read_one_slot():
    """Over every node class ember defines: each ``_raw_saved_<name>`` has its ``_saved_<name>`` and both read the
    same entry of ``node.saved`` (the class-wide form of the test above, for nodes no case builds)."""
    from ember.autograd.saved_attributes import _RawSaved, _SavedValue

    checked = 0
    for cls in _node_classes():
        for name in dir(cls):
            raw = getattr(cls, name, None)
            if not (name.startswith("_raw_saved_") and isinstance(raw, _RawSaved)):
                continue
            saved = getattr(cls, name.replace("_raw_saved_", "_saved_"), None)
            assert isinstance(saved, _SavedValue), (cls, name)
            assert raw.position == saved.position, (cls, name)
            checked += 1
    assert checked > 20


def _loss_and_norm_reads(lib):
    """A loss's, nll_loss's and layer_norm's saved attributes after backward freed the graph (PyTorch's error for a
    tensor, a number as it is, None for an absent weight or bias), a saved target changed in place (PyTorch's
    error), and a bfloat16 layer_norm's dtypes."""
    F = lib.nn.functional
    x = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), requires_grad=True)
    seen = []

    def read(node, names):
        for name in names:
            try:
                value = getattr(node, name)
            except RuntimeError as err:
                value = str(err)[:50]
            seen.append((name, value if value is None or isinstance(value, (str, int, float, tuple)) else value.shape))

    target = x.detach().cos()
    y = F.mse_loss(x * 1, target)
    with lib.no_grad():
        target.add_(1)
    read(y.grad_fn, ["_saved_target", "_saved_self"])
    y = F.smooth_l1_loss(x, x.detach().cos(), beta=0.5)
    y.backward()
    read(y.grad_fn, ["_saved_self", "_saved_target", "_saved_reduction", "_saved_beta"])
    y = F.nll_loss(x, lib.tensor([0, 1, 2, 0]), reduction="sum")
    y.backward()
    read(y.grad_fn, ["_saved_self", "_saved_target", "_saved_total_weight", "_saved_weight", "_saved_ignore_index"])
    y = F.layer_norm(x, (3,))
    y.sum().backward()
    read(y.grad_fn, ["_saved_input", "_saved_result1", "_saved_result2", "_saved_bias", "_saved_normalized_shape"])
    xb = x.detach().to(lib.bfloat16).requires_grad_()
    node = F.layer_norm(xb, (3,)).grad_fn
    seen.append(node._saved_input is xb)
    seen += [str(getattr(node, n).dtype).rpartition(".")[2] for n in ("_saved_result1", "_saved_result2")]
    return seen


def test_loss_and_layer_norm_saved_reads_after_backward_as_torch():
    assert _loss_and_norm_reads(ember) == _loss_and_norm_reads(torch)


def test_loss_and_layer_norm_saved_statistics_values_as_torch():
    """layer_norm's mean and 1/std, made again (mean) or reshaped (1/std), against PyTorch's at float64."""
    a = np.random.default_rng(3).standard_normal((2, 5, 6))
    got, want = ([getattr(lib.nn.functional.layer_norm(lib.tensor(a, requires_grad=True), (5, 6)).grad_fn, n)
                  for n in ("_saved_result1", "_saved_result2")] for lib in (ember, torch))
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


# (op, the index-like attribute its node keeps outside the saved arrays): readable while the graph lives, PyTorch's
# error once backward freed it, as a saved tensor's
HELD_AFTER_BACKWARD = {
    "index_add": (lambda lib, a, s: a.index_add(0, lib.tensor([0, 2, 2]), s, alpha=2), "_saved_index"),
    "index_select": (lambda lib, a, s: a.index_select(0, lib.tensor([0, 2, 2])), "_saved_index"),
    "repeat_interleave": (lambda lib, a, s: a.repeat_interleave(lib.tensor([1, 2, 0, 1, 1])), "_saved_index"),
    "gather": (lambda lib, a, s: a.gather(0, lib.tensor([0, 2, 2])), "_saved_index"),
    "scatter": (lambda lib, a, s: a.scatter(0, lib.tensor([0, 2, 4]), s), "_saved_index"),
    "scatter_value": (lambda lib, a, s: a.scatter(0, lib.tensor([0, 2, 2]), 2.0), "_saved_index"),
    "scatter_add": (lambda lib, a, s: a.scatter_add(0, lib.tensor([0, 2, 2]), s), "_saved_index"),
    "index": (lambda lib, a, s: a[lib.tensor([0, 2, 2])], "_saved_indices"),
    "index_put": (lambda lib, a, s: a.index_put((lib.tensor([0, 2, 2]),), s), "_saved_indices"),
    "index_put_accumulate": (lambda lib, a, s: a.index_put((lib.tensor([0, 2, 2]),), s, accumulate=True),
                             "_saved_indices"),
    "masked_scatter": (lambda lib, a, s: a.masked_scatter(lib.tensor([True, False, True, False, False]), s),
                       "_saved_mask"),
}


def _held(lib, case):
    op, name = HELD_AFTER_BACKWARD[case]
    a = (lib.arange(5.0) / 5).requires_grad_()
    y = op(lib, a, lib.ones(3, requires_grad=True))
    before = getattr(y.grad_fn, name)
    before = [t.tolist() for t in before] if isinstance(before, tuple) else before.tolist()
    y.sum().backward()
    with pytest.raises(RuntimeError) as err:
        getattr(y.grad_fn, name)
    return y.grad_fn.name(), before, str(err.value)


@pytest.mark.parametrize("case", sorted(HELD_AFTER_BACKWARD))
def test_held_index_freed_with_the_graph_as_torch(case):
    want = _held(torch, case)
    assert "Trying to backward through the graph a second time" in want[2]
    assert _held(ember, case) == want


def _masked_scatter_double(lib):
    a = lib.arange(4.0, requires_grad=True)
    src = lib.arange(10.0, 14.0, requires_grad=True)
    out = (a * a).masked_scatter(lib.tensor([True, False, True, False]), src * src)
    go = lib.ones(4, requires_grad=True)
    ga, gs = lib.autograd.grad(out, (a, src), go, create_graph=True)
    chain, fn = [], (ga * 1).grad_fn.next_functions[0][0]
    while fn is not None:  # (the self gradient's history: PyTorch's grad.masked_fill(mask, 0), then the leaf)
        chain.append(fn.name())
        fn = fn.next_functions[0][0] if fn.next_functions else None
    (ga.sum() * 3 + (gs * gs).sum()).backward()
    return chain, ga.tolist(), gs.tolist(), go.grad.tolist(), a.grad.tolist(), src.grad.tolist()


def test_masked_scatter_self_gradient_under_create_graph_as_torch():
    """masked_scatter's gradient for self under create_graph is PyTorch's formula's one node (MaskedFillBackward0
    of the incoming gradient), with its second-order gradients; the source's is recorded through ember's own steps
    (PyTorch's MaskedScatterBackwardBackward0 is not made)."""
    assert _masked_scatter_double(ember) == _masked_scatter_double(torch)
