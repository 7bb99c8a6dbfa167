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
#include "sim/cli/probe-ops.h"
#include "hw/dev.h"
#include "hw/sync.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/override.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* one probe's value: the cost queries `probe` makes (cmd-probe.c:
 * npu-gemm / gpu-gemm alone_ps, sync's hand-off, membw's streams) */
static gboolean
probe_value(const HsCalProbe *p, const HsOverrides *ovr, const char *origin, double *value,
            GError **error)
{
    g_autoptr(HwSoc) soc = hs_config_load_soc(p->soc, ovr, error);
    const HwStack *stack = soc ? hw_soc_stack(soc, p->stack ? p->stack : SIM_DEFAULT_STACK,
                                              error) : NULL;
    if (stack == NULL) {
        g_prefix_error(error, "%s: ", origin);
        return FALSE;
    }
    if (p->metric == HS_CAL_PROBE_MEMBW_GBPS) {
        for (uint32_t kind = 0; kind < HW_KIND_COUNT; kind++) {
            if ((p->membw_mask & (1u << kind)) && hw_soc_find_kind(soc, kind) == NULL) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                            "%s.set: the SoC has no %s", origin, hw_kind_name[kind]);
                return FALSE;
            }
        }
        double by[HW_KIND_COUNT];
        if (!hs_probe_stream_gbps(soc, stack, p->membw_mask, by, value, error)) {
            g_prefix_error(error, "%s: ", origin);
            return FALSE;
        }
        return TRUE;
    }
    if (p->metric == HS_CAL_PROBE_SYNC_US) {
        const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
        const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
        if (gpu == NULL || npu == NULL) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: a sync round trip needs a GPU and an NPU (the SoC lacks one)",
                        origin);
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
                    "%s.processor: the SoC has no %s", origin, p->processor);
        return FALSE;
    }
    /* in each processor's orientation, as probe's npu-gemm / gpu-gemm build it */
    HwOp op = hs_probe_gemm_of(kind, p->m, p->k, p->n, p->dtype);
    HwCost c;
    hw_dev_estimate(d, stack, &op, &c);
    if (!hw_cost_check(d, &c, error)) {
        g_prefix_error(error, "%s: ", origin);
        return FALSE;
    }
    double us = sim_time_to_us(c.alone_ps);
    if (!(us > 0)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: the matmul takes no time", origin);
        return FALSE;
    }
    *value = p->metric == HS_CAL_PROBE_GEMM_US ? us : (double) op.flops / us * 1e-6;
    return TRUE;
}

/* a micro-measurement: its probe's value, or its ratio over the baseline's */
static gboolean
eval_probe(const HsCalMeas *m, const HsOverrides *ovr, double *value, GError **error)
{
    const HsCalProbe *p = &m->probe;
    if (!probe_value(p, ovr, m->origin, value, error)) {
        return FALSE;
    }
    if (p->base == NULL) {
        return TRUE;
    }
    g_autofree char *bpath = g_strdup_printf("%s.baseline", m->origin);
    double vb = 0;
    if (!probe_value(p->base, ovr, bpath, &vb, error)) {
        return FALSE;
    }
    if (!(vb > 0)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: the baseline probe's %s is 0 (a ratio over it is not computable)",
                    bpath, hs_cal_probe_metric_name[p->metric]);
        return FALSE;
    }
    *value /= vb;
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
    const guint nf = s->fixed ? g_strv_length(s->fixed) : 0;
    GStrv out = g_new0(char *, nf + s->n_keys + 1);
    for (guint i = 0; i < nf; i++) {
        out[i] = g_strdup(s->fixed[i]);
    }
    for (guint k = 0; k < s->n_keys; k++) {
        const HsCalKey *key = &s->keys[k];
        double v = key->integer ? round(x[k]) : x[k];
        char num[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(num, sizeof(num), key->integer ? "%.0f" : "%.17g", v);
        /* a stack key edits the spec's stack only, not the other side's of
         * a ratio measured against another stack (a stack given as a
         * file path: every stack) */
        g_autofree char *probe = s->stack ? g_strdup_printf("stack@%s.x", s->stack) : NULL;
        if (probe && strcmp(hs_override_doc(key->path), "stack") == 0 &&
            hs_override_key_valid(probe)) {
            out[nf + k] = g_strdup_printf("stack@%s.%s=%s", s->stack,
                                          key->path + strlen("stack."), num);
        } else {
            out[nf + k] = g_strdup_printf("%s=%s", key->path, num);
        }
    }
    return out;
}
