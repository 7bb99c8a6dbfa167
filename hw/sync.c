/*
 * sync.c - see sync.h.
 */
#include "hw/sync.h"

/* Seconds per byte at @gbps (GB/s), in us per byte; 0 for a rate of 0
 * (that part absent). */
static double
us_per_byte(double gbps)
{
    return gbps > 0 ? 1e-3 / gbps : 0;
}

SimTime
hw_sync_cost_ps(const HwSoc *soc, HwSyncMech mech, uint64_t bytes, gboolean wakes)
{
    if (mech == HW_SYNC_DRIVER) {
        const HwSyncDriverParams *p = &soc->sync_driver;
        /* no bytes, no per-byte part (0 x the infinite time of a rate at
         * the bottom of its range would be NaN) */
        double per_byte_us = us_per_byte(p->copy_gbps) + us_per_byte(p->maint_gbps);
        double bytes_us = bytes ? (double) bytes * per_byte_us : 0;
        return sim_time_from_us((wakes ? p->finish_us : 0) + p->copy_us + bytes_us);
    }
    return sim_time_from_us(soc->sync_fast.poll_us);
}

SimTime
hw_sync_handoff_ps(const HwSoc *soc, const HwStack *stack, HwSyncMech mech, uint32_t to,
                   uint64_t bytes)
{
    SimTime t = hw_sync_cost_ps(soc, mech, bytes, TRUE);
    if (mech == HW_SYNC_DRIVER) {
        t += hw_dev_restart_ps(g_ptr_array_index(soc->devs, to), stack);
    }
    return t;
}
