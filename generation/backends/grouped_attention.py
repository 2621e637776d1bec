"""Attention for one new token per sequence (a decoding step) as two grouped matrix products.

On CPU, `torch.nn.functional.scaled_dot_product_attention` runs a decoding step (one query per
sequence, grouped-query heads, a padding mask) through its flash kernel, which is built for long
queries: measured on SmolLM2-135M (9 query heads sharing 3 key/value heads, 16 sequences, 230
cached positions), about 0.8 ms per layer in float32 and 5 ms in bfloat16, against 0.6 and
0.4 ms for the same product written as two batched matrix products over the key/value heads
(no key/value repetition; softmax in float32). See `perf/local_generation.py`.

`use_grouped_decode_attention(model)` makes a transformers model use it for decoding steps;
prefill (more than one query per sequence) still goes through SDPA.
"""

from __future__ import annotations

import torch

NAME = "cloneprobe_grouped_decode"


def grouped_decode_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """Same contract as transformers' `sdpa_attention_forward`: query [batch, heads, q, dim],
    key/value [batch, kv_heads, positions, dim], returns [batch, q, heads, dim]."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    batch, heads, queries, dim = query.shape
    kv_heads = key.shape[1]
    if queries != 1 or heads % kv_heads or module.training:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    scale = dim**-0.5 if scaling is None else scaling
    # query head h reads key/value head h // groups (transformers' repeat_kv order)
    grouped = query.reshape(batch, kv_heads, heads // kv_heads, dim)
    scores = torch.matmul(grouped, key.transpose(-1, -2)).float().mul_(scale)
    if attention_mask is not None:  # [batch, 1, 1, positions]: bool (attend) or additive
        mask = attention_mask[..., : key.shape[-2]]
        if mask.dtype == torch.bool:
            scores.masked_fill_(~mask, float("-inf"))
        else:
            scores.add_(mask.float())
    weights = scores.softmax(dim=-1).to(value.dtype)
    output = torch.matmul(weights, value)  # [batch, kv_heads, groups, dim]
    return output.reshape(batch, 1, heads, dim), None


def use_grouped_decode_attention(model) -> None:
    """Register the attention (and SDPA's mask for it) with transformers and switch the model
    to it; models without a configurable attention are left as they are."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, grouped_decode_attention)
    AttentionMaskInterface.register(NAME, sdpa_mask)
    if getattr(model.config, "_attn_implementation", None) == "sdpa":
        model.set_attn_implementation(NAME)
