/*
 * curve.c - see curve.h.
 */
#include "sim/cli/curve.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

HsCurve *
hs_curve_new(const char *name, const char *title, const char *const *cols)
{
    HsCurve *c = g_new0(HsCurve, 1);
    c->name = g_strdup(name);
    c->title = g_strdup(title);
    c->cols = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *p = cols; *p; p++) {
        g_ptr_array_add(c->cols, g_strdup(*p));
    }
    c->vals = g_array_new(FALSE, FALSE, sizeof(double));
    c->name_col = -1;
    c->plot_col = -1;
    return c;
}

void
hs_curve_free(HsCurve *c)
{
    g_free(c->name);
    g_free(c->title);
    g_ptr_array_unref(c->cols);
    g_array_free(c->vals, TRUE);
    if (c->extra) {
        cJSON_Delete(c->extra);
    }
    g_free(c);
}

void
hs_curve_row(HsCurve *c, const double *v)
{
    g_array_append_vals(c->vals, v, c->cols->len);
}

static guint
curve_rows(const HsCurve *c)
{
    return c->vals->len / c->cols->len;
}

static double
curve_at(const HsCurve *c, guint row, guint col)
{
    return g_array_index(c->vals, double, row * c->cols->len + col);
}

/* Cell (@row, @col) as text: a name for the named column, else %.6g. */
static const char *
curve_cell(const HsCurve *c, guint row, guint col, char buf[32])
{
    if ((int) col == c->name_col) {
        return c->names[(int) curve_at(c, row, col)];
    }
    g_snprintf(buf, 32, "%.6g", curve_at(c, row, col));
    return buf;
}

static void
curve_print(const HsCurve *c, HsFormat f, FILE *out)
{
    guint nc = c->cols->len;
    if (f == HS_FORMAT_JSON) {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "probe", c->name);
        cJSON *rows = cJSON_AddArrayToObject(root, "rows");
        for (guint r = 0; r < curve_rows(c); r++) {
            cJSON *o = cJSON_CreateObject();
            for (guint k = 0; k < nc; k++) {
                if ((int) k == c->name_col) {
                    cJSON_AddStringToObject(o, c->cols->pdata[k], c->names[(int) curve_at(c, r, k)]);
                } else {
                    cJSON_AddNumberToObject(o, c->cols->pdata[k], curve_at(c, r, k));
                }
            }
            cJSON_AddItemToArray(rows, o);
        }
        if (c->extra) {
            cJSON *it = c->extra->child;
            while (it) {
                cJSON *next = it->next;
                cJSON_AddItemToObject(root, it->string, cJSON_Duplicate(it, TRUE));
                it = next;
            }
        }
        g_autofree char *s = hs_json_print(root, FALSE);
        fprintf(out, "%s\n", s);
        return;
    }
    if (f == HS_FORMAT_TEXT) {
        fprintf(out, "%s\n", c->title);
    }
    for (guint k = 0; k < nc; k++) {
        int w = (int) MAX(12, strlen(c->cols->pdata[k]) + 2);
        if (f == HS_FORMAT_CSV) {
            fprintf(out, "%s%s", k ? "," : "", (char *) c->cols->pdata[k]);
        } else {
            fprintf(out, "%*s", w, (char *) c->cols->pdata[k]);
        }
    }
    fprintf(out, "\n");
    for (guint r = 0; r < curve_rows(c); r++) {
        for (guint k = 0; k < nc; k++) {
            int w = (int) MAX(12, strlen(c->cols->pdata[k]) + 2);
            char buf[32];
            const char *cell = curve_cell(c, r, k, buf);
            if (f == HS_FORMAT_CSV) {
                fprintf(out, "%s%s", k ? "," : "", cell);
            } else {
                fprintf(out, "%*s", w, cell);
            }
        }
        fprintf(out, "\n");
    }
}

/* Series of an SVG plot: the rows with one value in the name column (all
 * rows when there is none, or when names are the x axis). */
static gboolean
curve_series(const HsCurve *c, guint *n_series)
{
    *n_series = 1;
    if (c->name_col <= 0) {
        return FALSE;
    }
    for (guint r = 0; r < curve_rows(c); r++) {
        *n_series = MAX(*n_series, (guint) curve_at(c, r, (guint) c->name_col) + 1);
    }
    return TRUE;
}

/* An SVG line plot of column @y against column 0, a line per series. */
/* An axis label: whole numbers from 1000 up, else four digits. */
static void
tick(GString *s, double x, double y, const char *anchor, double v)
{
    g_string_append_printf(s, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"%s\">", x, y, anchor);
    g_string_append_printf(s, fabs(v) >= 1000 ? "%.0f" : "%.4g", v);
    g_string_append(s, "</text>\n");
}

/* An SVG page of @W x @H with @c's title and the x axis (margins: left
 * @L, bottom @B, right @R). */
static GString *
svg_begin(const HsCurve *c, double W, double H, double L, double B, double R)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                              "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
                              "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    g_string_append_printf(s, "<text x=\"%.0f\" y=\"24\" font-size=\"14\">%s</text>\n", L, c->title);
    g_string_append_printf(s, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n",
                           L, H - B, W - R, H - B);
    return s;
}

