/*
 * points-eval.c - see points-eval.h.
 */
#include "sim/cli/points-eval.h"
#include "hw/dev.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"

#include <math.h>
#include <string.h>

struct HsPointCache {
    GHashTable *socs, *specs;    /* name -> loaded (owned) */
    const HsOverrides *ovr;      /* applied to every point's SoC and model */
};

HsPointCache *
hs_point_cache_new(const HsOverrides *ovr)
{
    HsPointCache *c = g_new0(HsPointCache, 1);
    c->socs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                    (GDestroyNotify) hw_soc_free);
    c->specs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify) mdl_spec_free);
    c->ovr = ovr;
    return c;
}

void
hs_point_cache_free(HsPointCache *c)
{
    if (c == NULL) {
        return;
    }
    g_hash_table_destroy(c->socs);
    g_hash_table_destroy(c->specs);
    g_free(c);
}

/* One simulated run and what the metrics read from it beyond the report:
 * kernel time per processor kind and phase. */
typedef struct Measured {
    SimRunReport r;
    double kernel_ms[SIM_PHASE_COUNT][HW_KIND_COUNT];
} Measured;

/* One side of a point: what differs between a run and its baseline. */
typedef struct Side {
    const char *model, *policy, *stack;
    gboolean driver;
    uint32_t batch;
    double render_fps;
} Side;

