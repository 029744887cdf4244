"""ember.vision.ops against torchvision's documented arithmetic written with torch ops (torchvision itself is not
installed next to the oracle torch): values and gradients, NMS against a brute-force greedy reference."""

import numpy as np
import pytest
import torch

import ember
from ember.vision import ops

RNG = np.random.default_rng(0)


def random_boxes(n, scale=20.0):
    xy = RNG.uniform(0, scale, size=(n, 2))
    wh = RNG.uniform(1, scale / 2, size=(n, 2))
    return np.concatenate([xy, xy + wh], axis=1).astype(np.float32)


def pair(a, grad=False):
    return ember.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def close(a, b, atol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=atol, rtol=1e-5)


def torch_iou_parts(b1, b2):
    area1 = (b1[:, 2] - b1[:, 0]) * (b1[:, 3] - b1[:, 1])
    area2 = (b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1])
    lt, rb = torch.max(b1[:, None, :2], b2[:, :2]), torch.min(b1[:, None, 2:], b2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter, area1[:, None] + area2 - inter


def test_box_area_iou_giou_values_and_gradients():
    a, b = random_boxes(7), random_boxes(5)
    (ea, ta), (eb, tb) = pair(a, True), pair(b, True)
    close(ops.box_area(ea), (ta[:, 2] - ta[:, 0]) * (ta[:, 3] - ta[:, 1]))
    inter, union = torch_iou_parts(ta, tb)
    t_iou = inter / union
    lti, rbi = torch.min(ta[:, None, :2], tb[:, :2]), torch.max(ta[:, None, 2:], tb[:, 2:])
    whi = (rbi - lti).clamp(min=0)
    t_giou = t_iou - (whi[..., 0] * whi[..., 1] - union) / (whi[..., 0] * whi[..., 1])
    e_iou, e_giou = ops.box_iou(ea, eb), ops.generalized_box_iou(ea, eb)
    assert tuple(e_iou.shape) == (7, 5) and e_iou.dtype == ember.float32
    close(e_iou, t_iou)
    close(e_giou, t_giou)
    assert e_giou.min().item() < 0 < e_iou.max().item()  # disjoint and overlapping pairs both present
    w = RNG.standard_normal((7, 5)).astype(np.float32)
    (e_iou * ember.tensor(w) + e_giou).sum().backward()
    (t_iou * torch.tensor(w) + t_giou).sum().backward()
    close(ea.grad, ta.grad)
    close(eb.grad, tb.grad)


def test_identical_boxes_have_iou_one_and_integer_boxes_upcast():
    boxes = ember.tensor([[0, 0, 4, 4], [2, 2, 6, 6]], dtype=ember.int16)
    assert ops.box_area(boxes).dtype == ember.int32
    iou = ops.box_iou(boxes, boxes)
    assert iou.dtype == ember.float32
    np.testing.assert_allclose(iou.numpy(), [[1, 4 / 28], [4 / 28, 1]], rtol=1e-6)


@pytest.mark.parametrize("src,dst", [("xyxy", "xywh"), ("xyxy", "cxcywh"), ("xywh", "cxcywh"), ("cxcywh", "xyxy"),
                                     ("xywh", "xyxy"), ("cxcywh", "xywh")])
def test_box_convert_round_trips_and_matches_the_formulas(src, dst):
    xyxy = random_boxes(6)
    forms = {"xyxy": xyxy,
             "xywh": np.concatenate([xyxy[:, :2], xyxy[:, 2:] - xyxy[:, :2]], 1),
             "cxcywh": np.concatenate([(xyxy[:, :2] + xyxy[:, 2:]) / 2, xyxy[:, 2:] - xyxy[:, :2]], 1)}
    out = ops.box_convert(ember.tensor(forms[src]), src, dst)
    np.testing.assert_allclose(out.numpy(), forms[dst], atol=1e-5)
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions for given in_fmt xyxy and out_fmt yxyx"):
        ops.box_convert(ember.tensor(xyxy), "xyxy", "yxyx")


def test_clip_and_remove_small_boxes():
    boxes = ember.tensor([[-3.0, 2.0, 50.0, 9.0], [1.0, -1.0, 1.5, 30.0], [2.0, 2.0, 8.0, 8.0]])
    np.testing.assert_array_equal(ops.clip_boxes_to_image(boxes, (20, 40)).numpy(),
                                  [[0, 2, 40, 9], [1, 0, 1.5, 20], [2, 2, 8, 8]])
    keep = ops.remove_small_boxes(boxes, 1.0)
    assert keep.dtype == ember.int64 and keep.tolist() == [0, 2]


def greedy_nms(boxes, scores, thr):
    """Brute force over torch: highest score first, drop every later box with IoU > thr against a kept one."""
    inter, union = torch_iou_parts(boxes, boxes)
    iou = inter / union
    order = sorted(range(len(scores)), key=lambda i: -float(scores[i]))
    keep = []
    for i in order:
        if all(float(iou[i, k]) <= thr for k in keep):
            keep.append(i)
    return keep


@pytest.mark.parametrize("thr", [0.0, 0.3, 0.5, 0.9])
def test_nms_matches_the_greedy_definition(thr):
    boxes = random_boxes(40, scale=15)
    scores = RNG.permutation(40).astype(np.float32) / 40  # distinct scores: one right answer
    keep = ops.nms(ember.tensor(boxes), ember.tensor(scores), thr)
    assert keep.dtype == ember.int64
    assert keep.tolist() == greedy_nms(torch.tensor(boxes), torch.tensor(scores), thr)


def test_nms_threshold_is_strict_ties_keep_input_order_and_empty_input():
    boxes = ember.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 1.0], [5.0, 5.0, 6.0, 6.0]])
    scores = ember.tensor([0.5, 0.5, 0.5])
    assert ops.nms(boxes, scores, 0.5).tolist() == [0, 1, 2]  # IoU exactly 0.5 is not above the threshold
    assert ops.nms(boxes, scores, 0.49).tolist() == [0, 2]
    assert ops.nms(boxes, ember.tensor([0.1, 0.5, 0.2]), 0.49).tolist() == [1, 2]
    # IoU 3/10 is 0.3000000119 in float32: above a threshold of 0.3 (compared in double, as torchvision's kernel)
    thin = ember.tensor([[0.0, 0.0, 10.0, 1.0], [0.0, 0.0, 3.0, 1.0]])
    assert ops.nms(thin, ember.tensor([1.0, 0.5]), 0.3).tolist() == [0]
    assert ops.nms(thin.double(), ember.tensor([1.0, 0.5]).double(), 0.3).tolist() == [0, 1]
    with pytest.raises(RuntimeError, match="dets should have the same type as scores"):
        ops.nms(thin, ember.tensor([1.0, 0.5]).double(), 0.3)
    empty = ops.nms(ember.zeros(0, 4), ember.zeros(0), 0.5)
    assert empty.dtype == ember.int64 and tuple(empty.shape) == (0,)
    with pytest.raises(RuntimeError, match="boxes should have 2 dimensions"):
        ops.nms(ember.zeros(3, 5), ember.zeros(3), 0.5)