/* An SVG bar chart of column @y, a bar per row named by column 0. */
static char *
curve_svg_bars(const HsCurve *c, guint y)
{
    const double W = 640, H = 400, L = 70, B = 50, T = 40, R = 20;
    guint n = curve_rows(c);
    double y1 = 0;
    for (guint r = 0; r < n; r++) {
        y1 = fmax(y1, curve_at(c, r, y));
    }
    if (y1 <= 0) {
        y1 = 1;
    }
    GString *s = svg_begin(c, W, H, L, B, R);
    double slot = (W - L - R) / MAX(n, 1);
    for (guint r = 0; r < n; r++) {
        double v = curve_at(c, r, y), h = (H - B - T) * v / y1;
        double x = L + slot * r + slot * 0.15;
        g_string_append_printf(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                  "fill=\"#1f77b4\"/>\n", x, H - B - h, slot * 0.7, h);
        tick(s, x + slot * 0.35, H - B - h - 4, "middle", v);
        char buf[32];
        g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                               x + slot * 0.35, H - B + 16, curve_cell(c, r, 0, buf));
    }
    g_string_append(s, "</svg>\n");
    return g_string_free(s, FALSE);
}

static char *
curve_svg(const HsCurve *c, guint y)
{
    if (c->name_col == 0) {
        return curve_svg_bars(c, y);
    }
    static const char *const color[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                         "#9467bd", "#8c564b", "#e377c2", "#7f7f7f" };
    guint n = curve_rows(c), n_series;
    gboolean named = curve_series(c, &n_series);
    /* a legend gets its own strip on the right, clear of the lines */
    const double W = named ? 780 : 640, H = 400, L = 70, B = 50, T = 40, R = named ? 160 : 20;
    double x0 = INFINITY, x1 = -INFINITY, y0 = 0, y1 = -INFINITY;
    for (guint r = 0; r < n; r++) {
        x0 = fmin(x0, curve_at(c, r, 0));
        x1 = fmax(x1, curve_at(c, r, 0));
        y1 = fmax(y1, curve_at(c, r, y));
        y0 = fmin(y0, curve_at(c, r, y));
    }
    if (x1 <= x0) {
        x1 = x0 + 1;
    }
    if (y1 <= y0) {
        y1 = y0 + 1;
    }
    GString *s = svg_begin(c, W, H, L, B, R);
    g_string_append_printf(s, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n",
                           L, T, L, H - B);
    g_string_append_printf(s, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", (W + L) / 2 - 30, H - 12,
                           (char *) c->cols->pdata[0]);
    g_string_append_printf(s, "<text x=\"14\" y=\"%.0f\" text-anchor=\"middle\" "
                              "transform=\"rotate(-90 14 %.0f)\">%s</text>\n",
                           (H - B + T) / 2, (H - B + T) / 2, (char *) c->cols->pdata[y]);
    for (int i = 0; i <= 4; i++) {
        double yv = y0 + (y1 - y0) * i / 4, xv = x0 + (x1 - x0) * i / 4;
        double py = H - B - (H - B - T) * i / 4, px = L + (W - L - R) * i / 4;
        tick(s, L - 6, py + 4, "end", yv);
        tick(s, px, H - B + 16, "middle", xv);
    }
    for (guint k = 0; k < n_series; k++) {
        const char *col = color[k % G_N_ELEMENTS(color)];
        g_string_append_printf(s, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                                  "points=\"", col);
        for (guint r = 0; r < n; r++) {
            if (named && (guint) curve_at(c, r, (guint) c->name_col) != k) {
                continue;
            }
            double px = L + (W - L - R) * (curve_at(c, r, 0) - x0) / (x1 - x0);
            double py = H - B - (H - B - T) * (curve_at(c, r, y) - y0) / (y1 - y0);
            g_string_append_printf(s, "%.1f,%.1f ", px, py);
        }
        g_string_append(s, "\"/>\n");
        if (named) {
            /* legend, in the strip on the right */
            double ly = T + 14.0 * k;
            g_string_append_printf(s, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
                                      "stroke=\"%s\" stroke-width=\"2\"/>"
                                      "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                                   W - R + 16, ly, W - R + 36, ly, col, W - R + 42, ly + 4,
                                   c->names[k]);
        }
    }
    g_string_append(s, "</svg>\n");
    return g_string_free(s, FALSE);
}

char *
hs_curve_svg(const HsCurve *c)
{
    return curve_svg(c, c->plot_col >= 0 ? (guint) c->plot_col : c->cols->len - 1);
}

gboolean
hs_curve_emit(HsCurve *c, HsFormat format, const char *out_dir, GError **error)
{
    if (out_dir == NULL) {
        curve_print(c, format, stdout);
        return TRUE;
    }
    g_autofree char *csv = g_strdup_printf("%s/%s.csv", out_dir, c->name);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    curve_print(c, HS_FORMAT_CSV, mem);
    fclose(mem);
    gboolean ok = hs_outfile_write_all(csv, buf, len, error);
    free(buf);
    if (ok && curve_rows(c) > 1) {
        g_autofree char *svg_path = g_strdup_printf("%s/%s.svg", out_dir, c->name);
        g_autofree char *svg = curve_svg(c, c->plot_col >= 0 ? (guint) c->plot_col
                                                             : c->cols->len - 1);
        ok = hs_outfile_write_all(svg_path, svg, strlen(svg), error);
    }
    if (ok) {
        printf("wrote %s\n", csv);
    }
    return ok;
}

