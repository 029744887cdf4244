"""``TorchVersion``: a version string that compares as a version, as ``torch.__version__`` does.

``TorchVersion("2.13.0+ember0.1.0") >= "2.9"`` is True (a plain string comparison
would say False: "1" < "9"). Comparisons accept strings, tuples of ints
(``>= (2, 0)``) and anything whose ``str()`` is a version (``packaging``'s
``Version``); the release numbers, then pre/dev/post markers, then the local
segment order them, following PEP 440 for the forms versions take in practice.
An operand that is not a version compares as a plain string.
"""

from __future__ import annotations

import re

_VERSION = (r"^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|rc|alpha|beta|c)[-_.]?(\d*))?(?:[-_.]?post[-_.]?(\d*))?"
            r"(?:[-_.]?dev[-_.]?(\d*))?(?:\+([a-z0-9.]+))?$")  # compiled on the first comparison, not at import
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}


def _key(text: str):
    """A sortable key for a PEP 440 version, or None if ``text`` is not one."""
    m = re.match(_VERSION, text.strip(), re.IGNORECASE)  # (re caches the compiled pattern)
    if m is None:
        return None
    release, pre, pre_n, post, dev, local = m.groups()
    numbers = [int(x) for x in release.split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:  # 2.0 == 2.0.0
        numbers.pop()
    # dev releases sort before pre-releases, which sort before the final release; post after it.
    if pre is not None:
        pre_key = (1, _PRE[pre.lower()], int(pre_n or 0))
    else:
        pre_key = (0,) if dev is not None and post is None else (3,)
    post_key = -1 if post is None else int(post or 0)
    dev_key = float("inf") if dev is None else int(dev or 0)
    local_key = tuple((1, int(p), "") if p.isdigit() else (0, 0, p.lower()) for p in local.split(".")) if local else ()
    return (tuple(numbers), pre_key, post_key, dev_key, local_key)


class TorchVersion(str):
    """A ``str`` whose comparisons (``< <= > >= == !=``) compare versions."""

    def _other_key(self, other):
        if isinstance(other, (tuple, list)):
            other = ".".join(str(x) for x in other)
        return _key(str(other))

    def _compare(self, other, op):
        mine, theirs = _key(self), self._other_key(other)
        if mine is None or theirs is None:
            return op(str(self), str(other))
        return op(mine, theirs)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__