def test_batched_nms_is_nms_per_category_sorted_by_score():
    boxes = random_boxes(30, scale=12)
    scores = RNG.permutation(30).astype(np.float32)
    cats = RNG.integers(0, 3, size=30)
    keep = ops.batched_nms(ember.tensor(boxes), ember.tensor(scores), ember.tensor(cats), 0.4).tolist()
    expected = []
    for c in range(3):
        members = np.nonzero(cats == c)[0]
        expected += [int(members[i]) for i in greedy_nms(torch.tensor(boxes[members]),
                                                          torch.tensor(scores[members]), 0.4)]
    assert keep == sorted(expected, key=lambda i: -scores[i])
    assert len(keep) > len(ops.nms(ember.tensor(boxes), ember.tensor(scores), 0.4))


@pytest.mark.parametrize("alpha,gamma,reduction", [(0.25, 2, "none"), (0.5, 1.5, "mean"), (-1, 2, "sum")])
def test_sigmoid_focal_loss_values_and_gradients(alpha, gamma, reduction):
    logits = RNG.standard_normal((4, 6)).astype(np.float32)
    targets = RNG.integers(0, 2, size=(4, 6)).astype(np.float32)
    (el, tl), (et, tt) = pair(logits, True), pair(targets)
    p = torch.sigmoid(tl)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(tl, tt, reduction="none")
    loss = ce * (1 - (p * tt + (1 - p) * (1 - tt))) ** gamma
    if alpha >= 0:
        loss = (alpha * tt + (1 - alpha) * (1 - tt)) * loss
    loss = {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]
    out = ops.sigmoid_focal_loss(el, et, alpha, gamma, reduction)
    close(out, loss)
    out.sum().backward()
    loss.sum().backward()
    close(el.grad, tl.grad)
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction'"):
        ops.sigmoid_focal_loss(el, et, reduction="avg")


