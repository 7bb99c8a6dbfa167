/*
 * runtime.h - the processors of a SoC running ops on the event kernel.
 *
 * Each processor has one in-order queue: an op submitted to a busy
 * processor waits.  When the processor frees up, the waiting op with the
 * highest priority goes next, and among equal priorities the one submitted
 * first — by the time its host submitted it, so kernels an engine enqueued
 * ahead stay ahead of a frame that arrived later.  A GPU with preempt_us >
 * 0 also preempts: a higher-priority op arriving while a lower-priority
 * kernel runs stops it (what it has left of its compute and bytes is kept;
 * its values were computed when it first started), runs after a context
 * save, and the kernel resumes after a restore; with preempt_us 0 a running
 * kernel always finishes.  It pays its launch overhead,
 * then *starts* (the start callback fires: the executor computes values
 * then), then runs for max(compute time, its bytes at the DRAM share it
 * gets) — its bytes are a flow in the shared memory model, whose demand is
 * bytes / compute time so a compute-bound op takes only what it needs —
 * and *ends* (the done callback fires).  Sync hand-offs (HW_OP_SYNC) are
 * timed by hw/sync.c and do not occupy a processor queue: fast-sync
 * threads sleep and poll on small cores, while a driver sync (blocking
 * finish + copy) occupies the host thread like a submission.  NPU matmuls must use a prepared static
 * shape (hw_runtime_npu_prepared); anything else is refused.
 *
 * Control plane: submitting a kernel to an accelerator costs the host CPU
 * (the SoC's control_cpu) its submit_us.  Submissions are
 * serialised on one host thread and recorded as spans, which count as
 * that CPU's busy time (and energy).  A kernel enqueued behind work of its
 * own queue was submitted ahead, as soon as the host was free; one released
 * by a hand-off is submitted when it is released.  No kernel starts before
 * its submission ends, so a host slower than the device starves it (tiny
 * kernels, launch-bound decode); otherwise the device-side gap of a
 * submission is its launch overhead.  A GPU queue drained by a driver sync
 * restarts (the device class's restart cost on the stack) after the next
 * kernel's submission.
 */
#ifndef HW_RUNTIME_H
#define HW_RUNTIME_H

#include <glib.h>

#include "hw/memory.h"
#include "hw/op.h"
#include "hw/soc.h"
#include "sim/kernel/kernel.h"

typedef struct HwRuntime HwRuntime;
typedef void (*HwOpFn)(void *opaque);
/* A preempted kernel is back on its processor; it left it at @off_ps. */
typedef void (*HwResumeFn)(void *opaque, SimTime off_ps);

typedef enum {
    HW_SYNC_DRIVER,
    HW_SYNC_FAST,
} HwSyncMech;

/* Queue priorities: Transformer-Lite and HeteroLLM (§5.5) submit LLM
 * kernels at low priority so that rendering keeps its frame rate. */
enum {
    HW_PRIO_LOW = -1,
    HW_PRIO_NORMAL = 0,
};

/* How a submitted op should be run. */
typedef struct HwSubmit {
    uint32_t dev;                /* processor index in the SoC */
    HwOp op;
    int priority;                /* HW_PRIO_*: higher runs first */
    gboolean foreign;            /* submitted by another application (a
                                  * game's frames): no LLM host work */
    uint64_t npu_tokens;         /* NPU matmul: its static shape (tokens) */
    gboolean presubmitted;       /* enqueued ahead behind work of the same
                                  * queue: no submission gap (the host paid
                                  * it while the queue was busy) */
    gboolean after_drain;        /* a blocking sync drained this queue: pay
                                  * its restart (hw_dev_restart_ps) */
    HwSyncMech sync;             /* HW_OP_SYNC only */
    uint32_t sync_from, sync_to; /* HW_OP_SYNC only */
    uint64_t sync_bytes;         /* HW_OP_SYNC only: bytes handed over */
    HwOpFn on_start;             /* may be NULL */
    HwOpFn on_done;
    HwResumeFn on_resume;        /* may be NULL */
    void *opaque;
} HwSubmit;

/* The processors of @soc running @stack's kernels.  (transfer full) */
HwRuntime *hw_runtime_new(const HwSoc *soc, const HwStack *stack, SimKernel *k);
void hw_runtime_free(HwRuntime *rt);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwRuntime, hw_runtime_free)

/* Queue an op.  FALSE (HS_SIM_ERROR_UNSUPPORTED) if the processor cannot
 * run it: an unprepared NPU shape, a kind it has no model for; FALSE
 * (HS_SIM_ERROR_HORIZON, hw_cost_check) if its cost on that processor lies
 * beyond the horizon of simulated time.  A time that passes the horizon
 * later (a DRAM share too small, a run too long) fails the kernel's run
 * instead (sim_kernel_run_all). */
gboolean hw_runtime_submit(HwRuntime *rt, const HwSubmit *s, GError **error);

/* Mark static NPU shape @tokens as prepared: NPU matmuls submitted with
 * that npu_tokens may run. */
void hw_runtime_npu_prepared(HwRuntime *rt, uint64_t tokens);

/* The memory model (for observers and byte counts).  (transfer none) */
HwMem *hw_runtime_mem(HwRuntime *rt);

/* Time processor @dev spent running ops so far, in ps. */
SimTime hw_runtime_busy_ps(const HwRuntime *rt, uint32_t dev);
/* The same up to now, the running op's time so far included (what a
 * DVFS governor samples). */
SimTime hw_runtime_busy_now_ps(const HwRuntime *rt, uint32_t dev);

/*
 * Processor @dev's clock changed (DVFS): compute now takes @slow (f_top /
 * f, >= 1) times what it takes at the top point; a running kernel's
 * remaining compute is rescaled, its DRAM traffic is not.  Runs start with
 * every processor at 1.
 */
void hw_runtime_set_clock(HwRuntime *rt, uint32_t dev, double slow);

/* One interval of host CPU work (kernel submission). */
typedef struct HwSpan {
    SimTime a_ps, b_ps;
    void *opaque;                /* the HwSubmit's: what it submitted */
} HwSpan;

/* The control-plane spans so far, in time order (GArray of HwSpan;
 * transfer none), and the CPU they ran on (*host; UINT32_MAX and an empty
 * array if the SoC has no CPU). */
const GArray *hw_runtime_control_spans(const HwRuntime *rt, uint32_t *host);
/* Forget the first @n of them (a reader that streams has taken them), so
 * a long run holds only the spans not yet read. */
void hw_runtime_control_spans_drop(HwRuntime *rt, guint n);

/* Ops queued or running on any processor (for deadlock reports). */
uint64_t hw_runtime_pending(const HwRuntime *rt);

#endif /* HW_RUNTIME_H */
