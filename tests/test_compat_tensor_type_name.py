"""Under ``python -m ember.compat`` a tensor's type prints as PyTorch's, ``<class 'torch.Tensor'>``: libraries tell
tensors apart by that string (tensorboardX's ``make_np``, behind every ``add_scalar`` of a tensor, asks whether
``'torch' in str(type(x))``; 649453932/Chinese-Text-Classification-Pytorch's TextRNN logs its dev loss, a tensor,
that way and stops under ember with tensorboardX's NotImplementedError)."""

import pytest

SCRIPT = """
import torch
print(str(type(torch.ones(1))), str(torch.Tensor), str(type(torch.nn.Parameter(torch.ones(1)))))
"""


@pytest.mark.xfail(strict=True, reason="ember.Tensor's class prints as ember._tensor.Tensor; a repr decided by "
                                       "ember._shown_name.package_name() belongs in ember/_tensor.py (a metaclass "
                                       "__repr__), left to the engineer who owns it this round")
def test_tensor_types_print_as_pytorchs_under_compat(tmp_path):
    from conftest import run_under_compat

    out = run_under_compat(SCRIPT, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["<class", "'torch.Tensor'>", "<class", "'torch.Tensor'>", "<class",
                                  "'torch.nn.parameter.Parameter'>"]
