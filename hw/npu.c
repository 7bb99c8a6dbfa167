/*
 * npu.c - systolic NPU model (parameters; timing lands with the hardware
 * models issue).
 */
#include "hw/npu.h"
#include "sim/util/error.h"

static const HsParam hw_npu_params[] = {
    HW_DEV_COMMON_PARAMS(HwNpu),
    HS_PARAM_U32("tile_rows", HwNpu, tile_rows, 1, 1024, HS_REQUIRED,
                 "systolic array rows (PEs)"),
    HS_PARAM_U32("tile_cols", HwNpu, tile_cols, 1, 1024, HS_REQUIRED,
                 "systolic array columns (PEs)"),
    HS_PARAM_U32("arrays", HwNpu, arrays, 1, 1024, 1,
                 "matrix units working in parallel"),
    HS_PARAM_F64("freq_mhz", HwNpu, freq_mhz, 1, 10000, HS_REQUIRED, "NPU clock"),
    HS_PARAM_F64("fp16_macs_per_pe_cycle", HwNpu, fp16_macs_per_pe_cycle, 0, 64, 1,
                 "FP16 MACs per PE per cycle"),
    HS_PARAM_F64("int8_macs_per_pe_cycle", HwNpu, int8_macs_per_pe_cycle, 0, 64, 2,
                 "INT8 MACs per PE per cycle"),
    HS_PARAM_F64("int4_macs_per_pe_cycle", HwNpu, int4_macs_per_pe_cycle, 0, 64, 2,
                 "MACs per PE per cycle with INT4 weights"),
    HS_PARAM_U32("fill_drain_cycles", HwNpu, fill_drain_cycles, 0, 100000, 64,
                 "pipeline fill + drain per weight tile"),
    HS_PARAM_F64("sram_kib", HwNpu, sram_kib, 1, 1048576, HS_REQUIRED,
                 "on-chip TCM / SRAM, software managed"),
    HS_PARAM_F64("dma_gbps", HwNpu, dma_gbps, 0.001, 10000, HS_REQUIRED,
                 "DDR -> TCM DMA bandwidth for large regular blocks"),
    HS_PARAM_F64("prepare_base_ms", HwNpu, prepare_base_ms, 0, 1e7, HS_REQUIRED,
                 "graph preparation: fixed part per graph"),
    HS_PARAM_F64("prepare_ms_per_mib", HwNpu, prepare_ms_per_mib, 0, 1e7, HS_REQUIRED,
                 "graph preparation: per MiB of the graph's tensors"),
    HS_PARAM_BOOL("w4a16_decode", HwNpu, w4a16_decode, 0,
                  "vendor stack supports W4A16 matmuls in decode"),
    HS_PARAM_END
};

const HwDevClass hw_npu_class = {
    .model = "npu-systolic",
    .kind = HW_KIND_NPU,
    .desc = "weight-stationary systolic NPU: tiles, TCM, static graphs",
    .instance_size = sizeof(HwNpu),
    .params = hw_npu_params,
};
