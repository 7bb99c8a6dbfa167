#!/usr/bin/env python3
"""arch-reference.py - every architecture the engine computes, against an
independent reference.

For each family a tiny random model is written as a Hugging Face model
directory (config.json with the family's own keys, model.safetensors with
its own tensor names and packing), its logits are computed here in plain
numpy (float64) following the family's published modelling code, and
`hetero-sim infer --weights fp32` must give the same logits within 1e-4 of
their largest magnitude, at every prompt position and every greedy decode
step (so the KV cache and, for Mistral, a sliding window shorter than the
request are exercised).  Then `hetero-sim compare --functional full` times
the same directory under every policy and checks each plan's values.

The reference does not call the engine; it follows, for each family:
  llama, qwen2, gemma, mistral: transformers modeling_llama.py /
    modeling_qwen2.py / modeling_gemma.py / modeling_mistral.py
    (RMSNorm, rotate_half RoPE, repeat_kv GQA, SwiGLU / GeGLU; Gemma's
    (1 + w) norm and sqrt(hidden) embedding scale; Llama 3.1's llama3
    rope_scaling; Mistral's sliding window: query i sees keys (i - W, i])
  phi: transformers modeling_phi.py (one input LayerNorm feeding attention
    and fc1 -> gelu_new -> fc2 in parallel, partial rotary on
    int(partial_rotary_factor * head_dim) dims, biases everywhere, LM head
    with bias)
  chatglm: THUDM/chatglm2-6b modeling_chatglm.py (query_key_value packed
    [q | k | v] with bias, rotary on half of each head in interleaved
    pairs, multi-query groups, dense_h_to_4h chunked into silu(a) * b;
    and with add_bias_linear, biases on dense and both MLP matrices)
  internlm2: internlm/internlm2-1_8b modeling_internlm2.py (wqkv packed
    "(h gs d)" per KV group, w1/w3/w2, tok_embeddings, output; with bias,
    biases on wqkv and wo)

Usage: arch-reference.py HETERO_SIM
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

TOL = 1e-4
H, HEADS, HD, FFN, LAYERS, VOCAB = 64, 4, 16, 96, 2, 128


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, arr in tensors.items():
        b = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for b in blobs:
            f.write(b)


class Rand:
    """Random FP32 weights (values stored as FP32, used in float64)."""

    def __init__(self, seed):
        self.r = np.random.default_rng(seed)

    def mat(self, rows, cols):
        return (self.r.standard_normal((rows, cols)) / math.sqrt(cols)).astype(np.float32)

    def vec(self, n, scale=0.1, centre=0.0):
        return (centre + scale * self.r.standard_normal(n)).astype(np.float32)


# ---- the reference's building blocks (float64) ----------------------------

def f64(a):
    return np.asarray(a, dtype=np.float64)


def rmsnorm(x, w, eps, plus_one=False):
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y * (1.0 + f64(w) if plus_one else f64(w))


def layernorm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * f64(w) + f64(b)


def linear(x, w, b=None):
    y = x @ f64(w).T
    return y + f64(b) if b is not None else y


def silu(x):
    return x / (1.0 + np.exp(-x))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def inv_freq(rot, theta, scaling=None):
    f = 1.0 / theta ** (np.arange(0, rot, 2) / rot)
    if scaling and scaling.get("rope_type") == "llama3":
        # transformers _compute_llama3_parameters
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        wavelen = 2 * math.pi / f
        out = np.where(wavelen > old / low, f / factor, f)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * out / factor + smooth * out
        medium = ~(wavelen < old / high) & ~(wavelen > old / low)
        f = np.where(medium, smoothed, out)
    return f


def rope_half(x, pos, rot, theta, scaling=None):
    """x [T, heads, hd]; HF rotate_half on the first rot dims."""
    ang = np.outer(pos, inv_freq(rot, theta, scaling))      # [T, rot/2]
    emb = np.concatenate([ang, ang], -1)[:, None, :]        # [T, 1, rot]
    xr, xp = x[..., :rot], x[..., rot:]
    half = rot // 2
    rotated = np.concatenate([-xr[..., half:], xr[..., :half]], -1)
    return np.concatenate([xr * np.cos(emb) + rotated * np.sin(emb), xp], -1)


def rope_interleaved(x, pos, rot, theta):
    """ChatGLM2 apply_rotary_pos_emb: pairs (2i, 2i + 1) of the first rot dims."""
    ang = np.outer(pos, inv_freq(rot, theta))[:, None, :]   # [T, 1, rot/2]
    c, s = np.cos(ang), np.sin(ang)
    xr, xp = x[..., :rot], x[..., rot:]
    x0, x1 = xr[..., 0::2], xr[..., 1::2]
    out = np.stack([x0 * c - x1 * s, x1 * c + x0 * s], -1).reshape(xr.shape)
    return np.concatenate([out, xp], -1)


def attention(q, k, v, window=0):
    """q [T, heads, hd], k/v [T, kv, hd], causal from position 0; GQA as
    repeat_kv (query head h reads KV head h // (heads / kv))."""
    T, heads, hd = q.shape
    group = heads // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    s = np.einsum("thd,shd->hts", q, k) / math.sqrt(hd)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    allowed = j <= i
    if window:
        allowed &= j > i - window
    s = np.where(allowed[None], s, -np.inf)
    s = np.exp(s - s.max(-1, keepdims=True))
    p = s / s.sum(-1, keepdims=True)
    return np.einsum("hts,shd->thd", p, v).reshape(T, heads * hd)


# ---- the families ----------------------------------------------------------

def llama_like(kind, rnd):
    """Llama, Qwen2, Gemma, Mistral: config, tensors, forward."""
    kv = 1 if kind == "gemma" else 2
    cfg = {"model_type": kind, "hidden_size": H, "intermediate_size": FFN,
           "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
           "num_key_value_heads": kv, "head_dim": HD, "vocab_size": VOCAB,
           "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
           "hidden_act": "gelu" if kind == "gemma" else "silu",
           "tie_word_embeddings": kind in ("gemma", "qwen2")}
    if kind == "llama":
        cfg["rope_scaling"] = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                               "original_max_position_embeddings": 64, "rope_type": "llama3"}
    if kind == "mistral":
        cfg["sliding_window"] = 5
    t = {"model.embed_tokens.weight": rnd.vec(VOCAB * H, 1.0).reshape(VOCAB, H)}
    if kind == "gemma":
        t["model.embed_tokens.weight"] /= math.sqrt(H)
    qd, kd = HEADS * HD, kv * HD
    plus_one = kind == "gemma"
    for l in range(LAYERS):
        p = f"model.layers.{l}."
        for n, rows, cols in (("self_attn.q_proj", qd, H), ("self_attn.k_proj", kd, H),
                              ("self_attn.v_proj", kd, H), ("self_attn.o_proj", H, qd),
                              ("mlp.gate_proj", FFN, H), ("mlp.up_proj", FFN, H),
                              ("mlp.down_proj", H, FFN)):
            t[p + n + ".weight"] = rnd.mat(rows, cols)
        if kind == "qwen2":
            for n, rows in (("q_proj", qd), ("k_proj", kd), ("v_proj", kd)):
                t[p + "self_attn." + n + ".bias"] = rnd.vec(rows)
        for n in ("input_layernorm", "post_attention_layernorm"):
            t[p + n + ".weight"] = rnd.vec(H, 0.1, 0.0 if plus_one else 1.0)
    t["model.norm.weight"] = rnd.vec(H, 0.1, 0.0 if plus_one else 1.0)
    if not cfg["tie_word_embeddings"]:
        t["lm_head.weight"] = rnd.mat(VOCAB, H)

    def forward(tokens):
        T = len(tokens)
        pos = np.arange(T)
        x = f64(t["model.embed_tokens.weight"])[tokens]
        if kind == "gemma":
            x = x * math.sqrt(H)
        for l in range(LAYERS):
            p = f"model.layers.{l}."
            hn = rmsnorm(x, t[p + "input_layernorm.weight"], cfg["rms_norm_eps"], plus_one)
            q, k, v = (linear(hn, t[p + f"self_attn.{n}_proj.weight"],
                              t.get(p + f"self_attn.{n}_proj.bias")) for n in "qkv")
            q = rope_half(q.reshape(T, HEADS, HD), pos, HD, cfg["rope_theta"],
                          cfg.get("rope_scaling"))
            k = rope_half(k.reshape(T, kv, HD), pos, HD, cfg["rope_theta"],
                          cfg.get("rope_scaling"))
            a = attention(q, k, v.reshape(T, kv, HD), cfg.get("sliding_window", 0))
            x = x + linear(a, t[p + "self_attn.o_proj.weight"])
            hn = rmsnorm(x, t[p + "post_attention_layernorm.weight"], cfg["rms_norm_eps"],
                         plus_one)
            act = gelu_tanh if kind == "gemma" else silu
            g = act(linear(hn, t[p + "mlp.gate_proj.weight"]))
            x = x + linear(g * linear(hn, t[p + "mlp.up_proj.weight"]),
                           t[p + "mlp.down_proj.weight"])
        hn = rmsnorm(x, t["model.norm.weight"], cfg["rms_norm_eps"], plus_one)
        return linear(hn, t.get("lm_head.weight", t["model.embed_tokens.weight"]))

    return cfg, t, forward


