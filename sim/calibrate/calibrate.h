/*
 * calibrate.h - `hetero-sim calibrate SPEC`: fit config keys of a SoC or a
 * software stack to measurements, and say how far to trust them.
 *
 * A client of the run API, like `sweep`: a candidate value of the free
 * keys is a list of `--set KEY=VALUE` overrides (sim/util/override.h), so
 * the loaders' own param tables check it; each measurement is a point as
 * `validate` reads them (sim/cli/points.h: its metric names, workloads,
 * baselines), run timing-only under those overrides.  The fit minimises
 *   sum_i ((ln sim_i - ln value_i) / sigma_i)^2 + sum_k ((x_k - prior_k) / spread_k)^2
 * with sigma_i = ln(1 + relative uncertainty), over the keys in the
 * optimiser's space (ln x for a key whose range is positive), from
 * several deterministic starts.  It owns no timing model.
 *
 * spec.c: the spec (JSON, a points file's rows, a CSV of measurements).
 * eval.c: one measurement's simulated value under overrides.
 * fit-bobyqa.c: the fitting method (NLopt's BOBYQA): one file per method.
 * analyse.c: the objective, the starts, the Jacobian at the optimum, the
 * intervals, warnings, leave-one-out.  cmd-calibrate.c: the command.
 */
#ifndef HS_CALIBRATE_H
#define HS_CALIBRATE_H

#include "sim/cli/points.h"
#include "sim/cli/probe-ops.h"

#include <glib.h>
#include <cjson/cJSON.h>

/* most keys and measurements one spec may hold: a fit evaluates every
 * measurement per objective call (hundreds of calls) */
#define HS_CAL_MAX_KEYS 16
#define HS_CAL_MAX_MEAS 1000
#define HS_CAL_MAX_STARTS 64
#define HS_CAL_DEFAULT_UNCERTAINTY_PCT 5.0

/* $.keys.PATH: one free key */
typedef struct HsCalKey {
    char *path;                  /* as --set takes it: "npu.stationary_kib" */
    double lo, hi;               /* bounds (inclusive) */
    gboolean has_bounds;         /* min and max given (else the key's documented
                                  * range: hs_cal_spec_resolve) */
    gboolean has_integer;        /* "integer" given */
    gboolean integer;            /* values rounded (a U32 key) */
    gboolean log;                /* optimised as ln x (lo > 0) */
    gboolean has_prior;
    double prior, prior_spread;  /* a Gaussian prior on x */
    gboolean has_start;
    double start;                /* the first start (else the prior, else the
                                  * geometric / arithmetic middle) */
} HsCalKey;

/* a micro-measurement: what `probe` computes from the cost queries */
typedef enum {
    HS_CAL_PROBE_GEMM_US,        /* one matmul alone on a processor, us */
    HS_CAL_PROBE_GEMM_TFLOPS,    /* the same as TFLOPS */
    HS_CAL_PROBE_SYNC_US,        /* GPU -> NPU -> GPU hand-off round trip, us */
    HS_CAL_PROBE_MEMBW_GBPS,     /* DRAM GB/s of processors streaming at once */
    HS_CAL_PROBE_COUNT
} HsCalProbeMetric;
extern const char *const hs_cal_probe_metric_name[];
/* the same metrics as a ratio over a baseline probe ("gemm_time_ratio") */
extern const char *const hs_cal_probe_ratio_name[];

/* membw: the processor sets probe membw streams from (its "set" column) */
extern const char *const hs_cal_membw_set_name[];

typedef struct HsCalProbe HsCalProbe;
struct HsCalProbe {
    HsCalProbeMetric metric;
    char *soc, *stack;           /* stack NULL: the default stack */
    char *processor;             /* gemm: "cpu", "gpu" or "npu" (a kind) */
    uint32_t m, k, n;
    HsProbeDtype dtype;          /* gemm: as probe's --dtype */
    gboolean driver;             /* sync: the driver mechanism (else fast) */
    unsigned membw_mask;         /* membw: 1 << HwKind of each streaming processor */
    int membw_set;               /* membw: index in hs_cal_membw_set_name */
    HsCalProbe *base;            /* "baseline": the value is this probe's over
                                  * base's (owned; NULL: an absolute value) */
};

/* one measurement: a point (or a probe), its value and uncertainty */
typedef struct HsCalMeas {
    const HsPoint *pt;           /* (owned by the spec's points sets; NULL: a probe) */
    HsCalProbe probe;            /* when pt is NULL */
    const char *metric;          /* its metric's name */
    char *id;
    char *origin;                /* "spec.json: $.measurements[2]", "x.csv:4",
                                  * "configs/points/p.json: row r" */
    double value;
    gboolean absolute;           /* uncertainty in the metric's units */
    double uncertainty;          /* absolute, or a fraction (0.05) */
} HsCalMeas;

