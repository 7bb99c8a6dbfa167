/*
 * sync.h - the cost of handing data from one processor to another
 * (HeteroLLM §3.1, §4.2).
 *
 * driver: the CPU blocks in a finish call until the producer's queue is
 *         idle, then copies the hand-off buffer through the conventional
 *         API (~400 us, whatever the size); the consumer's queue ran empty,
 *         so its next kernel also pays the queue restart (charged by the
 *         runtime: hw_dev_restart_ps, the stack's launch_idle_us).  Both
 *         block the one host thread (the runtime serialises them with submissions), and the
 *         finish drains the producer's queue: the executor makes it wait
 *         for all the host enqueued there before (in plan order) and holds
 *         back what comes after (sim/exec.c, host_order_edges).
 * fast:   buffers are mapped once into every processor (no copy); a sync
 *         thread sleeps for the producer's predicted time — usleep wakes
 *         at multiples of its granularity (80-100 us, HeteroLLM §4.2), so
 *         it sleeps the prediction rounded *down* and never oversleeps —
 *         then polls a flag the producer writes after its output: the
 *         hand-off costs one poll (a few us), whatever the granularity,
 *         which is why the SoC config has no key for it.
 */
#ifndef HW_SYNC_H
#define HW_SYNC_H

#include "hw/runtime.h"

/* Time from the producer's end to the consumer being free to start, ps
 * (what the runtime charges for the HW_OP_SYNC itself). */
SimTime hw_sync_cost_ps(const HwSoc *soc, HwSyncMech mech);

/* The whole hand-off to processor @to as a planner must count it: the
 * sync, plus — after a driver sync, which drained @to's queue — the
 * restart its next kernel pays (hw_dev_restart_ps: the runtime charges it
 * to that kernel).  One rule, used by both. */
SimTime hw_sync_handoff_ps(const HwSoc *soc, const HwStack *stack, HwSyncMech mech,
                           uint32_t to);

#endif /* HW_SYNC_H */
