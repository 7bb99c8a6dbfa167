/*
 * npu.h - a weight-stationary systolic-array NPU with software-managed
 * on-chip memory, static graphs and per-precision rates.
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
    double fp16_macs_per_pe_cycle;   /* MACs per PE per cycle, FP16 */
    double int8_macs_per_pe_cycle;   /* MACs per PE per cycle, INT8 */
    double int4_macs_per_pe_cycle;   /* MACs per PE per cycle, INT4 weights */
    uint32_t fill_drain_cycles;      /* pipeline fill + drain per weight tile */
    double sram_kib;                 /* on-chip TCM, software managed */
    double stationary_kib;           /* TCM for a matmul's stationary operand */
    double dequant_gbps;             /* vector unit: INT4 bytes read + dequantised */
    double dma_gbps;                 /* DDR -> TCM DMA for large regular blocks */
    double tile_load_gbps;           /* TCM -> array, loading stationary tiles */
    double vector_gflops;            /* vector unit (HVX) for non-matmul ops */
    double launch_us;                /* graph execute call overhead */
    uint32_t graphs_per_model;       /* static graphs a model is split into */
    double prepare_base_ms;          /* graph preparation: fixed part per graph */
    double prepare_ms_per_mib;       /* graph preparation: per MiB of activations */
    gboolean w4a16_decode;           /* vendor stack runs W4A16 in decode */
} HwNpu;

#endif /* HW_NPU_H */