def phi(rnd):
    cfg = {"model_type": "phi", "architectures": ["PhiForCausalLM"], "hidden_size": H,
           "intermediate_size": FFN, "num_hidden_layers": LAYERS,
           "num_attention_heads": HEADS, "num_key_value_heads": HEADS, "vocab_size": VOCAB,
           "max_position_embeddings": 256, "layer_norm_eps": 1e-5, "rope_theta": 10000.0,
           "partial_rotary_factor": 0.4, "hidden_act": "gelu_new", "qk_layernorm": False,
           "tie_word_embeddings": False}
    rot = int(cfg["partial_rotary_factor"] * HD)              # 6 of 16
    t = {"model.embed_tokens.weight": rnd.vec(VOCAB * H, 1.0).reshape(VOCAB, H)}
    for l in range(LAYERS):
        p = f"model.layers.{l}."
        for n, rows, cols in (("self_attn.q_proj", H, H), ("self_attn.k_proj", H, H),
                              ("self_attn.v_proj", H, H), ("self_attn.dense", H, H),
                              ("mlp.fc1", FFN, H), ("mlp.fc2", H, FFN)):
            t[p + n + ".weight"] = rnd.mat(rows, cols)
            t[p + n + ".bias"] = rnd.vec(rows)
        t[p + "input_layernorm.weight"] = rnd.vec(H, 0.1, 1.0)
        t[p + "input_layernorm.bias"] = rnd.vec(H)
    t["model.final_layernorm.weight"] = rnd.vec(H, 0.1, 1.0)
    t["model.final_layernorm.bias"] = rnd.vec(H)
    t["lm_head.weight"] = rnd.mat(VOCAB, H)
    t["lm_head.bias"] = rnd.vec(VOCAB)

    def forward(tokens):
        T = len(tokens)
        pos = np.arange(T)
        x = f64(t["model.embed_tokens.weight"])[tokens]
        for l in range(LAYERS):
            p = f"model.layers.{l}."
            hn = layernorm(x, t[p + "input_layernorm.weight"], t[p + "input_layernorm.bias"],
                           cfg["layer_norm_eps"])
            q, k, v = (linear(hn, t[p + f"self_attn.{n}_proj.weight"],
                              t[p + f"self_attn.{n}_proj.bias"]) for n in "qkv")
            q = rope_half(q.reshape(T, HEADS, HD), pos, rot, cfg["rope_theta"])
            k = rope_half(k.reshape(T, HEADS, HD), pos, rot, cfg["rope_theta"])
            a = attention(q, k, v.reshape(T, HEADS, HD))
            attn_out = linear(a, t[p + "self_attn.dense.weight"], t[p + "self_attn.dense.bias"])
            ff = linear(gelu_tanh(linear(hn, t[p + "mlp.fc1.weight"], t[p + "mlp.fc1.bias"])),
                        t[p + "mlp.fc2.weight"], t[p + "mlp.fc2.bias"])
            x = attn_out + ff + x
        hn = layernorm(x, t["model.final_layernorm.weight"], t["model.final_layernorm.bias"],
                       cfg["layer_norm_eps"])
        return linear(hn, t["lm_head.weight"], t["lm_head.bias"])

    return cfg, t, forward


