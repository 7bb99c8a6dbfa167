/*
 * analyse.c - the fit and what it is worth: the weighted log residuals,
 * several deterministic starts of the fitting method, the Jacobian at the
 * optimum (central differences in the optimiser's space), the covariance
 * s^2 (J^T J)^-1 and its 95 % intervals, warnings for keys the data do not
 * constrain or that trade off, and leave-one-out refits.
 *
 * Measurements of one objective call are evaluated in parallel (OpenMP):
 * each is an independent run whose value lands in its own slot, and the
 * sum is taken afterwards in measurement order, so the result is the same
 * whatever OMP_NUM_THREADS.
 */
#include "sim/calibrate/calibrate.h"
#include "sim/util/error.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

/* a failed run at a candidate: the objective there (the optimiser moves
 * away; the failure is an error only at the optimum or the first start) */
#define FAILED_COST 1e12

typedef struct Ctx {
    const HsCalSpec *s;
    const gboolean *use;         /* n_meas: measurements in the fit (NULL: all) */
    double lb[HS_CAL_MAX_KEYS], ub[HS_CAL_MAX_KEYS];
    guint evals;
    GError *first_error;         /* the first failed run, for the message */
} Ctx;

static double
to_x(const HsCalKey *k, double u)
{
    return k->log ? exp(u) : u;
}

static double
to_u(const HsCalKey *k, double x)
{
    return k->log ? log(x) : x;
}

/* standard deviation of ln(value) */
static double
sigma_log(const HsCalMeas *m)
{
    return m->absolute ? m->uncertainty / m->value : log1p(m->uncertainty);
}

/* residuals at @u: one per used measurement, then one per prior;
 * simulated values to @sim (n_meas, may be NULL).  Returns the count,
 * or -1 with *error. */
static int
residuals(Ctx *c, const double *u, double *r, double *sim, GError **error)
{
    const HsCalSpec *s = c->s;
    double x[HS_CAL_MAX_KEYS];
    for (guint k = 0; k < s->n_keys; k++) {
        x[k] = fmin(fmax(to_x(&s->keys[k], u[k]), s->keys[k].lo), s->keys[k].hi);
    }
    g_auto(GStrv) set = hs_cal_overrides(s, x);
    g_autofree double *v = g_new(double, s->n_meas);
    g_autofree GError **err = g_new0(GError *, s->n_meas);
    int n = (int) s->n_meas;
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        v[i] = NAN;
        if (c->use == NULL || c->use[i] || sim) {
            hs_cal_eval(&s->meas[i], (const char *const *) set, &v[i], &err[i]);
        }
    }
    int m = 0, bad = -1;
    for (int i = 0; i < n; i++) {
        if (sim) {
            sim[i] = v[i];
        }
        if (c->use && !c->use[i]) {
            g_clear_error(&err[i]);
            continue;
        }
        if (err[i] && bad < 0) {
            bad = i;
        }
        r[m++] = err[i] ? 0 : (log(v[i]) - log(s->meas[i].value)) / sigma_log(&s->meas[i]);
    }
    if (bad >= 0) {
        g_propagate_error(error, err[bad]);
        err[bad] = NULL;
    }
    for (int i = 0; i < n; i++) {
        g_clear_error(&err[i]);
    }
    if (bad >= 0) {
        return -1;
    }
    for (guint k = 0; k < s->n_keys; k++) {
        const HsCalKey *key = &s->keys[k];
        if (key->has_prior) {
            r[m++] = (x[k] - key->prior) / key->prior_spread;
        }
    }
    return m;
}

static guint
n_residuals(const HsCalSpec *s)
{
    guint m = s->n_meas;
    for (guint k = 0; k < s->n_keys; k++) {
        m += s->keys[k].has_prior;
    }
    return m;
}

static double
objective(unsigned n, const double *u, void *opaque)
{
    Ctx *c = opaque;
    (void) n;
    c->evals++;
    g_autofree double *r = g_new(double, n_residuals(c->s));
    GError *e = NULL;
    int m = residuals(c, u, r, NULL, &e);
    if (m < 0) {
        if (c->first_error == NULL) {
            c->first_error = e;
        } else {
            g_error_free(e);
        }
        return FAILED_COST;
    }
    double f = 0;
    for (int i = 0; i < m; i++) {
        f += r[i] * r[i];
    }
    return f;
}

