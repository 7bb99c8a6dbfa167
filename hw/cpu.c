/*
 * cpu.c - CPU cluster model (parameters; timing lands with the hardware
 * models issue).
 */
#include "hw/cpu.h"

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
    HS_PARAM_F64("submit_us", HwCpu, submit_us, 0, 10000, 5,
                 "CPU time spent submitting one accelerator kernel"),
    HS_PARAM_END
};

const HwDevClass hw_cpu_class = {
    .model = "cpu",
    .kind = HW_KIND_CPU,
    .desc = "CPU cluster: SIMD roofline, control plane (submission, polling)",
    .instance_size = sizeof(HwCpu),
    .params = hw_cpu_params,
};
