/*
 * gpu.c - a mobile GPU (Adreno-class) behind an OpenCL-like in-order queue.
 *
 * Roofline: an op takes max(flops at the stack's matmul rate, bytes at
 * the DRAM share it gets).  That alone gives HeteroLLM's "linear
 * performance": a W4A16 matmul's intensity grows with the token count, so
 * achieved FLOPS grow linearly with size while memory-bound and plateau at
 * the library's FP16 rate (PPL ~1 TFLOPS of 2.8 peak on 8 Gen 3) once
 * compute-bound.  Dequantising weights runs on the same ALUs as the FMAs,
 * so the stack's dequant time per format adds to the compute time.  Every
 * kernel pays its submission into a busy queue (10-20 us); a kernel
 * submitted after the queue was drained by a blocking sync pays the
 * restart (+50-100 us) — the runtime decides which (HeteroLLM §3.1); both
 * are the stack's numbers.
 * The queue is shared with graphics: a render frame (HW_OP_RENDER) takes
 * its given time alone plus its DRAM traffic, and queue priorities decide
 * who goes first when the GPU frees up (see runtime.h).
 */
#include "hw/gpu.h"
#include "hw/stack.h"

#include <math.h>

static const HsParam hw_gpu_params[] = {
    HW_DEV_COMMON_PARAMS(HwGpu),
    HS_PARAM_F64("peak_fp16_tflops", HwGpu, peak_fp16_tflops, 0.001, 1000,
                 HS_REQUIRED, "theoretical FP16 throughput"),
    HS_PARAM_ENUM("arch", HwGpu, arch, int, hw_gpu_arch_name, HW_GPU_ARCH_COUNT, 0,
                  "architecture (a stack's efficiency is per architecture; "
                  "unspecified: its default)"),
    HS_PARAM_F64("preempt_us", HwGpu, preempt_us, 0, 1000000, 0,
                 "a higher-priority submission preempts the running kernel, paying this "
                 "to save its context and again to restore it (0: no preemption)"),
    HS_PARAM_END
};

static void
hw_gpu_estimate(const HwDev *dev, const HwStack *stack, const HwOp *op, HwCost *c)
{
    const HwGpu *gpu = (const HwGpu *) dev;
    const HwStackGpu *sg = &stack->gpu;
    /* TFLOPS == flops per ps */
    double rate = gpu->peak_fp16_tflops * hw_stack_gpu_efficiency(stack, gpu->arch);
    c->overhead_ps = hw_cost_ps(c, floor(sg->launch_busy_us * 1e6),
                                "kernel launch (the stack's gpu.launch_busy_us)");
    c->compute_ps = op->kind == HW_OP_RENDER
                    ? op->busy_ps
                    : hw_cost_ps(c, (double) op->flops / rate,
                                 "compute time (peak_fp16_tflops, the stack's "
                                 "gpu.matmul_efficiency for the GPU's arch)");
    double dq = op->kind == HW_OP_MATMUL ? hw_stack_gpu_dequant_gbps(stack, gpu->arch, op->wfmt)
                                         : 0;
    if (dq > 0) {
        /* both parts at most the horizon: the sum cannot wrap */
        c->compute_ps += hw_cost_ps(c, (double) op->weight_bytes * 1000.0 / dq,
                                    "dequantisation time (the stack's gpu.dequant rate of "
                                    "this weight format, or its arch_dequant one)");
    }
    c->dram_bytes = op->read_bytes + op->write_bytes;
}

static void
hw_gpu_explain(const HwDev *dev, const HwStack *stack, const HwOp *op, const HwCost *c,
               GString *out)
{
    const HwGpu *gpu = (const HwGpu *) dev;
    char f[32];
    hw_flops_text((double) op->flops, f);
    g_string_append_printf(out, "    compute: %s at the stack's %g x %g TFLOPS peak",
                           f, hw_stack_gpu_efficiency(stack, gpu->arch),
                           gpu->peak_fp16_tflops);
    double dq = op->kind == HW_OP_MATMUL ? hw_stack_gpu_dequant_gbps(stack, gpu->arch, op->wfmt)
                                         : 0;
    if (dq > 0) {
        g_string_append_printf(out, ", plus dequantising %.2f MiB of weights at %g GB/s",
                               (double) op->weight_bytes / (1024.0 * 1024.0), dq);
    }
    g_string_append_printf(out, " = %.2f us\n", (double) c->compute_ps / 1e6);
}

static double
hw_gpu_restart_us(const HwDev *dev, const HwStack *stack)
{
    return stack->gpu.launch_idle_us;
}

static double
hw_gpu_preempt_us(const HwDev *dev)
{
    return ((const HwGpu *) dev)->preempt_us;
}

static double
hw_gpu_stack_dram_scale(const HwDev *dev, const HwStack *stack)
{
    return stack->gpu.dram_scale;
}

static const char *
hw_gpu_arch(const HwDev *dev, const HwStack *stack, gboolean *has_own)
{
    const HwGpu *gpu = (const HwGpu *) dev;
    *has_own = gpu->arch != HW_GPU_ARCH_UNSPECIFIED &&
               stack->gpu.arch_matmul_efficiency[gpu->arch] > 0;
    return hw_gpu_arch_name[gpu->arch];
}

const HwDevClass hw_gpu_class = {
    .model = "gpu",
    .kind = HW_KIND_GPU,
    .desc = "mobile GPU: roofline at the stack's achieved rate, priority queue",
    .instance_size = sizeof(HwGpu),
    .params = hw_gpu_params,
    .estimate = hw_gpu_estimate,
    .restart_us = hw_gpu_restart_us,
    .preempt_us = hw_gpu_preempt_us,
    .stack_dram_scale = hw_gpu_stack_dram_scale,
    .explain = hw_gpu_explain,
    .arch = hw_gpu_arch,
};