def test_stochastic_depth_rows_batch_and_eval():
    ember.manual_seed(0)  # the drop rate's bounds are 5 standard deviations wide: one fixed draw, the same verdict
    x = ember.ones(2000, 3)
    out = ops.stochastic_depth(x, 0.25, "row")
    rows = out.numpy()
    assert set(np.unique(rows).tolist()) <= {0.0, float(np.float32(1 / 0.75))} and (rows == rows[:, :1]).all()
    assert 0.2 < (rows[:, 0] == 0).mean() < 0.3
    whole = ops.stochastic_depth(x, 0.5, "batch").numpy()
    assert len(np.unique(whole)) == 1
    assert ops.stochastic_depth(x, 1.0, "row").abs().sum().item() == 0
    module = ops.StochasticDepth(0.5, "row").eval()
    assert module(x) is x and repr(module) == "StochasticDepth(p=0.5, mode=row)"
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1"):
        ops.stochastic_depth(x, 1.5, "row")
    with pytest.raises(ValueError, match="mode has to be either 'batch' or 'row'"):
        ops.stochastic_depth(x, 0.5, "col")


def test_frozen_batchnorm_matches_eval_batchnorm_and_loads_its_state_dict():
    bn = torch.nn.BatchNorm2d(4)
    with torch.no_grad():
        for name in ("weight", "bias", "running_mean"):
            getattr(bn, name).copy_(torch.tensor(RNG.standard_normal(4)))
        bn.running_var.copy_(torch.tensor(RNG.uniform(0.5, 2, 4)))
    frozen = ops.FrozenBatchNorm2d(4)
    assert list(frozen.parameters()) == []
    frozen.load_state_dict({k: ember.tensor(v.numpy()) for k, v in bn.state_dict().items()})  # num_batches dropped
    assert sorted(frozen.state_dict()) == ["bias", "running_mean", "running_var", "weight"]
    x = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)
    close(frozen(ember.tensor(x)), bn.eval()(torch.tensor(x)))
    assert repr(frozen) == "FrozenBatchNorm2d(4, eps=1e-05)"


def test_building_blocks_have_torchvisions_keys_and_shapes():
    block = ops.Conv2dNormActivation(3, 8, kernel_size=3, stride=2)
    assert [(k, tuple(v.shape)) for k, v in block.state_dict().items()] == [
        ("0.weight", (8, 3, 3, 3)), ("1.weight", (8,)), ("1.bias", (8,)), ("1.running_mean", (8,)),
        ("1.running_var", (8,)), ("1.num_batches_tracked", ())]
    assert isinstance(block[2], ember.nn.ReLU) and tuple(block(ember.zeros(1, 3, 9, 9)).shape) == (1, 8, 5, 5)
    plain = ops.Conv2dNormActivation(3, 8, norm_layer=None, activation_layer=None)
    assert sorted(plain.state_dict()) == ["0.bias", "0.weight"]
    se = ops.SqueezeExcitation(8, 2)
    assert [(k, tuple(v.shape)) for k, v in se.state_dict().items()] == [
        ("fc1.weight", (2, 8, 1, 1)), ("fc1.bias", (2,)), ("fc2.weight", (8, 2, 1, 1)), ("fc2.bias", (8,))]
    x = RNG.standard_normal((2, 8, 4, 4)).astype(np.float32)
    ref_fc1, ref_fc2 = torch.nn.Conv2d(8, 2, 1), torch.nn.Conv2d(2, 8, 1)
    ref_fc1.load_state_dict({k[4:]: torch.tensor(v.numpy()) for k, v in se.state_dict().items() if k[:3] == "fc1"})
    ref_fc2.load_state_dict({k[4:]: torch.tensor(v.numpy()) for k, v in se.state_dict().items() if k[:3] == "fc2"})
    tx = torch.tensor(x)
    close(se(ember.tensor(x)), torch.sigmoid(ref_fc2(torch.relu(ref_fc1(tx.mean((2, 3), keepdim=True))))) * tx)
    mlp = ops.MLP(6, [5, 4], dropout=0.1)
    assert [type(m).__name__ for m in mlp] == ["Linear", "ReLU", "Dropout", "Linear", "Dropout"]
    assert tuple(ops.Permute([0, 2, 3, 1])(ember.zeros(1, 2, 3, 4)).shape) == (1, 3, 4, 2)


