"""``ember.distributed.elastic.multiprocessing``: ``errors.record`` (PyTorch's ``torch.distributed.elastic.
multiprocessing``)."""
