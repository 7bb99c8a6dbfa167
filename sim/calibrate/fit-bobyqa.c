/*
 * fit-bobyqa.c - the fitting method: NLopt's BOBYQA (Powell 2009), a
 * bounded derivative-free minimiser built on quadratic models, suited to
 * a least-squares objective whose every evaluation is a set of simulator
 * runs (no gradients; a few hundred calls).  NLopt is packaged
 * (libnlopt-dev), its BOBYQA is BSD-licensed.  Another method is another
 * fit-*.c defining hs_cal_minimise.
 */
#include "sim/calibrate/calibrate.h"
#include "sim/util/error.h"

#include <math.h>
#include <nlopt.h>

const char *const hs_cal_method_name = "NLopt BOBYQA";

typedef struct Wrap {
    HsCalObjective f;
    void *opaque;
} Wrap;

static double
call(unsigned n, const double *u, double *grad, void *data)
{
    Wrap *w = data;
    (void) grad;                 /* BOBYQA never asks */
    return w->f(n, u, w->opaque);
}

gboolean
hs_cal_minimise(unsigned n, HsCalObjective f, void *opaque, const double *lb, const double *ub,
                double *u, guint max_evals, double *f_best, GError **error)
{
    nlopt_opt opt = nlopt_create(NLOPT_LN_BOBYQA, n);
    Wrap w = { f, opaque };
    double step[HS_CAL_MAX_KEYS];
    for (unsigned k = 0; k < n; k++) {
        /* a tenth of the box: BOBYQA's trust region starts there */
        step[k] = 0.1 * (ub[k] - lb[k]);
        u[k] = fmin(fmax(u[k], lb[k]), ub[k]);
    }
    nlopt_set_lower_bounds(opt, lb);
    nlopt_set_upper_bounds(opt, ub);
    nlopt_set_initial_step(opt, step);
    nlopt_set_min_objective(opt, call, &w);
    nlopt_set_maxeval(opt, (int) max_evals);
    nlopt_set_xtol_rel(opt, 1e-5);
    nlopt_set_ftol_abs(opt, 1e-10);
    double fb = HUGE_VAL;
    nlopt_result r = nlopt_optimize(opt, u, &fb);
    nlopt_destroy(opt);
    if (r < 0 && r != NLOPT_ROUNDOFF_LIMITED && r != NLOPT_FORCED_STOP) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "calibrate: the optimiser failed (NLopt code %d)", (int) r);
        return FALSE;
    }
    *f_best = fb;
    return TRUE;
}
