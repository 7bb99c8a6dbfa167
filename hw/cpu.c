/*
 * cpu.c - a CPU cluster: SIMD roofline over its cores.
 *
 * FP16 SIMD rate for FP16 / W4A16 work (weights dequantised in registers),
 * the integer dot-product rate for INT8 work, bandwidth capped per
 * initiator like every processor.  Kernels start without a driver queue.
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

static void
hw_cpu_estimate(const HwDev *dev, const HwOp *op, HwCost *c)
{
    const HwCpu *cpu = (const HwCpu *) dev;
    double per_cycle = op->compute == HW_DTYPE_INT8 ? cpu->int8_ops_per_cycle
                                                    : cpu->fp16_flops_per_cycle;
    double flops_per_ps = cpu->cores * cpu->freq_mhz * 1e-6 * per_cycle;
    c->compute_ps = (uint64_t) ((double) op->flops / flops_per_ps + 0.5);
    c->dram_bytes = op->read_bytes + op->write_bytes;
}

const HwDevClass hw_cpu_class = {
    .model = "cpu",
    .kind = HW_KIND_CPU,
    .desc = "CPU cluster: SIMD roofline, control plane (submission, polling)",
    .instance_size = sizeof(HwCpu),
    .params = hw_cpu_params,
    .estimate = hw_cpu_estimate,
};
