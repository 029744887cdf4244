"""How often a warning shows under the ``default`` action (once per location), against PyTorch: a program's loop
run twice shows PyTorch's warnings issued from PyTorch's own code once per process (once per subclass where its
``stacklevel=2`` names the subclass's ``super().__init__`` line), not once per line of the program. Each module
runs in a fresh process (the registries of shown warnings are per process)."""

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT

PROGRAM = textwrap.dedent('''
    import json, sys, warnings
    import {lib} as torch
    from {lib}.utils.checkpoint import checkpoint
    nn = torch.nn

    def rnn_dropout_of_one_layer():  # (a Seq2Seq's encoder and decoder, and a GRU)
        nn.LSTM(4, 4, num_layers=1, dropout=0.5)
        nn.LSTM(4, 4, num_layers=1, dropout=0.5)
        nn.GRU(4, 4, num_layers=1, dropout=0.5)

    def trunc_normal_mean_far_out():
        torch.nn.init.trunc_normal_(torch.empty(3), mean=10.0, std=1.0, a=-1, b=1)
        torch.nn.init.trunc_normal_(torch.empty(3), mean=10.0, std=1.0, a=-1, b=1)

    def checkpoint_without_use_reentrant():
        x = torch.ones(2, requires_grad=True)
        checkpoint(lambda t: t * 2, x)
        checkpoint(lambda t: t * 3, x)

    def checkpoint_of_inputs_without_grad():
        x = torch.ones(2)
        checkpoint(lambda t: t * 2, x, use_reentrant=True)
        checkpoint(lambda t: t * 3, x, use_reentrant=True)

    def optimizer_with_a_repeated_parameter():
        p = nn.Parameter(torch.ones(2))
        torch.optim.SGD([p, p], lr=0.1)
        torch.optim.SGD([p, p], lr=0.1)

    def scheduler_stepped_before_the_optimizer():
        p = nn.Parameter(torch.ones(2))
        torch.optim.lr_scheduler.StepLR(torch.optim.SGD([p], lr=0.1), 1).step()
        torch.optim.lr_scheduler.StepLR(torch.optim.SGD([p], lr=0.1), 1).step()

    counts = {{}}
    for name in sys.argv[1:]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            for _ in range(2):
                globals()[name]()
        counts[name] = len([w for w in caught if issubclass(w.category, UserWarning)])
    print(json.dumps(counts))
''')
CASES = ["rnn_dropout_of_one_layer", "trunc_normal_mean_far_out", "checkpoint_without_use_reentrant",
         "checkpoint_of_inputs_without_grad", "optimizer_with_a_repeated_parameter",
         "scheduler_stepped_before_the_optimizer"]


def _counts(lib: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(lib=lib), *CASES], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def counts():
    return _counts("ember"), _counts("torch")


@pytest.mark.parametrize("case", CASES)
def test_a_warning_shows_as_often_as_pytorchs(counts, case):
    mine, theirs = counts
    assert theirs[case] >= 1
    assert mine[case] == theirs[case]
