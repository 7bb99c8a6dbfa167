/*
 * dev.h - the base type of every processor model and the registry of
 * models, QOM-style.
 *
 * A processor in a SoC config names its model ("model": "npu-systolic");
 * the registry finds the HwDevClass, which says what kind of processor it
 * is, which JSON keys it accepts (an HsParam table, also printed by
 * `soc describe`), and how to check them (realize).  Instance structs embed
 * HwDev as their first member:
 *
 *   typedef struct HwNpu { HwDev parent; uint32_t tile_rows; ... } HwNpu;
 *
 * Creation has two steps, as in QOM: instance init (defaults) cannot fail;
 * realize() checks the parameters against each other and may fail.
 * hw/ is pure timing: devices see op descriptors, never tensor values.
 */
#ifndef HW_DEV_H
#define HW_DEV_H

#include <glib.h>
#include <stdint.h>

#include "sim/util/param.h"
#include "hw/op.h"

typedef enum {
    HW_KIND_CPU,
    HW_KIND_GPU,
    HW_KIND_NPU,
    HW_KIND_COUNT
} HwKind;

extern const char *const hw_kind_name[];   /* HW_KIND_COUNT entries: checked where defined */

typedef struct HwDev HwDev;
typedef struct HwSoc HwSoc;
typedef struct HwStack HwStack;

typedef struct HwDevClass {
    const char *model;           /* "npu-systolic": the JSON "model" value */
    HwKind kind;
    const char *desc;            /* one line for `list` and `soc describe` */
    size_t instance_size;        /* sizeof the struct embedding HwDev */
    const HsParam *params;       /* accepted keys (offsets into the instance) */
    /* Check parameters against each other; derive cached values. */
    gboolean (*realize)(HwDev *dev, GError **error);
    /* Release what realize() allocated (may be NULL). */
    void (*finalize)(HwDev *dev);
    /*
     * What @op costs on this processor alone, run by @stack's kernels:
     * overhead, compute time and DRAM bytes (model extras included).
     * Pure: no allocation, no events; the tensor-partition solver calls it
     * thousands of times per plan.  hw_dev_estimate() fills alone_ps.
     */
    void (*estimate)(const HwDev *dev, const HwStack *stack, const HwOp *op,
                     HwCost *cost);
    /* The rest of what the runtime and the profiler ask; NULL: 0. */
    /* Extra device time of the first kernel after a blocking sync drained
     * the queue (the GPU's restart, HeteroLLM §3.1). */
    double (*restart_us)(const HwDev *dev, const HwStack *stack);
    /* Context save (and again restore) when a higher-priority kernel
     * preempts a running one; 0: kernels run to completion. */
    double (*preempt_us)(const HwDev *dev);
    /* Host time of one enqueue call to an accelerator, when this processor
     * runs the control plane. */
    double (*submit_us)(const HwDev *dev, const HwStack *stack);
    /* Bandwidth @stack's kernels reach alone on this processor, as a
     * multiple of its dram_cap_gbps. */
    double (*stack_dram_scale)(const HwDev *dev, const HwStack *stack);
    /* The reasoning behind @cost (what estimate() gave for @op) in words
     * and numbers, one "    " indented line per step, for `explain`;
     * NULL: hw_dev_explain() prints only the compute time. */
    void (*explain)(const HwDev *dev, const HwStack *stack, const HwOp *op,
                    const HwCost *cost, GString *out);
    /* The architecture of this processor (a name of the stack's
     * measured_arch enum for its kind), and whether @stack gives a figure
     * of its own for it beside the ones it measured elsewhere; NULL: the
     * class has no architectures. */
    const char *(*arch)(const HwDev *dev, const HwStack *stack, gboolean *has_own);
} HwDevClass;

/* Keys every processor has (offsets into HwDev via the instance type T). */
struct HwDev {
    const HwDevClass *cls;
    char *name;                  /* "npu", unique in the SoC */
    uint32_t index;              /* position in the SoC's processor list */
    HwSoc *soc;                  /* (transfer none) the SoC it belongs to */
    double dram_cap_gbps;        /* per-initiator DRAM bandwidth cap */
    double active_w;             /* power while busy */
    double idle_w;               /* power while idle */
};

