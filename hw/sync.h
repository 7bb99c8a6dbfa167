/*
 * sync.h - the cost of handing data from one processor to another
 * (HeteroLLM §3.1, §4.2).
 *
 * driver: what the conventional path does per hand-off, in order, on the
 *         one host thread:
 *         1. finish: the host blocks in the producer's finish call
 *            (clFinish / the QNN execute returning) and sleeps in the
 *            kernel until the driver wakes it (finish_us, the same for any
 *            size);
 *         2. copy: the hand-off buffer goes through the conventional API
 *            (clEnqueueRead/WriteBuffer or map/unmap; a QNN tensor not
 *            allocated with rpcmem is copied through FastRPC's buffer): a
 *            per-call part (copy_us, HeteroLLM §3.1's ~400 us) and a part
 *            per byte handed over (copy_gbps);
 *         3. cache maintenance of those bytes (clean for the device to
 *            read, invalidate for the CPU to read) where the accelerator
 *            is not IO-coherent with the CPU (maint_gbps; 0 = coherent);
 *         4. the consumer's queue ran empty, so its next kernel pays the
 *            queue restart (charged by the runtime: hw_dev_restart_ps, the
 *            stack's launch_idle_us).
 *         The bytes are what the producer wrote of the node handed over
 *         (an NPU slice padded to its static shape hands over the padded
 *         tensor, as QNN's output is): one token's activations in decode
 *         (KiB: the fixed parts dominate, whatever the model), S tokens'
 *         in prefill (MiB).  Weights are never handed over: they stay in
 *         each processor's buffers (OpenCL buffers, the QNN graph's static
 *         tensors) for the whole run.  Finish and copy block the host
 *         (the runtime serialises them with submissions), and the finish
 *         drains the producer's queue: the executor makes it wait for all
 *         the host enqueued there before (in plan order) and holds back
 *         what comes after (sim/exec.c, host_order_edges).
 * fast:   buffers are mapped once into every processor (no copy, no
 *         maintenance); a sync thread sleeps for the producer's predicted
 *         time — usleep wakes at multiples of its granularity (80-100 us,
 *         HeteroLLM §4.2), so it sleeps the prediction rounded *down* and
 *         never oversleeps — then polls a flag the producer writes after
 *         its output: the hand-off costs one poll (a few us), whatever the
 *         granularity or the size, which is why the SoC config has no key
 *         for either.
 */
#ifndef HW_SYNC_H
#define HW_SYNC_H

#include "hw/runtime.h"

/* Time from the producer's end to the consumer being free to start, ps
 * (what the runtime charges for the HW_OP_SYNC itself), handing over
 * @bytes.  @wakes: the host slept in the finish call and must be woken
 * (FALSE when the producer had ended before the host called it: the call
 * returns at once). */
SimTime hw_sync_cost_ps(const HwSoc *soc, HwSyncMech mech, uint64_t bytes, gboolean wakes);

/* The whole hand-off of @bytes to processor @to as a planner must count
 * it (the host waiting in the finish call): the sync, plus — after a driver sync, which drained @to's queue —
 * the restart its next kernel pays (hw_dev_restart_ps: the runtime charges
 * it to that kernel).  One rule, used by both. */
SimTime hw_sync_handoff_ps(const HwSoc *soc, const HwStack *stack, HwSyncMech mech,
                           uint32_t to, uint64_t bytes);

#endif /* HW_SYNC_H */
