/*
 * cpu.h - a CPU cluster: SIMD throughput, its own DRAM cap, and the
 * control-plane costs it pays for the other processors (kernel
 * submission, sync polling, dequantisation; their prices are the stack's,
 * hw/stack.h).  Only hw/cpu.c reads this struct.
 */
#ifndef HW_CPU_H
#define HW_CPU_H

#include "hw/dev.h"

typedef struct HwCpu {
    HwDev parent;
    uint32_t cores;                  /* cores used for LLM kernels */
    double freq_mhz;                 /* sustained clock */
    double fp32_flops_per_cycle;     /* per core: SIMD lanes x FMA x pipes */
    double fp16_flops_per_cycle;     /* per core */
    double int8_ops_per_cycle;       /* per core, dot-product instructions */
} HwCpu;

#endif /* HW_CPU_H */
