/*
 * probe-ops.c - see probe-ops.h.
 */
#include "sim/cli/probe-ops.h"
#include "hw/runtime.h"
#include "sim/kernel/kernel.h"

/* One stream of decode-like traffic: the same memory-bound op again and
 * again, each resubmitted when the last ends, until the horizon. */
typedef struct Stream {
    HwRuntime *rt;
    SimKernel *k;
    HwSubmit s;
    uint64_t op_bytes;
    uint64_t bytes_done;         /* of the ops that ended by the horizon */
    SimTime last_ps;             /* when the last of them ended */
    const SimTime *horizon_ps;   /* resubmit until then */
} Stream;

static void
stream_done(void *opaque)
{
    Stream *st = opaque;
    SimTime now = sim_kernel_now(st->k);
    /* the first op counts even past the horizon (a DRAM so slow that the
     * horizon, from the ops' time alone at their caps, is too short) */
    if (now > *st->horizon_ps && st->last_ps > 0) {
        return;
    }
    st->bytes_done += st->op_bytes;
    st->last_ps = now;
    if (now <= *st->horizon_ps) {
        /* its cost was checked at the first submission */
        g_assert_true(hw_runtime_submit(st->rt, &st->s, NULL));
    }
}

/* see probe-ops.h */
gboolean
hs_probe_stream_gbps(const HwSoc *soc, const HwStack *stack, unsigned kind_mask,
                     double gbps[HW_KIND_COUNT], double *total_gbps, GError **error)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, stack, k);
    Stream st[HW_KIND_COUNT] = { 0 };
    SimTime horizon_ps = 0;
    uint32_t n_streams = 0;
    for (uint32_t kind = 0; kind < HW_KIND_COUNT; kind++) {
        gbps[kind] = 0;
        if (!(kind_mask & (1u << kind))) {
            continue;
        }
        const HwDev *d = hw_soc_find_kind(soc, (HwKind) kind);
        /* [1, 8192] x [8192, 16384] INT4 weights: 64 MiB, memory-bound */
        HwOp op = hs_probe_gemm(1, 8192, 16384, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16);
        if (kind == HW_KIND_NPU) {
            /* W4A8 on the INT8 datapath: the NPU's decode path */
            op = hs_probe_gemm(16384, 8192, 32, HW_DTYPE_INT4, HW_DTYPE_INT8, HW_DTYPE_INT8);
            hw_runtime_npu_prepared(rt, 32);
        }
        HwCost cost;
        hw_dev_estimate(d, stack, &op, &cost);
        if (!hw_cost_check(d, &cost, error)) {
            return FALSE;
        }
        st[kind] = (Stream) { rt, k, { .dev = d->index, .op = op, .npu_tokens = 32,
                                       .presubmitted = TRUE, .on_done = stream_done,
                                       .opaque = &st[kind] }, cost.dram_bytes, 0, 0,
                              &horizon_ps };
        /* ~50 ops of the slowest stream even if the others slow it n-fold:
         * the one cut off at the horizon is then ~2 % of a stream's time */
        horizon_ps = MAX(horizon_ps, 50 * cost.alone_ps);
        n_streams++;
    }
    horizon_ps *= n_streams;
    for (uint32_t kind = 0; kind < HW_KIND_COUNT; kind++) {
        if (st[kind].rt && !hw_runtime_submit(rt, &st[kind].s, error)) {
            return FALSE;
        }
    }
    sim_kernel_run_until(k, SIM_TIME_MAX);
    if (sim_kernel_error(k)) {
        /* a DRAM share so small a transfer ends beyond the horizon */
        g_propagate_error(error, g_error_copy(sim_kernel_error(k)));
        return FALSE;
    }
    double total = 0;
    for (uint32_t kind = 0; kind < HW_KIND_COUNT; kind++) {
        if (st[kind].last_ps > 0) {
            gbps[kind] = (double) st[kind].bytes_done / ((double) st[kind].last_ps / 1000.0);
            total += gbps[kind];
        }
    }
    *total_gbps = total;
    return TRUE;
}

