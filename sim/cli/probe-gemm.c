/*
 * probe-gemm.c - the matmuls `probe` and `calibrate` time (see
 * probe-ops.h): ops built from their shape and element types alone, so
 * the calibration spec's reader (and its fuzzer) links them without the
 * SoC's models.
 */
#include "sim/cli/probe-ops.h"

HwOp
hs_probe_gemm(uint64_t m, uint64_t k, uint64_t n, HwDtype a, HwDtype b, HwDtype compute)
{
    double ab = a == HW_DTYPE_FP16 ? 2 : a == HW_DTYPE_INT8 ? 1 : 0.5;
    double bb = b == HW_DTYPE_FP16 ? 2 : b == HW_DTYPE_INT8 ? 1 : 0.5;
    HwDtype w = a == HW_DTYPE_FP16 ? b : a;   /* the narrower operand: the weight */
    return (HwOp) {
        .kind = HW_OP_MATMUL, .m = m, .k = k, .n = n, .a_dtype = a, .b_dtype = b,
        .compute = compute, .flops = 2 * m * k * n,
        .wfmt = w == HW_DTYPE_INT4 ? (compute == HW_DTYPE_INT8 ? HW_WFMT_W4A8 : HW_WFMT_W4A16)
              : w == HW_DTYPE_INT8 ? (compute == HW_DTYPE_INT8 ? HW_WFMT_W8A8 : HW_WFMT_Q8_0)
              : HW_WFMT_FP16,
        .weight_bytes = (uint64_t) (w == a ? m * k * ab : k * n * bb),
        .read_bytes = (uint64_t) (m * k * ab + k * n * bb), .write_bytes = m * n * 2,
    };
}

const char *const hs_probe_dtype_name[] = { "fp16", "int8", "w4a16", "w8a8", "q8_0", "fp4a16",
                                            NULL };
G_STATIC_ASSERT(G_N_ELEMENTS(hs_probe_dtype_name) == HS_PROBE_DT_COUNT + 1);

HwOp
hs_probe_gemm_of(HwKind kind, uint64_t m, uint64_t k, uint64_t n, HsProbeDtype dt)
{
    HwDtype w = HW_DTYPE_FP16, compute = HW_DTYPE_FP16;
    switch (dt) {
    case HS_PROBE_DT_INT8:
    case HS_PROBE_DT_W8A8:
        return hs_probe_gemm(m, k, n, HW_DTYPE_INT8, HW_DTYPE_INT8, HW_DTYPE_INT8);
    case HS_PROBE_DT_W4A16:
    case HS_PROBE_DT_FP4A16:
        w = HW_DTYPE_INT4;
        break;
    case HS_PROBE_DT_Q8_0:
        w = HW_DTYPE_INT8;
        break;
    case HS_PROBE_DT_FP16:
    case HS_PROBE_DT_COUNT:
        break;
    }
    HwOp op = kind == HW_KIND_NPU ? hs_probe_gemm(m, k, n, w, HW_DTYPE_FP16, compute)
                                  : hs_probe_gemm(m, k, n, HW_DTYPE_FP16, w, compute);
    if (dt == HS_PROBE_DT_FP4A16) {
        op.wfmt = HW_WFMT_FP4A16;   /* the same 4-bit bytes, its own dequantisation */
    }
    return op;
}