def chatglm(rnd, linear_bias=False):
    groups = 2
    cfg = {"model_type": "chatglm", "architectures": ["ChatGLMModel"], "hidden_size": H,
           "ffn_hidden_size": FFN, "num_layers": LAYERS, "num_attention_heads": HEADS,
           "kv_channels": HD, "multi_query_attention": True, "multi_query_group_num": groups,
           "padded_vocab_size": VOCAB, "seq_length": 256, "layernorm_epsilon": 1e-5,
           "add_qkv_bias": True, "add_bias_linear": linear_bias, "rmsnorm": True,
           "original_rope": True, "post_layer_norm": True,
           "apply_residual_connection_post_layernorm": False, "tie_word_embeddings": False}
    rot = HD // 2                                  # RotaryEmbedding(kv_channels // 2)
    qd, kd = HEADS * HD, groups * HD
    t = {"transformer.embedding.word_embeddings.weight":
         rnd.vec(VOCAB * H, 1.0).reshape(VOCAB, H)}
    for l in range(LAYERS):
        p = f"transformer.encoder.layers.{l}."
        t[p + "input_layernorm.weight"] = rnd.vec(H, 0.1, 1.0)
        t[p + "post_attention_layernorm.weight"] = rnd.vec(H, 0.1, 1.0)
        t[p + "self_attention.query_key_value.weight"] = rnd.mat(qd + 2 * kd, H)
        t[p + "self_attention.query_key_value.bias"] = rnd.vec(qd + 2 * kd)
        t[p + "self_attention.dense.weight"] = rnd.mat(H, qd)
        t[p + "mlp.dense_h_to_4h.weight"] = rnd.mat(2 * FFN, H)
        t[p + "mlp.dense_4h_to_h.weight"] = rnd.mat(H, FFN)
        if linear_bias:
            t[p + "self_attention.dense.bias"] = rnd.vec(H)
            t[p + "mlp.dense_h_to_4h.bias"] = rnd.vec(2 * FFN)
            t[p + "mlp.dense_4h_to_h.bias"] = rnd.vec(H)
    t["transformer.encoder.final_layernorm.weight"] = rnd.vec(H, 0.1, 1.0)
    t["transformer.output_layer.weight"] = rnd.mat(VOCAB, H)
    eps = cfg["layernorm_epsilon"]

    def forward(tokens):
        T = len(tokens)
        pos = np.arange(T)
        x = f64(t["transformer.embedding.word_embeddings.weight"])[tokens]
        for l in range(LAYERS):
            p = f"transformer.encoder.layers.{l}."
            hn = rmsnorm(x, t[p + "input_layernorm.weight"], eps)
            mixed = linear(hn, t[p + "self_attention.query_key_value.weight"],
                           t[p + "self_attention.query_key_value.bias"])
            q, k, v = mixed[:, :qd], mixed[:, qd:qd + kd], mixed[:, qd + kd:]
            q = rope_interleaved(q.reshape(T, HEADS, HD), pos, rot, 10000.0)
            k = rope_interleaved(k.reshape(T, groups, HD), pos, rot, 10000.0)
            a = attention(q, k, v.reshape(T, groups, HD))
            x = x + linear(a, t[p + "self_attention.dense.weight"],
                           t.get(p + "self_attention.dense.bias"))
            hn = rmsnorm(x, t[p + "post_attention_layernorm.weight"], eps)
            h4 = linear(hn, t[p + "mlp.dense_h_to_4h.weight"], t.get(p + "mlp.dense_h_to_4h.bias"))
            x = x + linear(silu(h4[:, :FFN]) * h4[:, FFN:], t[p + "mlp.dense_4h_to_h.weight"],
                           t.get(p + "mlp.dense_4h_to_h.bias"))
        hn = rmsnorm(x, t["transformer.encoder.final_layernorm.weight"], eps)
        return linear(hn, t["transformer.output_layer.weight"])

    return cfg, t, forward


