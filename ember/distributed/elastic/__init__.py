"""``ember.distributed.elastic``: the part of PyTorch's ``torch.distributed.elastic`` that training scripts import
themselves (``multiprocessing.errors.record``). Starting, supervising and restarting ranks is ember's launcher's
job (``ember/distributed/run.py``), not this package's."""
