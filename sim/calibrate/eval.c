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
#include "hw/sync.h"
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
