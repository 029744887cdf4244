"""Train a small Hugging Face model built from its config on random token sequences with AdamW: GPT-2
(GPT2LMHeadModel), Llama (LlamaForCausalLM: rotary embeddings, grouped-query attention, RMSNorm, SwiGLU) or BERT
(BertForMaskedLM: masked-token prediction); then score a held-out batch and, for the decoders, decode greedily
with transformers' generate.

    python hf_models.py [--model gpt2|llama|bert] [--steps N] [--attention eager|sdpa]
"""

import argparse

import torch
from _support import rng, same_weights
from transformers import (
    BertConfig,
    BertForMaskedLM,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
)
from transformers.utils import logging

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="gpt2", choices=["gpt2", "llama", "bert"])
parser.add_argument("--steps", type=int, default=5)
parser.add_argument("--attention", default="sdpa", choices=["eager", "sdpa"])
args = parser.parse_args()
logging.set_verbosity_error()

vocab, context, mask_id = 50, 12, 1
sizes = dict(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             max_position_embeddings=32, attn_implementation=args.attention)
torch.manual_seed(0)
if args.model == "gpt2":
    model = GPT2LMHeadModel(GPT2Config(vocab_size=vocab, n_positions=16, n_embd=32, n_layer=2, n_head=2,
                                       resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
                                       eos_token_id=0, attn_implementation=args.attention))
elif args.model == "llama":
    model = LlamaForCausalLM(LlamaConfig(num_key_value_heads=2, pad_token_id=0, **sizes))
else:
    model = BertForMaskedLM(BertConfig(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **sizes))
same_weights(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

data = rng(0)
for step in range(args.steps):
    tokens = torch.from_numpy(data.integers(2, vocab, (4, context)))
    attention_mask = torch.ones_like(tokens)
    attention_mask[0, :3] = 0  # the first sequence is padded at the start
    attention_mask[1, -4:] = 0  # the second at the end
    if args.model != "bert":
        out = model(tokens, attention_mask=attention_mask, labels=tokens)
    else:
        hidden = torch.from_numpy(data.random((4, context)) < 0.25)
        labels = torch.where(hidden, tokens, torch.full_like(tokens, -100))
        out = model(torch.where(hidden, torch.full_like(tokens, mask_id), tokens), attention_mask=attention_mask,
                    labels=labels)
    optimizer.zero_grad()
    out.loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"step {step}: loss {out.loss.item():.6f} grad norm {grad_norm.item():.6f}")

model.eval()
with torch.no_grad():
    logits = model(torch.from_numpy(data.integers(2, vocab, (2, context)))).logits
print(f"eval logits {tuple(logits.shape)} mean {logits.mean().item():.6e} std {logits.std().item():.6e}")
if args.model != "bert":  # greedy decoding through transformers' generate loop and its key/value cache
    prompt = torch.from_numpy(data.integers(2, vocab, (2, 4)))
    generated = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=4, do_sample=False,
                               pad_token_id=0)
    print("generated", generated[:, 4:].tolist())
