/*
 * points-eval.h - a published point's simulated value: the one evaluator
 * of a points row's metric, shared by `validate` (every row of every
 * paper) and `calibrate` (a row, or a measurement written as one, at a
 * candidate's overrides).
 *
 * A point runs timing-only (values are checked by `run`): once per
 * prompt length, and for a ratio once more for its baseline; the metric
 * is read from the run's report and its kernel time per processor kind.
 */
#ifndef HS_POINTS_EVAL_H
#define HS_POINTS_EVAL_H

#include "sim/cli/points.h"
#include "sim/util/override.h"

#include <glib.h>

/* The SoCs and models a series of points loads, each once, with the same
 * overrides.  Not thread-safe: one per thread. */
typedef struct HsPointCache HsPointCache;

/* @ovr (transfer none, may be NULL) must outlive the cache. */
HsPointCache *hs_point_cache_new(const HsOverrides *ovr);
void hs_point_cache_free(HsPointCache *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsPointCache, hs_point_cache_free)

/* @pt's simulated value (the mean over its prompts; for a ratio, the run
 * over its baseline).  FALSE with *error, one line starting "@path.soc: ",
 * "@path.baseline: ", "@path.metric: ..." (a metric the run gives no value,
 * e.g. a share of a time that is 0), or --set's own error as it is. */
gboolean hs_point_eval(HsPointCache *c, const HsPoint *pt, const char *path, double *value,
                       GError **error);

#endif /* HS_POINTS_EVAL_H */
