/*
 * dvfs.c - operating points and governors (see dvfs.h).
 */
#include "hw/dvfs.h"
#include "sim/util/error.h"

#include <math.h>

const char *const hw_gov_name[] = { "performance", "schedutil", "simple_ondemand", NULL };
G_STATIC_ASSERT(G_N_ELEMENTS(hw_gov_name) == HW_GOV_COUNT + 1);

const char *const hw_governor_mode_name[] = { "ondemand", "performance", NULL };
G_STATIC_ASSERT(G_N_ELEMENTS(hw_governor_mode_name) == HW_GOVERNOR_COUNT + 1);

static const HsParam hw_opp_params[] = {
    HS_PARAM_F64_POS("freq_mhz", HwOpp, freq_mhz, 100000, HS_REQUIRED,
                     "clock of this operating point"),
    HS_PARAM_F64("volt_mv", HwOpp, volt_mv, 0, 5000, 0,
                 "supply voltage at this point (dynamic power ~ f V^2); or power_w"),
    HS_PARAM_F64("power_w", HwOpp, power_w, 0, 100, 0,
                 "measured power while busy at this point (only its ratio to the top "
                 "point's is used: the top point draws active_w); or volt_mv"),
    HS_PARAM_NAME_OPT("source", HwOpp, source, "where this point comes from (or a source on each number)"),
    HS_PARAM_END
};

/* One point on its own: a voltage or a power, not both, not neither. */
static gboolean
opp_check(void *elem, const cJSON *json, const char *path, GError **error)
{
    (void) json;
    const HwOpp *o = elem;
    if ((o->volt_mv > 0) == (o->power_w > 0)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected volt_mv or power_w above 0, one of them (got %s)", path,
                    o->volt_mv > 0 ? "both" : "neither");
        return FALSE;
    }
    return TRUE;
}

const HsParam hw_dvfs_params[] = {
    HS_PARAM_ENUM("governor", HwDvfs, governor, HwGovKind, hw_gov_name, HW_GOV_COUNT,
                  HW_GOV_PERFORMANCE,
                  "what picks the operating point: performance (the top one), schedutil "
                  "(Linux CPUs) or simple_ondemand (Linux devfreq, GPUs)"),
    HS_PARAM_NAME_OPT("source", HwDvfs, source, "where the governor comes from"),
    HS_PARAM_F64_POS("window_ms", HwDvfs, window_ms, 1000, 20,
                     "the governor's sampling period"),
    HS_PARAM_F64("up_pct", HwDvfs, up_pct, 1, 100, 90,
                 "simple_ondemand: busier than this (%) goes to the top point"),
    HS_PARAM_F64("down_pct", HwDvfs, down_pct, 0, 100, 5,
                 "simple_ondemand: within this (%) below up_pct the point stays"),
    HS_PARAM_F64("margin", HwDvfs, margin, 1, 4, 1.25,
                 "schedutil: frequency headroom over utilisation"),
    HS_PARAM_OBJ_ARRAY("points", HwDvfs, points, n_points, HwOpp, hw_opp_params, opp_check,
                       1, HW_DVFS_MAX_POINTS,
                       "operating points from the lowest frequency to the highest"),
    HS_PARAM_END
};

gboolean
hw_dvfs_realize(HwDvfs *d, double active_w, double idle_w, const char *path, GError **error)
{
    if (d->n_points == 0) {
        return TRUE;
    }
    if (d->down_pct >= d->up_pct) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.down_pct: expected less than up_pct (%g) (got %g)", path, d->up_pct,
                    d->down_pct);
        return FALSE;
    }
    gboolean volts = d->points[0].volt_mv > 0;
    for (uint32_t k = 0; k < d->n_points; k++) {
        const HwOpp *o = &d->points[k];
        if ((o->volt_mv > 0) != volts) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s.points[%u]: expected %s as in points[0] (got %s): a table gives "
                        "voltages or powers throughout", path, k, volts ? "volt_mv" : "power_w",
                        volts ? "power_w" : "volt_mv");
            return FALSE;
        }
        if (k == 0) {
            continue;
        }
        const HwOpp *prev = &d->points[k - 1];
        if (!(o->freq_mhz > prev->freq_mhz)) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s.points[%u].freq_mhz: expected more than points[%u]'s %g MHz, "
                        "points going from the lowest frequency to the highest (got %g)",
                        path, k, k - 1, prev->freq_mhz, o->freq_mhz);
            return FALSE;
        }
        const char *key = volts ? "volt_mv" : "power_w";
        double v = volts ? o->volt_mv : o->power_w, pv = volts ? prev->volt_mv : prev->power_w;
        if (v < pv) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s.points[%u].%s: expected at least points[%u]'s %g, a faster point "
                        "never running on less (got %g)", path, k, key, k - 1, pv, v);
            return FALSE;
        }
    }
    if (active_w < idle_w) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected the processor's active_w (%g) at least its idle_w (%g) "
                    "to scale its dynamic power", path, active_w, idle_w);
        return FALSE;
    }
    uint32_t top = hw_dvfs_top(d);
    const HwOpp *t = &d->points[top];
    for (uint32_t k = 0; k < top; k++) {
        const HwOpp *o = &d->points[k];
        double share = volts ? (o->freq_mhz * o->volt_mv * o->volt_mv) /
                               (t->freq_mhz * t->volt_mv * t->volt_mv)
                             : o->power_w / t->power_w;
        d->busy_w[k] = idle_w + (active_w - idle_w) * share;
    }
    d->busy_w[top] = active_w;       /* exactly: performance draws what it always did */
    return TRUE;
}

void
hw_dvfs_clear(HwDvfs *d)
{
    hs_param_clear(hw_dvfs_params, d);
}

double
hw_dvfs_slowdown(const HwDvfs *d, uint32_t k)
{
    if (d->n_points == 0 || k >= hw_dvfs_top(d)) {
        return 1.0;
    }
    return d->points[hw_dvfs_top(d)].freq_mhz / d->points[k].freq_mhz;
}

/* The lowest point whose frequency is at least @f_mhz (the top if none). */
static uint32_t
ceil_point(const HwDvfs *d, double f_mhz)
{
    for (uint32_t k = 0; k < d->n_points; k++) {
        if (d->points[k].freq_mhz >= f_mhz) {
            return k;
        }
    }
    return hw_dvfs_top(d);
}

uint32_t
hw_dvfs_next(const HwDvfs *d, uint32_t cur, double busy_frac)
{
    uint32_t top = hw_dvfs_top(d);
    if (d->n_points == 0) {
        return 0;
    }
    double u = CLAMP(busy_frac, 0.0, 1.0);
    double f_cur = d->points[MIN(cur, top)].freq_mhz, f_top = d->points[top].freq_mhz;
    switch (d->governor) {
    case HW_GOV_SCHEDUTIL:
        return ceil_point(d, d->margin * f_top * (u * f_cur / f_top));
    case HW_GOV_SIMPLE_ONDEMAND:
        if (u * 100 > d->up_pct) {
            return top;
        }
        if (u * 100 > d->up_pct - d->down_pct) {
            return cur;
        }
        return ceil_point(d, f_cur * u * 100 / (d->up_pct - d->down_pct / 2));
    case HW_GOV_PERFORMANCE:
    case HW_GOV_COUNT:
        break;
    }
    return top;
}
