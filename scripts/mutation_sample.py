"""Mutation sampling: how many one-line mutations of ember's core does the test suite catch?

    .venv-test/bin/python scripts/mutation_sample.py --sample 100 --seed 0 [--only optim]

Each mutant changes one expression on one line of a core module (an arithmetic or comparison operator swapped,
a constant changed, a boolean flipped, a ``not`` dropped, a ``min``/``max`` swapped) — the kind of slip that
leaves code running and results wrong. For each sampled mutant the script writes the mutated file into a
scratch copy of the repository (a ``git worktree`` of HEAD, so the checkout is never touched), runs the tests
that cover that module (``TARGETS``) with ``-x``, a time limit and the suite's warning filters (a stray
warning fails a test), and counts the mutant *caught* when they fail and *survived* when they pass. It prints
each survivor (file, line, before and after) and the share caught; ``--json`` writes the same as JSON,
rewritten after every mutant so that an interrupted run keeps what it measured, and ``--rerun FILE`` runs again
just the survivors (and timeouts) listed in such a file.

A mutant that makes a test hang is caught by the time limit, but on a loaded machine a slow run looks the
same. So a run that passes the limit is not counted at once: the module's unmutated tests are timed (once per
module, cached), and the mutant is run again with a limit of ``--hang-factor`` times that time (at least
``--timeout``). Only a mutant that runs past that too is a *timeout*: counted caught (a hang is a failure) but
listed apart, with the unmutated time beside it, so that it can be judged.

The sample is drawn reproducibly (``--seed``) from every candidate expression of the target modules, weighted
equally per candidate. Equivalent mutants (a change that cannot alter behaviour) count as survivors: read the
list. A mutant whose file no longer compiles is skipped and not counted.

Which tests run a mutant: with ``--coverage-map FILE`` (built by scripts/mutation_coverage.py: which tests
executed each line of the targets), the tests that executed the mutated line (``coverage``); for a line no test
executed in-process (a module's or class's body, run on import; a numba kernel's body, run compiled; a branch no
test reaches), those that executed its function or class (``function``, the innermost scope with any); else,
and without a map, the module's hand-kept entries in ``TARGETS`` (``hand``). The modules whose code also runs in
the ranks DDP tests launch (``SUBPROCESS_TARGETS``) always add their hand entries, as coverage does not see the
ranks. Each mutant's JSON records its ``selection`` and how many tests it named (``selected``). A map's node id
that pytest no longer finds (a test renamed since the map, a parameter's id that differs every run) is dropped,
with a line saying so, and the mutant's ``dropped`` counts them; a selection left empty falls back to the next
(``function``, then ``hand``).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# every public callable's defaults against PyTorch's (the behavioural tests pass their options explicitly)
_DEFAULTS = "tests/test_api_defaults.py"

# the optimizers' tests: options and errors, and the fast update against the reference and PyTorch (with -x a
# caught mutant stops at its first failure, so the files that caught most in seed 27's draw come first: test_optim.py
# 8 and these fast-path tests 9 of its 20 caught optimizer mutants, test_optim_more.py none)
_OPTIM_TESTS = ["tests/test_optim.py", "tests/test_fast_paths.py::test_fast_step_matches_reference",
                "tests/test_fast_paths.py::test_fast_and_reference_steps_match_torch", "tests/test_optim_more.py",
                _DEFAULTS,
                # (each class's options filled in for a state dict an older PyTorch saved: _older_options)
                "tests/test_optim_options_as_pytorchs.py",
                "tests/test_optim_load_state_dict_cast.py::test_a_state_dict_from_an_older_pytorch_is_filled_in_as_pytorchs",
                # (a number as state['step'], as code from before PyTorch 1.12 writes it: the optimizers whose step
                # counts in a tensor refuse it, _tensor_steps_required)
                "tests/test_optim_number_step.py"]

# a compiled kernel against the NumPy path it replaces: the harness runs with numba, so without these (and the
# leaky_relu, relu-gradient and fused batch_norm ones in the maps below) the NumPy path (EMBER_KERNELS=numpy, and
# the fallback for dtypes and layouts the kernels do not take) goes untested
_COMPILED_VS_NUMPY = "tests/test_kernels.py::test_%s_compiled_matches_numpy_and_torch"

# bfloat16 ops and their gradients against PyTorch's: the float32 computation of half-precision inputs
_HALF = "tests/test_bfloat16.py"

# PyTorch's error for operands that do not broadcast (made in graph.py, raised by every elementwise op)
_BROADCAST_ERRORS = ["tests/test_ops_elementwise.py::test_broadcast_error_names_shapes",
                     "tests/test_ops_elementwise.py::test_broadcast_error_message"]

# forward-mode AD of every elementwise, linear and multilinear op takes the path its class declares
_DECLARED_PATHS = "tests/test_forward_ad.py::test_declared_paths_run_no_recorded_backward"

# every compiled activation/normalisation kernel against its NumPy path and PyTorch on edge shapes, and which path ran
_COMPILED_PATHS = "tests/test_compiled_paths.py::test_%s_compiled_and_numpy_paths_match_torch"

# each op's node name, the leaves its graph reaches and which of its tensors changed in place before backward are
# PyTorch's error, for activations, normalisations, losses and matrix products against PyTorch
_BOOKKEEPING = "tests/test_saved_bookkeeping.py"

# each refusal of the ops beside the call at its bound, against PyTorch (the comparisons, conditions and messages
# of their checks)
_REFUSALS = "tests/test_refusal_bounds.py"

# the products that refuse two dtypes (PyTorch's messages), those that promote, and vecdot's conjugate
_PRODUCT_DTYPES = [f"tests/test_byte_masks_and_product_dtypes.py::{t}" for t in (
    "test_mixed_dtype_products_raise_like_torch", "test_products_that_promote_still_promote_like_torch",
    "test_vecdot_conjugates_its_first_operand_like_torch")]

# a parameter whose slot no longer fits its data: graph.py's leaf_slot_to_fill lends it none; one that fits is lent
# its slot (Embedding's dense gradient and a Linear's weight gradient built in it, no second weight-sized array)
_OUTSIDE_THE_STORE = ("tests/test_grad_store.py::"
                      "test_a_parameter_given_data_of_another_shape_gets_its_gradients_outside_the_store")
_LENT_SLOT = ("tests/test_grad_store.py::"
              "test_a_weight_gradient_is_built_in_its_slot_without_a_second_weight_sized_array")

# ops whose forward allocates its result and nothing else: a copy of a result or an input (copy=True, an astype
# without copy=False) doubles the peak, every value right
_RESULT_MEMORY = "tests/test_result_memory_table.py"

# each op at its branch points (relu at 0, hardtanh at its limits, smooth_l1 at beta, a tie between maxima ...): the
# value, gradient, second order and tangent against PyTorch's, where a comparison's < written for <= shows
_BRANCH_POINTS = "tests/test_branch_points.py"

# an input without the dimensions an op reads (a 0-d input of cross_entropy, nll_loss and batch_norm, a 1-D one of
# batch_norm): PyTorch's error type and message for each target, mode and parameter given
_RANK_ERRORS = "tests/test_class_loss_and_norm_rank_errors.py"

# the losses' own elementwise nodes (binary_cross_entropy's slope under create_graph, a probability loss's mean) take
# forward-mode AD's diagonal path, their tangents PyTorch's
_LOSS_DECLARED_PATHS = "tests/test_forward_ad.py::test_the_losses_elementwise_nodes_take_their_declared_path"

# the row ops, BatchNorm with ReLU, and the optimizers' updates as one region on numba's OpenMP threads (policy.omp):
# the bits of ember's own pool and of one thread; no other test turns policy.omp on, so without these a wrong
# argument to a kernel's ``parallel`` form (LayerNorm's gradient without its centring term) goes untested
_OMP_ROW_OPS = "tests/test_omp_kernels.py::test_row_ops_on_omp_threads_give_the_one_thread_bits"
_OMP_BATCH_NORM_RELU = "tests/test_omp_kernels.py::test_ops_on_omp_threads_give_the_bits_of_ember_pool"
_OMP_OPTIMIZERS = "tests/test_omp_kernels.py::test_adam_on_omp_threads_gives_the_reference_bits"
# (and every region form of LayerNorm, RMSNorm, GELU and SiLU: with and without weight and bias, float32 and
# float64, against PyTorch and one thread)
_OMP_REGION_FORMS = "tests/test_omp_norm_and_activation_regions.py"

# module (relative to the repository) -> the test files (or pytest node ids) that cover it
TARGETS = {
    "ember/autograd/engine.py": ["tests/test_autograd.py", _HALF, "tests/test_nn_module_backward_hooks.py",
                                 "tests/test_diagnostics_report.py", "tests/test_autograd_pruning.py",
                                 "tests/test_node_prehooks.py",
                                 # (nodes reached without a gradient: their hooks run with None, as PyTorch's)
                                 "tests/test_hooks_without_gradient.py",
                                 # (is_grads_batched: each hook once, none in the trial walk without hooks)
                                 "tests/test_hooks_batched_grads.py",
                                 # (a broadcast half-precision operand's gradient summed back: sum_to_shape)
                                 "tests/test_half_broadcast_gradients.py",
                                 # (roots that reach no input: a lone one's hooks run, others' not; _Walk.prune)
                                 "tests/test_grad_unreached_roots.py",
                                 # (every kind of hook on every role in a graph, in each form of a backward)
                                 "tests/test_engine_hook_table.py",
                                 # (each node the pruned walk of autograd.grad runs is a trace span: _run_pruned's
                                 # traced flag)
                                 "tests/test_trace.py::test_each_node_that_runs_is_a_span_whatever_the_backward_form",
                                 # (a mode="all" multi-grad hook counts the nodes the walk will run: will_run; a
                                 # reentrant checkpoint refuses a backward of some inputs: inputs_given)
                                 "tests/test_multi_grad_hook.py", "tests/test_checkpoint.py",
                                 # (a node run inside another's backward opens no span: run_node's traced flag)
                                 "tests/test_profiler_backward_nodes.py",
                                 # (what a node's post-hook returns: each gradient checked, none where there was none)
                                 "tests/test_node_hook_replacements.py",
                                 # (a backward that raised in a node that had unpacked its saved tensors: packed again)
                                 "tests/test_saved_for_grad.py::test_a_backward_that_raised_in_a_node_leaves_its_saved_tensors_packed"],
    "ember/autograd/graph.py": ["tests/test_autograd.py", "tests/test_sparse_grads.py", "tests/test_forward_ad.py",
                                "tests/test_saved_for_grad.py", "tests/test_saved_versions.py", _HALF,
                                *_BROADCAST_ERRORS, _OUTSIDE_THE_STORE, _LENT_SLOT,
                                # (a view's edge after its base changed in place: graph.py's inlined input_edge)
                                "tests/test_inplace_views.py", "tests/test_views_follow_base.py",
                                "tests/test_grad_fn_names.py",
                                # (a hook that keeps the gradient it is given: no slot lent, leaf_slot_to_fill)
                                "tests/test_grad_store.py::"
                                "test_a_gradient_a_hook_keeps_is_not_the_memory_a_later_backward_adds_into",
                                # (apply_one's result: the array forward computed, not a copy)
                                "tests/test_unary_result_memory.py", _RESULT_MEMORY,
                                # (views without history follow their base's requires_grad_, base_requires_grad)
                                "tests/test_views_follow_requires_grad.py",
                                # (which views have no history of their own: made_without_history)
                                "tests/test_views_without_history.py",
                                # (a view made a leaf by its own requires_grad_, its base then requiring grad or
                                # changed in place: input_edge's stale check before its accumulator)
                                "tests/test_view_leaves_and_base_changes.py",
                                # (operands of two dtypes: apply_same's fast path not taken, each gradient cast back)
                                "tests/test_mixed_dtype_operand_gradients.py",
                                # (a saved tensor changed in place: PyTorch's message for each dtype and saving op)
                                "tests/test_saved_modified_messages.py",
                                # (a view whose base changed in place, either operand of apply_same: its edge)
                                "tests/test_binary_view_operands.py",
                                # (a leaf's hooks reached without a gradient: AccumulateGrad's backward with None)
                                "tests/test_hooks_without_gradient.py",
                                # (a fresh result's version 0 on every path: apply_one's fast path too)
                                "tests/test_result_versions.py",
                                # (the training-loop diagnostics' watch, a leaf hook marked accumulation_only: run
                                # before backward accumulates, not by autograd.grad; AccumulateGrad.hooked)
                                "tests/test_diagnostics.py::"
                                "test_step_after_clearing_fresh_gradients_on_purpose_is_silent",
                                "tests/test_diagnostics.py::test_a_step_after_only_autograd_grad_finds_no_gradient",
                                # (a real input's gradient from a complex result: its real part, cast_gradient)
                                "tests/test_complex.py::test_mixed_real_and_complex_grads",
                                "tests/test_complex.py::"
                                "test_a_real_inputs_gradient_from_a_complex_result_under_create_graph",
                                # (a view of an inference tensor: no history, no grad; PyTorch's refusals)
                                "tests/test_inference_tensors.py",
                                # (two operands' result in TensorIterator's layout: apply's iterator_layout)
                                "tests/test_elementwise_broadcast_layout.py",
                                # (one operand's with a size-1 dimension, recorded: apply's _relaid_output)
                                "tests/test_size_one_strides.py::test_strides_are_pytorchs",
                                # (apply_one taken for a plain float tensor with dimensions and elements, apply's
                                # result; a view of a no_grad view made without its node once its label is known)
                                "tests/test_op_fast_paths.py::test_unary_fast_path_is_applys",
                                "tests/test_op_fast_paths.py::test_declined_states",
                                "tests/test_op_fast_paths.py::"
                                "test_a_view_of_a_no_grad_view_in_grad_mode_takes_the_fast_path_once_its_label_is_known",
                                # (the paths no other mapped test took: several-output ops under no_grad and forward
                                # AD, views of a detached inference tensor, saved-tensor hooks, two node hooks, the
                                # stand-ins' bound; a node's metadata and pre-hooks)
                                "tests/test_graph_paths_as_pytorch.py", "tests/test_node_metadata.py",
                                "tests/test_node_prehooks.py",
                                # (LayerNorm's unrecorded call where nothing records, and not in inference mode or
                                # beside meta tensors: records_nothing's flags)
                                "tests/test_op_fast_paths.py::test_layer_norm_without_its_node_is_applys"],
    # (DDP's calls on the store: an unused parameter's zeros issued and retracted, a foreign gradient adopted)
    "ember/autograd/grad_store.py": ["tests/test_grad_store.py", "tests/test_autograd.py", "tests/test_fast_paths.py",
                                     "tests/test_reducer_interface.py",
                                     # (a leaf's first gradient laid out as PyTorch's AccumulateGrad: leaf_layout_copy,
                                     # a size-1 dimension's stride, and the store's slots laid out the same way)
                                     "tests/test_leaf_grad_layout.py", "tests/test_grad_store_size_one_strides.py",
                                     "tests/test_grad_store_layout.py"],
    "ember/autograd/recorded.py": ["tests/test_higher_order.py", "tests/test_higher_order_tensor.py",
                                   "tests/test_higher_order_nn.py", "tests/test_higher_order_conv.py",
                                   "tests/test_higher_order_recorded.py",
                                   # (a leaf's first gradient under create_graph laid out as the leaf, CopyBackwards;
                                   # a retained non-leaf's a contiguous clone: _laid_out_as_leaf)
                                   "tests/test_create_graph_leaf_grad_node.py",
                                   # (a batched cotangent's example shape and buffers: jacrev's one backward pass;
                                   # a saved tensor's tangent under forward mode: hessian)
                                   "tests/test_func_jacrev_batched.py::test_jacrev_of_an_mlp_is_one_backward_pass",
                                   "tests/test_func_jacrev_batched.py::test_jacrev_of_cross_entropy_and_losses",
                                   "tests/test_func_transforms.py::test_hessian_and_compositions",
                                   # (a gradient PyTorch reads from the input, its values constant: tied into the
                                   # graph by a term of derivative zero, _reading_inputs)
                                   "tests/test_gradient_reads_input.py",
                                   # (half-precision formulas computed in float32, rounded back once: _rounded_back)
                                   "tests/test_half_second_order.py", "tests/test_half_rerun_empty_nodes.py",
                                   "tests/test_half_rerun_formula_nodes.py",
                                   # (a half input through float32 norm parameters under create_graph: the rerun
                                   # in float32, each gradient in its input's dtype, node.half_inputs)
                                   "tests/test_mixed_norm_single_node.py::"
                                   "test_mixed_precision_norm_gradients_under_create_graph_keep_each_input_dtype"],
    "ember/autograd/functional.py": [_DEFAULTS, "tests/test_autograd_functional.py", "tests/test_func_transforms.py",
                                     "tests/test_jvp_input_changed_in_place.py",
                                     # (v left out: allowed only for one tensor of one element, PyTorch's errors)
                                     "tests/test_functional_v_none.py",
                                     # (results detached unless create_graph, on each path: _postprocess)
                                     "tests/test_functional_results_history.py",
                                     # (inputs of which some require grad, some not: every function and path)
                                     "tests/test_functional_mixed_inputs.py"],
    "ember/func/_transforms.py": [_DEFAULTS, "tests/test_func_transforms.py", "tests/test_autograd_functional.py",
                                  "tests/test_func_transforms_edges.py",
                                  # (every public function at its options and refusals: argnums forms, has_aux,
                                  # outputs, keyword defaults, jvp on dual tensors without backward, vmap of each)
                                  "tests/test_func_transform_options.py",
                                  # (jacrev's chunk_size: ceil(outputs / chunk_size) batched backward passes)
                                  "tests/test_func_jacrev_batched.py::test_jacrev_chunk_size",
                                  # (complex inputs and outputs refused with PyTorch's message, which side named)
                                  "tests/test_func_complex_refusals.py"],
    "ember/ops/elementwise.py": [_DECLARED_PATHS, "tests/test_ops_elementwise.py", "tests/test_complex.py",
                                 "tests/test_saved_for_grad.py", "tests/test_saved_versions.py",
                                 # (add/sub with alpha: one node, PyTorch's edges)
                                 "tests/test_add_alpha_node.py", _BRANCH_POINTS,
                                 # (a Python int past an integer tensor's dtype, wrapped as PyTorch's kernels read
                                 # it: operand_int)
                                 "tests/test_int_operand_wrap.py", _RESULT_MEMORY,
                                 # (a number exponent a half or integer base's dtype cannot hold: check_exponent)
                                 "tests/test_pow_exponent_range.py",
                                 # (a number base's promoted exponent: the node saves the exponent as given)
                                 "tests/test_pow_number_base_saved_exponent.py",
                                 # (a Python number beside a half tensor in each form of add/sub/mul/div, bit for bit:
                                 # _half_operands, number_in_float32)
                                 "tests/test_half_number_operands.py",
                                 # (sum/prod/cumsum ... with dtype= in each grad state: refuse_integer_history)
                                 "tests/test_reduction_dtype_history.py",
                                 # (div with a rounding_mode, a number on either side, each operand requiring grad)
                                 "tests/test_rounded_div_operands.py",
                                 # (float_power_: PyTorch's refusal of a base that is not double)
                                 "tests/test_float_power_inplace.py",
                                 # (a cast to an integer or bool dtype of a tensor that requires grad: no history)
                                 "tests/test_cast_requires_grad.py",
                                 # (an operand promoted by the op that reads it: no ToCopyBackward0 of its own,
                                 # promoted's guard)
                                 "tests/test_promoted_operand_edges.py",
                                 # (a number times an alpha beside a float32/float64/complex tensor, bit for bit:
                                 # fused_alpha)
                                 "tests/test_scaled_number_operands.py",
                                 # (add_/sub_ with alpha of an operand of another dtype: PyTorch's common dtype,
                                 # add_scaled)
                                 "tests/test_inplace_add_operand_dtypes.py",
                                 # (an operand of another kind: its type named in the comparisons' TypeError as
                                 # PyTorch's C++ names it)
                                 "tests/test_operand_type_names.py",
                                 # (addcmul/addcdiv's value and operands PyTorch has no kernel for: addc_value)
                                 "tests/test_scalar_argument_range.py::"
                                 "test_addcmul_and_addcdiv_refuse_what_pytorch_has_no_kernel_for",
                                 # (torch.add(x, 2, y) and sub's deprecated number-first forms: PyTorch's values and
                                 # warning, the function's text naming its input and out=)
                                 "tests/test_deprecated_number_first_overloads.py",
                                 # (a tensor given for alpha=, value=, isclose's rtol and atol: PyTorch's TypeError
                                 # naming its position, the function's and the method's, _tolerances)
                                 "tests/test_scalar_argument_errors.py::test_message_as_pytorchs",
                                 # (grad_fn._saved_<name> against PyTorch's, and each _raw_saved_<name> reading the same
                                 # entry: the saved_tensor positions of Pow's nodes)
                                 "tests/test_grad_fn_saved_attributes.py",
                                 # (x ** e's gradient at the pow kernel's special points, e - 1 = -0.5 or not: _power)
                                 "tests/test_pow_number_exponent_gradients.py",
                                 # (each binary op over the promotion table, a number on either side, 0-d, empty and
                                 # broadcast shapes, NaN/inf/-0.0: values, dtypes, node names, gradients, errors)
                                 "tests/test_elementwise_edges_as_pytorchs.py",
                                 # (a complex sum's inf * 0 and 0 * b terms: inf + nanj, signed zeros, complex_addend)
                                 "tests/test_complex_add_nonfinite.py",
                                 # (isnan, isposinf ... of a transposed meta tensor: TensorIterator's strides,
                                 # meta_results' elementwise flag)
                                 "tests/test_meta_elementwise_layout.py",
                                 # (a complex difference's signed zeros, a + (-alpha) * b: complex_result's test)
                                 "tests/test_complex_sub_signed_zeros.py",
                                 # (signbit of float64 beyond float32's range read in its own type: no cast warning)
                                 "tests/test_signbit.py"],
    "ember/ops/unary.py": [_DECLARED_PATHS, "tests/test_ops_elementwise.py", "tests/test_ops_pointwise.py",
                           "tests/test_complex.py", "tests/test_kernels.py::test_relu_gradient_same_bits_as_numpy",
                           _COMPILED_PATHS % "pointwise", _BRANCH_POINTS, _RESULT_MEMORY,
                           # (ReLU's compiled forward and gradient from min_compiled_elements on, NumPy's below)
                           "tests/test_compiled_paths.py::test_relu_takes_its_compiled_passes_from_min_compiled_elements_on",
                           # (each clamp form's node: ClampMinBackward0, ClampMaxBackward0 ... as PyTorch's overloads)
                           "tests/test_clamp_forms.py",
                           # (clamp, sign, round, floor ... of a complex or bool tensor: PyTorch's errors)
                           "tests/test_complex_order_refusals.py",
                           # (clamp's tensor bounds that require grad: the node's edges and their gradients)
                           "tests/test_clamp_tensor_bound_gradients.py",
                           # (a tensor bound beside a number one: PyTorch's TypeError, overload_bounds)
                           "tests/test_ops_tensor_operands.py::test_clamp_refuses_a_tensor_bound_with_a_number_one",
                           "tests/test_ops_tensor_operands.py::"
                           "test_clamp_refuses_a_tensor_bound_with_a_number_one_by_keyword",
                           # (square of each dtype kind, half and complex through pow, integers through mul)
                           "tests/test_square_dtypes.py",
                           # (complex bounds, tensors and numbers, of every clamp form and input dtype: PyTorch's
                           # values or errors)
                           "tests/test_clamp_complex_bounds.py",
                           # (each node's _saved_<name> and _raw_saved_<name>: reciprocal's saved result)
                           "tests/test_grad_fn_saved_attributes.py"],
    "ember/ops/reduction.py": [_DECLARED_PATHS, "tests/test_ops_reduction.py", _HALF,
                               "tests/test_higher_order_tensor.py::test_second_order_matches_pytorch",
                               # (every vector norm one LinalgVectorNormBackward0 node: norm's formula and graph)
                               "tests/test_linalg_vector_norm_node.py", _REFUSALS, _BRANCH_POINTS,
                               # (each reduction's node name in each call form: max() and max(x, dim) ...)
                               "tests/test_reduction_node_names.py",
                               # (prod's refusal of dim=None: PyTorch's TypeError for each argument combination)
                               "tests/test_ops_out.py::test_vector_products_out_and_prod_dim_none_as_pytorch",
                               "tests/test_ops_out.py::test_prod_refuses_a_positional_dim_none",
                               # (an integer or bool dtype=: the result in it; prod's second order at zeros)
                               "tests/test_reduction_dtype_history.py", "tests/test_prod_zeros_higher_order.py",
                               # (max/min/amax/argmax ... of a complex tensor: PyTorch's error in each overload)
                               "tests/test_complex_order_refusals.py",
                               # (each reduction over a dim of extent 0, 1, 2, 5: the half product's empty rows)
                               "tests/test_reduction_extents.py",
                               # (a half std's gradient reads the result rounded to the half type, as PyTorch saves it)
                               "tests/test_half_std_gradient.py",
                               # (a result with a dimension of size 1, row-major already, not copied: _row_major)
                               _RESULT_MEMORY,
                               # (each node's _saved_<name> and _raw_saved_<name> against PyTorch's: prod's input
                               # and result)
                               "tests/test_grad_fn_saved_attributes.py"],
    "ember/ops/linalg.py": [_DECLARED_PATHS, "tests/test_ops_more.py", "tests/test_ops_matrix_sort.py", _HALF,
                            "tests/test_saved_for_grad.py", "tests/test_saved_versions.py",
                            "tests/test_ops_histogram.py::test_chain_matmul_of_each_count_against_torch",
                            "tests/test_higher_order_tensor.py::test_second_order_matches_pytorch",
                            # matrix products of two dtypes: PyTorch's errors, or its promotion (addr, outer, kron)
                            *_PRODUCT_DTYPES,
                            # (each matmul's node by the operands' dims: PyTorch's names, MmBackward0 ...)
                            "tests/test_grad_fn_names.py::test_common_op_node_names_are_pytorchs", _REFUSALS,
                            _BOOKKEEPING,
                            # (stacks of several batch dims an operand's memory cannot view as one: PyTorch's copy)
                            "tests/test_matmul_unviewable_batches.py", "tests/test_matmul_sliced_batches.py",
                            # (a stack times a matrix or vector under create_graph: PyTorch's folded mm/mv formulas,
                            # bmm's where it does not fold, _folded_backward_recorded)
                            "tests/test_matmul_folded_double_backward.py",
                            # (an operand that is no tensor, as function and method: PyTorch's TypeError)
                            "tests/test_product_operand_errors.py",
                            # (addmm with a sparse operand: its product, then the sum, each alpha and beta)
                            "tests/test_sparse_addmm_scales.py",
                            # (bool and integer operands of each rank pair: PyTorch's kernel named in its error)
                            "tests/test_product_operand_kinds.py",
                            # (the addmm family with each (beta, alpha) pair, one of them 1: the node's own scales)
                            "tests/test_added_product_scales.py",
                            # (beta and alpha as PyTorch's kernels take them: a complex or bool one for each result
                            # dtype, an integer one at the edges of the result's range, _product_scalars and
                            # _addr_scalars)
                            "tests/test_product_integer_scalars.py",
                            # (the deprecated number-first forms of the addmm family: torch.addmm(2, x, m1, m2))
                            "tests/test_deprecated_number_first_overloads.py",
                            # (addr of mixed dtypes: each gradient in its input's dtype, a real input's real part)
                            "tests/test_addr_mixed_dtype_gradients.py",
                            # (half-precision addmv: alpha taken in the half type, float16's alpha-1 fast path, beta 0
                            # ignoring the input's nan)
                            "tests/test_addmv_half_rounding.py",
                            # (every product with its defaults at its edge shapes in each dtype, first and second
                            # order; each refusal; the addmm family with nothing to sum; tensordot's dims forms)
                            "tests/test_matrix_product_edges_as_pytorchs.py",
                            # (each node's _saved_<name> and _raw_saved_<name> against PyTorch's: mm's operands)
                            "tests/test_grad_fn_saved_attributes.py"],
    "ember/nn/_ops/loss.py": [_DEFAULTS, "tests/test_nn_losses.py", _HALF, "tests/test_saved_versions.py",
                              "tests/test_warnings_match.py",
                              # (operands of two dtypes: each loss's result dtype, values and gradients)
                              "tests/test_nn_loss_dtypes.py", "tests/test_loss_one_element.py", _BOOKKEEPING,
                              _BRANCH_POINTS,
                              # (inputs on a branch's switch or a clamp: BCE at 0 and 1, smooth_l1 at beta ...)
                              "tests/test_loss_branch_edges.py",
                              # (a weight or pos_weight that is no tensor: PyTorch's TypeError, its position)
                              "tests/test_loss_weight_arguments.py",
                              # (binary_cross_entropy's derivative at its 1e-12 clamp, in float32 and float64)
                              "tests/test_norm_dtypes_and_loss_epsilon.py", _LOSS_DECLARED_PATHS,
                              # (binary_cross_entropy's double-backward formulas, _BceSlope's derivatives in the
                              # input and the target, at 0 and 1 and inside, against PyTorch's)
                              "tests/test_bce_double_backward.py",
                              # (each loss node's _saved_<name> against PyTorch's)
                              "tests/test_grad_fn_saved_attributes.py",
                              # (the legacy size_average/reduce warning named after PyTorch's module: kl_div's from
                              # torch.nn._reduction, found from the functional's frame, _called_from)
                              "tests/test_warnings_module.py::test_module_as_torch"],
    "ember/nn/_ops/classification.py": [_DEFAULTS, "tests/test_nn_losses.py", _HALF, "tests/test_saved_versions.py",
                                        _REFUSALS, "tests/test_class_loss_no_classes.py", _BOOKKEEPING,
                                        # (a 0-d input against each kind of target, and probabilities with an
                                        # ignore_index: PyTorch's errors)
                                        "tests/test_class_loss_zero_dim_input.py",
                                        # (a post-hook on the NLL node that changes its gradient: log_softmax's
                                        # backward reads the array, not the noted picks)
                                        "tests/test_class_loss_node_hooks.py",
                                        # (inputs of rank 3 and 5, odd spatial sizes: the (N, C, 1, -1) view)
                                        "tests/test_class_loss_spatial_sizes.py",
                                        # (a weight that is no tensor: PyTorch's TypeError, its position)
                                        "tests/test_loss_weight_arguments.py",
                                        # (a half-precision nll_loss summed as PyTorch's kernel sums it)
                                        "tests/test_nll_loss_half_sums.py",
                                        # (cross_entropy and nll_loss of a 0-d input: PyTorch's error per target)
                                        _RANK_ERRORS, _LOSS_DECLARED_PATHS,
                                        # (each node's _saved_<name> against PyTorch's: nll_loss's total weight,
                                        # 0 unreduced, for each kernel's node)
                                        "tests/test_grad_fn_saved_attributes.py",
                                        # (class indices of the wrong shape: PyTorch's words per input rank, a 3-d
                                        # target of a 4-d input's wrong size included)
                                        "tests/test_class_target_shape_errors.py"],
    # (first, as they take seconds and the whole map minutes: every normalisation split over threads, tall and wide
    # rows, compiled and NumPy paths, the splits the other tests' sizes never take, _compiled_norm_rows'
    # parallel_for; batch_norm of a 0-d or 1-D input, PyTorch's error for each mode and parameter)
    "ember/nn/_ops/norm.py": ["tests/test_norm_thread_splits.py", _RANK_ERRORS, _DEFAULTS, "tests/test_nn_layers.py",
                              "tests/test_nn_instance_norm.py",
                              "tests/test_higher_order_nn.py", "tests/test_batch_norm_rows.py", _HALF,
                              _COMPILED_VS_NUMPY % "layer_norm",
                              "tests/test_fast_paths.py::test_batch_norm_fused_backward_equals_reference_and_torch",
                              "tests/test_norm_edge_shapes.py", _COMPILED_PATHS % "batch_norm",
                              _COMPILED_PATHS % "row_norms", "tests/test_nn_rmsnorm.py", _REFUSALS, _BOOKKEEPING,
                              _RESULT_MEMORY,
                              # (each weight and bias combination, one off at a time: layer_norm's fast-path test)
                              "tests/test_norm_parameter_combinations.py",
                              # (every normalisation's refusals at their edges, integer/bool/complex inputs included)
                              "tests/test_norm_refusals.py",
                              # (a half input's gradient under create_graph: the formula's last node, rms_norm's
                              # cast of its input to float32 kept, upcasts_input)
                              "tests/test_half_rerun_formula_nodes.py",
                              # (rms_norm's weight of another dtype: the input's dtype kept, PyTorch's warning once per
                              # process, _mismatch_warned; layer_norm's mixed dtypes checked before shapes;
                              # instance_norm's recorded graph as PyTorch's: the (1, N * C, *) view, batch_norm's node)
                              "tests/test_norm_dtypes_and_loss_epsilon.py", "tests/test_instance_norm_graph.py",
                              _OMP_REGION_FORMS, _OMP_ROW_OPS, _OMP_BATCH_NORM_RELU,
                              # (layer_norm's _saved_<name> against PyTorch's: its mean and 1/std)
                              "tests/test_grad_fn_saved_attributes.py"],
    # (first, as it takes seconds: integer and bool inputs, hardtanh's limits in the input's dtype and PyTorch's
    # refusal of negative limits on an unsigned type)
    "ember/nn/_ops/activation.py": ["tests/test_nn_activation_int.py",
                                    # (every option at its edges, each dtype and path, grad and no_grad, second
                                    # order; each node's name, versions and _saved_ attributes: seconds, so early)
                                    "tests/test_activation_options_as_pytorchs.py",
                                    # (infinities, NaN, signed zeros and kinks element by element; the activations
                                    # of activation_more.py, built on this module's nodes and kernels)
                                    "tests/test_nonfinite_activations.py", "tests/test_nn_activations_more.py",
                                    # (each node's _saved_<name> and _raw_saved_<name>)
                                    "tests/test_grad_fn_saved_attributes.py",
                                    _DECLARED_PATHS, _DEFAULTS,
                                    "tests/test_nn_layers.py", "tests/test_higher_order_pointwise.py",
                                    "tests/test_higher_order_nn.py", _HALF,
                                    _COMPILED_VS_NUMPY % "activation",
                                    "tests/test_kernels.py::test_leaky_relu_compiled_same_bits_as_numpy_and_torch",
                                    "tests/test_fast_paths.py::"
                                    "test_leaky_relu_keeps_the_batch_last_layout_and_matches_torch",
                                    _COMPILED_PATHS % "pointwise", "tests/test_gelu_float64.py",
                                    # (an in-place activation that reads its result checks the input's version)
                                    "tests/test_saved_versions.py::"
                                    "test_an_inplace_activation_result_changed_again_before_backward", _REFUSALS,
                                    _BOOKKEEPING, _BRANCH_POINTS,
                                    # (in-place activations' nodes: PyTorch's ...Backward1 of the forms that read
                                    # their result, and threshold_'s)
                                    "tests/test_inplace_activation_names.py", _RESULT_MEMORY,
                                    # (hardtanh's result laid out as empty_like(x): input_strides_result)
                                    "tests/test_size_one_strides.py::test_strides_are_pytorchs",
                                    # (a tensor given for a parameter: PyTorch's TypeError naming its position,
                                    # scalar_params' positions, by position and by keyword; both of hardtanh's
                                    # bounds refused: the first by position named, as PyTorch's)
                                    "tests/test_scalar_argument_errors.py",
                                    # (a result's strides: log_sigmoid's kernel allocates a contiguous one)
                                    "tests/test_elementwise_broadcast_layout.py::test_result_strides_and_values_are_pytorchs",
                                    "tests/test_argument_positions_by_keyword.py::test_message_as_torchs",
                                    _OMP_REGION_FORMS, _OMP_ROW_OPS, _OMP_BATCH_NORM_RELU,
                                    # (in-place ELU/CELU: f' from the result, and PyTorch's refusal of a negative
                                    # alpha at backward, read from the node's first parameter)
                                    "tests/test_exp_linear_inplace_gradient.py",
                                    # (an input gradient in the layout of PyTorch's backward kernel: laid_out's
                                    # operand orders, softsign's divisor included)
                                    "tests/test_activation_grad_strides.py"],
    "ember/optim/sgd.py": [*_OPTIM_TESTS, "tests/test_sparse_grads.py"],
    "ember/optim/adam.py": [*_OPTIM_TESTS, "tests/test_optim_amsgrad.py", _OMP_OPTIMIZERS],
    "ember/optim/optimizer.py": [*_OPTIM_TESTS, "tests/test_sparse_grads.py", "tests/test_step_hooks.py",
                                 "tests/test_grad_store.py", "tests/test_grad_store_added_groups.py",
                                 "tests/test_optim_complex.py", "tests/test_optimizer_refusals.py",
                                 "tests/test_optimizer_helpers.py",
                                 "tests/test_optim_state_dict_hooks.py", "tests/test_optim_load_state_dict_cast.py",
                                 "tests/test_coverage_names_s42.py::test_default_to_fused_or_foreach",
                                 "tests/test_coverage_names_s42.py::test_use_grad_for_differentiable",
                                 "tests/test_coverage_names_s42.py::"
                                 "test_use_grad_for_differentiable_restores_the_mode_after_an_error",
                                 "tests/test_coverage_round_surface19.py::test_capturable_supported_devices_are_pytorchs",
                                 "tests/test_fill_and_small_names.py::test_a_required_optimizer_option",
                                 "tests/test_kernels.py::test_optimizer_updates_same_bits_as_numpy",
                                 # (add_scaled's compiled kernel taken where its dispatch applies, never the NumPy
                                 # path's: the same bits either way)
                                 "tests/test_optimizer_compiled_paths.py", _OMP_OPTIMIZERS],
    "ember/optim/_helpers.py": _OPTIM_TESTS,
    "ember/optim/rmsprop.py": [*_OPTIM_TESTS, _OMP_OPTIMIZERS],
    "ember/optim/adagrad.py": [*_OPTIM_TESTS, "tests/test_sparse_grads.py"],
    "ember/optim/adadelta.py": _OPTIM_TESTS,
    "ember/optim/adamax.py": _OPTIM_TESTS,
    "ember/optim/nadam.py": _OPTIM_TESTS,
    "ember/optim/radam.py": _OPTIM_TESTS,
    "ember/utils/data/sampler.py": [_DEFAULTS, "tests/test_data_samplers.py", "tests/test_data.py"],
    "ember/utils/data/distributed.py": [_DEFAULTS, "tests/test_distributed_sampler.py"],
    # (first, as it takes seconds: a file written on a big-endian machine, its storages byteswapped, bfloat16's
    # refused)
    "ember/serialization/_torch_unpickle.py": ["tests/test_serialization_byteorder.py",
                                               "tests/test_serialization_interop.py",
                                               "tests/test_serialization_hostile.py",
                                               # (every refusal of the reader reached by a crafted data.pkl: the
                                               # memo, opcodes, storages, calls, objects, NumPy state)
                                               "tests/test_torch_file_refusals.py",
                                               # (NumPy arrays and scalars in a torch file: their dtypes' BUILD, the
                                               # scalar's bytes)
                                               "tests/test_serialization_numpy.py",
                                               # (BUILD on what is not its target, a dunder attribute: refused)
                                               "tests/test_serialization_build_targets.py",
                                               # (an allowed global called with too many arguments: refused)
                                               "tests/test_serialization_call_arities.py",
                                               # (classes and functions kept as values: a torch name with an ember
                                               # counterpart imported, one without refused; allowlisted classes)
                                               "tests/test_serialization_value_globals.py",
                                               "tests/test_torch_save_class_values.py",
                                               # (sets, defaultdicts, bytes, objects kept as class and attributes
                                               # in PyTorch's files)
                                               "tests/test_save_sets_defaultdicts.py",
                                               "tests/test_torch_save_pickle_bytes.py",
                                               "tests/test_serialization_objects.py"],
    "ember/serialization/_ember_format.py": ["tests/test_serialization.py", "tests/test_bfloat16_checkpoints.py",
                                            "tests/test_serialization_modules.py",
                                            # (a __getstate__ that is not a dict of attribute names: refused)
                                            "tests/test_serialization_build_targets.py",
                                            # (each message's cut at its edge, objects restored through their
                                            # __setstate__, the globals of nested entries against PyTorch's)
                                            "tests/test_ember_manifest_checks.py",
                                            # (sets, frozensets and defaultdicts written and read, and refused by a
                                            # weights_only load; NumPy's dtype classes refused until allowlisted)
                                            "tests/test_save_sets_defaultdicts.py",
                                            "tests/test_serialization_numpy_weights_only.py"],
    # (the in-process files first (test_reducer_one_process.py: every path on a recording communicator); then ONE
    # job of 2 ranks running DDP's rank families, the battery against PyTorch's DDP first (test_reducer_on_ranks.py:
    # about a minute, where test_on_ranks.py's every family at 2 and 3 ranks took most of 700-800 s a mutant); the
    # straggler test reads each step's time from the lockstep table the reducer fills)
    "ember/distributed/reducer.py": ["tests/test_reducer_one_process.py", "tests/test_reducer_interface.py",
                                     "tests/test_reducer_waits_and_hooks.py",
                                     "tests/test_reducer_on_ranks.py", "tests/test_distributed_straggler.py"],
    # (first, on one process: a one-rank DDP reads a one-row table, which no rank test's table is)
    "ember/distributed/lockstep.py": ["tests/test_reducer_interface.py", "tests/test_reducer_one_process.py",
                                      "tests/test_lockstep.py",
                                      # (the table's rows in one process, without MPI)
                                      "tests/test_lockstep_rows.py", "tests/test_reducer_on_ranks.py",
                                      "tests/test_on_ranks.py", "tests/test_distributed_straggler.py"],
}

# modules whose code also runs in rank processes that tests launch (mpiexec, spawn), where coverage is not measured:
# their mutants always run the hand map's entries too
SUBPROCESS_TARGETS = {"ember/distributed/reducer.py", "ember/distributed/lockstep.py",
                      "ember/utils/data/distributed.py"}

_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
          ast.Pow: ast.Mult, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
          ast.NotEq: ast.Eq, ast.And: ast.Or, ast.Or: ast.And, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def _mutations(node: ast.AST):
    """(description, mutated copy of ``node``) for each one-expression change of ``node`` itself."""
    import copy

    if isinstance(node, ast.BinOp) and type(node.op) in _SWAPS:
        m = copy.deepcopy(node)
        m.op = _SWAPS[type(node.op)]()
        yield m
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SWAPS:
        m = copy.deepcopy(node)
        m.ops = [_SWAPS[type(node.ops[0])]()]
        yield m
    elif isinstance(node, ast.BoolOp) and type(node.op) in _SWAPS:
        m = copy.deepcopy(node)
        m.op = _SWAPS[type(node.op)]()
        yield m
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        yield copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float) and not isinstance(node.value, bool):
        yield ast.Constant(node.value + 1 if node.value in (0, 1) or isinstance(node.value, int) else node.value * 2)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield ast.Constant(not node.value)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
        m = copy.deepcopy(node)
        m.func = ast.Name("max" if node.func.id == "min" else "min")
        yield m


def candidates(path: str, root: str = ROOT) -> list[dict]:
    """Every single-line mutant of ``path``: {file, line, col, end, before, after}."""
    source = Path(root, path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    skip = _docstring_lines(tree)
    lines = source.splitlines()
    out = []
    for node in ast.walk(tree):
        if not hasattr(node, "lineno") or node.lineno != getattr(node, "end_lineno", None) or node.lineno in skip:
            continue
        text = lines[node.lineno - 1]
        if text.lstrip().startswith(("def ", "class ", "@", "import ", "from ")):
            continue
        for mutated in _mutations(node):
            before = text[node.col_offset:node.end_col_offset]
            after = ast.unparse(mutated)
            if after != before:
                out.append({"file": path, "line": node.lineno, "col": node.col_offset, "end": node.end_col_offset,
                            "before": before, "after": after})
    return out


def _mutated_source(original: str, mutant: dict, path: str) -> str | None:
    """``original`` with the mutant's one change, or None when that does not compile."""
    lines = original.splitlines(keepends=True)
    i = mutant["line"] - 1
    line = lines[i]
    lines[i] = line[:mutant["col"]] + mutant["after"] + line[mutant["end"]:]
    mutated = "".join(lines)
    try:
        compile(mutated, path, "exec")
    except SyntaxError:
        return None
    return mutated


