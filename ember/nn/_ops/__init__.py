"""nn-specific differentiable ops (Node subclasses) and the functional API built on them.

One family per file; each file's public functions validate their arguments and
are re-exported by ``ember.nn.functional``.
"""
