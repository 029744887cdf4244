"""Pooling's int-array arguments (``kernel_size``, ``stride``, ``padding``, ``dilation``) as PyTorch's argument
parser reads them: a module takes anything at construction (AvgPool1d keeps a sequence, a string too, as a tuple of
its elements), and the pooling function refuses what is no int when it runs, with PyTorch's TypeError and words:
the first element's or the whole argument's type first, left to right, then the other elements, right to left."""

import warnings

import pytest
import torch

import ember

SIZES = ['"12"', "2.0", '"2"', "2.5", '(2, "2")', "(2.0,)", "True", "[2, 2.0]"]
MODULES = [("AvgPool1d", 1), ("AvgPool2d", 2), ("AvgPool3d", 3), ("MaxPool1d", 1), ("MaxPool2d", 2), ("MaxPool3d", 3),
           ("LPPool1d", 1)]


def _outcome(lib, make, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            module = make(lib)
        except Exception as err:  # noqa: BLE001 (any error: its type and words compared)
            return "construction", type(err).__name__, str(err)
        try:
            out = module(lib.ones(*shape))
        except Exception as err:  # noqa: BLE001
            return "forward", type(err).__name__, str(err)
        return "ok", tuple(out.shape)


@pytest.mark.parametrize("module,nd", MODULES)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("argument", ["kernel_size", "stride", "padding"])
def test_module_size_arguments_as_pytorchs(module, nd, size, argument):
    prefix = "2, " if module.startswith("LP") else ""
    given = size if argument == "kernel_size" else f"2, {argument}={size}"
    shape = (1, 2) + (8,) * nd
    got, want = (_outcome(lib, lambda lib: eval(f"lib.nn.{module}({prefix}{given})"), shape) for lib in (ember, torch))
    assert got == want


FUNCTIONS = ["avg_pool1d(x1, {})", "avg_pool1d(x1, 2, {})", "avg_pool1d(x1, 2, 1, {})", "max_pool1d(x1, {})",
             "max_pool1d(x1, 2, 1, 0, {})", "avg_pool2d(x2, {})", "avg_pool2d(x2, 2, {})", "max_pool2d(x2, {})",
             "max_pool2d(x2, (2, 2), {})", "avg_pool3d(x3, {})", "lp_pool1d(x1, 2, {})"]


@pytest.mark.parametrize("call", FUNCTIONS)
@pytest.mark.parametrize("size", SIZES + ["None", "(2, 2.0)"])
def test_function_size_arguments_as_pytorchs(call, size):
    def outcome(lib):
        env = {"F": lib.nn.functional, "x1": lib.ones(1, 2, 8), "x2": lib.ones(1, 2, 8, 8), "x3": lib.ones(1, 2, 4, 4, 4)}
        try:
            return "ok", tuple(eval("F." + call.format(size), env).shape)
        except Exception as err:  # noqa: BLE001
            return type(err).__name__, str(err)

    assert outcome(ember) == outcome(torch)
