"""A DETR-style set-prediction loss as facebookresearch/detr writes it: a HungarianMatcher under @torch.no_grad()
building a cost matrix from softmax class probabilities, torch.cdist(p=1) box distances and generalized IoU
(util/box_ops.py's own box_area/box_iou/generalized_box_iou), .view(bs, num_queries, -1).cpu(), split by target sizes and solved per image with
scipy's linear_sum_assignment; the criterion with an empty-class weight buffer, torch.full for unmatched classes,
_get_src_permutation_idx (torch.cat of full_like), L1 + GIoU box losses normalised by num_boxes, a tiny
transformer-decoder model with learned queries (nn.TransformerDecoder, batch_first) trained with AdamW."""
import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from scipy.optimize import linear_sum_assignment
from torch import nn


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    iou = inter / union
    return iou, union


def generalized_box_iou(boxes1, boxes2):
    assert (boxes1[:, 2:] >= boxes1[:, :2]).all()
    assert (boxes2[:, 2:] >= boxes2[:, :2]).all()
    iou, union = box_iou(boxes1, boxes2)
    lt = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    area = wh[:, :, 0] * wh[:, :, 1]
    return iou - (area - union) / area


class HungarianMatcher(nn.Module):
    def __init__(self, cost_class=1, cost_bbox=5, cost_giou=2):
        super().__init__()
        self.cost_class, self.cost_bbox, self.cost_giou = cost_class, cost_bbox, cost_giou

    @torch.no_grad()
    def forward(self, outputs, targets):
        bs, num_queries = outputs["pred_logits"].shape[:2]
        out_prob = outputs["pred_logits"].flatten(0, 1).softmax(-1)
        out_bbox = outputs["pred_boxes"].flatten(0, 1)
        tgt_ids = torch.cat([v["labels"] for v in targets])
        tgt_bbox = torch.cat([v["boxes"] for v in targets])
        cost_class = -out_prob[:, tgt_ids]
        cost_bbox = torch.cdist(out_bbox, tgt_bbox, p=1)
        cost_giou = -generalized_box_iou(box_cxcywh_to_xyxy(out_bbox), box_cxcywh_to_xyxy(tgt_bbox))
        C = self.cost_bbox * cost_bbox + self.cost_class * cost_class + self.cost_giou * cost_giou
        C = C.view(bs, num_queries, -1).cpu()
        sizes = [len(v["boxes"]) for v in targets]
        indices = [linear_sum_assignment(c[i]) for i, c in enumerate(C.split(sizes, -1))]
        return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)) for i, j in indices]


class SetCriterion(nn.Module):
    def __init__(self, num_classes, matcher, eos_coef=0.1):
        super().__init__()
        self.num_classes, self.matcher = num_classes, matcher
        empty_weight = torch.ones(self.num_classes + 1)
        empty_weight[-1] = eos_coef
        self.register_buffer("empty_weight", empty_weight)

    def _get_src_permutation_idx(self, indices):
        batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
        src_idx = torch.cat([src for (src, _) in indices])
        return batch_idx, src_idx

    def forward(self, outputs, targets):
        indices = self.matcher(outputs, targets)
        num_boxes = torch.as_tensor([sum(len(t["labels"]) for t in targets)], dtype=torch.float)
        num_boxes = torch.clamp(num_boxes, min=1).item()
        src_logits = outputs["pred_logits"]
        idx = self._get_src_permutation_idx(indices)
        target_classes_o = torch.cat([t["labels"][J] for t, (_, J) in zip(targets, indices)])
        target_classes = torch.full(src_logits.shape[:2], self.num_classes, dtype=torch.int64)
        target_classes[idx] = target_classes_o
        loss_ce = F.cross_entropy(src_logits.transpose(1, 2), target_classes, self.empty_weight)
        src_boxes = outputs["pred_boxes"][idx]
        target_boxes = torch.cat([t["boxes"][i] for t, (_, i) in zip(targets, indices)], dim=0)
        loss_bbox = F.l1_loss(src_boxes, target_boxes, reduction="none").sum() / num_boxes
        loss_giou = (1 - torch.diag(generalized_box_iou(box_cxcywh_to_xyxy(src_boxes),
                                                        box_cxcywh_to_xyxy(target_boxes)))).sum() / num_boxes
        card = (src_logits.argmax(-1) != src_logits.shape[-1] - 1).sum(1)
        card_err = F.l1_loss(card.float(), torch.as_tensor([len(v["labels"]) for v in targets], dtype=torch.float))
        return {"loss_ce": loss_ce, "loss_bbox": loss_bbox, "loss_giou": loss_giou, "cardinality_error": card_err}, \
            indices


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class TinyDETR(nn.Module):
    def __init__(self, num_classes=3, hidden_dim=16, num_queries=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, hidden_dim, 3, stride=2, padding=1))
        layer = nn.TransformerDecoderLayer(hidden_dim, 2, 32, dropout=0.0, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, 2)
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.bbox_embed = MLP(hidden_dim, hidden_dim, 4, 3)

    def forward(self, images):
        memory = self.backbone(images).flatten(2).permute(0, 2, 1)
        tgt = self.query_embed.weight.unsqueeze(0).repeat(images.shape[0], 1, 1)
        hs = self.decoder(tgt, memory)
        return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}


r = rng(0)
torch.manual_seed(0)
model = TinyDETR()
same_weights(model)
criterion = SetCriterion(3, HungarianMatcher())
weight_dict = {"loss_ce": 1, "loss_bbox": 5, "loss_giou": 2}
param_dicts = [{"params": [p for n, p in model.named_parameters() if "backbone" not in n and p.requires_grad]},
               {"params": [p for n, p in model.named_parameters() if "backbone" in n and p.requires_grad], "lr": 1e-4}]
optimizer = torch.optim.AdamW(param_dicts, lr=1e-3, weight_decay=1e-4)
lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 4)
for step in range(8):
    images = torch.from_numpy(r.standard_normal((2, 3, 16, 16)).astype(np.float32))
    targets = []
    for n in (2, 3):
        centres = r.uniform(0.25, 0.75, (n, 2))
        sizes = r.uniform(0.1, 0.4, (n, 2))
        targets.append({"labels": torch.from_numpy(r.integers(0, 3, n)),
                        "boxes": torch.from_numpy(np.concatenate([centres, sizes], 1).astype(np.float32))})
    outputs = model(images)
    loss_dict, indices = criterion(outputs, targets)
    losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
    optimizer.zero_grad()
    losses.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    optimizer.step()
    lr_scheduler.step()
    print(f"step {step} loss {losses.item():.6f} ce {loss_dict['loss_ce'].item():.6f} "
          f"bbox {loss_dict['loss_bbox'].item():.6f} giou {loss_dict['loss_giou'].item():.6f} "
          f"card {loss_dict['cardinality_error'].item():.1f} grad {grad_norm.item():.5f} "
          f"match {[i.tolist() for i, _ in indices]}")
