/*
 * cpu.c - a CPU cluster: SIMD roofline over its cores.
 *
 * FP16 SIMD rate for FP16 / W4A16 work (the FP32 rate where the stack's
 * float kernels compute in FP32), the integer dot-product rate for INT8
 * work, each scaled by the share of it the stack's kernels reach
 * (simd_efficiency for its matmuls, float_efficiency for the rest: one
 * library's linears and its attention are different code); dequantising weights takes the same SIMD units, so
 * the stack's dequant time per format adds to it.  Bandwidth capped per
 * initiator like every processor.  Kernels start without a driver queue,
 * but each operator call pays the library's fixed call cost (waking the
 * worker threads, the barrier at its end): a cost that does not shrink
 * with the model.  A stack whose attention masks the future in the softmax
 * instead of skipping it computes the whole query x key block, and writes
 * it to memory and reads it back (ggml's KQ tensor, llama.cpp 2024).
 * Scalar loops a stack runs on one thread beside its kernels (an op's
 * serial_elems) cost the stack's cycles per element at one core's clock,
 * after the op's own copies.
 */
#include "hw/cpu.h"
#include "hw/stack.h"

static const HsParam hw_cpu_params[] = {
    HW_DEV_COMMON_PARAMS(HwCpu),
    HS_PARAM_U32("cores", HwCpu, cores, 1, 64, HS_REQUIRED,
                 "cores used for LLM kernels"),
    HS_PARAM_F64("freq_mhz", HwCpu, freq_mhz, 1, 10000, HS_REQUIRED,
                 "sustained core clock"),
    HS_PARAM_F64("fp32_flops_per_cycle", HwCpu, fp32_flops_per_cycle, 0.1, 1024,
                 HS_REQUIRED, "FP32 FLOPs per cycle per core (SIMD x FMA x pipes)"),
    HS_PARAM_F64("fp16_flops_per_cycle", HwCpu, fp16_flops_per_cycle, 0.1, 2048,
                 HS_REQUIRED, "FP16 FLOPs per cycle per core"),
    HS_PARAM_F64("int8_ops_per_cycle", HwCpu, int8_ops_per_cycle, 0.1, 4096,
                 HS_REQUIRED, "INT8 ops per cycle per core (dot-product instructions)"),
    HS_PARAM_END
};

/*
 * An op with a scalar scan (serial_elems) runs on one thread as mllm's
 * shadow linear does (src/backends/cpu/op/CPULinearINT8Shadow.cpp,
 * execute): it first copies its input and results (its bytes), then
 * walks the elements; the two follow each other, so both are compute
 * time, not a copy overlapped with the scan.  The copies are priced at
 * the cluster's DRAM cap, a lower bound (one core copies slower).
 */
static double
serial_scan_ps(const HwCpu *cpu, const HwStack *stack, const HwOp *op)
{
    return (double) op->serial_elems * stack->cpu.serial_cycles_per_elem /
           (cpu->freq_mhz * 1e-6);
}

static double
serial_copy_ps(const HwDev *dev, const HwStack *stack, const HwOp *op)
{
    /* GB/s == bytes per ns */
    return (double) (op->read_bytes + op->write_bytes) * 1000.0 /
           hw_dev_dram_cap_gbps(dev, stack);
}

/* Does @stack score a prefill attention @op whole (no causal skipping)? */
static gboolean
full_scores_apply(const HwStack *stack, const HwOp *op)
{
    return stack->cpu.attention_full_scores && op->kind == HW_OP_ATTENTION && op->m > 1 &&
           op->n >= op->m;
}

/* Scores a causal kernel computes: @m queries, the last seeing @n keys. */
static double
causal_scores(uint64_t m, uint64_t n)
{
    return (2.0 * (double) n - (double) m + 1.0) * (double) m / 2.0;
}

/* Scores of @m queries, the last seeing @n keys, scored in blocks of @ub
 * queries (0: one block), each block against every key up to its end. */
static double
full_scores(uint64_t m, uint64_t n, uint32_t ub)
{
    if (ub == 0 || ub >= m) {
        return (double) m * (double) n;
    }
    double full = 0;
    for (uint64_t q0 = 0; q0 < m; q0 += ub) {
        uint64_t mq = MIN((uint64_t) ub, m - q0);
        full += (double) mq * (double) (n - m + q0 + mq);
    }
    return full;
}

static void
hw_cpu_explain(const HwDev *dev, const HwStack *stack, const HwOp *op, const HwCost *c,
               GString *out)
{
    const HwCpu *cpu = (const HwCpu *) dev;
    char f[32];
    hw_flops_text((double) op->flops, f);
    g_string_append_printf(out, "    compute: %s on %u cores at %g MHz, the stack "
                           "reaching %g of their SIMD peak (its cpu.%s) = %.2f us\n", f,
                           cpu->cores, cpu->freq_mhz, hw_stack_cpu_efficiency(stack, op),
                           hw_stack_cpu_efficiency_key(stack, op), (double) c->compute_ps / 1e6);
    if (full_scores_apply(stack, op)) {
        double causal = causal_scores(op->m, op->n);
        double full = full_scores(op->m, op->n, stack->cpu.attention_ubatch);
        uint32_t ub = stack->cpu.attention_ubatch;
        uint64_t blocks = ub == 0 || ub >= op->m ? 1 : (op->m + ub - 1) / ub;
        g_string_append_printf(out, "    scores: every query%s against every key cached to "
                               "its end, the mask in the softmax (the stack's "
                               "cpu.attention_full_scores%s): %.2fx the causal ones, in %s; "
                               "the score tensor written and read four times\n",
                               blocks == 1 ? "" : " of each block",
                               blocks == 1 ? "" : " and attention_ubatch", full / causal,
                               stack->cpu.fp32_float ? "FP32 (cpu.fp32_float)" : "FP16");
        if (blocks > 1) {
            g_string_append_printf(out, "      the prompt in %" G_GUINT64_FORMAT
                                   " blocks of %u queries\n", blocks, ub);
        }
    }
    if (op->serial_elems > 0) {
        g_string_append_printf(out, "    of which the op's copies, %" G_GUINT64_FORMAT
                               " bytes at the cluster's %g GB/s = %.2f us, then a scalar scan "
                               "of %" G_GUINT64_FORMAT " elements on one core at %g cycles "
                               "each = %.2f us\n",
                               op->read_bytes + op->write_bytes, hw_dev_dram_cap_gbps(dev, stack),
                               serial_copy_ps(dev, stack, op) / 1e6, op->serial_elems,
                               stack->cpu.serial_cycles_per_elem, serial_scan_ps(cpu, stack, op) / 1e6);
    }
}