/* the radical-inverse (Halton) sequence: a deterministic, evenly spread
 * point @i of the unit cube's dimension @d */
static double
halton(guint i, guint d)
{
    static const guint primes[] = { 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53 };
    G_STATIC_ASSERT(G_N_ELEMENTS(primes) >= HS_CAL_MAX_KEYS);
    double f = 1, r = 0;
    for (guint b = primes[d]; i > 0; i /= b) {
        f /= b;
        r += f * (i % b);
    }
    return r;
}

/* the fit over the measurements @use, from the starts; best u to @u */
static gboolean
fit_once(Ctx *c, guint starts, const double *first, double *u, double *cost, GError **error)
{
    const HsCalSpec *s = c->s;
    unsigned p = s->n_keys;
    double best = HUGE_VAL;
    for (guint st = 0; st < starts; st++) {
        double u0[HS_CAL_MAX_KEYS], f = 0;
        for (unsigned k = 0; k < p; k++) {
            u0[k] = st == 0 ? first[k]
                            : c->lb[k] + (c->ub[k] - c->lb[k]) * halton(st, k);
        }
        if (!hs_cal_minimise(p, objective, c, c->lb, c->ub, u0, s->max_evals, &f, error)) {
            return FALSE;
        }
        if (f < best) {
            best = f;
            memcpy(u, u0, sizeof(double) * p);
        }
    }
    if (best >= FAILED_COST) {
        /* no candidate ran: the spec's runs fail whatever the keys */
        g_propagate_error(error, c->first_error);
        c->first_error = NULL;
        return FALSE;
    }
    g_clear_error(&c->first_error);
    *cost = best;
    return TRUE;
}

/* eigenvalues and vectors of the symmetric @n x @n @a (cyclic Jacobi:
 * n <= 16, exact enough and deterministic); a is destroyed */
static void
eigen(int n, double a[HS_CAL_MAX_KEYS][HS_CAL_MAX_KEYS], double *w,
      double v[HS_CAL_MAX_KEYS][HS_CAL_MAX_KEYS])
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            v[i][j] = i == j;
        }
    }
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                off += a[i][j] * a[i][j];
            }
        }
        if (off < 1e-30) {
            break;
        }
        for (int p = 0; p < n; p++) {
            for (int q = p + 1; q < n; q++) {
                if (fabs(a[p][q]) < 1e-300) {
                    continue;
                }
                double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double cs = 1 / sqrt(t * t + 1), sn = t * cs;
                for (int k = 0; k < n; k++) {
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = cs * akp - sn * akq;
                    a[k][q] = sn * akp + cs * akq;
                }
                for (int k = 0; k < n; k++) {
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = cs * apk - sn * aqk;
                    a[q][k] = sn * apk + cs * aqk;
                }
                for (int k = 0; k < n; k++) {
                    double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = cs * vkp - sn * vkq;
                    v[k][q] = sn * vkp + cs * vkq;
                }
            }
        }
    }
    for (int i = 0; i < n; i++) {
        w[i] = a[i][i];
    }
}

