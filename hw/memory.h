/*
 * memory.h - the one DRAM every processor shares, as a fluid model.
 *
 * Each running op is a flow: bytes to move, a demand (the rate at which it
 * would consume them if memory were free: bytes / compute time; unbounded
 * for a purely memory-bound op) and an initiator (its processor).
 * Bandwidth is shared by max-min fairness at two levels, as per-port DRAM
 * arbiters do: first among initiators, each asking min(its cap, the sum of
 * its flows' demands), under the achievable total ceiling; then within an
 * initiator among its flows.  A compute-bound flow takes only what it
 * needs, and what it leaves goes to the others.
 *
 * Whenever a flow starts or ends, every flow's progress is brought up to
 * date, rates are recomputed and completion events moved (sim_kernel_move).
 * An observer sees every rate change (bandwidth counters in traces), and
 * bytes moved are accounted per initiator.
 */
#ifndef HW_MEMORY_H
#define HW_MEMORY_H

#include <glib.h>

#include "sim/kernel/kernel.h"

typedef struct HwMem HwMem;
typedef struct HwFlow HwFlow;

typedef void (*HwFlowDoneFn)(void *opaque);
/* Initiator @initiator now draws @gbps (called after every recomputation
 * for each initiator whose rate changed). */
typedef void (*HwMemObserverFn)(void *opaque, SimTime when_ps, uint32_t initiator,
                                double gbps);

/* @caps_gbps: one cap per initiator (copied). */
HwMem *hw_mem_new(SimKernel *k, double ceiling_gbps, const double *caps_gbps,
                  uint32_t n_initiators);
void hw_mem_free(HwMem *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwMem, hw_mem_free)

void hw_mem_set_observer(HwMem *m, HwMemObserverFn fn, void *opaque);

/*
 * Start moving @bytes for @initiator, never faster than @demand_gbps
 * (<= 0: unbounded).  @done runs when the last byte has moved.  A flow of
 * 0 bytes with a demand is not allowed: time it with an event instead.
 */
HwFlow *hw_mem_start(HwMem *m, uint32_t initiator, uint64_t bytes,
                     double demand_gbps, HwFlowDoneFn done, void *opaque);

/* Stop @f before its end (a preempted kernel): the bytes it moved count,
 * @done will not run, @f is freed.  Returns the bytes still to move. */
uint64_t hw_mem_stop(HwMem *m, HwFlow *f);

/* Current rate of a flow (GB/s) and total of an initiator. */
double hw_mem_flow_gbps(const HwFlow *f);
double hw_mem_initiator_gbps(const HwMem *m, uint32_t initiator);
/* Bytes moved so far by @initiator. */
double hw_mem_initiator_bytes(const HwMem *m, uint32_t initiator);
/* Flows in progress. */
uint32_t hw_mem_active(const HwMem *m);

/*
 * Max-min fair shares of @cap among @n demands (water-filling), into
 * @alloc.  Exposed for tests and the probes.
 */
void hw_mem_waterfill(const double *demand, uint32_t n, double cap, double *alloc);

#endif /* HW_MEMORY_H */
