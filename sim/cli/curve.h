/*
 * curve.h - a curve of the `probe` command: named columns of numbers,
 * printed as text, CSV or JSON, or written as DIR/NAME.csv plus an SVG line
 * plot of one column (the last unless plot_col says) against the first,
 * one line per name when a column holds names (a series per matmul, per
 * policy, ...).
 */
#ifndef HS_CURVE_H
#define HS_CURVE_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "sim/cli/cli.h"

/* How an SVG axis is scaled.  AUTO: powers of two on a log2 axis and
 * positive data spanning two decades on a log10 one, else linear.  A bar
 * chart's y axis is linear unless LOG10 is asked (stacked bars: linear). */
typedef enum {
    HS_AXIS_AUTO,
    HS_AXIS_LINEAR,
    HS_AXIS_LOG2,
    HS_AXIS_LOG10,
} HsAxisScale;

typedef struct HsCurve {
    char *name;                  /* probe name: the file name under --out */
    char *title;
    GPtrArray *cols;             /* of char* */
    GArray *vals;                /* of double, row-major */
    cJSON *extra;                /* JSON-only members (may be NULL) */
    int name_col;                /* column whose values index @names, or -1 */
    const char *const *names;
    int plot_col;                /* the column the SVG plots, -1: the last */
    int plot_cols;               /* line plots without name_col: this many
                                  * columns from plot_col, a series each (0: 1) */
    /* SVG only (all optional): axis titles with units (default: from the
     * column names, "time_us" -> "time (µs)"), scales, and for bar charts
     * (name_col 0) the first of the columns stacked to make plot_col */
    const char *x_title, *y_title;
    HsAxisScale x_scale, y_scale;
    int stack_from;              /* -1: plain bars */
    /* a bar chart of groups: a group of bars per x value (column 0), a
     * bar per name of name_col in each, coloured by name with a legend
     * (a few samples of a few series: npu-shape) */
    gboolean grouped_bars;
} HsCurve;

/* @cols: NULL-terminated column names. */
HsCurve *hs_curve_new(const char *name, const char *title, const char *const *cols);
void hs_curve_free(HsCurve *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsCurve, hs_curve_free)

/* Append a row: one value per column. */
void hs_curve_row(HsCurve *c, const double *v);

/* The SVG plot hs_curve_emit writes, as text.  (transfer full) */
char *hs_curve_svg(const HsCurve *c);

/* Print @c to stdout in @format, or with @out_dir write its CSV and SVG
 * there as part of @group (they appear when the group is committed,
 * with every other file of the run, or not at all). */
typedef struct HsOutGroup HsOutGroup;
gboolean hs_curve_emit(HsCurve *c, HsFormat format, const char *out_dir, HsOutGroup *group,
                       GError **error);

#endif
