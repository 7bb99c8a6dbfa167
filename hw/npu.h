/*
 * npu.h - a weight-stationary systolic-array NPU with software-managed
 * on-chip memory, static graphs and per-precision rates.  The runtime's
 * part (graph execute, preparation, dequantisation, what it supports) is
 * the stack's (hw/stack.h).  Only hw/npu.c reads this struct.
 */
#ifndef HW_NPU_H
#define HW_NPU_H

#include "hw/dev.h"

typedef struct HwNpu {
    HwDev parent;
    uint32_t tile_rows;              /* systolic array rows (PEs) */
    uint32_t tile_cols;              /* systolic array columns (PEs) */
    uint32_t arrays;                 /* matrix units working in parallel */
    double freq_mhz;                 /* NPU clock */
    int arch;                        /* HwNpuArch: whose runtime it runs */
    double fp16_macs_per_pe_cycle;   /* MACs per PE per cycle, FP16 */
    double int8_macs_per_pe_cycle;   /* MACs per PE per cycle, INT8 */
    double int4_macs_per_pe_cycle;   /* MACs per PE per cycle, INT4 weights */
    uint32_t fill_drain_cycles;      /* pipeline fill + drain per weight tile */
    double sram_kib;                 /* on-chip TCM, software managed */
    double stationary_kib;           /* TCM for a matmul's stationary operand */
    uint32_t deep_rows;              /* depth-blocked schedule: streamed rows per block (0: none) */
    double dma_gbps;                 /* DDR -> TCM DMA for large regular blocks */
    double relayout_gbps;            /* HVX: row-major -> HMX tile order, tile bytes */
    double vector_gflops;            /* vector unit (HVX) for non-matmul ops */
} HwNpu;

#endif /* HW_NPU_H */
