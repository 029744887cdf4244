"""ember.diagnostics: seeing what happens between backward() and step()."""

from . import trace

__all__ = ["trace"]
