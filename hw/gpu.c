/*
 * gpu.c - a mobile GPU (Adreno-class) behind an OpenCL-like in-order queue.
 *
 * Roofline: an op takes max(flops at the achieved rate, bytes at the DRAM
 * share it gets).  That alone gives HeteroLLM's "linear performance": a
 * W4A16 matmul's intensity grows with the token count, so achieved FLOPS
 * grow linearly with size while memory-bound and plateau at the achieved
 * FP16 rate (~1 TFLOPS of 2.8 peak on 8 Gen 3) once compute-bound.  Every
 * kernel pays its submission into a busy queue (10-20 us); a kernel
 * submitted after the queue was drained by a blocking sync pays the
 * restart (+50-100 us) — the runtime decides which (HeteroLLM §3.1).
 * The queue is shared with graphics: a render frame (HW_OP_RENDER) takes
 * its given time alone plus its DRAM traffic, and queue priorities decide
 * who goes first when the GPU frees up (see runtime.h).
 */
#include "hw/gpu.h"
#include "sim/util/error.h"

static const HsParam hw_gpu_params[] = {
    HW_DEV_COMMON_PARAMS(HwGpu),
    HS_PARAM_F64("peak_fp16_tflops", HwGpu, peak_fp16_tflops, 0.001, 1000,
                 HS_REQUIRED, "theoretical FP16 throughput"),
    HS_PARAM_F64("achieved_fp16_tflops", HwGpu, achieved_fp16_tflops, 0.001, 1000,
                 HS_REQUIRED, "FP16 throughput large LLM kernels plateau at"),
    HS_PARAM_F64("launch_busy_us", HwGpu, launch_busy_us, 0, 100000, HS_REQUIRED,
                 "kernel submission into a non-empty queue"),
    HS_PARAM_F64("launch_idle_us", HwGpu, launch_idle_us, 0, 100000, HS_REQUIRED,
                 "extra cost when the queue had run empty (restart)"),
    HS_PARAM_F64("copy_us", HwGpu, copy_us, 0, 1000000, HS_REQUIRED,
                 "host<->device copy through the conventional API (fixed)"),
    HS_PARAM_F64("preempt_us", HwGpu, preempt_us, 0, 1000000, 0,
                 "a higher-priority submission preempts the running kernel, paying this "
                 "to save its context and again to restore it (0: no preemption)"),
    HS_PARAM_END
};

static gboolean
hw_gpu_realize(HwDev *dev, GError **error)
{
    HwGpu *gpu = (HwGpu *) dev;
    if (gpu->achieved_fp16_tflops > gpu->peak_fp16_tflops) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "achieved_fp16_tflops: expected at most peak_fp16_tflops "
                    "(%g) (got %g)", gpu->peak_fp16_tflops,
                    gpu->achieved_fp16_tflops);
        return FALSE;
    }
    return TRUE;
}

static void
hw_gpu_estimate(const HwDev *dev, const HwOp *op, HwCost *c)
{
    const HwGpu *gpu = (const HwGpu *) dev;
    /* TFLOPS == flops per ps */
    double rate = gpu->achieved_fp16_tflops;
    c->overhead_ps = (uint64_t) (gpu->launch_busy_us * 1e6);
    c->compute_ps = op->kind == HW_OP_RENDER ? op->busy_ps
                                             : (uint64_t) ((double) op->flops / rate + 0.5);
    c->dram_bytes = op->read_bytes + op->write_bytes;
}

const HwDevClass hw_gpu_class = {
    .model = "gpu",
    .kind = HW_KIND_GPU,
    .desc = "mobile GPU: roofline with size-dependent efficiency, in-order queue",
    .instance_size = sizeof(HwGpu),
    .params = hw_gpu_params,
    .realize = hw_gpu_realize,
    .estimate = hw_gpu_estimate,
};
