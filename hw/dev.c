/*
 * dev.c - device base type and the model registry.
 */
#include "hw/dev.h"
#include "hw/soc.h"
#include "hw/stack.h"
#include "sim/kernel/clock.h"
#include "sim/util/error.h"

#include <math.h>
#include <string.h>

const char *const hw_kind_name[] = { "cpu", "gpu", "npu" };
G_STATIC_ASSERT(G_N_ELEMENTS(hw_kind_name) == HW_KIND_COUNT);

extern const HwDevClass hw_cpu_class;
extern const HwDevClass hw_gpu_class;
extern const HwDevClass hw_npu_class;

static const HwDevClass *const classes[] = {
    &hw_cpu_class,
    &hw_gpu_class,
    &hw_npu_class,
    NULL,
};

const char *const hw_op_name[] = {
    "matmul", "attention", "elemwise", "prepare", "sync", "render",
};
G_STATIC_ASSERT(G_N_ELEMENTS(hw_op_name) == HW_OP_COUNT);
const char *const hw_dtype_name[] = { "fp16", "int8", "int4" };
G_STATIC_ASSERT(G_N_ELEMENTS(hw_dtype_name) == HW_DTYPE_COUNT);
const char *const hw_wfmt_name[] = {
    "w4a16", "w8a16", "w8a8", "w4a8", "fp16", "w8a8-shadow", "fp4a16", "q4_0", "q8_0",
};
G_STATIC_ASSERT(G_N_ELEMENTS(hw_wfmt_name) == HW_WFMT_COUNT);

double
hw_dev_dram_cap_gbps(const HwDev *dev, const HwStack *stack)
{
    double s = dev->cls->stack_dram_scale ? dev->cls->stack_dram_scale(dev, stack) : 1;
    return s == 1 ? dev->dram_cap_gbps : MIN(s * dev->dram_cap_gbps, dev->soc->mem.ceiling_gbps);
}

uint64_t
hw_cost_ps(HwCost *c, double ps, const char *what)
{
    SimTime t;
    if (G_UNLIKELY(!sim_time_from_ps_checked(ps, &t)) && c->beyond == NULL) {
        c->beyond = what;
        c->beyond_ps = ps;
    }
    return t;
}

uint64_t
hw_count(double x)
{
    return x >= (double) SIM_TIME_HORIZON_PS ? SIM_TIME_HORIZON_PS
           : x >= 0 ? (uint64_t) x : 0;
}

uint64_t
hw_cost_bytes(HwCost *c, double bytes)
{
    /* 2^64 as a double; every double below it converts */
    if (bytes >= 0 && bytes < 18446744073709551616.0) {
        return (uint64_t) bytes;
    }
    if (c->beyond == NULL) {
        c->beyond = "DRAM traffic (more than 2^64 bytes)";
        c->beyond_ps = INFINITY;
    }
    return bytes >= 0 ? UINT64_MAX : 0;
}

void
hw_dev_estimate(const HwDev *dev, const HwStack *stack, const HwOp *op, HwCost *cost)
{
    *cost = (HwCost) { 0 };
    dev->cls->estimate(dev, stack, op, cost);
    /* bytes at the cap: GB/s == bytes per ns */
    uint64_t mem_ps = hw_cost_ps(cost, (double) cost->dram_bytes * 1000.0 /
                                       hw_dev_dram_cap_gbps(dev, stack),
                                 "DRAM time (dram_cap_gbps, the stack's dram_scale)");
    /* each part is at most the horizon: the sum cannot wrap */
    cost->alone_ps = cost->overhead_ps + MAX(cost->compute_ps, mem_ps);
    if (cost->alone_ps >= SIM_TIME_HORIZON_PS) {
        hw_cost_ps(cost, (double) cost->alone_ps, "launch overhead plus compute time");
        cost->alone_ps = SIM_TIME_HORIZON_PS;
    }
}

