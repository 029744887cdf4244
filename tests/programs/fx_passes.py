"""torch.fx's common idioms on small models: trace, print the generated code, swap ReLU for GELU by walking the
nodes, fuse Conv2d + BatchNorm2d in eval mode, insert quantization-style fake-quant nodes after each layer, and
count FLOPs from the shapes ShapeProp records. Prints the graphs' nodes and the outputs' checksums.

    python fx_passes.py
"""

import copy
import operator

import numpy as np
import torch
import torch.fx
import torch.nn.functional as F
from _support import same_weights
from torch import nn
from torch.fx.passes.shape_prop import ShapeProp


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.bn2 = nn.BatchNorm2d(8)
        self.act = nn.ReLU()
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = self.act(self.bn1(self.conv1(x)))
        x = F.max_pool2d(torch.relu(self.bn2(self.conv2(x))), 2)
        x = x.flatten(1)
        return self.fc(x) * 0.5


def describe(gm):
    for node in gm.graph.nodes:
        target = node.target if isinstance(node.target, str) else node.target.__name__
        inputs = ",".join(n.name for n in node.all_input_nodes)
        print(f"  {node.op} {node.name} {target} [{inputs}]")


def checksum(t):
    return f"{t.detach().double().sum().item():.6f} {t.detach().double().abs().sum().item():.6f}"


gen = np.random.default_rng(3)
x = torch.from_numpy(gen.standard_normal((4, 3, 8, 8)).astype("float32"))
model = Net()
same_weights(model)
for bn in (model.bn1, model.bn2):  # running statistics that differ from the initial ones
    bn.running_mean.copy_(torch.from_numpy(gen.standard_normal(8).astype("float32")) * 0.1)
    bn.running_var.copy_(torch.from_numpy(gen.uniform(0.5, 1.5, 8).astype("float32")))
model.eval()

gm = torch.fx.symbolic_trace(model)
print("traced:")
describe(gm)
print("outputs agree:", torch.allclose(gm(x), model(x)), checksum(gm(x)))

# 1. swap ReLU for GELU: torch.relu calls and nn.ReLU modules
swapped = copy.deepcopy(gm)
for node in list(swapped.graph.nodes):
    is_relu_module = node.op == "call_module" and isinstance(swapped.get_submodule(node.target), nn.ReLU)
    if (node.op == "call_function" and node.target in (torch.relu, F.relu)) or is_relu_module:
        with swapped.graph.inserting_after(node):
            new = swapped.graph.call_function(F.gelu, node.args, node.kwargs)
        node.replace_all_uses_with(new)
        swapped.graph.erase_node(node)
swapped.graph.lint()
swapped.recompile()
print("gelu:")
describe(swapped)
print("gelu output:", checksum(swapped(x)))


# 2. fuse conv + bn (eval mode)
def fuse_conv_bn(conv, bn):
    fused = copy.deepcopy(conv)
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    fused.weight = nn.Parameter((conv.weight * scale.reshape(-1, 1, 1, 1)).detach())
    bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    fused.bias = nn.Parameter(((bias - bn.running_mean) * scale + bn.bias).detach())
    return fused


fused = copy.deepcopy(gm)
modules = dict(fused.named_modules())
for node in list(fused.graph.nodes):
    if node.op != "call_module" or not isinstance(modules[node.target], nn.BatchNorm2d):
        continue
    conv_node = node.args[0]
    if conv_node.op != "call_module" or not isinstance(modules[conv_node.target], nn.Conv2d):
        continue
    if len(conv_node.users) > 1:
        continue
    setattr(fused, conv_node.target, fuse_conv_bn(modules[conv_node.target], modules[node.target]))
    node.replace_all_uses_with(conv_node)
    fused.graph.erase_node(node)
    delattr(fused, node.target)
fused.graph.eliminate_dead_code()
fused.recompile()
print("fused:")
describe(fused)
print("fused agrees:", torch.allclose(fused(x), gm(x), atol=1e-5), checksum(fused(x)))
print("fused state_dict:", sorted(fused.state_dict()))


# 3. quantization-style insertion: a fake-quant node after every conv and linear
def fake_quant(t, scale=0.05):
    return torch.clamp(torch.round(t / scale), -128, 127) * scale


torch.fx.wrap("fake_quant")
quant = copy.deepcopy(gm)
for node in list(quant.graph.nodes):
    if node.op == "call_module" and isinstance(quant.get_submodule(node.target), (nn.Conv2d, nn.Linear)):
        with quant.graph.inserting_after(node):
            q = quant.graph.call_function(fake_quant, (node,), {"scale": 0.05})
        node.replace_all_uses_with(q, delete_user_cb=lambda user, q=q: user is not q)
quant.recompile()
print("quantized:")
describe(quant)
print("quantized output:", checksum(quant(x)))

# 4. FLOPs from ShapeProp's shapes
ShapeProp(gm).propagate(x)
total = 0
for node in gm.graph.nodes:
    shape = tuple(node.meta["tensor_meta"].shape) if "tensor_meta" in node.meta else None
    flops = 0
    if node.op == "call_module":
        m = gm.get_submodule(node.target)
        if isinstance(m, nn.Conv2d):
            k = m.kernel_size[0] * m.kernel_size[1] * m.in_channels // m.groups
            flops = 2 * k * int(np.prod(shape))
        elif isinstance(m, nn.Linear):
            flops = 2 * m.in_features * int(np.prod(shape))
    elif node.op == "call_function" and node.target is operator.mul:
        flops = int(np.prod(shape))
    total += flops
    dtype = str(node.meta["tensor_meta"].dtype).rpartition(".")[2] if shape else "-"
    print(f"  {node.name} {shape} {dtype} flops={flops}")
print("total flops:", total)

# 5. the Interpreter, counting calls per op
counts = {}


class Counter(torch.fx.Interpreter):
    def run_node(self, n):
        counts[n.op] = counts.get(n.op, 0) + 1
        return super().run_node(n)


print("interpreted:", checksum(Counter(gm).run(x)), sorted(counts.items()))
