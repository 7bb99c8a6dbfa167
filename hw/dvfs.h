/*
 * dvfs.h - a processor's operating points and the governor that picks one
 * (dynamic voltage and frequency scaling).
 *
 * A processor's "dvfs" block in the SoC config lists its operating points
 * from the lowest frequency to the highest, each with its voltage (or a
 * measured power), and names the governor its driver runs:
 *
 *   "dvfs": {
 *     "governor": "simple_ondemand", "window_ms": 50,
 *     "points": [ {"freq_mhz": 231, "volt_mv": 580, "source": "..."}, ... ]
 *   }
 *
 * Power while busy at point k: the processor's idle_w (leakage, the floor)
 * plus its dynamic part, (active_w - idle_w), scaled by f_k V_k^2 /
 * (f_top V_top^2) (CMOS dynamic power ~ C f V^2), or by power_w_k /
 * power_w_top when the points give measured powers.  At the top point it
 * is active_w exactly, so a processor pinned there (`performance`) draws
 * what it always did.  Time follows the clock: a kernel's compute time
 * stretches by f_top / f_k (hw/runtime.c); its DRAM traffic does not (the
 * DRAM has its own clock).
 *
 * Governors, evaluated at the end of every window of simulated time from
 * the processor's busy fraction u over that window (sim/exec.c drives
 * them; this file answers "which point next"):
 *   performance      the top point always (QNN's burst power mode pins the
 *                    HTP: dcvsEnable = 0, the max voltage corner).
 *   schedutil        Linux's CPU governor: util = u f_cur / f_top (PELT
 *                    scales utilisation by the current frequency), next
 *                    f = 1.25 f_top util, the lowest point at or above it
 *                    (kernel/sched/cpufreq_schedutil.c get_next_freq).  A
 *                    window average stands for PELT's decaying one.
 *   simple_ondemand  Linux devfreq's (drivers/devfreq/
 *                    governor_simpleondemand.c, which msm's GPU devfreq
 *                    uses): u above up_pct -> the top point; above up_pct -
 *                    down_pct -> stay; else f = f_cur u / (up_pct -
 *                    down_pct / 2), the lowest point at or above it.
 * A run starts warm, every processor at its top point (the papers measure
 * after warm-up runs), so a processor kept busy never leaves it.
 */
#ifndef HW_DVFS_H
#define HW_DVFS_H

#include <glib.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "sim/util/param.h"

/* Operating points one processor may list (a table's length). */
#define HW_DVFS_MAX_POINTS 32

typedef enum {
    HW_GOV_PERFORMANCE,
    HW_GOV_SCHEDUTIL,
    HW_GOV_SIMPLE_ONDEMAND,
    HW_GOV_COUNT
} HwGovKind;

extern const char *const hw_gov_name[];     /* HW_GOV_COUNT + 1 entries, NULL-ended */

/* The run's choice (`--governor`, the SoC's "governor" key). */
typedef enum {
    HW_GOVERNOR_ONDEMAND,        /* each processor runs its own governor */
    HW_GOVERNOR_PERFORMANCE,     /* every processor pinned at its top point */
    HW_GOVERNOR_COUNT
} HwGovernorMode;

extern const char *const hw_governor_mode_name[];   /* HW_GOVERNOR_COUNT + 1, NULL-ended */

typedef struct HwOpp {
    double freq_mhz;
    double volt_mv;              /* 0: not given (power_w is) */
    double power_w;              /* 0: not given (volt_mv is) */
    char *source;                /* where the point comes from */
} HwOpp;

typedef struct HwDvfs {
    HwOpp *points;               /* by rising frequency (transfer full) */
    uint32_t n_points;           /* 0: no table, always at active_w */
    HwGovKind governor;
    char *source;                /* where the governor comes from */
    double window_ms;            /* the governor's sampling period */
    double up_pct, down_pct;     /* simple_ondemand's thresholds */
    double margin;               /* schedutil's headroom (1.25) */
    /* derived by hw_dvfs_realize */
    double busy_w[HW_DVFS_MAX_POINTS];   /* power while busy at each point */
} HwDvfs;

/* The keys of a "dvfs" block (for hs_param_apply and `soc describe`). */
extern const HsParam hw_dvfs_params[];

/* Check @d (read from @path by hw_dvfs_params) and derive busy_w from the
 * processor's @active_w and @idle_w.  Errors name the JSON path. */
gboolean hw_dvfs_realize(HwDvfs *d, double active_w, double idle_w, const char *path,
                         GError **error);
void hw_dvfs_clear(HwDvfs *d);

/* The top point (0 for a processor without a table). */
static inline uint32_t
hw_dvfs_top(const HwDvfs *d)
{
    return d->n_points ? d->n_points - 1 : 0;
}

/* f_top / f at point @k: how much longer compute takes there (1 at the top). */
double hw_dvfs_slowdown(const HwDvfs *d, uint32_t k);

/* The point the governor picks after a window in which the processor was
 * busy @busy_frac (0..1) of the time at point @cur. */
uint32_t hw_dvfs_next(const HwDvfs *d, uint32_t cur, double busy_frac);

#endif /* HW_DVFS_H */
