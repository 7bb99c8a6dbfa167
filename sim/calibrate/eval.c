/*
 * eval.c - one measurement's simulated value under a candidate's
 * overrides: the point run as `validate` runs it (timing only), its
 * metric read as validate reads it (cmd-validate.c: metric_value; kept in
 * step with it, the metric names being points.h's).
 *
 * Every call loads its own SoC and model with the overrides, so calls on
 * different threads share nothing but read-only files.
 */
#include "sim/calibrate/calibrate.h"
#include "hw/dev.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct Measured {
    SimRunReport r;
    double kernel_ms[SIM_PHASE_COUNT][HW_KIND_COUNT];
} Measured;

static gboolean
simulate(const HsOverrides *ovr, const char *soc_name, const char *model, const char *policy,
         const char *stack, gboolean driver, uint32_t prompt, uint32_t decode, uint32_t batch,
         Measured *m, GError **error)
{
    g_autoptr(HwSoc) soc = hs_config_load_soc(soc_name, ovr, error);
    if (soc == NULL) {
        return FALSE;
    }
    g_autoptr(MdlSpec) spec = hs_config_load_model(model, ovr, error);
    if (spec == NULL) {
        return FALSE;
    }
    const SimPolicy *p = sim_policy_find(policy);
    if (p == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "policy: expected a policy from 'list policies' (got \"%s\")", policy);
        return FALSE;
    }
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = prompt;
    w.decode = decode;
    w.batch = batch;
    w.check_layers = -1;         /* timing only: a fit takes seconds */
    w.stack = stack;
    w.sync = driver ? SIM_SYNC_DRIVER : SIM_SYNC_FAST;
    SimExecResult x = { 0 };
    g_autoptr(SimPlan) plan = NULL;
    *m = (Measured) { 0 };
    if (!sim_run(soc, spec, p, &w, NULL, &m->r, &x, &plan, error)) {
        return FALSE;
    }
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->kind == SIM_TASK_SYNC) {
            continue;
        }
        const HwDev *d = g_ptr_array_index(soc->devs, t->proc);
        m->kernel_ms[t->phase][d->cls->kind] +=
            sim_time_to_ms(x.times[i].end_ps - x.times[i].start_ps);
    }
    sim_exec_result_clear(&x);
    return TRUE;
}

/* as cmd-validate.c's metric_value; NaN when the run gives it no value */
static double
metric_value(HsMetric m, const Measured *x)
{
    const SimRunReport *r = &x->r;
    double cpu = x->kernel_ms[SIM_PHASE_PREFILL][HW_KIND_CPU];
    switch (m) {
    case HS_METRIC_PREFILL_TPS:
    case HS_METRIC_PREFILL_SPEEDUP:
    case HS_METRIC_PREFILL_SPEEDUP_MEAN:
        return r->prefill.tokens_per_s;
    case HS_METRIC_DECODE_TPS:
    case HS_METRIC_DECODE_SPEEDUP:
        return r->decode.tokens_per_s;
    case HS_METRIC_DECODE_GBPS:
        return r->decode.dram_gbps;
    case HS_METRIC_PREFILL_W:
        return r->prefill.avg_w;
    case HS_METRIC_DECODE_W:
        return r->decode.avg_w;
    case HS_METRIC_PREFILL_NPU_MS:
        return x->kernel_ms[SIM_PHASE_PREFILL][HW_KIND_NPU];
    case HS_METRIC_PREFILL_NPU_OVER_CPU:
        return cpu > 0 ? x->kernel_ms[SIM_PHASE_PREFILL][HW_KIND_NPU] / cpu : NAN;
    case HS_METRIC_DECODE_CPU_SHARE:
        return r->decode.time_ms > 0
               ? x->kernel_ms[SIM_PHASE_DECODE][HW_KIND_CPU] / r->decode.time_ms : NAN;
    case HS_METRIC_PREFILL_LATENCY_REDUCTION_MEAN:
        return r->prefill.time_ms;
    case HS_METRIC_PREFILL_PREPARE_SHARE:
        return r->prefill.time_ms > 0 ? r->prefill.prepare_ms / r->prefill.time_ms : NAN;
    case HS_METRIC_DECODE_STEP_RATIO:
        return r->tpot_ms;
    default:
        g_assert_not_reached();
    }
}

gboolean
hs_cal_eval(const HsCalMeas *m, const char *const *set, double *value, GError **error)
{
    const HsPoint *pt = m->pt;
    g_autoptr(HsOverrides) ovr = hs_overrides_new(set, error);
    if (ovr == NULL) {
        return FALSE;
    }
    gboolean ratio = hs_metric_is_ratio(pt->metric);
    double acc = 0;
    for (guint i = 0; i < pt->wl.n_prompts; i++) {
        uint32_t pr = pt->wl.prompts[i];
        Measured a = { 0 }, b = { 0 };
        gboolean ok = simulate(ovr, pt->soc, pt->model, pt->policy, pt->stack, pt->sync_driver,
                               pr, pt->wl.decode, pt->wl.batch, &a, error);
        double v = ok ? metric_value(pt->metric, &a) : NAN;
        sim_run_report_clear(&a.r);
        if (ok && ratio && isfinite(v)) {
            ok = simulate(ovr, pt->soc, pt->base.model, pt->base.policy, pt->base.stack,
                          pt->base.sync_driver, pr, pt->wl.decode, pt->base.batch, &b, error);
            double vb = ok ? metric_value(pt->metric, &b) : NAN;
            sim_run_report_clear(&b.r);
            v = !(vb > 0) ? NAN
                : pt->metric == HS_METRIC_PREFILL_LATENCY_REDUCTION_MEAN ? 1.0 - v / vb : v / vb;
        }
        if (!ok) {
            g_prefix_error(error, "%s: ", m->origin);
            return FALSE;
        }
        if (!isfinite(v)) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: %s is not computable for this run (a time it divides by is 0)",
                        m->origin, hs_metric_name[pt->metric]);
            return FALSE;
        }
        acc += v;
    }
    *value = acc / pt->wl.n_prompts;
    return TRUE;
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
