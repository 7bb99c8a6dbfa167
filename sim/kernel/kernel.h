/*
 * kernel.h - the discrete-event kernel.
 *
 * Events are ordered by (time, priority, insertion sequence), as SST's
 * Activity comparator does, so equal-time ties are reproducible: the same
 * inputs give the same event order byte for byte whatever the host thread
 * count.  An event can be cancelled or moved (the memory model moves
 * transfer completions whenever bandwidth shares change); a moved event
 * takes a fresh sequence number, exactly as if it were cancelled and
 * scheduled again.  Scheduling into the past is a bug and asserts;
 * scheduling beyond SIM_TIME_HORIZON_PS (clock.h) is the user's: the run
 * fails with HS_SIM_ERROR_HORIZON (see sim_kernel_fail).
 *
 * Components that hold outstanding work (devices with queued ops, the plan
 * executor with unfinished tasks) register a pending() and a dump() hook:
 * when the queue drains while some component still has pending work,
 * sim_kernel_run_all() fails with a deadlock report built from the dumps
 * (ChampSim's print_deadlock).
 *
 * Storage: a 4-ary min-heap of (time, order, slot, version) entries over a
 * pool of event slots with a free list.  Cancel and move are lazy: they bump
 * the slot's version, so the old heap entry goes stale and is dropped when
 * it reaches the top (move pushes a fresh entry).  Sifting therefore never
 * writes back-pointers into the slot pool, which is what makes the hot path
 * fast.  No allocation in steady state.
 *
 * A long queue (over 512 entries) keeps only the entries due first in the
 * heap and the later ones in the 64 buckets of a radix heap (Ahuja,
 * Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
 * problem", JACM 1990): an entry goes to the bucket of the highest bit in
 * which its time differs from the heap's, and when the heap runs dry the
 * lowest bucket is split down.  Simulated time never runs backwards, which
 * is all a radix heap needs; entries are appended and scanned in order
 * instead of sifted through a heap larger than the caches (a 262 144-event
 * hold model: 3-4 M events/s with the heap alone, 12-14 M with the
 * buckets).  Events still run in exact (time, priority, sequence) order.
 */
#ifndef SIM_KERNEL_H
#define SIM_KERNEL_H

#include <glib.h>
#include <stdint.h>

#include "sim/kernel/clock.h"

typedef struct SimKernel SimKernel;

/* Lower runs first among events at the same time. */
typedef uint8_t SimPrio;
enum {
    SIM_PRIO_FIRST  = 0,     /* bookkeeping that must precede everything */
    SIM_PRIO_DONE   = 64,    /* completions: free resources first... */
    SIM_PRIO_NORMAL = 128,   /* ...then start new work */
    SIM_PRIO_LAST   = 255,   /* samplers, end-of-step accounting */
};

/* Handle of a scheduled event; 0 is never a valid handle. */
typedef uint64_t SimEventId;

typedef void (*SimEventFn)(SimKernel *k, void *opaque);

/* How many items a component still waits on; 0 when idle. */
typedef uint64_t (*SimPendingFn)(void *opaque);
/* Describe what is waiting on what, one line per item, into @out. */
typedef void (*SimDumpFn)(void *opaque, GString *out);

SimKernel *sim_kernel_new(void);                 /* (transfer full) */
void sim_kernel_free(SimKernel *k);              /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimKernel, sim_kernel_free)

/* Current simulated time in ps. */
SimTime sim_kernel_now(const SimKernel *k);

/* Schedule @fn(@opaque) @delay_ps from now / at absolute @when_ps.  Past
 * SIM_TIME_HORIZON_PS the run fails (HS_SIM_ERROR_HORIZON, as with
 * sim_kernel_fail); the event is kept at the horizon, never to run, and its
 * id stays valid.  So does sim_kernel_move. */
SimEventId sim_kernel_schedule(SimKernel *k, SimTime delay_ps, SimPrio prio,
                               SimEventFn fn, void *opaque);
SimEventId sim_kernel_schedule_at(SimKernel *k, SimTime when_ps, SimPrio prio,
                                  SimEventFn fn, void *opaque);

/* Cancel a pending event.  FALSE if it already ran or was cancelled. */
gboolean sim_kernel_cancel(SimKernel *k, SimEventId id);

/* Move a pending event to @when_ps (>= now).  FALSE if it is not pending. */
gboolean sim_kernel_move(SimKernel *k, SimEventId id, SimTime when_ps);

/* Is @id still waiting to run? */
gboolean sim_kernel_is_pending(const SimKernel *k, SimEventId id);

/* Time of the event that runs next; SIM_TIME_MAX if the queue is empty. */
SimTime sim_kernel_next_time(const SimKernel *k);

/* Number of events waiting / run so far. */
uint64_t sim_kernel_queued(const SimKernel *k);
uint64_t sim_kernel_events_run(const SimKernel *k);

/*
 * Run events whose time is <= @until_ps, then set now to @until_ps if the
 * queue still holds later events (so a test can step time, as QEMU's
 * ptimer-test does).  Returns the number of events run.
 */
uint64_t sim_kernel_run_until(SimKernel *k, SimTime until_ps);

/*
 * Run until the queue is empty or sim_kernel_stop() is called.  FALSE with
 * HS_SIM_ERROR_DEADLOCK if the queue drained while a registered component
 * still has pending work (the message lists every component's dump), or
 * with the error of sim_kernel_fail (HS_SIM_ERROR_HORIZON: time beyond the
 * horizon).
 */
gboolean sim_kernel_run_all(SimKernel *k, GError **error);

/* Make the running sim_kernel_run_*() return after the current event. */
void sim_kernel_stop(SimKernel *k);

/*
 * A component cannot go on (a cost beyond the horizon found inside an
 * event): keep @error (transfer full; the first one wins, later ones are
 * freed) and stop.  The kernel stays stopped: sim_kernel_run_until() runs
 * nothing more and sim_kernel_run_all() returns FALSE with a copy of it.
 */
void sim_kernel_fail(SimKernel *k, GError *error);

/* The error the run failed with, or NULL.  (transfer none) */
const GError *sim_kernel_error(const SimKernel *k);

/* Register a component for deadlock reports.  @name is copied. */
void sim_kernel_register(SimKernel *k, const char *name, SimPendingFn pending,
                         SimDumpFn dump, void *opaque);

#endif /* SIM_KERNEL_H */
