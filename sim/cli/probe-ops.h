/*
 * probe-ops.h - the micro-workloads `probe` runs through the SoC's own
 * models, shared with `calibrate`'s probe measurements (so a measurement
 * a user takes from `hetero-sim probe` is what a spec fits to).
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
