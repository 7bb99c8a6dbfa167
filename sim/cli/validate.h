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

/* --- what --sensitivity scales (validate-assumed.c) --- */

/* One --set edit that carries an assumed value. */
typedef struct HsAssumedEdit {
    char *path;
    double value;
} HsAssumedEdit;

/* One assumed constant: a key, or the same key of every element of an
 * array (an operating-point table's voltages: "gpu.dvfs.points.*.volt_mv",
 * scaled together, as one assumption), and the edits that carry it. */
typedef struct HsAssumed {
    char *key;                   /* as --set names it in its own file */
    char *file;                  /* "sd8gen3.json", "stacks/heterollm.json" */
    char *soc;                   /* the SoC whose rows it can move (NULL: a
                                  * stack key, any row) */
    double lo, hi;               /* its value (an array's: the range) */
    char *source;                /* (the first element's) */
    GArray *edits;               /* HsAssumedEdit */
} HsAssumed;

void hs_assumed_free(HsAssumed *a);

/* The assumed keys (with @derived, the derived ones too) of the shipped
 * SoCs named in @socs (char *; a SoC given as a file is skipped, said on
 * stderr) and of every shipped stack, those matching @pats (NULL: all).
 * (transfer full: a GPtrArray of HsAssumed) */
GPtrArray *hs_assumed_collect(GPtrArray *socs, char **pats, gboolean derived,
                              GError **error);

/* --- --refit (validate-refit.c) --- */

typedef struct HsRefits HsRefits;

/* The shipped calibrations, what their measurements read under @set, and
 * each key's shipped value beside what its fit gives there (a shipped
 * value may be the fit rounded to a tile: 96 rows for a fit of 93, so a
 * refit moves a key by its fit's ratio, and a change the fit does not
 * feel leaves it as shipped).  (transfer full) */
HsRefits *hs_refits_load(const char *const *set, GError **error);
void hs_refits_free(HsRefits *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsRefits, hs_refits_free)

/* Refit every calibration whose measurements @args (a NULL-terminated
 * GPtrArray of "PATH=VALUE") move, until none moves (a few rounds: one
 * fit's key can move another's measurement); each fitted key put in
 * @args and said in @said ("PATH=VALUE").  *@refused: why a measurement
 * or a fit failed under @args (then TRUE, nothing more done). */
gboolean hs_refits_apply(HsRefits *r, GPtrArray *args, GPtrArray *said, char **refused);

#endif /* HS_VALIDATE_H */