def internlm2(rnd, bias=False):
    kv = 2
    group = HEADS // kv
    cfg = {"model_type": "internlm2", "architectures": ["InternLM2ForCausalLM"],
           "hidden_size": H, "intermediate_size": FFN, "num_hidden_layers": LAYERS,
           "num_attention_heads": HEADS, "num_key_value_heads": kv, "vocab_size": VOCAB,
           "max_position_embeddings": 256, "rms_norm_eps": 1e-5, "rope_theta": 1000000,
           "rope_scaling": {"factor": 2.0, "type": "dynamic"}, "hidden_act": "silu",
           "bias": bias, "tie_word_embeddings": False}
    t = {"model.tok_embeddings.weight": rnd.vec(VOCAB * H, 1.0).reshape(VOCAB, H)}
    for l in range(LAYERS):
        p = f"model.layers.{l}."
        t[p + "attention.wqkv.weight"] = rnd.mat((HEADS + 2 * kv) * HD, H)
        t[p + "attention.wo.weight"] = rnd.mat(H, HEADS * HD)
        if bias:
            t[p + "attention.wqkv.bias"] = rnd.vec((HEADS + 2 * kv) * HD)
            t[p + "attention.wo.bias"] = rnd.vec(H)
        t[p + "feed_forward.w1.weight"] = rnd.mat(FFN, H)
        t[p + "feed_forward.w3.weight"] = rnd.mat(FFN, H)
        t[p + "feed_forward.w2.weight"] = rnd.mat(H, FFN)
        t[p + "attention_norm.weight"] = rnd.vec(H, 0.1, 1.0)
        t[p + "ffn_norm.weight"] = rnd.vec(H, 0.1, 1.0)
    t["model.norm.weight"] = rnd.vec(H, 0.1, 1.0)
    t["output.weight"] = rnd.mat(VOCAB, H)
    eps = cfg["rms_norm_eps"]

    def forward(tokens):
        T = len(tokens)
        pos = np.arange(T)
        x = f64(t["model.tok_embeddings.weight"])[tokens]
        for l in range(LAYERS):
            p = f"model.layers.{l}."
            hn = rmsnorm(x, t[p + "attention_norm.weight"], eps)
            # rearrange "b q (h gs d) -> b q h gs d", gs = 2 + groups
            qkv = linear(hn, t[p + "attention.wqkv.weight"], t.get(p + "attention.wqkv.bias"))
            qkv = qkv.reshape(T, kv, group + 2, HD)
            q = qkv[:, :, :group, :].reshape(T, HEADS, HD)
            k, v = qkv[:, :, -2, :], qkv[:, :, -1, :]
            q = rope_half(q, pos, HD, cfg["rope_theta"])
            k = rope_half(k, pos, HD, cfg["rope_theta"])
            x = x + linear(attention(q, k, v), t[p + "attention.wo.weight"],
                           t.get(p + "attention.wo.bias"))
            hn = rmsnorm(x, t[p + "ffn_norm.weight"], eps)
            x = x + linear(silu(linear(hn, t[p + "feed_forward.w1.weight"])) *
                           linear(hn, t[p + "feed_forward.w3.weight"]),
                           t[p + "feed_forward.w2.weight"])
        hn = rmsnorm(x, t["model.norm.weight"], eps)
        return linear(hn, t["output.weight"])

    return cfg, t, forward


