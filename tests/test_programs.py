"""Real PyTorch programs (tests/programs/) run unmodified under PyTorch and under ``python -m ember.compat``.

Each program is run first under PyTorch, which saves its freshly initialised weights, then under ember, which
starts from them (tests/programs/_support.py); both see the same NumPy-generated batches. Their printed output
must agree line by line: the same words, and every number equal to a relative 1e-5 (losses, accuracies, checksums)
give or take one unit in the last printed digit (a value a hair from a rounding boundary prints differently).
Lines that show random samples are compared by shape only: the generators are PyTorch's in both, but a token
sampled from probabilities that agree only to rounding can differ.
"""

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

PROGRAMS = os.path.join(ROOT, "tests", "programs")
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
RANDOM_LINES = ("sample:",)

CASES = [
    # (id, script and arguments, ranks)
    ("gpt-flash", ["gpt_char.py", "--attention", "flash"], 1),
    ("gpt-mask", ["gpt_char.py", "--attention", "mask"], 1),
    ("gpt-ddp-flag", ["gpt_char_ddp.py", "--accumulate", "flag"], 2),
    ("gpt-ddp-no_sync", ["gpt_char_ddp.py", "--accumulate", "no_sync"], 2),
    ("rpc-parameter-server", ["rpc_parameter_server.py"], 3),
    ("ddp-unused-parameters-moe", ["ddp_unused_params.py"], 2),
    ("ddp-unused-parameters-moe-3-ranks", ["ddp_unused_params.py"], 3),
    ("ddp-join-uneven-inputs", ["ddp_join_uneven.py"], 2),
    ("ddp-join-uneven-inputs-3-ranks", ["ddp_join_uneven.py"], 3),
    ("ddp-torchrun-sampler-checkpoint", ["ddp_torchrun_checkpoint.py"], 2),
    ("ddp-torchrun-sampler-checkpoint-3-ranks", ["ddp_torchrun_checkpoint.py"], 3),
    ("ddp-autocast-bf16", ["ddp_autocast_bf16.py"], 2),
    ("ddp-powersgd-hook", ["ddp_powersgd.py"], 2),
    ("ddp-metrics-fp16-hook-zero", ["ddp_metrics_zero.py"], 2),
    ("lstm-lm-packed", ["lstm_lm.py"], 1),
    ("lstm-tagger", ["tagger.py"], 1),
    ("transformer", ["transformer_lm.py"], 1),
    ("vae", ["vae.py"], 1),
    ("gan", ["gan.py"], 1),
    ("dcgan", ["dcgan.py"], 1),
    ("gan-upsample", ["gan.py", "--images", "--steps", "5"], 1),
    ("lstm-lbfgs", ["lstm_lbfgs.py"], 1),
    ("cnn-adadelta-steplr", ["cnn_adadelta.py", "--dropout", "0"], 1),
    ("quickstart", ["quickstart.py"], 1),
    ("custom-function", ["custom_function.py"], 1),
    ("reinforce-categorical", ["reinforce.py"], 1),
    ("trpo-natural-gradient", ["trpo_natural_gradient.py"], 1),
    ("ppo-sac-continuous-normal", ["ppo_sac_continuous.py"], 1),
    ("normalizing-flow", ["flow.py"], 1),
    ("llama-rotary-complex", ["llama_lm.py"], 1),
    ("fno-spectral", ["fno_1d.py"], 1),
    ("tcn-weight-norm", ["tcn_weight_norm.py"], 1),
    ("spatiotemporal-anomaly", ["spatiotemporal_anomaly.py"], 1),
    ("diffusion-2d", ["diffusion_2d.py"], 1),
    ("jacobians-hessians", ["jacobians_hessians.py"], 1),
    ("forward-mode-jvp", ["forward_mode_jvp.py"], 1),
    ("hf-gpt2-eager", ["hf_models.py", "--model", "gpt2", "--attention", "eager"], 1),
    ("hf-gpt2-sdpa", ["hf_models.py", "--model", "gpt2"], 1),
    ("hf-llama-sdpa", ["hf_models.py", "--model", "llama"], 1),
    ("hf-llama-eager", ["hf_models.py", "--model", "llama", "--attention", "eager"], 1),
    ("hf-bert-mlm", ["hf_models.py", "--model", "bert"], 1),
    ("checkpointed-transformer", ["checkpointed_transformer.py"], 1),
    ("checkpointed-transformer-reentrant", ["checkpointed_transformer.py", "--reentrant"], 1),
    ("pinn-second-derivatives", ["pinn.py"], 1),
    ("maml-second-order", ["maml.py"], 1),
    ("maml-first-order", ["maml.py", "--first-order", "--steps", "8"], 1),
    ("metalearn-lr-unrolled-legacy-alias", ["metalearn_lr.py"], 1),
    ("wgan-gp-conv-critic", ["wgan_gp.py"], 1),
    ("per-sample-grads-vmap", ["per_sample_grads.py"], 1),
    ("vit-einops", ["vit_einops.py"], 1),
    ("fx-passes", ["fx_passes.py"], 1),
    ("graph-networks-sparse", ["graph_networks.py"], 1),
    ("style-transfer-superres", ["style_superres.py"], 1),
    ("legacy-rnn-variable-keywords", ["old_style_rnn.py"], 1),
    ("capsule-routing", ["capsule_net.py"], 1),
    ("nerf-hierarchical-sampling", ["nerf_mlp.py"], 1),
    ("spatial-transformer-grid-sample", ["stn_grid_sample.py"], 1),
    ("registration-3d-grid-sample-scaling-squaring-ncc", ["registration_3d.py"], 1),
    ("lora-parametrize", ["lora_parametrize.py"], 1),
    ("recsys-sparse-embedding-bag", ["recsys_sparse.py"], 1),
    ("glow-actnorm-invconv-lu", ["glow.py"], 1),
    ("detr-hungarian-matching", ["detr_matching.py"], 1),
    ("hook-profiler-counter-buffers", ["hook_profiler.py"], 1),
    ("swa-prune-save-whole-model", ["swa_prune_save.py"], 1),
    ("gnn-message-passing-scatter-reduce", ["gnn_message_passing.py"], 1),
    ("distill-autocast-bf16", ["distill_autocast_bf16.py"], 1),
    ("audio-mel-stft", ["audio_mel_stft.py"], 1),
    ("lora-injected-merge-on-eval", ["lora_inject.py"], 1),
    ("tiny-nerf-searchsorted", ["tiny_nerf.py"], 1),
    ("moe-topk-routing", ["moe_topk.py"], 1),
    ("nanogpt-param-groups-cyclic-schedulers", ["nanogpt_sched.py"], 1),
    ("qat-fake-quantize-lsq", ["qat_fakequant.py"], 1),
    ("yolo-anchors-ciou-nms", ["yolo_anchors.py"], 1),
    ("ppo-gae-categorical-rollouts", ["ppo_gae.py"], 1),
    ("rainbow-c51-noisy-per-index-add", ["rainbow_c51.py"], 1),
    ("linalg-objectives-gp-cholesky-cov-eigh", ["linalg_loss.py"], 1),
    ("fno-2d-rfft2-cfloat-weights", ["fft_spectral.py"], 1),
    ("fits-complex-linear-forecast", ["freq_interp_forecast.py"], 1),
    ("complex-cnn-phase-max-pool", ["complex_cnn.py"], 1),
    ("data-samplers-collate-iterable", ["data_pipeline.py"], 1),
    ("ctc-speech-bigru-greedy-decode", ["ctc_speech.py"], 1),
    ("seq2seq-packed-bahdanau-teacher-forcing", ["seq2seq_attention.py"], 1),
    ("simclr-nt-xent-triplet-siamese", ["simclr_triplet.py"], 1),
    ("einsum-mqa-alibi-linear-attention", ["einsum_attention.py"], 1),
    ("segnet-max-unpool-conv3d-fold", ["segnet_unpool_3d.py"], 1),
    ("lowrank-mvn-vi-distributions", ["distributions_zoo.py"], 1),
    ("point-cloud-edgeconv-knn-gather", ["point_cloud_edgeconv.py"], 1),
    ("torchmetrics-classifier", ["torchmetrics_classifier.py"], 1),
    ("lightning-fit-checkpoint-callbacks", ["lightning_fit.py"], 1),
    ("lightning-ddp-2-ranks", ["lightning_fit.py", "--strategy", "ddp", "--devices", "2", "--precision", "32-true"], 2),
    ("fsdp-gpt-full-shard", ["fsdp_gpt.py"], 2),
    ("fsdp-gpt-shard-grad-op-orig-params", ["fsdp_gpt.py", "--strategy", "SHARD_GRAD_OP", "--use-orig-params"], 2),
    ("fsdp-gpt-no-shard", ["fsdp_gpt.py", "--strategy", "NO_SHARD"], 2),
    ("binary-evidential-inplace-function-ste", ["binary_evidential.py"], 1),
    ("session-rec-sparse-adagrad-vicreg-lars", ["session_rec_lars.py"], 1),
    ("vision-finetune-mixup-ema-channels-last-resume", ["vision_finetune.py"], 1),
    ("appnp-sparse-buffer-protonet-episodes-jem-sgld", ["appnp_fewshot_sgld.py"], 1),
    ("tucker-rotate-rnnt-forward-i3d-same-padding-matching", ["kge_transducer_i3d.py"], 1),
    ("fedformer-fourier-swin-roll-pct-knn-ties-bert4rec", ["fedformer_swin_pct.py"], 1),
]