def torchvision_box_losses(b1, b2, eps=1e-7):
    """torchvision.ops' generalized / distance / complete box-IoU losses (giou_loss.py, diou_loss.py, ciou_loss.py)
    in plain torch: torchvision cannot be installed next to the oracle torch here."""
    x1, y1, x2, y2 = b1.unbind(-1)
    x1g, y1g, x2g, y2g = b2.unbind(-1)
    xk1, yk1, xk2, yk2 = torch.max(x1, x1g), torch.max(y1, y1g), torch.min(x2, x2g), torch.min(y2, y2g)
    inter = torch.zeros_like(x1)
    mask = (yk2 > yk1) & (xk2 > xk1)
    inter[mask] = (xk2[mask] - xk1[mask]) * (yk2[mask] - yk1[mask])
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter
    iou = inter / (union + eps)
    xc1, yc1, xc2, yc2 = torch.min(x1, x1g), torch.min(y1, y1g), torch.max(x2, x2g), torch.max(y2, y2g)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    giou = 1 - (iou - (area_c - union) / (area_c + eps))
    diag = (xc2 - xc1) ** 2 + (yc2 - yc1) ** 2 + eps
    centres = ((x2 + x1) / 2 - (x1g + x2g) / 2) ** 2 + ((y2 + y1) / 2 - (y1g + y2g) / 2) ** 2
    diou = 1 - iou + centres / diag
    v = (4 / (np.pi ** 2)) * torch.pow(torch.atan((x2g - x1g) / (y2g - y1g)) - torch.atan((x2 - x1) / (y2 - y1)), 2)
    with torch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return {"generalized_box_iou_loss": giou, "distance_box_iou_loss": diou, "complete_box_iou_loss": diou + alpha * v}


@pytest.mark.parametrize("name", ["generalized_box_iou_loss", "distance_box_iou_loss", "complete_box_iou_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_box_iou_losses_values_and_gradients(name, reduction):
    a, b = random_boxes(9), random_boxes(9)  # overlapping and disjoint pairs
    (ea, ta), (eb, tb) = pair(a, True), pair(b, True)
    want = torchvision_box_losses(ta, tb)[name]
    want = {"none": want, "mean": want.mean(), "sum": want.sum()}[reduction]
    got = getattr(ops, name)(ea, eb, reduction=reduction)
    close(got, want)
    w = RNG.standard_normal(tuple(want.shape)).astype(np.float32)
    (got * ember.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    close(ea.grad, ta.grad)
    close(eb.grad, tb.grad)


def test_box_iou_losses_empty_integer_and_bad_reduction():
    empty = ember.zeros(0, 4, requires_grad=True)
    loss = ops.generalized_box_iou_loss(empty, empty, reduction="mean")
    assert loss.item() == 0.0 and loss.requires_grad  # 0 * sum: a graph, no NaN
    boxes = ember.tensor([[0, 0, 4, 4], [2, 2, 6, 6]])
    assert ops.distance_box_iou_loss(boxes, boxes.flip(0)).dtype == ember.float32
    assert ops.generalized_box_iou_loss(boxes, boxes).abs().max().item() < 1e-6
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction'"):
        ops.complete_box_iou_loss(boxes, boxes, reduction="avg")
