/*
 * validate.h - a published point's row in `hetero-sim validate`: its
 * simulated value, error and verdict, and the per-paper means over rows;
 * shared by the table (cmd-validate.c) and the sensitivity analysis
 * (validate-sensitivity.c), which re-evaluates the rows with one assumed
 * constant changed.
 */
#ifndef HS_VALIDATE_H
#define HS_VALIDATE_H

#include "sim/cli/cli.h"
#include "sim/cli/points.h"
#include "sim/cli/points-eval.h"

#include <glib.h>

typedef struct HsValidateRow {
    const HsPoint *pt;           /* (transfer none) */
    int index;                   /* its place in its file: $.points[index] */
    const char *file;            /* the paper's points file name */
    const char *path;            /* ... and that file's path, for errors */
    double simulated, error_pct;
    gboolean ok;
} HsValidateRow;

/* Evaluate @row->pt with @c's overrides into @row (pt, index, file and
 * path set by the caller).  Errors as hs_point_eval's, the file's path
 * prefixed unless the error is --set's own. */
gboolean hs_validate_eval(HsPointCache *c, HsValidateRow *row, GError **error);

/* @row's error and verdict for a simulated value @simulated: the distance
 * to the published value in %, or to the nearer bound of a range (0
 * inside it). */
void hs_validate_judge(HsValidateRow *row, double simulated);

/* Does @id match one of @pats (shell patterns: * and ?; blanks around
 * each ignored)?  TRUE for @pats NULL. */
gboolean hs_validate_matches(char **pats, const char *id);

typedef struct HsValidateSummary {
    guint n, predicted, calibrated, ok, known;
    double mape, mape_met;       /* over predicted rows; without known misses */
    guint n_met;
} HsValidateSummary;

/* The means over @rows of paper @file (NULL: every row). */
HsValidateSummary hs_validate_summarise(const HsValidateRow *rows, guint n, const char *file);

/*
 * `validate --sensitivity`: every assumed constant of the configs the
 * rows load (a numeric key whose source begins "assumed"), scaled by
 * 1 - @pct / 100 and 1 + @pct / 100 in turn, the rows re-evaluated with
 * @set's overrides too; printed as @format, the keys that move a row most
 * first.  @keys (NULL: all) are shell patterns on the keys' --set paths;
 * with @derived the keys whose source begins "derived" are scaled too.
 * With @refit every calibration of configs/calibration/ whose
 * measurements the change moves is fitted again under it.  @rows are the
 * evaluated baseline, @files the papers shown.
 */
gboolean hs_validate_sensitivity(const HsValidateRow *rows, guint n, GPtrArray *files,
                                 const char *const *set, double pct, char **keys,
                                 gboolean derived, gboolean refit, HsFormat format,
                                 GError **error);

#endif /* HS_VALIDATE_H */