# Programs that use a pure-Python library on the torch API (pyproject.toml's test extra pins it): skipped, with the
# reason, where it is not installed
NEEDS = {"torchmetrics_classifier.py": "torchmetrics", "lightning_fit.py": "lightning"}


# PyTorch 2.13's gloo ranks now and then abort in C++ teardown ("terminate called without an active exception"),
# usually at interpreter exit, when the reference output is complete; now and then while a rank still had lines to
# print. A reference run that aborted so is run once more (the program is deterministic: same weights, same output).
TORCH_EXIT_CRASH = "terminate called without an active exception"


def _run(command, weights, mode, timeout=240, last_line=None):
    # (the packages the test process sees, after this checkout's ember)
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path, PROGRAM_WEIGHTS=str(weights), PROGRAM_MODE=mode, OMP_NUM_THREADS="1")
    out = subprocess.run(command, capture_output=True, text=True, cwd=PROGRAMS, env=env, timeout=timeout)
    if last_line is not None and out.returncode != 0 and TORCH_EXIT_CRASH in out.stderr \
            and last_line not in out.stdout:
        out = subprocess.run(command, capture_output=True, text=True, cwd=PROGRAMS, env=env, timeout=timeout)
    finished = last_line is not None and TORCH_EXIT_CRASH in out.stderr and last_line in out.stdout
    assert out.returncode == 0 or finished, \
        f"{' '.join(command)} failed ({mode}):\n{out.stdout[-3000:]}\n{out.stderr[-5000:]}"
    return out


