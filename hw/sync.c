/*
 * sync.c - see sync.h.
 */
#include "hw/sync.h"

SimTime
hw_sync_cost_ps(const HwSoc *soc, HwSyncMech mech)
{
    if (mech == HW_SYNC_DRIVER) {
        return sim_time_from_us(soc->sync_driver.finish_us + soc->sync_driver.copy_us);
    }
    return sim_time_from_us(soc->sync_fast.poll_us);
}

SimTime
hw_sync_handoff_ps(const HwSoc *soc, const HwStack *stack, HwSyncMech mech, uint32_t to)
{
    SimTime t = hw_sync_cost_ps(soc, mech);
    if (mech == HW_SYNC_DRIVER) {
        t += hw_dev_restart_ps(g_ptr_array_index(soc->devs, to), stack);
    }
    return t;
}
