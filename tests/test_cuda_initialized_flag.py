"""``torch.cuda._initialized``: the flag behind ``is_initialized()``, which library code reads directly (the
reversible layers of performer-pytorch and reformer-pytorch test it before saving the CUDA generators' states).
Without a GPU PyTorch's is False and stays False after a failed ``init()``."""

import torch

import ember


def test_the_flag_is_pytorchs_without_a_gpu():
    assert ember.cuda._initialized is torch.cuda._initialized is False
    assert ember.cuda._initialized == ember.cuda.is_initialized()


def test_it_stays_false_after_an_init_that_fails():
    for m in (ember, torch):
        try:
            m.cuda.init()
        except AssertionError:
            pass
        assert m.cuda._initialized is False