static gboolean
simulate(HsPointCache *c, const HsPoint *pt, const Side *s, uint32_t prompt, Measured *m,
         const char *path, GError **error)
{
    const char *soc_name = pt->soc, *model = s->model, *policy = s->policy;
    HwSoc *soc = g_hash_table_lookup(c->socs, soc_name);
    if (soc == NULL) {
        soc = hs_config_load_soc(soc_name, c->ovr, error);
        if (soc == NULL) {
            if ((*error)->domain != HS_USAGE_ERROR) {
                g_prefix_error(error, "%s.soc: ", path);
            }
            return FALSE;
        }
        g_hash_table_insert(c->socs, g_strdup(soc_name), soc);
    }
    MdlSpec *spec = g_hash_table_lookup(c->specs, model);
    if (spec == NULL) {
        spec = hs_config_load_model(model, c->ovr, error);
        if (spec == NULL) {
            if ((*error)->domain != HS_USAGE_ERROR) {
                g_prefix_error(error, "%s.model: ", path);
            }
            return FALSE;
        }
        g_hash_table_insert(c->specs, g_strdup(model), spec);
    }
    const SimPolicy *p = sim_policy_find(policy);
    if (p == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.policy: expected a policy from 'list policies' (got \"%s\")", path,
                    policy);
        return FALSE;
    }
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = prompt;
    w.decode = pt->wl.decode;
    w.batch = s->batch;
    w.check_layers = -1;
    w.stack = s->stack;          /* NULL: the policy's */
    w.sync = s->driver ? SIM_SYNC_DRIVER : SIM_SYNC_FAST;
    w.render = (SimRender) { .fps = s->render_fps, .frame_ms = pt->wl.frame_ms,
                             .frame_mb = pt->wl.frame_mb,
                             .llm_priority = pt->wl.llm_low ? HW_PRIO_LOW : HW_PRIO_NORMAL };
    SimExecResult x = { 0 };
    g_autoptr(SimPlan) plan = NULL;
    *m = (Measured) { 0 };
    if (!sim_run(soc, spec, p, &w, NULL, &m->r, &x, &plan, error)) {
        if ((*error)->domain != HS_USAGE_ERROR) {      /* --set names itself */
            g_prefix_error(error, "%s: ", path);
        }
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

static double
metric_value(HsMetric m, const Measured *x)
{
    const SimRunReport *r = &x->r;
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
    case HS_METRIC_PREFILL_NPU_OVER_CPU: {
        double cpu = x->kernel_ms[SIM_PHASE_PREFILL][HW_KIND_CPU];
        return cpu > 0 ? x->kernel_ms[SIM_PHASE_PREFILL][HW_KIND_NPU] / cpu : 0;
    }
    case HS_METRIC_DECODE_CPU_SHARE:
        return r->decode.time_ms > 0
               ? x->kernel_ms[SIM_PHASE_DECODE][HW_KIND_CPU] / r->decode.time_ms : 0;
    case HS_METRIC_PREFILL_LATENCY_REDUCTION_MEAN:
        return r->prefill.time_ms;
    case HS_METRIC_PREFILL_PREPARE_SHARE:
        return r->prefill.time_ms > 0 ? r->prefill.prepare_ms / r->prefill.time_ms : 0;
    case HS_METRIC_PREFILL_PREPARE_MS:
        return r->prefill.prepare_ms;
    case HS_METRIC_DECODE_STEP_RATIO:
        return r->tpot_ms;
    case HS_METRIC_PREFILL_FPS:
        return r->render_fps_prefill;
    case HS_METRIC_DECODE_FPS:
        return r->render_fps_decode;
    /* tokens per joule: the run's over the baseline's is the baseline's
     * energy per token over the run's */
    case HS_METRIC_PREFILL_ENERGY_SAVING:
        return r->prefill.avg_w > 0 ? r->prefill.tokens_per_s / r->prefill.avg_w : 0;
    case HS_METRIC_DECODE_ENERGY_SAVING:
        return r->decode.avg_w > 0 ? r->decode.tokens_per_s / r->decode.avg_w : 0;
    default:
        g_assert_not_reached();
    }
}

/* The metric's value of one run (for ratios: the quantity compared); NAN
 * with *why set when the run gives it no value (a share of a time that
 * is 0). */
static double
metric_of(HsMetric m, const Measured *x, const char **why)
{
    double v = 0;
    switch (m) {
    case HS_METRIC_PREFILL_NPU_OVER_CPU:
        v = x->kernel_ms[SIM_PHASE_PREFILL][HW_KIND_CPU];
        *why = "the run's CPU busy time in prefill is 0";
        break;
    case HS_METRIC_DECODE_CPU_SHARE:
        v = x->r.decode.time_ms;
        *why = "the run's decode time is 0";
        break;
    case HS_METRIC_PREFILL_PREPARE_SHARE:
        v = x->r.prefill.time_ms;
        *why = "the run's prefill time is 0";
        break;
    default:
        v = 1;
        break;
    }
    if (!(v > 0)) {
        return NAN;
    }
    return metric_value(m, x);
}

gboolean
hs_point_eval(HsPointCache *c, const HsPoint *pt, const char *path, double *value,
              GError **error)
{
    gboolean ratio = hs_metric_is_ratio(pt->metric);
    double acc = 0;
    for (guint i = 0; i < pt->wl.n_prompts; i++) {
        uint32_t pr = pt->wl.prompts[i];
        Measured a, b;
        const Side run = { pt->model, pt->policy, pt->stack, pt->sync_driver, pt->wl.batch,
                           pt->wl.render_fps };
        if (!simulate(c, pt, &run, pr, &a, path, error)) {
            return FALSE;
        }
        const char *why = NULL;
        double va = metric_of(pt->metric, &a, &why), v = va;
        sim_run_report_clear(&a.r);
        if (ratio && isfinite(va)) {
            g_autofree char *bpath = g_strdup_printf("%s.baseline", path);
            const Side base = { pt->base.model, pt->base.policy, pt->base.stack,
                                pt->base.sync_driver, pt->base.batch, pt->base.render_fps };
            if (!simulate(c, pt, &base, pr, &b, bpath, error)) {
                return FALSE;
            }
            double vb = metric_of(pt->metric, &b, &why);
            sim_run_report_clear(&b.r);
            why = "the baseline's value of it is 0";
            v = !(vb > 0) ? NAN
                : pt->metric == HS_METRIC_PREFILL_LATENCY_REDUCTION_MEAN ? 1.0 - va / vb
                                                                          : va / vb;
        }
        if (!isfinite(v)) {
            /* never a NaN in a figure, a mean or a fit: the point is refused */
            g_autofree char *at = pt->wl.n_prompts > 1 ? g_strdup_printf(" at prompt %u", pr)
                                                       : g_strdup("");
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s.metric: %s is not computable for this point%s (%s)", path,
                        hs_metric_name[pt->metric], at, why ? why : "not a finite number");
            return FALSE;
        }
        acc += v;
    }
    *value = acc / pt->wl.n_prompts;
    return TRUE;
}
