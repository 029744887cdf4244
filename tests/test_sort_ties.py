"""The order of equal values in sort/argsort against PyTorch's CPU sort without ``stable=True`` (libstdc++'s
introsort, docs/api.md "Differences"): the same as ember's stable order up to 16 elements per slice."""

import pytest
import torch

import ember


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("n", [2, 5, 9, 16])
def test_ties_up_to_16_elements_are_ordered_as_pytorchs_default_sort(n, descending):
    values = torch.randint(0, 3, (4, n), generator=torch.Generator().manual_seed(n)).float()
    want = torch.sort(values, descending=descending).indices
    got = ember.sort(ember.tensor(values.numpy()), descending=descending).indices
    assert got.tolist() == want.tolist()
    assert ember.argsort(ember.tensor(values.numpy()), descending=descending).tolist() == want.tolist()


def test_past_16_elements_pytorchs_default_order_of_ties_is_not_the_stable_one():
    """What docs/api.md says ember does not match (if PyTorch made its CPU sort stable, this tells)."""
    lengths = torch.tensor([5, 3, 5, 2, 5, 3, 1, 5, 3, 5, 2, 4, 5, 3, 5, 2, 5, 1])
    unstable = torch.sort(lengths, descending=True).indices.tolist()
    assert unstable != torch.sort(lengths, descending=True, stable=True).indices.tolist()
    assert ember.sort(ember.tensor(lengths.numpy()), descending=True).indices.tolist() == \
        torch.sort(lengths, descending=True, stable=True).indices.tolist()