def _apply(scratch: str, mutant: dict) -> str | None:
    """Write the mutant into ``scratch``; the original text (to restore), or None when it does not compile."""
    path = os.path.join(scratch, mutant["file"])
    original = Path(path).read_text(encoding="utf-8")
    mutated = _mutated_source(original, mutant, path)
    if mutated is None:
        return None
    with open(path, "w", encoding="utf-8") as f:
        f.write(mutated)
    return original


def _draw(pool: list[dict], sample: int, skip: int, root: str = ROOT) -> list[dict]:
    """The mutants to judge: the pool's first ``sample`` mutants that compile, less the first ``skip`` of them
    (a mutant that does not compile is passed over and not counted). Nothing is written."""
    drawn: list[dict] = []
    sources: dict[str, str] = {}
    for mutant in pool:
        if len(drawn) >= sample:
            break
        path = os.path.join(root, mutant["file"])
        if path not in sources:
            sources[path] = Path(path).read_text(encoding="utf-8")
        if _mutated_source(sources[path], mutant, path) is not None:
            drawn.append(mutant)
    return drawn[skip:]


def run_tests(scratch: str, tests: list[str], timeout: float, info: dict | None = None) -> str:
    """'caught', 'survived' or 'timeout' for the mutant now in ``scratch``; ``info["failed"]`` is set to the
    test that caught it (pytest's summary line: the first failure, as ``-x`` stops there)."""
    # nothing is written: a mutated module's bytecode must never outlive it (see _precompile for what is read)
    env = dict(os.environ, PYTHONPATH=scratch, PYTHONDONTWRITEBYTECODE="1")
    # the suite's warning filters apply (pyproject.toml: a stray warning fails its test), so a mutant that makes
    # ember warn on a correct program is caught as the suite catches it
    # the tests are read from a file (pytest's @argsfile, one per line): a coverage selection may name thousands
    with tempfile.NamedTemporaryFile("w", suffix=".args", delete=False, encoding="utf-8") as f:
        f.write("\n".join(tests) + "\n")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-rfE", "-p", "no:cacheprovider", "@" + f.name]
    try:
        out = _run_as_group(cmd, cwd=scratch, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    finally:
        os.unlink(f.name)
    # 4 (a test named in TARGETS not found) and 5 (no test collected) say the map is wrong, not that a test failed:
    # counted caught, they would count every mutant of that module caught. But a mutant that breaks the import of a
    # test file (an error while collecting it) leaves its node ids unfound too, and that is a failure it caused:
    # _check_map has found every node id in the unmutated copy, so an unfound one is the mutant's doing
    if out.returncode in (4, 5) and "ERROR collecting" in out.stdout:
        if info is not None:
            failed = [line for line in out.stdout.splitlines() if line.startswith("ERROR ")]
            info["failed"] = failed[0].split(" - ")[0][:300] if failed else "error collecting"
        return "caught"
    if out.returncode in (4, 5):
        raise Unfound(f"pytest could not run {' '.join(tests)[:2000]} (exit status {out.returncode}):\n"
                           + out.stdout[-2000:] + out.stderr[-2000:])
    if out.returncode == 0:
        return "survived"
    if info is not None:
        failed = [line for line in out.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
        info["failed"] = failed[0].split(" - ")[0][:300] if failed else f"exit status {out.returncode}"
    return "caught"


class Unfound(RuntimeError):
    """pytest found no test for a node id it was given, with no collection error (its exit status 4 or 5): a map's
    id that no longer names a test (``Selection.stale`` tells which), or one the mutant made the test file name
    otherwise (a parameter's id built from ember's values)."""


def _run_as_group(cmd: list[str], cwd: str, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """``subprocess.run`` of ``cmd`` (output captured as text) in a process group of its own, killed as a whole
    when it runs past ``timeout`` (TimeoutExpired) or this process is stopped (SystemExit, KeyboardInterrupt):
    a test's own children (an MPI run, a worker) would otherwise outlive the pytest that started them."""
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            raise
        finally:
            # the group's leftovers once pytest itself has ended (a child a test did not wait for)
            if process.poll() is not None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    return subprocess.CompletedProcess(cmd, process.returncode, stdout, stderr)


def _precompile(scratch: str, modules: list[str]) -> None:
    """Bytecode for the scratch copy, written once so that each run does not compile ember and rewrite the test
    files again (seconds per run). ember's is checked by the source's hash, not its time stamp: a mutant of the
    same size written within the second of the checkout would otherwise run the original's bytecode, and a
    mutated module's hash differs, so it is compiled afresh each run. The test files of ``modules`` (the drawn
    ones), never mutated, get pytest's rewritten bytecode from one collection."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash", "ember"],
                   cwd=scratch, check=True, capture_output=True)
    _check_map(scratch, modules)


def _check_map(scratch: str, modules: list[str]) -> None:
    """Collect the tests TARGETS names for ``modules`` in the unmutated copy (which also writes their rewritten
    bytecode): a node id that is not found there, or a mapped file that collects no test, is a wrong map, and
    run_tests may then read an unfound node id under a mutant as a test file the mutant broke. Only the drawn
    modules' entries are collected: the whole map's files take many minutes on a loaded machine."""
    tests = sorted({t for module in modules for t in TARGETS[module]})
    if not tests:
        return
    # (addopts cleared: its -q with ours would print counts per file, not the test ids read below)
    out = _run_as_group([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "--collect-only", "-p",
                         "no:cacheprovider", *tests],
                        cwd=scratch, env=dict(os.environ, PYTHONPATH=scratch), timeout=None)
    collected = [line for line in out.stdout.splitlines() if "::" in line]
    # a file's test ids start with "file::", a parametrized test's with "id["
    empty = [t for t in tests if not any(c == t or c.startswith((t + "::", t + "[")) for c in collected)]
    if out.returncode != 0 or empty:
        raise RuntimeError(f"the unmutated tests named in TARGETS do not all collect (exit status {out.returncode}; "
                           f"no test collected from {', '.join(empty) or '-'}):\n"
                           + out.stdout[-2000:] + out.stderr[-2000:])


def _coverage_module():
    """scripts/mutation_coverage.py (imported when a map is used: it imports this module's TARGETS)."""
    import importlib.util

    name = "mutation_coverage"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(__file__), name + ".py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


class Selection:
    """The tests to run for each mutant: from a coverage map (scripts/mutation_coverage.py) where it has the
    mutated line or its scope, else the hand map (TARGETS)."""

    def __init__(self, coverage_map: dict | None = None, root: str = ROOT, max_seconds: float = 0):
        self.map, self.root, self.max_seconds = coverage_map, root, max_seconds
        self.indexes: dict[str, object] = {}
        self.defined: dict[str, set[str] | None] = {}
        # the map's node ids the unmutated copy does not collect (found by ``stale``), never selected again
        self.gone: set[str] = set()
        # test file -> the node ids (and their test functions and classes) the unmutated copy collects from it
        self.collected: dict[str, set[str]] = {}
        # the map's node ids the last call of ``tests`` left out as no longer there
        self.dropped: set[str] = set()

    def tests(self, mutant: dict) -> tuple[str, list[str]]:
        """(``coverage``, ``function`` or ``hand``; the tests) for ``mutant`` in the current source; a module in
        SUBPROCESS_TARGETS adds its hand entries to a coverage or function selection. With ``max_seconds``, a
        selection whose tests took longer in the map's build is cut to that time (the kind then ends in ``-cut``).
        The map's ids that are no longer there (``gone``, or a test file or function no longer defined) are left
        out and kept in ``dropped``; a selection they all were falls back to the scope's, then the hand map."""
        self.dropped = set()
        hand = TARGETS[mutant["file"]]
        found = self._from_map(mutant) if self.map is not None else None
        if found is None:
            return "hand", list(hand)
        kind, tests = found
        if self.max_seconds and sum(self.map["seconds"].get(t, 0.0) for t in tests) > self.max_seconds:
            kind, tests = kind + "-cut", self._cut(tests, hand)
        if mutant["file"] in SUBPROCESS_TARGETS:
            return kind + "+hand", tests + [t for t in hand if t not in tests]
        return kind, tests

    def _cut(self, tests: list[str], hand: list[str]) -> list[str]:
        """``tests`` cut to ``max_seconds`` of the build's time: those the hand map names first (a test file or
        node id listed for the module), then the fastest others; in their first order. A line that every test
        runs (an op's dispatch in graph.py) would otherwise run most of the suite for each survivor."""
        seconds = self.map["seconds"]

        def named(t: str) -> bool:
            return any(t == h or t.startswith((h + "::", h + "[")) for h in hand)

        ranked = sorted(tests, key=lambda t: (not named(t), seconds.get(t, 0.0)))
        kept, total = set(), 0.0
        for t in ranked:
            total += seconds.get(t, 0.0)
            if total > self.max_seconds and kept:
                break
            kept.add(t)
        return [t for t in tests if t in kept]

    def _from_map(self, mutant: dict) -> tuple[str, list[str]] | None:
        file = self.map["files"].get(mutant["file"])
        if file is None:
            return None
        path = mutant["file"]
        if path not in self.indexes:
            self.indexes[path] = _coverage_module().SourceIndex(Path(self.root, path).read_text(encoding="utf-8"))
        index, line = self.indexes[path], mutant["line"]
        key = index.key.get(line)
        # a line run on import (a module's or class's body) has no test of its own: its scope's tests are next
        if key is not None and not index.runs_at_definition[line] and key in file["lines"]:
            tests = self._existing(file["lines"][key])
            if tests:
                return "coverage", tests
        for scope in _coverage_module()._scopes_of(index.owner[line]):
            tests = self._existing(file["scopes"].get(scope, []))
            if tests:
                return "function", tests
        return None

    def _existing(self, tests: list[str]) -> list[str]:
        """``tests`` less those whose file or test function is no longer there (a map built on an older commit) and
        those found ``gone``: pytest would stop on an unfound node id."""
        kept = [t for t in tests if t not in self.gone and self._defined(t)]
        if len(kept) < len(tests):
            self.dropped.update(set(tests).difference(kept))
        return kept

    def stale(self, scratch: str, tests: list[str]) -> list[str]:
        """Those of ``tests`` that the copy in ``scratch`` (unmutated now) does not collect: a parameter's id that
        is not the same every run (an object's memory address in it, a set's order), or one renamed since the map.
        Each test file is collected once per run."""
        files = sorted({t.partition("::")[0] for t in tests}.difference(self.collected))
        if files:
            # (a file that does not collect unmutated collects nothing: its ids cannot run, all stale)
            out = _run_as_group([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "--collect-only", "-p",
                                 "no:cacheprovider", "--continue-on-collection-errors", *files],
                                cwd=scratch, env=dict(os.environ, PYTHONPATH=scratch), timeout=None)
            for file in files:
                self.collected[file] = set()
            for line in out.stdout.splitlines():
                path, sep, name = line.strip().partition("::")
                if sep and path in self.collected:
                    # the id, its test function's (a parametrized test named whole) and its classes'
                    parts = name.split("[")[0].split("::")
                    self.collected[path].update([line.strip(), path] + [
                        path + "::" + "::".join(parts[:i]) for i in range(1, len(parts) + 1)])
        return [t for t in tests if t not in self.collected[t.partition("::")[0]]]

    def _defined(self, test: str) -> bool:
        path, _, name = test.partition("::")
        if path not in self.defined:
            try:
                tree = ast.parse(Path(self.root, path).read_text(encoding="utf-8"))
            except (OSError, SyntaxError):
                self.defined[path] = None
            else:
                self.defined[path] = {n.name for n in ast.walk(tree)
                                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        names = self.defined[path]
        return names is not None and all(part.split("[")[0] in names for part in name.split("::"))


def relocate(mutant: dict, source: str) -> dict | None:
    """``mutant`` (from a run on an older commit) moved to where its text now is: its line if the text is still
    there, else the nearest line with the same text at the same column, else the nearest line holding the text
    (its column updated); None when no line holds it."""
    lines = source.splitlines()
    line, col, end, before = mutant["line"], mutant["col"], mutant["end"], mutant["before"]
    width = end - col
    if 0 < line <= len(lines) and lines[line - 1][col:end] == before:
        return mutant
    same = [i + 1 for i, text in enumerate(lines) if text[col:end] == before]
    if same:
        return dict(mutant, line=min(same, key=lambda i: abs(i - line)))
    anywhere = [(i + 1, text.find(before)) for i, text in enumerate(lines) if before in text]
    if not anywhere:
        return None
    found, at = min(anywhere, key=lambda item: abs(item[0] - line))
    return dict(mutant, line=found, col=at, end=at + width)


class Limits:
    """Tells a hang from a slow machine: the unmutated time of each selection of tests, measured when first
    needed (a coverage selection is the tests of one line, so two mutants share a baseline only when they run
    the same tests)."""

    def __init__(self, scratch: str, timeout: float, factor: float):
        self.scratch, self.timeout, self.factor = scratch, timeout, factor
        self.baseline: dict[tuple[str, ...], float | None] = {}

    def unmutated_seconds(self, tests: list[str]) -> float | None:
        """Seconds ``tests`` take unmutated now (the scratch copy must hold no mutant); None when they do not
        pass within ``factor`` times the limit (a mutant they ran past the limit on is then *unjudged*: listed,
        not counted)."""
        key = tuple(tests)
        if key not in self.baseline:
            started = time.monotonic()
            outcome = run_tests(self.scratch, tests, self.timeout * self.factor)
            # unmutated tests that fail or run past the factor times --timeout: nothing to judge a timeout by
            self.baseline[key] = time.monotonic() - started if outcome == "survived" else None
        return self.baseline[key]

    def judge(self, mutant: dict, original: str, tests: list[str] | None = None) -> str:
        """Run the mutant (already written) under ``tests`` (default: its module's hand map); a run past the limit
        is retried with a limit from those tests' unmutated time."""
        tests = TARGETS[mutant["file"]] if tests is None else tests
        outcome = run_tests(self.scratch, tests, self.timeout, mutant)
        if outcome != "timeout":
            return outcome
        path = os.path.join(self.scratch, mutant["file"])
        mutated = Path(path).read_text(encoding="utf-8")
        Path(path).write_text(original, encoding="utf-8")
        seconds = self.unmutated_seconds(tests)
        Path(path).write_text(mutated, encoding="utf-8")
        if seconds is None:
            return "unjudged"
        mutant["unmutated_s"] = round(seconds, 1)
        limit = max(self.timeout, self.factor * seconds)
        mutant["limit_s"] = round(limit, 1)
        if limit <= self.timeout:  # it already ran past the factor times the unmutated time
            return "timeout"
        return run_tests(self.scratch, tests, limit, mutant)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=100, help="mutants to run (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the sample's first N mutants (to split one sample over several runs)")
    parser.add_argument("--only", default="", help="only modules whose path contains this text")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds per mutant's tests before the unmutated tests are timed (default 300)")
    parser.add_argument("--hang-factor", type=float, default=4,
                        help="a mutant is a timeout past this many times the unmutated tests' time (default 4)")
    parser.add_argument("--json", default="", help="write the results here too")
    parser.add_argument("--rerun", default="",
                        help="a --json file of an earlier run: run its survivors and timeouts again")
    parser.add_argument("--coverage-map", default="",
                        help="a map from scripts/mutation_coverage.py: run the tests that executed each mutated line")
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="cut a map's selection whose tests took longer than this in its build (default: no cut)")
    args = parser.parse_args(argv)

    if args.rerun:
        with open(args.rerun, encoding="utf-8") as f:
            earlier = json.load(f)
        pool = []
        for m in earlier["mutants"]:
            if m["outcome"] == "caught":
                continue
            mutant = {k: m[k] for k in ("file", "line", "col", "end", "before", "after")}
            # its line numbers are those of the earlier run's commit: found again by its text
            moved = relocate(mutant, Path(ROOT, mutant["file"]).read_text(encoding="utf-8"))
            if moved is None:
                print(f"not found in the current source: {m['file']}:{m['line']}: {m['before']!r}")
                continue
            pool.append(moved)
        args.seed, args.skip, args.sample = earlier["seed"], 0, len(pool)
    else:
        pool = [c for path in TARGETS if args.only in path and os.path.exists(os.path.join(ROOT, path))
                for c in candidates(path, ROOT)]
        random.Random(args.seed).shuffle(pool)
    drawn = _draw(pool, args.sample, args.skip, ROOT)
    selection = Selection(_coverage_module().load(args.coverage_map) if args.coverage_map else None, ROOT,
                          args.max_seconds)
    # SIGTERM (and SIGHUP) end the run as an exception does, through the cleanup below: the scratch worktree
    # removed and the running tests' process group killed (a run started with & ignores SIGINT)
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, _exit_on_signal)
    scratch_root = tempfile.mkdtemp(prefix="ember-mutants-")
    scratch = os.path.join(scratch_root, "ember")
    results, started = [], time.monotonic()
    try:
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", scratch, "HEAD"], check=True)
        _precompile(scratch, sorted({m["file"] for m in drawn}))
        limits = Limits(scratch, args.timeout, args.hang_factor)
        for mutant in drawn:
            began = time.monotonic()
            mutant["outcome"] = _judge_selected(mutant, selection, limits, scratch)
            mutant["seconds"] = round(time.monotonic() - began, 1)
            results.append(mutant)
            print({"caught": ".", "survived": "S", "timeout": "T", "unjudged": "?"}[mutant["outcome"]], end="",
                  flush=True)
            if args.json:
                _write(args.json, args.seed, results)
    finally:
        for stop in (signal.SIGTERM, signal.SIGHUP):  # a second signal must not cut the cleanup short
            signal.signal(stop, signal.SIG_IGN)
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", scratch], check=False,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(scratch_root, ignore_errors=True)
    print()
    survivors = [m for m in results if m["outcome"] == "survived"]
    for m in survivors:
        print(f"survived: {m['file']}:{m['line']}: {m['before']!r} -> {m['after']!r} "
              f"({m['selection']}: {m['selected']} tests)")
    timeouts = [m for m in results if m["outcome"] == "timeout"]
    for m in timeouts:
        print(f"timeout (caught; unmutated tests {m['unmutated_s']} s, limit {m['limit_s']} s): "
              f"{m['file']}:{m['line']}: {m['before']!r} -> {m['after']!r}")
    unjudged = [m for m in results if m["outcome"] == "unjudged"]
    for m in unjudged:
        print(f"unjudged (its unmutated tests do not pass in time): {m['file']}:{m['line']}: {m['before']!r} -> "
              f"{m['after']!r}")
    judged = len(results) - len(unjudged)
    caught = judged - len(survivors)
    share = caught / judged if judged else 0.0
    print(f"{caught} of {judged} mutants caught ({share:.1%}; {len(timeouts)} of them by timeout) "
          f"in {time.monotonic() - started:.0f} s (seed {args.seed}, {len(pool)} candidates)")
    if args.json:
        _write(args.json, args.seed, results)
    return 0


def _judge_selected(mutant: dict, selection: Selection, limits: Limits, scratch: str) -> str:
    """``mutant``'s outcome under the tests ``selection`` picks, its record given that selection (``selection``,
    ``selected`` and ``dropped``: how many of the map's ids were left out as no longer there). When pytest does
    not find a selected id, the ids are collected in the unmutated copy: those not there either are dropped (one
    line says so) and the mutant is run again on what is left, or on the scope's or hand map's tests when nothing
    is. When all are there, the mutant changed a parameter's id (one built from ember's values): the parametrized
    tests are run whole (the kind ends in ``-widened``), as the suite runs them under any id."""
    kind, tests = selection.tests(mutant)
    original = _apply(scratch, mutant)
    try:
        while True:
            mutant["selection"], mutant["selected"], mutant["dropped"] = kind, len(tests), len(selection.dropped)
            try:
                return limits.judge(mutant, original, tests)
            except Unfound:
                with open(os.path.join(scratch, mutant["file"]), "w", encoding="utf-8") as f:
                    f.write(original)
                stale = [t for t in selection.stale(scratch, tests) if t not in selection.gone]
                _apply(scratch, mutant)
            if stale:
                selection.gone.update(stale)
                kind, tests = selection.tests(mutant)
                print(f"\n{mutant['file']}:{mutant['line']}: dropped {len(stale)} selected tests pytest does not "
                      f"find ({', '.join(stale)[:200]}); {len(tests)} left ({kind})", flush=True)
            elif any("[" in t for t in tests):
                kind, tests = kind + "-widened", list(dict.fromkeys(t.split("[")[0] for t in tests))
            else:  # (a test function or file the unmutated copy collects and the mutant's does not)
                mutant["failed"] = "a selected test not collected under the mutant"
                return "caught"
    finally:
        with open(os.path.join(scratch, mutant["file"]), "w", encoding="utf-8") as f:
            f.write(original)


def _exit_on_signal(signum: int, frame) -> None:
    """Turn a stop signal into SystemExit (status 128 + the signal), so that ``finally`` blocks clean up."""
    raise SystemExit(128 + signum)


def _write(path: str, seed: int, results: list[dict]) -> None:
    caught = sum(m["outcome"] in ("caught", "timeout") for m in results)
    timeouts = sum(m["outcome"] == "timeout" for m in results)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"seed": seed, "caught": caught, "timeouts": timeouts,
                   "total": sum(m["outcome"] != "unjudged" for m in results), "mutants": results}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
