/*
 * gpu.c - GPU model (parameters; timing lands with the hardware models
 * issue).
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

const HwDevClass hw_gpu_class = {
    .model = "gpu",
    .kind = HW_KIND_GPU,
    .desc = "mobile GPU: roofline with size-dependent efficiency, in-order queue",
    .instance_size = sizeof(HwGpu),
    .params = hw_gpu_params,
    .realize = hw_gpu_realize,
};
