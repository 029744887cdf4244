"""A YOLOv3/v5-style detector head on 16x16 images: a small Conv2d backbone (Conv-BN-LeakyReLU/SiLU), a Detect
layer whose output is view(bs, na, no, ny, nx).permute(0, 1, 3, 4, 2).contiguous(), a meshgrid(indexing='ij') cell
grid, anchors as a registered buffer, build_targets by width/height anchor ratio (torch.max(r, 1 / r).max(2)[0] <
anchor_t), gather by advanced indexing pi[b, a, gj, gi], a hand-written bbox_iou with CIoU (atan terms under
torch.no_grad for alpha), objectness targets set to detached clamped IoU (tobj[b, a, gj, gi] = iou), BCEWithLogits
with pos_weight, and at eval a hand-written box_iou + greedy NMS loop with class offsets (batched NMS)."""
import math

import numpy as np
import torch
import torch.nn as nn
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(11)
NC, IMG, STRIDE = 3, 16, 4
ANCHORS = [[1.5, 1.0], [1.0, 1.5], [2.5, 2.5]]  # in grid units


def conv(c1, c2, k=3, s=1, act=None):
    act = nn.LeakyReLU(0.1) if act is None else act
    return nn.Sequential(nn.Conv2d(c1, c2, k, s, k // 2, bias=False), nn.BatchNorm2d(c2, eps=1e-3, momentum=0.03), act)


class Detect(nn.Module):
    def __init__(self, nc, anchors, ch):
        super().__init__()
        self.nc, self.no, self.na = nc, nc + 5, len(anchors)
        self.register_buffer("anchors", torch.tensor(anchors).float())
        self.m = nn.Conv2d(ch, self.no * self.na, 1)
        b = self.m.bias.view(self.na, -1)
        b.data[:, 4] += math.log(8 / (IMG / STRIDE) ** 2)
        b.data[:, 5:] += math.log(0.6 / (nc - 0.99))

    def forward(self, x):
        x = self.m(x)
        bs, _, ny, nx = x.shape
        x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        if self.training:
            return x
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()
        y = x.sigmoid()
        xy = (y[..., 0:2] * 2 - 0.5 + grid) * STRIDE
        wh = (y[..., 2:4] * 2) ** 2 * self.anchors.view(1, self.na, 1, 1, 2) * STRIDE
        return torch.cat((xy, wh, y[..., 4:]), -1).view(bs, -1, self.no)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(conv(3, 8), conv(8, 16, 3, 2), conv(16, 16, 1, act=nn.SiLU()), conv(16, 24, 3, 2))
        self.detect = Detect(NC, ANCHORS, 24)

    def forward(self, x):
        return self.detect(self.backbone(x))


def bbox_iou(box1, box2, eps=1e-7):  # xywh, CIoU
    (x1, y1, w1, h1), (x2, y2, w2, h2) = box1.chunk(4, -1), box2.chunk(4, -1)
    b1_x1, b1_x2, b1_y1, b1_y2 = x1 - w1 / 2, x1 + w1 / 2, y1 - h1 / 2, y1 + h1 / 2
    b2_x1, b2_x2, b2_y1, b2_y2 = x2 - w2 / 2, x2 + w2 / 2, y2 - h2 / 2, y2 + h2 / 2
    inter = (torch.min(b1_x2, b2_x2) - torch.max(b1_x1, b2_x1)).clamp(0) * \
            (torch.min(b1_y2, b2_y2) - torch.max(b1_y1, b2_y1)).clamp(0)
    union = w1 * h1 + w2 * h2 - inter + eps
    iou = inter / union
    cw = torch.max(b1_x2, b2_x2) - torch.min(b1_x1, b2_x1)
    ch = torch.max(b1_y2, b2_y2) - torch.min(b1_y1, b2_y1)
    c2 = cw ** 2 + ch ** 2 + eps
    rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2) ** 2 + (b2_y1 + b2_y2 - b1_y1 - b1_y2) ** 2) / 4
    v = (4 / math.pi ** 2) * torch.pow(torch.atan(w2 / h2) - torch.atan(w1 / h1), 2)
    with torch.no_grad():
        alpha = v / (v - iou + (1 + eps))
    return (iou - (rho2 / c2 + v * alpha)).squeeze(-1)


def build_targets(p, targets, anchors, anchor_t=4.0):
    na, nt = anchors.shape[0], targets.shape[0]  # targets: (image, class, x, y, w, h) normalised
    ai = torch.arange(na).float().view(na, 1).repeat(1, nt)
    t = torch.cat((targets.repeat(na, 1, 1), ai[:, :, None]), 2)
    gain = torch.ones(7)
    gain[2:6] = torch.tensor(p.shape)[[3, 2, 3, 2]]
    t = t * gain
    ratio = t[:, :, 4:6] / anchors[:, None]
    j = torch.max(ratio, 1 / ratio).max(2)[0] < anchor_t
    t = t[j]
    b, c = t[:, :2].long().T
    gxy, gwh, a = t[:, 2:4], t[:, 4:6], t[:, 6].long()
    gi, gj = gxy.long().T
    gi, gj = gi.clamp_(0, p.shape[3] - 1), gj.clamp_(0, p.shape[2] - 1)
    return b, a, gj, gi, torch.cat((gxy - torch.stack((gi, gj), 1), gwh), 1), anchors[a], c