static void
hw_cpu_estimate(const HwDev *dev, const HwStack *stack, const HwOp *op, HwCost *c)
{
    const HwCpu *cpu = (const HwCpu *) dev;
    const HwStackCpu *sc = &stack->cpu;
    gboolean int8 = op->compute == HW_DTYPE_INT8;
    gboolean fp32 = !int8 && sc->fp32_float && (op->kind != HW_OP_MATMUL ||
                                                 op->wfmt == HW_WFMT_FP16);
    double per_cycle = int8 ? cpu->int8_ops_per_cycle
                       : fp32 ? cpu->fp32_flops_per_cycle
                       : cpu->fp16_flops_per_cycle;
    double flops_per_ps = cpu->cores * cpu->freq_mhz * 1e-6 * per_cycle *
                          hw_stack_cpu_efficiency(stack, op);
    c->overhead_ps = hw_cost_ps(c, sc->call_us * 1e6, "operator call (the stack's cpu.call_us)");
    double flops = (double) op->flops;
    uint64_t score_bytes = 0;
    if (full_scores_apply(stack, op)) {
        /* m queries, the last seeing n keys: a causal kernel computes
         * (2n - m + 1) m / 2 scores, one that masks in the softmax m x n,
         * or, evaluating the prompt in blocks of attention_ubatch queries
         * (llama.cpp's n_ubatch), each block against the keys cached up
         * to its end: the waste is each block's own triangle */
        double causal = causal_scores(op->m, op->n);
        double full = full_scores(op->m, op->n, sc->attention_ubatch);
        double heads = hw_op_attention_scores(op) / causal;
        flops *= full / causal;
        /* and it materialises them: ggml's KQ = mul_mat(K, Q) is a
         * [keys, tokens, heads] tensor (FP32 in a stack whose float
         * kernels are), written, read and rewritten by the masked softmax,
         * read by KQV: four passes.  A layer's matrix outgrows any cache
         * where it matters (16 heads x 1024 x 1024 x 4 B = 64 MiB; at
         * 128 tokens, where 1 MiB could stay in cache, its bytes are
         * negligible beside the kernel's flops), so all four go to DRAM. */
        double sb = 4.0 * heads * full * (sc->fp32_float ? 4.0 : 2.0);
        /* bounded (a hostile shape must not wrap the byte count) */
        score_bytes = sb < 1e18 ? (uint64_t) (sb + 0.5) : (uint64_t) 1e18;
    }
    c->compute_ps = hw_cost_ps(c, flops / flops_per_ps,
                               int8 ? "compute time (cores, freq_mhz, int8_ops_per_cycle, "
                                      "the stack's cpu.simd_efficiency or float_efficiency)"
                               : fp32 ? "compute time (cores, freq_mhz, fp32_flops_per_cycle, "
                                        "the stack's cpu.simd_efficiency or float_efficiency)"
                               : "compute time (cores, freq_mhz, fp16_flops_per_cycle, "
                                 "the stack's cpu.simd_efficiency or float_efficiency)");
    double dq = op->kind == HW_OP_MATMUL ? sc->dequant.gbps[op->wfmt] : 0;
    if (dq > 0) {
        /* both parts at most the horizon: the sum cannot wrap */
        c->compute_ps += hw_cost_ps(c, (double) op->weight_bytes * 1000.0 / dq,
                                    "dequantisation time (the stack's cpu.dequant rate of "
                                    "this weight format)");
    }
    if (op->serial_elems > 0) {
        /* one thread's copies, then its scalar loop (serial_scan_ps) */
        c->compute_ps += hw_cost_ps(c, serial_copy_ps(dev, stack, op),
                                    "copy time of a scanning op (its bytes at dram_cap_gbps)");
        c->compute_ps += hw_cost_ps(c, serial_scan_ps(cpu, stack, op),
                                    "scalar scan time (serial elements x the stack's "
                                    "cpu.serial_cycles_per_elem / freq_mhz, one core)");
    }
    c->dram_bytes = op->read_bytes + op->write_bytes + score_bytes;
}

static double
hw_cpu_submit_us(const HwDev *dev, const HwStack *stack)
{
    return stack->cpu.submit_us;
}

static double
hw_cpu_stack_dram_scale(const HwDev *dev, const HwStack *stack)
{
    return stack->cpu.dram_scale;
}

const HwDevClass hw_cpu_class = {
    .model = "cpu",
    .kind = HW_KIND_CPU,
    .desc = "CPU cluster: SIMD roofline, control plane (submission, polling)",
    .instance_size = sizeof(HwCpu),
    .params = hw_cpu_params,
    .estimate = hw_cpu_estimate,
    .explain = hw_cpu_explain,
    .submit_us = hw_cpu_submit_us,
    .stack_dram_scale = hw_cpu_stack_dram_scale,
};
