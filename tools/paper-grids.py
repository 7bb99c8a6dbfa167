#!/usr/bin/env python3
"""Print the tables of docs/accuracy.md's "Each paper's grid" section.

Runs every spec in configs/sweeps/papers/ (each paper's systems, models,
prompt lengths, phones or batch sizes: the settings its evaluation
covers) with this build into a scratch folder and prints, per paper, the
figures it reports, as this build predicts them: what a reader compares
with the paper's own figures, most of which no validate row checks.
tools/gen-docs.sh puts the output between the section's markers, so the
test docs-fresh fails when a change moves a figure and the section was
not regenerated.

Usage: paper-grids.py BINARY SOURCE_ROOT
"""
import os
import sqlite3
import subprocess
import sys
import tempfile


def sweep(binary, root, name, tmp):
    """Run configs/sweeps/papers/NAME.json; its rows keyed by settings."""
    spec = os.path.join(root, "configs", "sweeps", "papers", name + ".json")
    db = os.path.join(tmp, name + ".db")
    subprocess.run([binary, "sweep", spec, "--db", db, "-q"], check=True,
                   stdout=subprocess.DEVNULL)
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    rows = con.execute("SELECT * FROM points WHERE status = 'ok'").fetchall()
    con.close()
    return rows


def index(rows, *keys):
    """{(row[k] or '' for k in keys): row}"""
    return {tuple(r[k] or "" for k in keys): r for r in rows}


def table(header, lines):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for line in lines:
        print("| " + " | ".join(line) + " |")
    print()


def mllm(rows):
    d = index(rows, "policy", "stack", "soc", "model", "prompt")
    base = [("llama.cpp", "cpu-only", "llama-cpp-mllm"), ("MNN", "cpu-only", "mnn-cpu"),
            ("TFLite", "gpu-only", "heterollm"), ("MLC", "gpu-only", "mlc-gpu")]
    prompts = (64, 256, 512, 1024)
    lines = []
    for soc in ("sd8gen3", "sd8gen2"):
        for m in ("qwen1.5-1.8b", "gemma-2b", "phi-2", "llama-2-7b", "mistral-7b"):
            own = [d[("mllm-npu", "", soc, m, p)] for p in prompts]
            top = own[-1]
            at = [d[(pol, st, soc, m, 1024)] for _, pol, st in base]
            speed = ["%.1f" % (top["prefill_tokens_per_s"] / r["prefill_tokens_per_s"]) for r in at]
            energy = ["%.1f" % (r["prefill_j"] / top["prefill_j"]) for r in at]
            lines.append([soc, m] + ["%.0f" % r["prefill_tokens_per_s"] for r in own]
                         + speed + energy)
    print("mllm-NPU (`mllm-npu.json`): prefill tokens/s by prompt length on its two phones "
          "(Xiaomi 14, Redmi K60 Pro), then at 1024 tokens its speed-up over each baseline "
          "and the baseline's prefill energy over its own (mllm-NPU §5.2 reports both per "
          "baseline):")
    print()
    table(["SoC", "model"] + [str(p) for p in prompts] + ["x " + b[0] for b in base]
          + ["J " + b[0] for b in base], lines)