def compute_loss(p, targets, anchors):
    bce_cls = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0]))
    bce_obj = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.5]))
    b, a, gj, gi, tbox, anch, tcls = build_targets(p, targets, anchors)
    tobj = torch.zeros(p.shape[:4], dtype=p.dtype)
    pi = p[b, a, gj, gi]
    pxy, pwh, _, pcls = pi.split((2, 2, 1, NC), 1)
    pxy = pxy.sigmoid() * 2 - 0.5
    pwh = (pwh.sigmoid() * 2) ** 2 * anch
    iou = bbox_iou(torch.cat((pxy, pwh), 1), tbox)
    lbox = (1.0 - iou).mean()
    tobj[b, a, gj, gi] = iou.detach().clamp(0).type(tobj.dtype)
    t = torch.full_like(pcls, 0.0)
    t[range(len(b)), tcls] = 1.0
    lcls = bce_cls(pcls, t)
    lobj = bce_obj(p[..., 4], tobj)
    return (0.05 * lbox + 1.0 * lobj + 0.5 * lcls) * p.shape[0], torch.stack((lbox, lobj, lcls)).detach(), len(b)


def box_iou(box1, box2):  # xyxy
    area1 = (box1[:, 2] - box1[:, 0]) * (box1[:, 3] - box1[:, 1])
    area2 = (box2[:, 2] - box2[:, 0]) * (box2[:, 3] - box2[:, 1])
    lt, rb = torch.max(box1[:, None, :2], box2[:, :2]), torch.min(box1[:, None, 2:], box2[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(2)
    return inter / (area1[:, None] + area2 - inter)


def nms(boxes, scores, thr):
    order, keep = scores.argsort(descending=True), []
    while order.numel() > 0:
        i = order[0]
        keep.append(i.item())
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
        order = order[1:][ious <= thr]
    return torch.tensor(keep, dtype=torch.long)


def xywh2xyxy(x):
    y = x.clone()
    y[:, 0], y[:, 1] = x[:, 0] - x[:, 2] / 2, x[:, 1] - x[:, 3] / 2
    y[:, 2], y[:, 3] = x[:, 0] + x[:, 2] / 2, x[:, 1] + x[:, 3] / 2
    return y


def batch(n=4):
    imgs = r.normal(0, 0.3, (n, 3, IMG, IMG)).astype(np.float32)
    rows = []
    for i in range(n):
        for _ in range(r.integers(1, 3)):
            c, (x, y), (w, h) = r.integers(0, NC), r.uniform(0.2, 0.8, 2), r.uniform(0.15, 0.45, 2)
            x0, y0, x1, y1 = [int(round(v * IMG)) for v in (x - w / 2, y - h / 2, x + w / 2, y + h / 2)]
            imgs[i, c, max(y0, 0):y1, max(x0, 0):x1] += 1.0
            rows.append([i, c, x, y, w, h])
    return torch.from_numpy(imgs), torch.tensor(rows, dtype=torch.float32)


model = Model()
same_weights(model)
g_bn, g_w, g_b = [], [], []
for v in model.modules():
    if hasattr(v, "bias") and isinstance(v.bias, nn.Parameter):
        g_b.append(v.bias)
    if isinstance(v, nn.BatchNorm2d):
        g_bn.append(v.weight)
    elif hasattr(v, "weight") and isinstance(v.weight, nn.Parameter):
        g_w.append(v.weight)
opt = torch.optim.SGD(g_bn, lr=0.01, momentum=0.937, nesterov=True)
opt.add_param_group({"params": g_w, "weight_decay": 5e-4})
opt.add_param_group({"params": g_b})
for step in range(8):
    imgs, targets = batch()
    pred = model(imgs)
    loss, items, nt = compute_loss(pred, targets, model.detect.anchors)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f} box {items[0]:.5f} obj {items[1]:.5f} cls {items[2]:.5f} nt {nt}")

model.eval()
with torch.no_grad():
    imgs, targets = batch(3)
    out = model(imgs)
    for i, x in enumerate(out):
        x = x[x[:, 4] > 0.05]
        x[:, 5:] *= x[:, 4:5]
        box = xywh2xyxy(x[:, :4])
        conf, j = x[:, 5:].max(1, keepdim=True)
        det = torch.cat((box, conf, j.float()), 1)[conf.view(-1) > 0.02]
        keep = nms(det[:, :4] + det[:, 5:6] * 4096, det[:, 4], 0.45)[:10]
        det = det[keep]
        print(f"image {i} candidates {x.shape[0]} kept {det.shape[0]} top-conf {det[:, 4].max().item():.5f} "
              f"box-sum {det[:, :4].sum().item():.3f}")
