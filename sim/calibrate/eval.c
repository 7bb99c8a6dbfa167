/*
 * eval.c - one measurement's simulated value under a candidate's
 * overrides: a point evaluated by validate's own evaluator
 * (sim/cli/points-eval.c), or a probe's cost query.
 *
 * Every call loads its own SoC and model with the overrides, so calls on
 * different threads share nothing but read-only files.
 */
#include "sim/calibrate/calibrate.h"
#include "sim/cli/points-eval.h"
#include "hw/dev.h"
#include "hw/sync.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* a matmul as cmd-probe.c's gemm() builds it: the narrower operand is the
 * weight */
static HwOp
gemm(uint64_t m, uint64_t k, uint64_t n, HwDtype a, HwDtype b, HwDtype compute)
{
    double ab = a == HW_DTYPE_FP16 ? 2 : a == HW_DTYPE_INT8 ? 1 : 0.5;
    double bb = b == HW_DTYPE_FP16 ? 2 : b == HW_DTYPE_INT8 ? 1 : 0.5;
    HwDtype w = a == HW_DTYPE_FP16 ? b : a;
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

/* a micro-measurement: the cost queries `probe` makes (cmd-probe.c:
 * npu-gemm / gpu-gemm alone_ps, sync's hand-off) */
static gboolean
eval_probe(const HsCalMeas *m, const HsOverrides *ovr, double *value, GError **error)
{
    const HsCalProbe *p = &m->probe;
    g_autoptr(HwSoc) soc = hs_config_load_soc(p->soc, ovr, error);
    const HwStack *stack = soc ? hw_soc_stack(soc, p->stack ? p->stack : SIM_DEFAULT_STACK,
                                              error) : NULL;
    if (stack == NULL) {
        g_prefix_error(error, "%s: ", m->origin);
        return FALSE;
    }
    if (p->metric == HS_CAL_PROBE_SYNC_US) {
        const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
        const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
        if (gpu == NULL || npu == NULL) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: a sync round trip needs a GPU and an NPU (the SoC lacks one)",
                        m->origin);
            return FALSE;
        }
        HwSyncMech mech = p->driver ? HW_SYNC_DRIVER : HW_SYNC_FAST;
        *value = sim_time_to_us(hw_sync_handoff_ps(soc, stack, mech, npu->index, 0)) +
                 sim_time_to_us(hw_sync_handoff_ps(soc, stack, mech, gpu->index, 0));
        return TRUE;
    }
    HwKind kind = strcmp(p->processor, "cpu") == 0 ? HW_KIND_CPU
                : strcmp(p->processor, "gpu") == 0 ? HW_KIND_GPU : HW_KIND_NPU;
    const HwDev *d = hw_soc_find_kind(soc, kind);
    if (d == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.processor: the SoC has no %s", m->origin, p->processor);
        return FALSE;
    }
    /* fp16: FP16 x FP16; int8: INT8 x INT8; w4a16: INT4 weight on the FP16
     * datapath; w8a8: INT8 weight, INT8 activations */
    HwOp op = p->dtype == HS_CAL_DT_INT8 || p->dtype == HS_CAL_DT_W8A8
              ? gemm(p->m, p->k, p->n, HW_DTYPE_INT8, HW_DTYPE_INT8, HW_DTYPE_INT8)
            : p->dtype == HS_CAL_DT_W4A16
              ? gemm(p->m, p->k, p->n, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_DTYPE_FP16)
              : gemm(p->m, p->k, p->n, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16);
    HwCost c;
    hw_dev_estimate(d, stack, &op, &c);
    if (!hw_cost_check(d, &c, error)) {
        g_prefix_error(error, "%s: ", m->origin);
        return FALSE;
    }
    double us = sim_time_to_us(c.alone_ps);
    if (!(us > 0)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: the matmul takes no time", m->origin);
        return FALSE;
    }
    *value = p->metric == HS_CAL_PROBE_GEMM_US ? us : (double) op.flops / us * 1e-6;
    return TRUE;
}

gboolean
hs_cal_eval(const HsCalMeas *m, const char *const *set, double *value, GError **error)
{
    const HsPoint *pt = m->pt;
    g_autoptr(HsOverrides) ovr = hs_overrides_new(set, error);
    if (ovr == NULL) {
        return FALSE;
    }
    if (pt == NULL) {
        return eval_probe(m, ovr, value, error);
    }
    g_autoptr(HsPointCache) cache = hs_point_cache_new(ovr);
    return hs_point_eval(cache, pt, m->origin, value, error);
}

GStrv
hs_cal_overrides(const HsCalSpec *s, const double *x)
{
    GStrv out = g_new0(char *, s->n_keys + 1);
    for (guint k = 0; k < s->n_keys; k++) {
        const HsCalKey *key = &s->keys[k];
        double v = key->integer ? round(x[k]) : x[k];
        char num[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(num, sizeof(num), key->integer ? "%.0f" : "%.17g", v);
        out[k] = g_strdup_printf("%s=%s", key->path, num);
    }
    return out;
}
