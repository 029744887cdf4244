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


def test_no_fork_is_bad_without_a_gpu():
    """``torch.cuda._is_in_bad_fork()``, which seeding helpers (DeLU's ``delu.random.seed``) call before seeding the
    CUDA generators: False in the parent and in a forked child, as PyTorch's on a machine without a GPU."""
    import os

    for m in (ember, torch):
        assert m.cuda._is_in_bad_fork() is False
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(write, b"1" if m.cuda._is_in_bad_fork() is False else b"0")
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(read, 1) == b"1"
        os.close(read)
        os.close(write)
