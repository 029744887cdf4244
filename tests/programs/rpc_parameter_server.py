"""A parameter server over RPC, in the style of PyTorch's tutorial "Implementing a Parameter Server Using
Distributed RPC Framework": the model lives on worker 0; workers 1..n train it through RPC, distributed autograd and
a DistributedOptimizer.

    torchrun --standalone --nproc-per-node 3 rpc_parameter_server.py [--steps N]

The trainers take turns (a turn counter on the parameter server), so the updates happen in a fixed order. At the
end the parameter server replays the same steps in one process with plain autograd and SGD, from the same initial
weights and batches: the two trainings must give the same parameters. Only worker 0 prints (the lines of several
processes would interleave).
"""

import argparse
import copy
import os
import threading

import torch
import torch.distributed.autograd as dist_autograd
import torch.distributed.rpc as rpc
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights
from torch import optim
from torch.distributed.optim import DistributedOptimizer

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=4)
args = parser.parse_args()
LR, BATCH = 0.05, 8


def call_method(method, rref, *args, **kwargs):
    return method(rref.local_value(), *args, **kwargs)


def remote_method(method, rref, *args, **kwargs):
    return rpc.rpc_sync(rref.owner(), call_method, args=[method, rref] + list(args), kwargs=kwargs)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class ParameterServer(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()
        same_weights(self.model)
        self.initial = copy.deepcopy(self.model.state_dict())
        self.turn = 0
        self.turns = threading.Condition()
        self.losses = {}

    def forward(self, x):
        return self.model(x)

    def get_param_rrefs(self):
        return [rpc.RRef(p) for p in self.model.parameters()]

    def wait_turn(self, step):
        with self.turns:
            self.turns.wait_for(lambda: self.turn == step, timeout=60)
            assert self.turn == step, f"step {step} never came (at {self.turn})"

    def end_turn(self, step, loss):
        with self.turns:
            self.losses[step] = loss
            self.turn += 1
            self.turns.notify_all()

    def wait_all(self, steps):
        with self.turns:
            self.turns.wait_for(lambda: self.turn == steps, timeout=120)
            return self.turn


param_server = None
global_lock = threading.Lock()


def get_parameter_server():
    global param_server
    with global_lock:
        if param_server is None:
            param_server = ParameterServer()
        return param_server


def batch(trainer, i):
    """Trainer ``trainer``'s batch ``i``: the same numbers in every process that asks."""
    data = rng(1000 * trainer + i)
    x = torch.tensor(data.standard_normal((BATCH, 10)), dtype=torch.float32)
    y = torch.tensor(data.integers(0, 3, size=BATCH), dtype=torch.long)
    return x, y


class TrainerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.param_server_rref = rpc.remote("parameter_server", get_parameter_server)

    def get_global_param_rrefs(self):
        return remote_method(ParameterServer.get_param_rrefs, self.param_server_rref)

    def forward(self, x):
        return remote_method(ParameterServer.forward, self.param_server_rref, x)


def run_training_loop(rank, trainers, steps):
    net = TrainerNet()
    opt = DistributedOptimizer(optim.SGD, net.get_global_param_rrefs(), lr=LR)
    for i in range(steps):
        step = i * trainers + rank - 1
        remote_method(ParameterServer.wait_turn, net.param_server_rref, step)
        x, y = batch(rank, i)
        with dist_autograd.context() as context_id:
            loss = F.cross_entropy(net(x), y)
            dist_autograd.backward(context_id, [loss])
            opt.step(context_id)
        remote_method(ParameterServer.end_turn, net.param_server_rref, step, loss.item())


def replay(ps, trainers, steps):
    """The same training in one process: plain autograd and SGD, steps in the order the trainers took them."""
    model = Net()
    model.load_state_dict(ps.initial)
    opt = optim.SGD(model.parameters(), lr=LR)
    for step in range(trainers * steps):
        x, y = batch(step % trainers + 1, step // trainers)
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return model


def main():
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    trainers = world_size - 1
    options = rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=120)
    name = "parameter_server" if rank == 0 else f"trainer{rank}"
    rpc.init_rpc(name, rank=rank, world_size=world_size, rpc_backend_options=options)
    if rank == 0:
        ps = get_parameter_server()
        assert ps.wait_all(trainers * args.steps) == trainers * args.steps
        for step in range(trainers * args.steps):
            print(f"step {step} trainer {step % trainers + 1} loss {ps.losses[step]:.6f}")
        single = replay(ps, trainers, args.steps)
        for (key, p), q in zip(ps.model.named_parameters(), single.parameters()):
            print(f"{key} sum {p.sum().item():.6f} replay {q.sum().item():.6f} "
                  f"max difference {(p - q).abs().max().item():.2e}")
            assert torch.allclose(p, q, rtol=1e-5, atol=1e-6), key
        print("parameter server and single-process training agree")
    else:
        run_training_loop(rank, trainers, args.steps)
    rpc.shutdown()


if __name__ == "__main__":
    main()
