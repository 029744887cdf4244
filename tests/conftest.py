"""Shared test set-up: PyTorch is the oracle; ember is imported as itself."""

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
SEED_EXAMPLES = os.path.join(SHARED, "seed_examples")

sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))


@pytest.fixture
def rng():
    return np.random.default_rng(0)