def _torch_command(script, ranks):
    if ranks == 1:
        return [sys.executable, *script]
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ranks), *script]


def _ember_command(script, ranks):
    if ranks == 1:
        return [sys.executable, "-m", "ember.compat", *script]
    return [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(ranks), "--timeout", "120",
            "-m", "ember.compat", *script]


def _lines(stdout):
    return [line.strip() for line in stdout.splitlines() if line.strip() and not line.startswith("[ember")]


def _last_digit_unit(text):
    """The value of one unit in the last digit ``text`` prints: 0.001 for "1.234", 1e-05 for "1.5e-4"; integers
    (steps, counts) get none."""
    if not any(mark in text for mark in ".eE"):
        return 0.0
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def assert_same_output(reference, candidate, rtol=1e-5, atol=1e-7):
    ref, got = _lines(reference), _lines(candidate)
    assert len(ref) == len(got), f"PyTorch printed {len(ref)} lines, ember {len(got)}:\n{reference}\n---\n{candidate}"
    for a, b in zip(ref, got):
        if a.startswith(RANDOM_LINES):
            assert b.startswith(RANDOM_LINES) and len(a) == len(b), (a, b)
            continue
        assert NUMBER.sub("#", a) == NUMBER.sub("#", b), f"PyTorch: {a}\nember:   {b}"
        for x_text, y_text in zip(NUMBER.findall(a), NUMBER.findall(b)):
            x, y = float(x_text), float(y_text)
            printed = max(_last_digit_unit(x_text), _last_digit_unit(y_text))
            assert abs(x - y) <= atol + rtol * abs(x) + printed, f"PyTorch: {a}\nember:   {b}"


@pytest.mark.parametrize("script,ranks", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_program_matches_pytorch(tmp_path, script, ranks):
    pytest.importorskip("torch")
    if script[0] in NEEDS:
        pytest.importorskip(NEEDS[script[0]], reason=f"{script[0]} needs {NEEDS[script[0]]}, which is not installed "
                                                     "(pyproject.toml's test extra)")
    weights = tmp_path / "initial_weights.npz"
    reference = _run(_torch_command(script, ranks), weights, "save", last_line="replicas identical" if ranks > 1 else None)
    candidate = _run(_ember_command(script, ranks), weights, "load")
    assert_same_output(reference.stdout, candidate.stdout)
    assert "TrainingLoopWarning" not in candidate.stderr, candidate.stderr  # correct programs get no warning


def test_ddp_rank0_evaluation_with_mask_buffer(tmp_path):
    """Rank 0 alone evaluates a model holding a causal-mask buffer. PyTorch's DDP broadcasts buffers in that
    forward and hangs; ember must not communicate there, and trains exactly as the buffer-free variant does."""
    pytest.importorskip("torch")
    weights = tmp_path / "initial_weights.npz"
    reference = _run(_torch_command(["gpt_char_ddp.py", "--attention", "flash"], 2), weights, "save",
                     last_line="replicas identical")
    candidate = _run(_ember_command(["gpt_char_ddp.py", "--attention", "mask"], 2), weights, "load", timeout=150)
    assert_same_output(reference.stdout, candidate.stdout)


def test_comparison_catches_a_differing_loss():
    assert_same_output("loss 1.0000000\n", "loss 1.0000001\n")
    assert_same_output("loss 0.060822\n", "loss 0.060823\n")  # one unit in the last printed digit
    with pytest.raises(AssertionError):
        assert_same_output("loss 0.060822\n", "loss 0.060824\n")  # two units
    with pytest.raises(AssertionError):
        assert_same_output("step 3\n", "step 4\n")  # integers are exact
    with pytest.raises(AssertionError):
        assert_same_output("loss 1.000000\n", "loss 1.000100\n")
    with pytest.raises(AssertionError):
        assert_same_output("loss 1.0\nloss 2.0\n", "loss 1.0\n")