typedef struct HsCalSpec {
    char *path;
    char *description;
    char *dir;                   /* the spec's folder: relative paths in it
                                  * are read from there (NULL: a spec in
                                  * memory, paths as given) */
    char *soc;                   /* base SoC (name or path) */
    char *stack;                 /* base stack (name or path; NULL: none) */
    HsCalKey keys[HS_CAL_MAX_KEYS];
    guint n_keys;
    HsCalMeas *meas;
    guint n_meas;
    guint starts;                /* optimiser starts (default 4) */
    guint max_evals;             /* objective calls per start (default 60 x keys) */
    GPtrArray *point_sets;       /* of HsPoints *, owned */
    GStrv fixed;                 /* overrides every candidate is run under, before
                                  * its keys' (owned; NULL: none; not read from the
                                  * spec: validate --sensitivity --refit sets it) */
} HsCalSpec;

/* Read and check a spec.  Errors (HS_CONFIG_ERROR) are one line naming
 * the file and the JSON path ("s.json: $.keys.npu.x.min: ..."). */
HsCalSpec *hs_cal_spec_load(const char *path, GError **error);
/* The same from @len bytes of JSON; @what names it; relative "points" and
 * "csv" files, and SoC and stack files, are read from @dir (NULL: no
 * points or CSV file is read, a spec naming one is refused, and SoC and
 * stack paths stay as given: what the fuzzer calls). */
HsCalSpec *hs_cal_spec_parse(const char *text, gsize len, const char *what, const char *dir,
                             GError **error);
void hs_cal_spec_free(HsCalSpec *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsCalSpec, hs_cal_spec_free)

/* Fill what the spec left to the config tables: a key's bounds without
 * min and max (its documented range, from the SoC's processor classes and
 * sections or the stack's sections), whether it is an integer; then check
 * start and prior against the bounds.  Errors name the key's JSON path. */
gboolean hs_cal_spec_resolve(HsCalSpec *s, GError **error);

/* A CSV of measurements (header row; columns documented in spec.c) as
 * an array of measurement objects, as $.measurements holds them.
 * (transfer full)  Errors: "x.csv:LINE: ...". */
cJSON *hs_cal_csv_parse(const char *text, gsize len, const char *what, GError **error);

/* Does @s fit keys of @doc ("soc" or "stack")?  A spec may fit both:
 * --out-soc and --out-stack write each. */
gboolean hs_cal_spec_fits(const HsCalSpec *s, const char *doc);

/* --- evaluation (eval.c) --- */

/* The overrides "PATH=VALUE" of key values @x (integers rounded; printed
 * with %.17g so the value is exact), after @s->fixed.  (transfer full,
 * NULL-terminated) */
GStrv hs_cal_overrides(const HsCalSpec *s, const double *x);

/* The simulated value of @m with @set overrides.  FALSE with *error (one
 * line naming the measurement) when the run fails or gives no value. */
gboolean hs_cal_eval(const HsCalMeas *m, const char *const *set, double *value,
                     GError **error);

/* --- the fitting method (fit-*.c) --- */

/* f(u) of the optimiser's coordinates; @grad is never asked for. */
typedef double (*HsCalObjective)(unsigned n, const double *u, void *opaque);

/* Minimise @f over the box [@lb, @ub] from @u (updated to the best point
 * found), at most @max_evals calls.  *@f_best: f there.  FALSE with
 * *error if the library failed outright (not for a stop on a limit). */
gboolean hs_cal_minimise(unsigned n, HsCalObjective f, void *opaque, const double *lb,
                         const double *ub, double *u, guint max_evals, double *f_best,
                         GError **error);
extern const char *const hs_cal_method_name;

/* --- the fit and what it is worth (analyse.c) --- */

typedef struct HsCalKeyResult {
    double value;                /* fitted (rounded for an integer key) */
    double lo95, hi95;           /* 95 % interval (clipped to the bounds) */
    double sd_u;                 /* standard deviation in the optimiser's space */
    gboolean at_bound, unconstrained;
} HsCalKeyResult;

typedef struct HsCalMeasResult {
    double simulated;            /* at the optimum */
    double error_pct;            /* (simulated - value) / value */
    double residual;             /* weighted log residual */
    double loo_simulated, loo_error_pct;   /* --loo: fitted without it (NaN: not run) */
} HsCalMeasResult;

typedef struct HsCalResult {
    HsCalKeyResult keys[HS_CAL_MAX_KEYS];
    HsCalMeasResult *meas;       /* n_meas */
    double cost;                 /* the objective at the optimum */
    double s2;                   /* residual variance used for the intervals */
    double corr[HS_CAL_MAX_KEYS][HS_CAL_MAX_KEYS];
    double sv_min_ratio;         /* smallest / largest singular value of J */
    guint evals;                 /* objective calls, all starts */
    GPtrArray *warnings;         /* of char *, owned */
} HsCalResult;

/* Fit @s (and with @loo, refit once per measurement left out). */
HsCalResult *hs_cal_fit(const HsCalSpec *s, gboolean loo, GError **error);
void hs_cal_result_free(HsCalResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsCalResult, hs_cal_result_free)

#endif /* HS_CALIBRATE_H */
