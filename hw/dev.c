/*
 * dev.c - device base type and the model registry.
 */
#include "hw/dev.h"
#include "hw/soc.h"

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

void
hw_dev_estimate(const HwDev *dev, const HwStack *stack, const HwOp *op, HwCost *cost)
{
    *cost = (HwCost) { 0 };
    dev->cls->estimate(dev, stack, op, cost);
    /* bytes at the cap: GB/s == bytes per ns */
    uint64_t mem_ps = (uint64_t) ((double) cost->dram_bytes * 1000.0 /
                                  hw_dev_dram_cap_gbps(dev, stack) + 0.5);
    cost->alone_ps = cost->overhead_ps + MAX(cost->compute_ps, mem_ps);
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

static uint64_t
us_to_ps(double us)
{
    return (uint64_t) (us * 1e6 + 0.5);
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
