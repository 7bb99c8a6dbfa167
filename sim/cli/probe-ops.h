/*
 * probe-ops.h - the micro-workloads `probe` runs through the SoC's own
 * models, shared with `calibrate`'s probe measurements (so a measurement
 * a user takes from `hetero-sim probe` is what a spec fits to): the
 * matmuls (probe-gemm.c, built from shapes and types alone) and the
 * memory streams (probe-ops.c).
 */
#ifndef HS_PROBE_OPS_H
#define HS_PROBE_OPS_H

#include "hw/dev.h"
#include "hw/op.h"
#include "hw/soc.h"
#include "hw/stack.h"

#include <glib.h>

/* A [m, k] x [k, n] matmul of operands @a and @b on the @compute datapath;
 * the narrower operand is the weight (its format follows from it). */
HwOp hs_probe_gemm(uint64_t m, uint64_t k, uint64_t n, HwDtype a, HwDtype b, HwDtype compute);

/* The element types of a probed matmul (probe's --dtype, a calibration
 * spec's "dtype"): fp16 (FP16 x FP16); int8 and w8a8 (INT8 x INT8 on the
 * INT8 datapath); w4a16, fp4a16, q8_0 (an INT4, E0M4 FP4 or INT8 group-32
 * weight on the FP16 datapath). */
typedef enum {
    HS_PROBE_DT_FP16, HS_PROBE_DT_INT8, HS_PROBE_DT_W4A16, HS_PROBE_DT_W8A8,
    HS_PROBE_DT_Q8_0, HS_PROBE_DT_FP4A16, HS_PROBE_DT_COUNT
} HsProbeDtype;
extern const char *const hs_probe_dtype_name[];   /* HS_PROBE_DT_COUNT names, then NULL */

/* A [m, k] x [k, n] matmul of @dt as a @kind processor's kernels take it:
 * on the NPU the weight is the left operand (W [m, k] . X^T [k, n], the
 * stationary-weight orientation npu-gemm draws), elsewhere the right one
 * (X [m, k] . W [k, n]: m tokens). */
HwOp hs_probe_gemm_of(HwKind kind, uint64_t m, uint64_t k, uint64_t n, HsProbeDtype dt);

/*
 * Decode-like streaming (1-token W4A16 matmuls, 64 MiB of weights each;
 * W4A8 on the NPU) on the processors in @kind_mask (bit 1 << HwKind) at
 * once, every stream busy the whole time: each stream's achieved rate
 * (its bytes over its time, into @gbps by kind) while all run, and their
 * sum in *@total_gbps.  FALSE with *error when a cost lies beyond the
 * horizon.
 */
gboolean hs_probe_stream_gbps(const HwSoc *soc, const HwStack *stack, unsigned kind_mask,
                              double gbps[HW_KIND_COUNT], double *total_gbps, GError **error);

#endif /* HS_PROBE_OPS_H */
