"""ember against PyTorch, one thread, op by op: each backward node's CPU time and each leaf module's forward.

    python bench/node_profile.py resnet32
    python bench/node_profile.py cnn64 --rounds 12
    python bench/node_profile.py resnet32 --by-kind      # summed by node kind and convolution shape
    python bench/node_profile.py wgan_gp32 --by-kind     # the critic step: its double backward's nodes too

A classifier workload's step (``workloads.py``: ``resnet32``, ``cnn64``) built the same way in both frameworks and
timed by the calling thread's CPU clock, blocks of steps alternating ember and PyTorch (the order flipping every
round, so drift on a shared machine hits both alike): zero_grad, the model and the loss, the backward, the
optimizer step; inside the backward each autograd node between its pre-hook and its hook (``Node.register_prehook``,
``register_hook``, which both frameworks have: no module backward hooks, whose identity nodes would change the graph);
inside the forward each leaf module between its forward pre-hook and hook. A convolution's node is named by its
weight's shape, stride and input size. The backward less its nodes is the engine (its Python for ember, PyTorch's
C++ engine), the summing of a tensor's gradients and the leaves' accumulation. Medians over the rounds, ms a step.
``wgan_gp32`` (``workloads.build_wgan_gp_critic``'s step): its three forwards sum in each module's row, the
penalty's input gradient (create_graph) is timed whole and its nodes are the "grad" rows, ``loss.backward()``'s
(the double backward's nodes among them) the "node" rows.
The hooks cost both frameworks a few microseconds a node; the split, not the total, is what this measures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if not os.environ.get("PYTHONPATH"):  # this checkout's ember
    sys.path.insert(1, os.path.dirname(HERE))

clock = time.thread_time


def _build(fw, workload: str):
    import workloads

    if workload == "resnet32":
        model = workloads.resnet_model(fw, 0)
        xs, ys = workloads._data(fw, 32, (3, 32, 32), 0)
    elif workload == "cnn64":
        fw.manual_seed(0)
        model = workloads._small_cnn(fw.nn)
        xs, ys = workloads._data(fw, 64, (1, 28, 28), 0)
    else:
        raise SystemExit(f"node_profile.py takes resnet32, cnn64 or wgan_gp32, not {workload}")
    return model, fw.nn.CrossEntropyLoss(), fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9), xs, ys


def _node_name(node, k: int) -> str:
    name = type(node).__name__
    if name == "AccumulateGrad":
        return ""
    if name == "ConvolutionBackward0":
        if hasattr(node, "_saved_weight"):  # PyTorch's
            w, s, size = tuple(node._saved_weight.shape), tuple(node._saved_stride)[0], node._saved_input.shape[2]
        else:  # ember's ConvNd: saved (cols, w, x), meta (input size, stride, ...)
            try:
                w, s, size = tuple(node.saved[1].shape), node.meta[1][0], node.meta[0][0]
            except (AttributeError, IndexError, TypeError):  # another layout of saved: the node's kind alone
                return f"{k:03d} {name}"
        name += f" {w} s{s} in{size}"
    return f"{k:03d} {name}"


def step_fn(fw, workload: str):
    """(one step, the dict of CPU seconds it adds to by part)."""
    if workload == "wgan_gp32":
        import workloads

        model, optimizer, reals, fakes, alphas = workloads.wgan_gp_parts(fw, 32)
    else:
        model, criterion, optimizer, xs, ys = _build(fw, workload)
    acc: dict = defaultdict(float)
    started: dict = {}
    for name, module in model.named_modules():
        if list(module.children()):
            continue
        label = f"forward {name} {type(module).__name__}"

        def pre(mod, inp, label=label):
            started[label] = clock()

        def post(mod, inp, out, label=label):
            acc[label] += clock() - started[label]

        module.register_forward_pre_hook(pre)
        module.register_forward_hook(post)

    hooked: set = set()

    def hook_graph(root, prefix: str = "node ") -> None:
        seen, stack, order = set(), [root], []
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            order.append(node)
            stack.extend(n for n, _ in node.next_functions)
        for k, node in enumerate(order):
            label = _node_name(node, k)
            if not label or id(node) in hooked:
                continue
            hooked.add(id(node))

            def pre(grads, label=label):
                started[label] = clock()

            def post(grad_inputs, grad_outputs, label=label):
                acc[prefix + label] += clock() - started[label]

            node.register_prehook(pre)
            node.register_hook(post)

    def wgan_step(i: int) -> None:
        real, fake, alpha = reals[i % 8], fakes[i % 8], alphas[i % 8]
        hooked.clear()
        t0 = clock()
        x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        scores = model(x_hat)
        t1 = clock()
        hook_graph(scores.grad_fn, "grad ")
        t2 = clock()
        (grads,) = fw.autograd.grad(scores, x_hat, fw.ones_like(scores), create_graph=True)
        t3 = clock()
        penalty = ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        loss = model(fake).mean() - model(real).mean() + 10 * penalty
        optimizer.zero_grad()
        t4 = clock()
        hook_graph(loss.grad_fn)
        t5 = clock()
        loss.backward()
        t6 = clock()
        optimizer.step()
        t7 = clock()
        acc["critic(x_hat)"] += t1 - t0
        acc["autograd.grad (create_graph)"] += t3 - t2
        acc["penalty, critic(fake), critic(real), zero_grad"] += t4 - t3
        acc["backward"] += t6 - t5
        acc["optimizer step"] += t7 - t6
        acc["step (less the hooking)"] += t7 - t0 - (t2 - t1) - (t5 - t4)

    if workload == "wgan_gp32":
        return wgan_step, acc

    def step(i: int) -> None:
        hooked.clear()  # (a new graph each step: a freed node's id comes back on a new node, which needs its hooks)
        t0 = clock()
        optimizer.zero_grad()
        t1 = clock()
        loss = criterion(model(xs[i % 8]), ys[i % 8])
        t2 = clock()
        hook_graph(loss.grad_fn)
        t3 = clock()
        loss.backward()
        t4 = clock()
        optimizer.step()
        t5 = clock()
        acc["zero_grad"] += t1 - t0
        acc["model and loss"] += t2 - t1
        acc["backward"] += t4 - t3
        acc["optimizer step"] += t5 - t4
        acc["step (less the hooking)"] += t5 - t0 - (t3 - t2)

    return step, acc


def _kind(label: str) -> str:
    """A row's kind: the node's name without its number (a convolution with its shape), a module's type."""
    if label.startswith(("node ", "grad ")):
        return label[:5] + label.split(" ", 2)[2]
    if label.startswith("forward "):
        return "forward " + label.rsplit(" ", 1)[1]
    return label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=["resnet32", "cnn64", "wgan_gp32"])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--by-kind", action="store_true", help="sum the rows by node kind and module type")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy loads
    import torch

    import ember

    torch.set_num_threads(1)
    ember.set_num_threads(1)
    steps = {"torch": step_fn(torch, args.workload), "ember": step_fn(ember, args.workload)}
    for step, _acc in steps.values():
        for i in range(3):
            step(i)
    per: dict = {fw: defaultdict(list) for fw in steps}
    for r in range(args.rounds):
        for fw in (("torch", "ember") if r % 2 == 0 else ("ember", "torch")):
            step, acc = steps[fw]
            acc.clear()
            for i in range(args.steps):
                step(i)
            rows: dict = defaultdict(float)
            for label, seconds in acc.items():
                rows[_kind(label) if args.by_kind else label] += seconds
            for label, seconds in rows.items():
                per[fw][label].append(seconds / args.steps * 1e3)
    print(f"{args.workload}, one thread, CPU ms a step, medians of {args.rounds} rounds x {args.steps} steps")
    print(f"{'part':62s} {'ember':>8s} {'PyTorch':>8s} {'ember - PyTorch':>16s}")
    labels = [k for k in per["ember"] if not k.startswith(("node", "grad ", "forward "))]
    labels += sorted(k for k in set(per["ember"]) | set(per["torch"]) if k.startswith(("forward ", "grad ", "node")))
    for label in labels:
        e, t = (statistics.median(per[fw].get(label, [0.0])) for fw in ("ember", "torch"))
        print(f"{label:62s} {e:8.2f} {t:8.2f} {e - t:16.2f}")


if __name__ == "__main__":
    main()