FAMILIES = {
    "llama": lambda r: llama_like("llama", r),
    "qwen2": lambda r: llama_like("qwen2", r),
    "gemma": lambda r: llama_like("gemma", r),
    "mistral": lambda r: llama_like("mistral", r),
    "phi": phi,
    "chatglm": chatglm,
    "chatglm-linear-bias": lambda r: chatglm(r, True),   # add_bias_linear
    "internlm2": internlm2,
    "internlm2-bias": lambda r: internlm2(r, True),      # bias: wqkv and wo
}
PROMPT = [3, 17, 101, 5, 64, 77, 12, 9, 120]
STEPS = 3
# at least these (compare runs every policy `list policies` offers)
POLICIES = ["gpu-only", "npu-only", "hetero-layer", "hetero-tensor"]


def check(binary, name, seed, tmp):
    cfg, tensors, forward = FAMILIES[name](Rand(seed))
    d = os.path.join(tmp, name)
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    write_safetensors(os.path.join(d, "model.safetensors"), tensors)
    dump = os.path.join(tmp, name + ".logits")
    out = subprocess.run([binary, "infer", "--model", d, "--weights", "fp32", "--tokens",
                          ",".join(map(str, PROMPT)), "--steps", str(STEPS), "--format",
                          "json", "--dump-logits", dump], capture_output=True, text=True)
    if out.returncode != 0:
        return f"{name}: infer failed: {out.stderr.strip()}"
    gen = json.loads(out.stdout)["tokens"]
    got = np.fromfile(dump, dtype="<f4").reshape(-1, VOCAB)
    ref = forward(np.array(PROMPT + gen))
    assert got.shape == ref.shape, (got.shape, ref.shape)
    err = float(np.max(np.abs(got - ref)))
    scale = float(np.max(np.abs(ref)))
    greedy = [int(np.argmax(ref[len(PROMPT) - 1 + s])) for s in range(STEPS)]
    print(f"# {name}: max |engine - reference| {err:.3g} of max |logit| {scale:.3g} "
          f"({err / scale:.2g}); greedy {gen} reference {greedy}")
    if not err <= TOL * scale:
        return f"{name}: logits differ by {err:.3g}, more than {TOL} of {scale:.3g}"
    if gen != greedy:
        return f"{name}: greedy tokens {gen}, reference {greedy}"
    # every policy's plan checked on the directory, at full width: one
    # compare of all of them (exit 3 if any computed wrong values)
    out = subprocess.run([binary, "compare", "--soc", "tiny", "--model", d, "--prompt", "24",
                          "--decode", "3", "--functional", "full", "--format", "json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return f"{name}: compare failed ({out.returncode}): {out.stderr.strip()}"
    results = json.loads(out.stdout)["results"]
    if len(results) < len(POLICIES):
        return f"{name}: compare ran {len(results)} policies, fewer than {len(POLICIES)}"
    for r in results:
        fn = r["functional"]
        if not (fn["checked"] and fn["match"]):
            return f"{name}: compare, policy {r['policy']}: values not checked or wrong: {fn}"
    print(f"# {name}: compare checked {len(results)} policies' plans: all match")
    return None


def main():
    binary = sys.argv[1]
    names = sys.argv[2:] or list(FAMILIES)
    print(f"1..{len(names)}")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="hs-arch-") as tmp:
        for i, name in enumerate(names, 1):
            why = check(binary, name, 1000 + list(FAMILIES).index(name), tmp)
            if why:
                failed += 1
                print(f"not ok {i} - {name}: {why}")
            else:
                print(f"ok {i} - {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
