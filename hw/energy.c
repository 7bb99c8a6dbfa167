/*
 * energy.c - the SoC's power model (see energy.h).
 */
#include "hw/energy.h"

#include "hw/dev.h"

double
hw_energy_j(const HwSoc *soc, double secs, const double *busy_s, double dram_bytes)
{
    double j = soc->mem.idle_w * secs;
    for (guint p = 0; p < soc->devs->len; p++) {
        const HwDev *d = g_ptr_array_index(soc->devs, p);
        double busy = CLAMP(busy_s[p], 0.0, secs);
        j += d->active_w * busy + d->idle_w * (secs - busy);
    }
    return j + dram_bytes * soc->mem.energy_pj_per_byte * 1e-12;
}
