/*
 * energy.c - the SoC's power model (see energy.h).
 */
#include "hw/energy.h"

#include "hw/dev.h"

double
hw_energy_busy_w(const HwSoc *soc, uint32_t p, uint32_t k)
{
    const HwDvfs *d = &soc->dvfs[p];
    if (d->n_points == 0) {
        return ((const HwDev *) g_ptr_array_index(soc->devs, p))->active_w;
    }
    return d->busy_w[MIN(k, hw_dvfs_top(d))];
}

double
hw_energy_j(const HwSoc *soc, double secs, const double *busy_s, const double *point_s,
            double dram_bytes)
{
    double j = soc->mem.idle_w * secs;
    for (guint p = 0; p < soc->devs->len; p++) {
        const HwDev *d = g_ptr_array_index(soc->devs, p);
        double busy = CLAMP(busy_s[p], 0.0, secs);
        double act;
        if (point_s == NULL) {
            act = d->active_w * busy;
        } else {
            /* zeros added to one top-point product leave it exact: pinned
             * at the top this is active_w x busy, to the bit */
            act = 0;
            for (uint32_t k = 0; k < HW_DVFS_MAX_POINTS; k++) {
                double s = point_s[p * HW_DVFS_MAX_POINTS + k];
                if (s != 0) {
                    act += hw_energy_busy_w(soc, p, k) * s;
                }
            }
        }
        j += act + d->idle_w * (secs - busy);
    }
    j += dram_bytes * soc->mem.energy_pj_per_byte * 1e-12;
    if (soc->baseline_w > 0) {
        j += soc->baseline_w * secs;
    }
    return j;
}
