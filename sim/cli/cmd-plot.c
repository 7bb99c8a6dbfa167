/*
 * cmd-plot.c - `hetero-sim plot DB --x SETTING --y METRIC [--series
 * SETTING]`: a sweep database as a line plot (sim/cli/curve.c draws it),
 * a line per value of the series setting, axes labelled with units.
 */
#include "sim/cli/cli.h"
#include "sim/cli/curve.h"
#include "sim/cli/report-fields.h"
#include "sim/cli/sweep.h"
#include "sim/util/error.h"
#include "sim/util/outfile.h"

#include <stdio.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3, sqlite3_close)

/* The SQL column of a setting or metric name, checked against the table. */
static char *
column_of(sqlite3 *db, const char *opt, const char *name, GError **error)
{
    g_autofree char *col = hs_sweep_column(name);
    g_autoptr(GString) known = g_string_new(NULL);
    sqlite3_stmt *st = NULL;
    gboolean found = FALSE;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info('points')", -1, &st,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *c = (const char *) sqlite3_column_text(st, 0);
            found = found || strcmp(c, col) == 0;
            if (strcmp(c, "key") != 0 && strcmp(c, "result") != 0) {
                g_string_append_printf(known, "%s%s", known->len ? ", " : "", c);
            }
        }
    }
    sqlite3_finalize(st);
    if (!found) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--%s: no column \"%s\" in the database (known: %s)", opt, name,
                    known->str);
        return NULL;
    }
    return g_steal_pointer(&col);
}

/* The y axis label: the metric's, with its unit. */
static char *
metric_label(const char *col)
{
    const HsReportField *f = hs_report_field_find(col);
    return f && f->metric ? g_strdup(f->label) : hs_sweep_label(col);
}