/* Is @word in @text, not as part of a longer key? */
static gboolean
names_key(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
        gboolean left = p == text || !(g_ascii_isalnum(p[-1]) || p[-1] == '_' || p[-1] == '.');
        gboolean right = !(g_ascii_isalnum(p[n]) || p[n] == '_');
        if (left && right) {
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
hw_cost_check(const HwDev *dev, const HwCost *c, GError **error)
{
    if (c->beyond == NULL) {
        return TRUE;
    }
    /* the values of the processor's own keys the part names */
    g_autoptr(GString) keys = g_string_new(NULL);
    for (const HsParam *p = dev->cls->params; p->name; p++) {
        if ((p->type != HS_PARAM_T_F64 && p->type != HS_PARAM_T_U32) ||
            !names_key(c->beyond, p->name)) {
            continue;
        }
        const void *f = (const char *) dev + p->offset;
        double v = p->type == HS_PARAM_T_F64 ? *(const double *) f
                                             : (double) *(const uint32_t *) f;
        g_string_append_printf(keys, "%s%s = %g", keys->len ? ", " : "", p->name, v);
    }
    g_autofree char *took = isnan(c->beyond_ps) ? g_strdup("is not a number")
                            : c->beyond_ps < 0 ? g_strdup_printf("comes to %.3g s, a negative time",
                                                                 c->beyond_ps / 1e12)
                            : g_strdup_printf("comes to %.3g s, beyond the %g s horizon of "
                                              "simulated time", c->beyond_ps / 1e12,
                                              SIM_TIME_HORIZON_S);
    g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON,
                "%s%s$.processors[%u] (%s): its %s%s%s%s %s",
                dev->soc && dev->soc->path ? dev->soc->path : "",
                dev->soc && dev->soc->path ? ": " : "", dev->index, dev->name, c->beyond,
                keys->len ? " with " : "", keys->str, keys->len ? "," : "", took);
    return FALSE;
}

void
hw_flops_text(double f, char buf[32])
{
    if (f >= 1e9) {
        g_snprintf(buf, 32, "%.3g GFLOP", f / 1e9);
    } else if (f >= 1e6) {
        g_snprintf(buf, 32, "%.3g MFLOP", f / 1e6);
    } else {
        g_snprintf(buf, 32, "%.3g kFLOP", f / 1e3);
    }
}

void
hw_dev_explain(const HwDev *dev, const HwStack *stack, const HwOp *op, const HwCost *c,
               GString *out)
{
    if (dev->cls->explain) {
        dev->cls->explain(dev, stack, op, c, out);
    } else {
        g_string_append_printf(out, "    compute: %.2f us\n", (double) c->compute_ps / 1e6);
    }
    double cap = hw_dev_dram_cap_gbps(dev, stack);
    double mem_ps = (double) c->dram_bytes * 1000.0 / cap;
    g_string_append_printf(out, "    memory: %.3f MiB at this processor's DRAM cap on this stack, "
                           "%g GB/s = %.2f us\n", (double) c->dram_bytes / (1024.0 * 1024.0),
                           cap, mem_ps / 1e6);
    g_string_append_printf(out, "    -> %s-bound: max(%.2f, %.2f) us + %.2f us launch = %.2f us "
                           "alone\n", (double) c->compute_ps >= mem_ps ? "compute" : "memory",
                           (double) c->compute_ps / 1e6, mem_ps / 1e6,
                           (double) c->overhead_ps / 1e6, (double) c->alone_ps / 1e6);
}

/* the class queries' inputs are range-checked config values (launch_idle_us
 * at most 0.1 s, preempt_us 1 s, submit_us 10 ms): within the horizon */
static uint64_t
us_to_ps(double us)
{
    return sim_time_from_us(us);
}

uint64_t
hw_dev_restart_ps(const HwDev *dev, const HwStack *stack)
{
    return dev->cls->restart_us ? us_to_ps(dev->cls->restart_us(dev, stack)) : 0;
}

uint64_t
hw_dev_preempt_ps(const HwDev *dev)
{
    return dev->cls->preempt_us ? us_to_ps(dev->cls->preempt_us(dev)) : 0;
}

uint64_t
hw_dev_submit_ps(const HwDev *dev, const HwStack *stack)
{
    return dev->cls->submit_us ? us_to_ps(dev->cls->submit_us(dev, stack)) : 0;
}

double
hw_op_attention_scores(const HwOp *op)
{
    g_assert(op->kind == HW_OP_ATTENTION);
    return (double) op->flops / (4.0 * (double) op->k + 5.0);
}

void
hw_dev_caveat(const HwDev *dev, const HwStack *stack, GString *out)
{
    const char *measured = hw_stack_measured_arch(stack, dev->cls->kind);
    if (dev->cls->arch == NULL || measured == NULL) {
        return;
    }
    gboolean own = FALSE;
    const char *arch = dev->cls->arch(dev, stack, &own);
    if (own || strcmp(arch, measured) == 0) {
        return;
    }
    gboolean unknown = strcmp(arch, "unspecified") == 0;
    g_string_append_printf(out, "%s%s: stack %s's figures for it were measured on the %s "
                           "architecture; this %s's is %s%s and the stack gives none for it: "
                           "they are assumed to carry over", out->len ? "; " : "", dev->name,
                           stack->name, measured, hw_kind_name[dev->cls->kind],
                           unknown ? "unspecified" : arch, unknown ? " (none is named)" : "");
}

const HwDevClass *
hw_dev_class_find(const char *model)
{
    for (size_t i = 0; classes[i]; i++) {
        if (strcmp(classes[i]->model, model) == 0) {
            return classes[i];
        }
    }
    return NULL;
}

const HwDevClass *const *
hw_dev_class_list(void)
{
    return classes;
}

HwDev *
hw_dev_new(const HwDevClass *cls, const char *name)
{
    g_assert(cls->instance_size >= sizeof(HwDev));
    HwDev *dev = g_malloc0(cls->instance_size);
    hs_param_set_defaults(cls->params, dev);
    dev->cls = cls;
    dev->name = g_strdup(name);
    return dev;
}

void
hw_dev_free(HwDev *dev)
{
    if (dev == NULL) {
        return;
    }
    if (dev->cls->finalize) {
        dev->cls->finalize(dev);
    }
    hs_param_clear(dev->cls->params, dev);
    g_free(dev->name);
    g_free(dev);
}