static void
warn(HsCalResult *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void
warn(HsCalResult *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_ptr_array_add(r->warnings, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

/* the Jacobian at @u, the covariance and what it says */
static gboolean
analyse(Ctx *c, const double *u, HsCalResult *res, GError **error)
{
    const HsCalSpec *s = c->s;
    int p = (int) s->n_keys, m = (int) n_residuals(s);
    g_autofree double *j = g_new0(double, (gsize) m * p);
    g_autofree double *rp = g_new(double, m), *rm = g_new(double, m);
    for (int k = 0; k < p; k++) {
        const HsCalKey *key = &s->keys[k];
        /* a thousandth of the box, and for an integer key at least the
         * step that moves it by one */
        double h = 1e-3 * (c->ub[k] - c->lb[k]);
        if (key->integer) {
            /* an integer key is most often a size whose effect is a
             * staircase (passes, tiles): the secant over a fiftieth of
             * the box sees its slope where a step of one sees a flat */
            double x = to_x(key, u[k]);
            h = fmax(0.02 * (c->ub[k] - c->lb[k]), key->log ? log((x + 1.5) / x) : 1.5);
        }
        double up[HS_CAL_MAX_KEYS], dn[HS_CAL_MAX_KEYS];
        memcpy(up, u, sizeof(double) * p);
        memcpy(dn, u, sizeof(double) * p);
        up[k] = fmin(u[k] + h, c->ub[k]);
        dn[k] = fmax(u[k] - h, c->lb[k]);
        if (residuals(c, up, rp, NULL, error) < 0 || residuals(c, dn, rm, NULL, error) < 0) {
            return FALSE;
        }
        c->evals += 2;
        for (int i = 0; i < m; i++) {
            j[i * p + k] = (rp[i] - rm[i]) / (up[k] - dn[k]);
        }
    }
    double jtj[HS_CAL_MAX_KEYS][HS_CAL_MAX_KEYS] = { { 0 } };
    for (int a = 0; a < p; a++) {
        for (int b = 0; b < p; b++) {
            for (int i = 0; i < m; i++) {
                jtj[a][b] += j[i * p + a] * j[i * p + b];
            }
        }
    }
    double w[HS_CAL_MAX_KEYS], v[HS_CAL_MAX_KEYS][HS_CAL_MAX_KEYS];
    eigen(p, jtj, w, v);
    double wmax = 0, wmin = HUGE_VAL;
    for (int k = 0; k < p; k++) {
        wmax = fmax(wmax, w[k]);
        wmin = fmin(wmin, w[k]);
    }
    res->sv_min_ratio = wmax > 0 ? sqrt(fmax(wmin, 0) / wmax) : 0;
    /* residual variance: the uncertainties are standard deviations, so
     * s^2 = 1 when they are all absolute; otherwise the residuals may say
     * they were too small (s^2 = cost / (m - p) when above 1), never that
     * they were too large (a perfect fit of noise-free data would give
     * intervals of zero width) */
    gboolean all_abs = TRUE;
    for (guint i = 0; i < s->n_meas; i++) {
        all_abs = all_abs && s->meas[i].absolute;
    }
    res->s2 = !all_abs && m > p ? fmax(1.0, res->cost / (m - p)) : 1.0;
    /* pseudo-inverse: an eigenvalue below 1e-12 of the largest is a
     * direction the data do not see */
    double cov[HS_CAL_MAX_KEYS][HS_CAL_MAX_KEYS] = { { 0 } };
    gboolean blind[HS_CAL_MAX_KEYS] = { 0 };
    for (int e = 0; e < p; e++) {
        if (!(w[e] > 1e-12 * wmax) || wmax == 0) {
            for (int k = 0; k < p; k++) {
                blind[k] = blind[k] || fabs(v[k][e]) > 0.1;
            }
            continue;
        }
        for (int a = 0; a < p; a++) {
            for (int b = 0; b < p; b++) {
                cov[a][b] += res->s2 * v[a][e] * v[b][e] / w[e];
            }
        }
    }
    for (int k = 0; k < p; k++) {
        const HsCalKey *key = &s->keys[k];
        HsCalKeyResult *kr = &res->keys[k];
        double x = fmin(fmax(to_x(key, u[k]), key->lo), key->hi);
        kr->value = key->integer ? round(x) : x;
        double box = c->ub[k] - c->lb[k];
        kr->sd_u = blind[k] ? HUGE_VAL : sqrt(fmax(cov[k][k], 0));
        double lo = u[k] - 1.96 * kr->sd_u, hi = u[k] + 1.96 * kr->sd_u;
        kr->lo95 = blind[k] ? key->lo : fmax(key->lo, to_x(key, fmax(lo, c->lb[k])));
        kr->hi95 = blind[k] ? key->hi : fmin(key->hi, to_x(key, fmin(hi, c->ub[k])));
        kr->at_bound = u[k] - c->lb[k] < 1e-4 * box || c->ub[k] - u[k] < 1e-4 * box;
        kr->unconstrained = blind[k] || 2 * 1.96 * kr->sd_u > 0.5 * box;
        if (kr->unconstrained) {
            warn(res, "%s is not constrained by the data: %s", key->path,
                 blind[k] ? "the residuals do not change with it (a zero singular value of "
                            "the Jacobian)"
                          : "its 95 % interval spans over half its bounds");
        }
        if (kr->at_bound) {
            warn(res, "%s sits at a bound (%g): the data ask for a value outside [%g, %g], "
                      "or the key does not move them", key->path, kr->value, key->lo, key->hi);
        }
    }
    for (int a = 0; a < p; a++) {
        for (int b = 0; b < p; b++) {
            double d = sqrt(cov[a][a] * cov[b][b]);
            res->corr[a][b] = a == b ? 1 : d > 0 ? cov[a][b] / d : 0;
        }
    }
    for (int a = 0; a < p; a++) {
        for (int b = a + 1; b < p; b++) {
            if (fabs(res->corr[a][b]) > 0.9 && !blind[a] && !blind[b]) {
                warn(res, "%s and %s trade off (correlation %+.2f): the data fix a "
                          "combination of them, not each", s->keys[a].path, s->keys[b].path,
                     res->corr[a][b]);
            }
        }
    }
    return TRUE;
}

void
hs_cal_result_free(HsCalResult *r)
{
    if (r == NULL) {
        return;
    }
    g_free(r->meas);
    if (r->warnings) {
        g_ptr_array_free(r->warnings, TRUE);
    }
    g_free(r);
}

HsCalResult *
hs_cal_fit(const HsCalSpec *s, gboolean loo, GError **error)
{
    g_autoptr(HsCalResult) res = g_new0(HsCalResult, 1);
    res->meas = g_new0(HsCalMeasResult, s->n_meas);
    res->warnings = g_ptr_array_new_with_free_func(g_free);
    Ctx c = { .s = s };
    double first[HS_CAL_MAX_KEYS], u[HS_CAL_MAX_KEYS];
    for (guint k = 0; k < s->n_keys; k++) {
        const HsCalKey *key = &s->keys[k];
        c.lb[k] = to_u(key, key->lo);
        c.ub[k] = to_u(key, key->hi);
        first[k] = key->has_start ? to_u(key, key->start)
                 : key->has_prior ? to_u(key, key->prior)
                                  : 0.5 * (c.lb[k] + c.ub[k]);
    }
    /* the first start's runs: a spec whose runs fail fails here, with
     * the run's own message */
    g_autofree double *r0 = g_new(double, n_residuals(s));
    if (residuals(&c, first, r0, NULL, error) < 0) {
        return NULL;
    }
    if (!fit_once(&c, s->starts, first, u, &res->cost, error)) {
        return NULL;
    }
    g_autofree double *r = g_new(double, n_residuals(s));
    g_autofree double *sim = g_new(double, s->n_meas);
    if (residuals(&c, u, r, sim, error) < 0 || !analyse(&c, u, res, error)) {
        return NULL;
    }
    for (guint i = 0; i < s->n_meas; i++) {
        HsCalMeasResult *mr = &res->meas[i];
        mr->simulated = sim[i];
        mr->error_pct = 100 * (sim[i] - s->meas[i].value) / s->meas[i].value;
        mr->residual = r[i];
        mr->loo_simulated = mr->loo_error_pct = NAN;
        if (fabs(r[i]) > 3) {
            warn(res, "%s misses by %+.1f %% (%.1f standard deviations): it contradicts the "
                      "others, or the model cannot reach it with these keys", s->meas[i].id,
                 mr->error_pct, r[i]);
        }
    }
    if (loo && s->n_meas > 1) {
        g_autofree gboolean *use = g_new(gboolean, s->n_meas);
        for (guint out = 0; out < s->n_meas; out++) {
            for (guint i = 0; i < s->n_meas; i++) {
                use[i] = i != out;
            }
            Ctx lc = c;
            lc.use = use;
            lc.evals = 0;
            lc.first_error = NULL;
            double lu[HS_CAL_MAX_KEYS], cost;
            /* one start, from the full fit's optimum: the refit answers
             * "how far does this one measurement pull the keys" */
            if (!fit_once(&lc, 1, u, lu, &cost, error) ||
                residuals(&lc, lu, r, sim, error) < 0) {
                return NULL;
            }
            c.evals += lc.evals;
            HsCalMeasResult *mr = &res->meas[out];
            mr->loo_simulated = sim[out];
            mr->loo_error_pct = 100 * (sim[out] - s->meas[out].value) / s->meas[out].value;
        }
    }
    res->evals = c.evals;
    return g_steal_pointer(&res);
}