def heterollm(rows):
    d = index(rows, "policy", "stack", "model", "prompt", "sync")
    prompts = (32, 64, 256, 525, 1024)
    models = ("llama-3-8b", "llama-3.2-3b", "internlm2-1.8b")

    def pf(pol, m, p, sync="fast", st=""):
        return d[(pol, st, m, p, sync)]["prefill_tokens_per_s"]

    lines = []
    for m in models:
        for pol in ("hetero-tensor", "hetero-layer", "gpu-only"):
            lines.append([m, pol] + ["%.0f" % pf(pol, m, p) for p in prompts])
    print("HeteroLLM (`heterollm.json`): prefill tokens/s by prompt length, fast sync:")
    print()
    table(["model", "policy"] + [str(p) for p in prompts], lines)
    lines = []
    for m in models:
        layer = pf("hetero-layer", m, 256)
        dec = {s: d[("hetero-tensor", "", m, 256, s)]["decode_tokens_per_s"]
               for s in ("fast", "driver")}
        gpu_dec = d[("gpu-only", "", m, 256, "fast")]["decode_tokens_per_s"]
        lines.append([
            m,
            "%.2f" % (sum(pf("hetero-tensor", m, p) / pf("hetero-layer", m, p)
                          for p in (32, 64, 256, 1024)) / 4),
            "%.2f" % (layer / pf("gpu-only", m, 256)),
            "%.1f / %.1f / %.1f" % (layer / pf("cpu-only", m, 256, st="llama-cpp-heterollm"),
                                    layer / pf("gpu-only", m, 256, st="mnn-opencl-heterollm"),
                                    layer / pf("gpu-only", m, 256, st="mlc-heterollm")),
            "%.2f / %.2f / %.2f" % tuple(pf("hetero-tensor", m, 525) / pf(q, m, 525)
                                         for q in ("online-prepare", "npu-only", "npu-pipe")),
            "%.2f / %.2f" % tuple(sum(pf(pol, m, p) / pf(pol, m, p, "driver")
                                      for p in (64, 256, 1024)) / 3
                                  for pol in ("hetero-layer", "hetero-tensor")),
            "%.1f / %.1f" % (dec["fast"], dec["driver"]),
            "%.2f" % (dec["fast"] / gpu_dec),
        ])
    print("and the ratios HeteroLLM §5.2-§5.4 report (tensor over layer: the mean over "
          "32, 64, 256 and 1024 tokens; layer over PPL-OpenCL and over llama.cpp / "
          "MNN-OpenCL / MLC at 256; tensor over online-prepare / padding / pipe at 525; "
          "fast over driver sync in prefill, the mean over 64, 256 and 1024, for layer / "
          "tensor; hetero-tensor's decode tokens/s with fast / driver sync and over "
          "PPL-OpenCL's, prompt 256):")
    print()
    table(["model", "tensor / layer", "layer / gpu", "layer / llama.cpp, MNN, MLC",
           "tensor at 525 / online, padding, pipe", "fast / driver", "decode fast / driver",
           "decode / gpu"], lines)


def transformer_lite(rows):
    d = index(rows, "policy", "stack", "soc", "model", "prompt")
    prompts = (128, 1024, 2048)
    lines = []
    for soc in ("sd8gen3", "dimensity9300"):
        for m in ("gemma-2b", "qwen1.5-4b", "chatglm2-6b", "llama-2-7b", "qwen1.5-14b"):
            if ("transformer-lite", "", soc, m, 128) not in d:
                continue
            own = [d[("transformer-lite", "", soc, m, p)] for p in prompts]
            mlc = d.get(("gpu-only", "mlc-gpu", soc, m, 128))
            lines.append([soc, m,
                          " / ".join("%.0f" % r["prefill_tokens_per_s"] for r in own),
                          " / ".join("%.1f" % r["decode_tokens_per_s"] for r in own),
                          "%.1f / %.1f" % (mlc["prefill_tokens_per_s"],
                                           mlc["decode_tokens_per_s"]) if mlc else "-"])
    print("Transformer-Lite (`transformer-lite.json`): prefill and decode tokens/s at "
          "prompts 128 / 1024 / 2048 on both phones, and the MLC-LLM baseline at 128:")
    print()
    table(["SoC", "model", "prefill", "decode", "MLC prefill / decode"], lines)


def npu_tts(rows):
    d = index(rows, "policy", "stack", "soc", "model", "batch")
    batches = (1, 4, 8, 16, 32)
    lines = []
    for soc in ("sd8gen2", "sd8gen3", "sd8elite"):
        for m in ("qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "llama-3.2-1b", "llama-3.2-3b"):
            own = [d[("npu-tts", "", soc, m, b)] for b in batches]
            gpu = [d[("gpu-only", "npu-tts", soc, m, b)] for b in (1, 32)]
            lines.append([soc, m,
                          " / ".join("%.0f" % r["decode_tokens_per_s"] for r in own),
                          "%.2f / %.2f" % (own[0]["decode_tokens_per_s"] / gpu[0]["decode_tokens_per_s"],
                                           own[-1]["decode_tokens_per_s"] / gpu[1]["decode_tokens_per_s"]),
                          "%.1f / %.1f" % (own[0]["decode_w"], own[-1]["decode_w"])])
    print("NPU test-time scaling (`npu-tts.json`): decode tokens/s (every sequence's "
          "tokens) at batch 1 / 4 / 8 / 16 / 32 on the NPU, over llama.cpp's OpenCL "
          "decode at batch 1 / 32, and the SoC's average decode power (W) at batch 1 / 32:")
    print()
    table(["SoC", "model", "NPU decode", "over the GPU", "W"], lines)


def main():
    binary, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        mllm(sweep(binary, root, "mllm-npu", tmp))
        heterollm(sweep(binary, root, "heterollm", tmp))
        transformer_lite(sweep(binary, root, "transformer-lite", tmp))
        npu_tts(sweep(binary, root, "npu-tts", tmp))


if __name__ == "__main__":
    main()