#define HW_DEV_COMMON_PARAMS(T)                                               \
    HS_PARAM_F64("dram_cap_gbps", T, parent.dram_cap_gbps, 0.001, 10000,    \
                 HS_REQUIRED, "DRAM bandwidth one processor can draw alone"), \
    HS_PARAM_F64("active_w", T, parent.active_w, 0, 100, HS_REQUIRED,       \
                 "power while executing"),                                    \
    HS_PARAM_F64("idle_w", T, parent.idle_w, 0, 100, 0,                     \
                 "power while idle (powered, not executing)")

/* Cost of @op alone on @dev with @stack's kernels: the class estimate
 * plus alone_ps, the time with the device's DRAM cap as the only
 * bandwidth limit.  A part beyond the horizon saturates and marks
 * cost->beyond (see hw_cost_check). */
void hw_dev_estimate(const HwDev *dev, const HwStack *stack, const HwOp *op,
                     HwCost *cost);

/*
 * The one way a model turns a duration it computed (@ps, a double) into a
 * field of @c: sim_time_from_ps_checked(), and if that fails (beyond the
 * horizon, not finite, negative) @c remembers @what — static text naming
 * the keys the duration follows from, "array time (freq_mhz,
 * fp16_macs_per_pe_cycle)" — and the time (the first such part wins); the
 * value returned is saturated (the horizon, or 0 if negative), so sums of
 * a few parts cannot wrap.  Pure: estimate() stays allocation-free.
 */
uint64_t hw_cost_ps(HwCost *c, double ps, const char *what);

/*
 * FALSE with HS_SIM_ERROR_HORIZON if @c (from hw_dev_estimate on @dev) has
 * a part beyond the horizon: "FILE: $.processors[I] (NAME): its WHAT
 * (KEY = VALUE, ...) comes to T s, beyond the 1e+06 s horizon of simulated
 * time", with the values of @dev's keys that WHAT names.  Callers prefix
 * the task.
 */
gboolean hw_cost_check(const HwDev *dev, const HwCost *c, GError **error);

/* A count a model computed in doubles (cycles, tiles), rounded down and
 * saturated at SIM_TIME_HORIZON_PS: a count that large takes longer than
 * the horizon at any clock the configs accept (NaN, negative: 0). */
uint64_t hw_count(double x);

/* DRAM bytes computed in doubles: beyond 2^64 - 1 they saturate and mark
 * @c beyond the horizon (no bandwidth moves them within it). */
uint64_t hw_cost_bytes(HwCost *c, double bytes);

/*
 * Append to @out why @op costs @cost (from hw_dev_estimate) on @dev with
 * @stack's kernels: the class's own steps (NPU: tiles, rounds, fill/drain,
 * tile staging, passes, dequantisation, DMA; GPU/CPU: the achieved rate),
 * then the memory time at the cap and which bound set the time.
 */
void hw_dev_explain(const HwDev *dev, const HwStack *stack, const HwOp *op,
                    const HwCost *cost, GString *out);

/* "16.9 GFLOP", "1.44 MFLOP", "512 kFLOP" into @buf, for explanations. */
void hw_flops_text(double flops, char buf[32]);

/*
 * Append to @out (nothing if none) why @stack's figures for @dev are an
 * assumption rather than a measurement: the stack says they were measured
 * on another architecture than @dev's (its measured_arch for @dev's kind)
 * and it gives none of its own for @dev's.  A run reports it beside its
 * figures.
 */
void hw_dev_caveat(const HwDev *dev, const HwStack *stack, GString *out);

/* The class queries, in ps (0 where the class has none). */
uint64_t hw_dev_restart_ps(const HwDev *dev, const HwStack *stack);
uint64_t hw_dev_preempt_ps(const HwDev *dev);
uint64_t hw_dev_submit_ps(const HwDev *dev, const HwStack *stack);

/* DRAM bandwidth @dev reaches alone on @stack: its cap scaled by what the
 * stack's kernels achieve, never above the DRAM's ceiling. */
double hw_dev_dram_cap_gbps(const HwDev *dev, const HwStack *stack);

/* Look up a model by name; NULL if unknown. */
const HwDevClass *hw_dev_class_find(const char *model);

/* NULL-terminated list of every registered class.  (transfer none) */
const HwDevClass *const *hw_dev_class_list(void);

/* Allocate an instance with the class defaults applied.  (transfer full) */
HwDev *hw_dev_new(const HwDevClass *cls, const char *name);
void hw_dev_free(HwDev *dev);                  /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwDev, hw_dev_free)

#endif /* HW_DEV_H */