/* When rows repeat an (x, series) pair, the settings that vary. */
static char *
varying(sqlite3 *db, const char *filter, const char *x, const char *series)
{
    g_autoptr(GString) out = g_string_new(NULL);
    sqlite3_stmt *st = NULL;
    g_autoptr(GPtrArray) cols = g_ptr_array_new_with_free_func(g_free);
    if (sqlite3_prepare_v2(db, "SELECT column, name FROM settings", -1, &st, NULL) ==
        SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *c = (const char *) sqlite3_column_text(st, 0);
            if (strcmp(c, x) != 0 && (series == NULL || strcmp(c, series) != 0)) {
                g_ptr_array_add(cols, g_strdup(c));
            }
        }
    }
    sqlite3_finalize(st);
    for (guint i = 0; i < cols->len; i++) {
        g_autofree char *sql = g_strdup_printf("SELECT count(DISTINCT \"%s\") FROM points "
                                               "WHERE %s", (char *) cols->pdata[i], filter);
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 1) {
            g_string_append_printf(out, "%s%s", out->len ? ", " : "", (char *) cols->pdata[i]);
        }
        sqlite3_finalize(st);
    }
    return g_string_free(g_steal_pointer(&out), FALSE);
}

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE;
    g_autofree char *x = NULL, *y = NULL, *series = NULL, *where = NULL, *out = NULL;
    g_autofree char *format_name = NULL;
    g_autofree char *title_opt = NULL, *xlabel = NULL, *ylabel = NULL;
    gboolean log_y = FALSE;
    GOptionEntry entries[] = {
        { "x", 'x', 0, G_OPTION_ARG_STRING, &x, "Setting on the x axis (numeric)", "SETTING" },
        { "y", 'y', 0, G_OPTION_ARG_STRING, &y,
          "Metric on the y axis (default prefill_tokens_per_s)", "METRIC" },
        { "series", 's', 0, G_OPTION_ARG_STRING, &series,
          "A line per value of this setting", "SETTING" },
        { "where", 'w', 0, G_OPTION_ARG_STRING, &where,
          "Only rows matching this SQL condition (pin the settings not plotted)", "SQL" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Write the SVG plot to FILE", "FILE" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
          "Without --out: the plotted table as text, csv or json", "FMT" },
        { "title", 0, 0, G_OPTION_ARG_STRING, &title_opt,
          "The plot's title (default: \"METRIC against SETTING\" and the --where)", "TEXT" },
        { "xlabel", 0, 0, G_OPTION_ARG_STRING, &xlabel,
          "The x axis title (default: the setting, with its unit)", "TEXT" },
        { "ylabel", 0, 0, G_OPTION_ARG_STRING, &ylabel,
          "The y axis title (default: the metric, with its unit)", "TEXT" },
        { "log-y", 0, 0, G_OPTION_ARG_NONE, &log_y,
          "A log10 y axis (every plotted value must be above 0)", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("plot", "DB",
                      "Plot a sweep database: a metric against a setting, a line per value "
                      "of another.", entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    if (!hs_cli_format(format_name, HS_FORMATS_ALL, &format, error)) {
        return FALSE;
    }
    if (argc < 2 || x == NULL) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "plot: expected DB and --x SETTING (see 'hetero-sim plot --help')");
        return FALSE;
    }
    hs_input_note(argv[1]);
    if (!hs_cli_no_extra_args(argc, argv, 1, error) ||
        (out && !hs_outfile_check(out, error))) {
        return FALSE;
    }
    g_autoptr(sqlite3) db = hs_sweep_db_open_read(argv[1], error);
    if (db == NULL) {
        return FALSE;
    }
    g_autofree char *xc = column_of(db, "x", x, error);
    g_autofree char *yc = xc ? column_of(db, "y", y ? y : "prefill_tokens_per_s", error) : NULL;
    g_autofree char *sc = yc && series ? column_of(db, "series", series, error) : NULL;
    if (yc == NULL || (series && sc == NULL)) {
        return FALSE;
    }
    /* --where with dotted setting names, as sweep --show takes it */
    g_autofree char *where_sql = where ? hs_sweep_db_where(db, where) : NULL;
    /* rows without the x setting (an explicit point that left it out) are
     * not on the plot */
    g_autofree char *filter = g_strdup_printf("status = 'ok' AND \"%s\" IS NOT NULL%s%s%s", xc,
                                              where ? " AND (" : "", where ? where_sql : "",
                                              where ? ")" : "");
    g_autofree char *sql = g_strdup_printf("SELECT \"%s\", %s%s%s\"%s\" FROM points WHERE %s "
                                           "ORDER BY 2, 1", xc, sc ? "\"" : "",
                                           sc ? sc : "''", sc ? "\", " : ", ", yc, filter);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION, "--where: %s",
                    sqlite3_errmsg(db));
        return FALSE;
    }
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(double));
    double last_x = 0;
    gboolean dup = FALSE;
    size_t name_w = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int xt = sqlite3_column_type(st, 0);
        if (xt != SQLITE_INTEGER && xt != SQLITE_FLOAT) {
            sqlite3_finalize(st);
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--x: expected a numeric setting (%s holds %s); plot names as --series",
                        x, "text");
            return FALSE;
        }
        const char *s = (const char *) sqlite3_column_text(st, 1);
        s = s ? s : ""; /* a point that left the series setting out */
        double xv = sqlite3_column_double(st, 0);
        if (names->len == 0 || strcmp(names->pdata[names->len - 1], s) != 0) {
            g_ptr_array_add(names, g_strdup(s));
            name_w = MAX(name_w, strlen(s));
        } else if (xv == last_x) {
            dup = TRUE;
        }
        last_x = xv;
        double row[3] = { xv, names->len - 1, sqlite3_column_double(st, 2) };
        g_array_append_vals(rows, row, 3);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: %s", argv[1],
                    sqlite3_errmsg(db));
        return FALSE;
    }
    if (names->len == 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "plot: no successful rows%s%s", where ? " match --where " : "",
                    where ? where : "");
        return FALSE;
    }
    if (dup) {
        g_autofree char *v = varying(db, filter, xc, sc);
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "plot: several rows share an x value on one line: pin the other "
                    "settings that vary (%s) with --where", v);
        return FALSE;
    }
    /* the text table pads each column to its header: the series header
     * is as wide as its longest name */
    g_autofree char *xl = hs_sweep_label(x);
    g_autofree char *yl = metric_label(yc);
    g_autofree char *sl = series ? g_strdup_printf("%*s", (int) MAX(name_w, strlen(series)),
                                                   series) : NULL;
    const char *cols[] = { xl, series ? sl : yl, series ? yl : NULL, NULL };
    g_autofree char *title = title_opt ? g_strdup(title_opt)
                             : g_strdup_printf("%s against %s%s%s", yl, x, where ? ", " : "",
                                               where ? where : "");
    g_autofree char *x_axis = g_strdup(xlabel ? xlabel : xl);
    g_autofree char *y_axis = g_strdup(ylabel ? ylabel : yl);
    if (log_y) {
        for (guint r = 0; r < rows->len / 3; r++) {
            double v = g_array_index(rows, double, 3 * r + 2);
            if (!(v > 0)) {
                g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                            "--log-y: %s is %g at %s = %g: a log axis needs values above 0 "
                            "(pin them out with --where)", y ? y : "prefill_tokens_per_s", v, x,
                            g_array_index(rows, double, 3 * r));
                return FALSE;
            }
        }
    }
    if (out) {
        /* SVG text: a --where with < or & must not break the XML, nor a
         * title or label with them */
        char *esc = g_markup_escape_text(title, -1);
        g_free(title);
        title = esc;
        esc = g_markup_escape_text(x_axis, -1);
        g_free(x_axis);
        x_axis = esc;
        esc = g_markup_escape_text(y_axis, -1);
        g_free(y_axis);
        y_axis = esc;
        for (guint i = 0; i < names->len; i++) {
            char *n = g_markup_escape_text(names->pdata[i], -1);
            g_free(names->pdata[i]);
            names->pdata[i] = n;
        }
    }
    g_autoptr(HsCurve) c = hs_curve_new("plot", title, cols);
    c->name_col = series ? 1 : -1;
    c->plot_col = series ? 2 : 1;
    c->x_title = x_axis;             /* the labels carry their units already */
    c->y_title = y_axis;
    c->y_scale = log_y ? HS_AXIS_LOG10 : HS_AXIS_AUTO;
    for (guint r = 0; r < rows->len / 3; r++) {
        double *v = &g_array_index(rows, double, 3 * r);
        if (!series) {
            v[1] = v[2];
        }
        hs_curve_row(c, v);
    }
    g_ptr_array_add(names, NULL);
    c->names = (const char *const *) names->pdata;
    if (out == NULL) {
        return hs_curve_emit(c, format, NULL, NULL, error);
    }
    g_autofree char *svg = hs_curve_svg(c);
    if (!hs_outfile_write_all(out, svg, strlen(svg), error)) {
        return FALSE;
    }
    printf("wrote %s\n", out);
    return TRUE;
}

const HsCommand hs_cmd_plot = {
    "plot", "DB --x SETTING [--y METRIC] [--series SETTING]",
    "plot a sweep database (SVG, axes with units)", run,
};
