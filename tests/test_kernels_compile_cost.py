"""What a cold numba cache costs: kernels written so that numba compiles them quickly.

numba compiles an assignment of one array to another (``u[p, o] = row[p]``) through its general broadcasting
code, which took the Winograd filter transform 3 s of CPU more to compile than the same copy written element by
element (4.4-5.2 s against 1.7-1.8 s, a fresh cache each) - paid on the first convolution of every program that
runs on a new installation. These tests type the kernels (numba's type inference only, no machine code: well under
a second) and check that none assigns a whole array. Their values are checked against the NumPy reference in
tests/test_kernels.py."""

import pytest

from ember._kernels import _jit, conv, winograd

numba = _jit.load_numba()
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (or its JIT is disabled)")

# kernel, its arguments as (kind, ndim) pairs: "f" a float64 array of ndim dims, "int" an integer (ndim 0); the
# assignments numba picks do not depend on the float dtype
_KERNELS = [
    (winograd.weight_tiles, [("f", 4), ("f", 3)]),
    (winograd.weight_grad_untiles, [("f", 3), ("f", 4)]),
    (winograd.input_tiles, [("f", 4), ("int", 0), ("f", 6)]),
    (winograd.output_tiles, [("f", 6), ("int", 0), ("f", 6)]),
    (conv.to_nchw, [("f", 5), ("f", 1), ("int", 0), ("int", 0), ("f", 5)]),
    (conv.to_batch_last_padded, [("f", 5)] + [("int", 0)] * 5 + [("f", 5)]),
]


def _whole_array_assignments(kernel, argument_types) -> list[int]:
    """The source lines where ``kernel``, typed for ``argument_types``, assigns an array into an array."""
    try:  # (numba's compiler internals, not its public API: a numba that moved them skips, not fails)
        from numba.core import compiler, ir, registry, typed_passes, types
        compiler.run_frontend, typed_passes.type_inference_stage, registry.cpu_target  # noqa: B018
    except (ImportError, AttributeError) as error:
        pytest.skip(f"this numba's type inference is not where these tests read it: {error}")

    function_ir = compiler.run_frontend(kernel.compiled().py_func)
    target = registry.cpu_target
    _, _, call_types, _ = typed_passes.type_inference_stage(target.typing_context, target.target_context,
                                                            function_ir, argument_types, None)
    return [statement.loc.line for block in function_ir.blocks.values() for statement in block.body
            if isinstance(statement, (ir.SetItem, ir.StaticSetItem))
            and isinstance(call_types[statement].args[2], types.Array)]


@pytest.mark.parametrize("kernel, arguments", _KERNELS, ids=[k.__name__ for k, _ in _KERNELS])
def test_kernel_assigns_no_whole_arrays(kernel, arguments):
    from numba.core import types

    argument_types = tuple(types.int64 if kind == "int" else types.Array(types.float64, ndim, "C")
                           for kind, ndim in arguments)
    assert _whole_array_assignments(kernel, argument_types) == []
