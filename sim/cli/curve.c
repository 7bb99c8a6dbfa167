/*
 * curve.c - see curve.h.
 */
#include "sim/cli/curve.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <math.h>
#include <stdint.h>
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
    c->stack_from = -1;
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
    double v = curve_at(c, row, col);
    /* counts (cycles, bytes) as integers, not 3.38445e+06 */
    if (v == floor(v) && fabs(v) < 1e15) {
        g_snprintf(buf, 32, "%.0f", v);
    } else {
        g_snprintf(buf, 32, "%.6g", v);
    }
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
    /* each column as wide as its widest cell and two spaces (12 at
     * least), so a long name ("transformer-lite") never runs into the
     * column before it */
    g_autofree int *width = g_new0(int, MAX(nc, 1));
    for (guint k = 0; k < nc; k++) {
        width[k] = (int) MAX(12, strlen(c->cols->pdata[k]) + 2);
        for (guint r = 0; r < curve_rows(c); r++) {
            char buf[32];
            width[k] = MAX(width[k], (int) strlen(curve_cell(c, r, k, buf)) + 2);
        }
    }
    for (guint k = 0; k < nc; k++) {
        int w = width[k];
        if (f == HS_FORMAT_CSV) {
            fprintf(out, "%s%s", k ? "," : "", (char *) c->cols->pdata[k]);
        } else {
            fprintf(out, "%*s", w, (char *) c->cols->pdata[k]);
        }
    }
    fprintf(out, "\n");
    for (guint r = 0; r < curve_rows(c); r++) {
        for (guint k = 0; k < nc; k++) {
            int w = width[k];
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

/* ---- SVG plots ----------------------------------------------------------- */

/* What a column means, with its unit, for an axis title: "time_us" ->
 * "time (µs)", "tokens_per_s" -> "tokens/s".  (transfer full) */
static char *
col_title(const char *col)
{
    static const struct { const char *suffix, *unit; } units[] = {
        { "_us", " (µs)" }, { "_ms", " (ms)" }, { "_gbps", " (GB/s)" }, { "_per_s", "/s" },
        { "_kib", " (KiB)" }, { "_j", " (J)" }, { "_w", " (W)" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
        if (g_str_has_suffix(col, units[i].suffix) && strlen(col) > strlen(units[i].suffix)) {
            g_autofree char *head = g_strndup(col, strlen(col) - strlen(units[i].suffix));
            g_strdelimit(head, "_", ' ');
            return g_strconcat(head, units[i].unit, NULL);
        }
    }
    char *t = g_strdup(col);
    return g_strdelimit(t, "_", ' ');
}

/* The step of 1-2-5 ticks that cuts @span into at most @max pieces. */
static double
nice_step(double span, int max)
{
    double raw = span / max, p = pow(10, floor(log10(raw)));
    for (int i = 0; i < 3; i++) {
        double m = (double[]) { 1, 2, 5 }[i];
        if (m * p >= raw * (1 - 1e-9)) {
            return m * p;
        }
    }
    return 10 * p;
}

typedef struct Axis {
    HsAxisScale scale;
    double lo, hi;               /* data range, rounded out to ticks */
    double p0, p1;               /* pixels of lo and hi */
    double step;                 /* linear: tick step */
    GArray *ticks;               /* of double */
} Axis;

static gboolean
is_pow2(double v)
{
    return v >= 1 && v == floor(v) && ((uint64_t) v & ((uint64_t) v - 1)) == 0;
}

/* Pick the scale (auto: power-of-two or log10 where positive data spans
 * decades) and round the range out to ticks. */
static void
axis_init(Axis *a, HsAxisScale scale, const double *v, guint n, gboolean from_zero)
{
    double lo = INFINITY, hi = -INFINITY;
    gboolean pos = TRUE, pow2 = TRUE;
    for (guint i = 0; i < n; i++) {
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
        pos = pos && v[i] > 0;
        pow2 = pow2 && is_pow2(v[i]);
    }
    if (n == 0) {
        lo = 0, hi = 1;
    }
    if (scale == HS_AXIS_AUTO) {
        scale = pos && pow2 && hi / lo >= 16 ? HS_AXIS_LOG2
                : pos && hi / lo >= 100 ? HS_AXIS_LOG10 : HS_AXIS_LINEAR;
    }
    if (scale != HS_AXIS_LINEAR && !pos) {
        scale = HS_AXIS_LINEAR;          /* no log of zero */
    }
    a->scale = scale;
    a->ticks = g_array_new(FALSE, FALSE, sizeof(double));
    if (scale == HS_AXIS_LINEAR) {
        if (from_zero) {
            lo = fmin(lo, 0);
        }
        if (hi <= lo) {
            hi = lo + 1;
        }
        a->step = nice_step(hi - lo, 5);
        a->lo = floor(lo / a->step + 1e-9) * a->step;
        a->hi = ceil(hi / a->step - 1e-9) * a->step;
        for (double t = a->lo; t <= a->hi + a->step * 1e-6; t += a->step) {
            double r = fabs(t) < a->step * 1e-6 ? 0 : t;
            g_array_append_val(a->ticks, r);
        }
    } else if (scale == HS_AXIS_LOG2) {
        int e0 = (int) floor(log2(lo) + 1e-9), e1 = (int) ceil(log2(hi) - 1e-9);
        e1 = MAX(e1, e0 + 1);
        int every = (e1 - e0 + 7) / 8;
        a->lo = ldexp(1, e0);
        a->hi = ldexp(1, e1);
        for (int e = e0; e <= e1; e += every) {
            double t = ldexp(1, e);
            g_array_append_val(a->ticks, t);
        }
    } else {
        /* the range ends at the 1-2-5 values next to the data (a maximum
         * of 120 ends the axis at 200, not at 1000), so the data fill it */
        int e0 = (int) floor(log10(lo) + 1e-9), e1 = (int) ceil(log10(hi) - 1e-9);
        e1 = MAX(e1, e0 + 1);
        static const double m125[] = { 1, 2, 5 };
        a->lo = pow(10, e0);
        for (int i = 2; i >= 0; i--) {
            if (m125[i] * pow(10, e0) <= lo * (1 + 1e-9)) {
                a->lo = m125[i] * pow(10, e0);
                break;
            }
        }
        a->hi = pow(10, e1);
        for (int i = 0; i < 3; i++) {
            if (m125[i] * pow(10, e1 - 1) >= hi * (1 - 1e-9)) {
                a->hi = m125[i] * pow(10, e1 - 1);
                break;
            }
        }
        if (a->hi <= a->lo) {
            a->hi = a->lo * 2;
        }
        for (int e = e0; e <= e1; e++) {
            for (int i = 0; i < 3; i++) {
                double t = m125[i] * pow(10, e);
                /* 2 and 5 between decades only when there are few decades;
                 * the two ends always */
                gboolean end = fabs(t / a->lo - 1) < 1e-9 || fabs(t / a->hi - 1) < 1e-9;
                if (t >= a->lo * (1 - 1e-9) && t <= a->hi * (1 + 1e-9) &&
                    (i == 0 || e1 - e0 <= 2 || end)) {
                    g_array_append_val(a->ticks, t);
                }
            }
        }
    }
}

static double
axis_px(const Axis *a, double v)
{
    double t = a->scale == HS_AXIS_LINEAR ? (v - a->lo) / (a->hi - a->lo)
               : (log(fmax(v, a->lo * 1e-3)) - log(a->lo)) / (log(a->hi) - log(a->lo));
    return a->p0 + (a->p1 - a->p0) * t;
}

/* A tick label: as many decimals as the step needs, no "0.9998". */
static char *
axis_label(const Axis *a, double v)
{
    if (a->scale != HS_AXIS_LINEAR) {
        return fabs(v) >= 1e6 || fabs(v) < 1e-3 ? g_strdup_printf("%g", v)
                                                 : g_strdup_printf("%.10g", v);
    }
    int dec = (int) MAX(0, -floor(log10(a->step) + 1e-9));
    return g_strdup_printf("%.*f", dec, v);
}

static const char *
scale_note(HsAxisScale s)
{
    return s == HS_AXIS_LOG2 ? ", log2 scale" : s == HS_AXIS_LOG10 ? ", log scale" : "";
}

/* Ticks, light grid lines and the title of one axis.  @x: horizontal. */
static void
axis_draw(GString *s, const Axis *a, gboolean x, double other0, double other1,
          const char *title, double H, double B, double T)
{
    for (guint i = 0; i < a->ticks->len; i++) {
        double v = g_array_index(a->ticks, double, i), p = axis_px(a, v);
        g_autofree char *lab = axis_label(a, v);
        if (x) {
            g_string_append_printf(s, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" "
                                      "stroke=\"#e4e4e4\"/>\n"
                                      "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s"
                                      "</text>\n", p, other0, p, other1, p, other0 + 16, lab);
        } else {
            g_string_append_printf(s, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
                                      "stroke=\"#e4e4e4\"/>\n"
                                      "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s"
                                      "</text>\n", other0, p, other1, p, other0 - 6, p + 4, lab);
        }
    }
    if (x) {
        g_string_append_printf(s, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" "
                                  "font-size=\"13\">%s%s</text>\n",
                               (a->p0 + a->p1) / 2, H - 10, title, scale_note(a->scale));
    } else {
        double cy = (H - B + T) / 2;
        g_string_append_printf(s, "<text x=\"16\" y=\"%.0f\" text-anchor=\"middle\" "
                                  "font-size=\"13\" transform=\"rotate(-90 16 %.0f)\">%s%s"
                                  "</text>\n", cy, cy, title, scale_note(a->scale));
    }
}

/* An SVG page of @W x @H with @c's title at @L. */
static GString *
svg_begin(const HsCurve *c, double W, double H, double L)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                              "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
                              "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    /* a title too long for one line (about 0.56 em a glyph) is wrapped
     * at a space into two, in a smaller font, above the plot */
    glong len = g_utf8_strlen(c->title, -1), fit = (glong) ((W - L - 10) / (0.56 * 14));
    if (len <= fit) {
        g_string_append_printf(s, "<text x=\"%.0f\" y=\"22\" font-size=\"14\">%s</text>\n",
                               L, c->title);
        return s;
    }
    fit = (glong) ((W - L - 10) / (0.56 * 12));
    const char *cut = c->title + strlen(c->title) / 2;
    for (const char *p = c->title; *p && g_utf8_pointer_to_offset(c->title, p) <= fit;
         p = g_utf8_next_char(p)) {
        if (*p == ' ') {
            cut = p;
        }
    }
    g_string_append_printf(s, "<text x=\"%.0f\" y=\"16\" font-size=\"12\">%.*s</text>\n"
                              "<text x=\"%.0f\" y=\"31\" font-size=\"12\">%s</text>\n",
                           L, (int) (cut - c->title), c->title, L, *cut == ' ' ? cut + 1 : cut);
    return s;
}

static void
svg_frame(GString *s, double W, double H, double L, double B, double T, double R)
{
    g_string_append_printf(s, "<path d=\"M%.0f %.0f V%.0f H%.0f\" fill=\"none\" "
                              "stroke=\"black\"/>\n", L, T, H - B, W - R);
}

/* 10 colours against 8 dash patterns and 8 markers: the first 40 series
 * each get their own colour and marker pair (prefill's 11 policies) */
static const char *const series_color[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                            "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                            "#7f7f7f", "#bcbd22" };
static const char *const series_dash[] = { "", "7 4", "2 3", "9 3 2 3", "4 4", "12 4",
                                           "1 4", "6 2 2 2 2 2" };

/* Marker @k (circle, square, triangle, diamond, down triangle, plus,
 * cross, dot) at (@x, @y), so series that overlap stay apart: the shapes
 * are outlines, so two series with the same value show both (a square
 * around a circle), and later ones are smaller. */
static void
marker(GString *s, guint k, double x, double y, const char *color)
{
    const double r = 6 - 0.5 * (k % 8);
    const char *outline = "fill=\"none\" stroke-width=\"2\"";
    switch (k % 8) {
    case 0:
        g_string_append_printf(s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" %s "
                                  "stroke=\"%s\"/>\n", x, y, r, outline, color);
        break;
    case 1:
        g_string_append_printf(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                  "%s stroke=\"%s\"/>\n", x - r, y - r, 2 * r, 2 * r, outline,
                               color);
        break;
    case 2:
        g_string_append_printf(s, "<path d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f Z\" %s "
                                  "stroke=\"%s\"/>\n", x, y - r - 1, x + r + 1, y + r, x - r - 1,
                               y + r, outline, color);
        break;
    case 3:
        g_string_append_printf(s, "<path d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f L%.1f %.1f Z\" %s "
                                  "stroke=\"%s\"/>\n", x, y - r - 1, x + r + 1, y, x, y + r + 1,
                               x - r - 1, y, outline, color);
        break;
    case 4:
        g_string_append_printf(s, "<path d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f Z\" %s "
                                  "stroke=\"%s\"/>\n", x, y + r + 1, x + r + 1, y - r, x - r - 1,
                               y - r, outline, color);
        break;
    case 5:
        g_string_append_printf(s, "<path d=\"M%.1f %.1f H%.1f M%.1f %.1f V%.1f\" stroke=\"%s\" "
                                  "stroke-width=\"2.5\"/>\n", x - r - 1, y, x + r + 1, x,
                               y - r - 1, y + r + 1, color);
        break;
    case 6:
        g_string_append_printf(s, "<path d=\"M%.1f %.1f L%.1f %.1f M%.1f %.1f L%.1f %.1f\" "
                                  "stroke=\"%s\" stroke-width=\"2.5\"/>\n", x - r, y - r, x + r,
                               y + r, x - r, y + r, x + r, y - r, color);
        break;
    default:
        g_string_append_printf(s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n",
                               x, y, r, color);
        break;
    }
}

/* A bar's value: three significant digits, no exponent (0.267, 43.3, 1055) */
static char *
value_label(double v)
{
    return fabs(v) >= 100 ? g_strdup_printf("%.0f", v)
           : fabs(v) >= 10 ? g_strdup_printf("%.1f", v)
           : fabs(v) >= 1 ? g_strdup_printf("%.2f", v) : g_strdup_printf("%.3g", v);
}

static char *
y_title_of(const HsCurve *c, guint y)
{
    return c->y_title ? g_strdup(c->y_title) : col_title(c->cols->pdata[y]);
}

/* An SVG bar chart of column @y, a bar per row named by column 0; with
 * stack_from >= 0, each bar is a stack of columns stack_from .. @y - 1
 * (their sum is @y) with a legend.  Every bar carries its value, and a
 * bar too small to see keeps a sliver. */
static char *
curve_svg_bars(const HsCurve *c, guint y)
{
    gboolean stacked = c->stack_from >= 0 && (guint) c->stack_from < y;
    const gboolean grouped = c->grouped_bars && c->name_col > 0 && !stacked;
    guint n_series = 1;
    if (grouped) {
        curve_series(c, &n_series);
    }
    const gboolean legend = stacked || grouped;
    const double W = legend ? 760 : 640, H = 420, L = 80, B = 56, T = 40, R = legend ? 140 : 20;
    guint n = curve_rows(c);
    /* on a log scale the axis starts below the smallest bar (a third of
     * it), so the smallest still shows as a bar */
    const gboolean log_y = c->y_scale == HS_AXIS_LOG10 && !stacked;
    g_autofree double *v = g_new0(double, n + 2);
    double least = INFINITY;
    for (guint r = 0; r < n; r++) {
        v[r] = curve_at(c, r, y);
        least = fmin(least, v[r]);
        v[n] = fmax(v[n], v[r] * (log_y ? 1.25 : 1.08));   /* room for the value on top */
    }
    v[n + 1] = log_y && least > 0 ? least / 3 : v[n];
    Axis ay = { .p0 = H - B, .p1 = T };
    axis_init(&ay, log_y ? HS_AXIS_LOG10 : HS_AXIS_LINEAR, v, n + 2, TRUE);
    GString *s = svg_begin(c, W, H, L);
    g_autofree char *yt = y_title_of(c, y);
    axis_draw(s, &ay, FALSE, L, W - R, yt, H, B, T);
    /* grouped: a slot per x value, a bar per series in it */
    guint n_groups = n;
    g_autofree guint *group = g_new0(guint, MAX(n, 1));
    for (guint r = 0; grouped && r < n; r++) {
        group[r] = r == 0 ? 0 : group[r - 1] + (curve_at(c, r, 0) != curve_at(c, r - 1, 0));
        n_groups = group[r] + 1;
    }
    double slot = (W - L - R) / MAX(grouped ? n_groups : n, 1);
    for (guint r = 0; r < n; r++) {
        double x = L + slot * r + slot * 0.18, w = slot * 0.64, base = H - B;
        const char *fill = "#1f77b4";
        if (grouped) {
            guint k = (guint) curve_at(c, r, (guint) c->name_col);
            w = slot * 0.8 / n_series;
            x = L + slot * group[r] + slot * 0.1 + w * k;
            fill = series_color[k % G_N_ELEMENTS(series_color)];
        }
        if (stacked) {
            for (guint k = (guint) c->stack_from; k < y; k++) {
                double h = (H - B) - axis_px(&ay, curve_at(c, r, k));
                const char *col = series_color[(k - c->stack_from) % G_N_ELEMENTS(series_color)];
                if (curve_at(c, r, k) > 0) {
                    g_string_append_printf(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                              "height=\"%.1f\" fill=\"%s\" stroke=\"white\"/>\n",
                                           x, base - h, w, h, col);
                    if (h > 16) {
                        g_autofree char *lab = value_label(curve_at(c, r, k));
                        g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" "
                                                  "text-anchor=\"middle\" fill=\"white\">"
                                                  "%s</text>\n", x + w / 2, base - h / 2 + 4,
                                               lab);
                    }
                }
                base -= h;
            }
        } else {
            double h = fmax(2, H - B - axis_px(&ay, v[r]));
            g_string_append_printf(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                      "fill=\"%s\"/>\n", x, H - B - h, w, h, fill);
            base = H - B - h;
        }
        g_autofree char *top = value_label(v[r]);
        g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                                  "font-weight=\"bold\">%s</text>\n", x + w / 2, base - 5, top);
        char buf[32];
        if (!grouped) {
            g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s"
                                      "</text>\n", x + w / 2, H - B + 16, curve_cell(c, r, 0, buf));
        } else if (r == 0 || group[r] != group[r - 1]) {
            g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s"
                                      "</text>\n", L + slot * (group[r] + 0.5), H - B + 16,
                                   curve_cell(c, r, 0, buf));
        }
    }
    for (guint k = 0; grouped && k < n_series; k++) {
        double ly = T + 18.0 * k;
        g_string_append_printf(s, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" "
                                  "fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                               W - R + 12, ly - 6, series_color[k % G_N_ELEMENTS(series_color)],
                               W - R + 32, ly + 4, c->names[k]);
    }
    if (c->x_title) {
        g_string_append_printf(s, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" "
                                  "font-size=\"13\">%s</text>\n", (L + W - R) / 2, H - 10,
                               c->x_title);
    }
    if (stacked) {
        for (guint k = (guint) c->stack_from; k < y; k++) {
            double ly = T + 18.0 * (k - c->stack_from);
            g_autofree char *t = col_title(c->cols->pdata[k]);
            g_string_append_printf(s, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" "
                                      "fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                                   W - R + 12, ly - 6,
                                   series_color[(k - c->stack_from) % G_N_ELEMENTS(series_color)],
                                   W - R + 32, ly + 4, t);
        }
    }
    svg_frame(s, W, H, L, B, T, R);
    g_array_free(ay.ticks, TRUE);
    g_string_append(s, "</svg>\n");
    return g_string_free(s, FALSE);
}

/* An SVG line plot of column @y against column 0, a line per series:
 * rounded ticks, axis titles with units, a marker at every sample (a
 * curve of two samples looks like two points joined), a colour, dash
 * pattern and marker shape per series so identical curves stay visible. */
static char *
curve_svg(const HsCurve *c, guint y)
{
    if (c->name_col == 0 || (c->grouped_bars && c->name_col > 0)) {
        return curve_svg_bars(c, y);
    }
    guint n = curve_rows(c), n_series;
    gboolean named = curve_series(c, &n_series);
    /* several columns, a series each (named by their column) */
    const guint n_cols = named ? 1 : MAX(c->plot_cols, 1);
    if (n_cols > 1) {
        n_series = n_cols;
    }
    const gboolean legend = named || n_cols > 1;
    /* a legend gets its own strip on the right, clear of the lines */
    const double W = legend ? 800 : 640, H = 420, L = 80, B = 56, T = 40, R = legend ? 170 : 24;
    g_autofree double *xs = g_new(double, n), *ys = g_new(double, (size_t) n * n_cols);
    for (guint r = 0; r < n; r++) {
        xs[r] = curve_at(c, r, 0);
        for (guint j = 0; j < n_cols; j++) {
            ys[(size_t) j * n + r] = curve_at(c, r, y + j);
        }
    }
    Axis ax = { .p0 = L, .p1 = W - R }, ay = { .p0 = H - B, .p1 = T };
    axis_init(&ax, c->x_scale, xs, n, FALSE);
    axis_init(&ay, c->y_scale, ys, n * n_cols, TRUE);
    GString *s = svg_begin(c, W, H, L);
    g_autofree char *xt = c->x_title ? g_strdup(c->x_title) : col_title(c->cols->pdata[0]);
    g_autofree char *yt = y_title_of(c, y);
    axis_draw(s, &ax, TRUE, H - B, T, xt, H, B, T);
    axis_draw(s, &ay, FALSE, L, W - R, yt, H, B, T);
    svg_frame(s, W, H, L, B, T, R);
    for (guint k = 0; k < n_series; k++) {
        const char *col = series_color[k % G_N_ELEMENTS(series_color)];
        const char *dash = series_dash[k % G_N_ELEMENTS(series_dash)];
        guint pts = 0;
        g_string_append_printf(s, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s "
                                  "points=\"", col, *dash ? " stroke-dasharray=\"" : "", dash,
                               *dash ? "\"" : "");
        const double *yk = n_cols > 1 ? ys + (size_t) k * n : ys;
        for (guint r = 0; r < n; r++) {
            if (named && (guint) curve_at(c, r, (guint) c->name_col) != k) {
                continue;
            }
            g_string_append_printf(s, "%.1f,%.1f ", axis_px(&ax, xs[r]), axis_px(&ay, yk[r]));
            pts++;
        }
        g_string_append(s, "\"/>\n");
        /* markers where they stay apart: not on a dense curve (npu-stage) */
        if (pts <= 40) {
            for (guint r = 0; r < n; r++) {
                if (!named || (guint) curve_at(c, r, (guint) c->name_col) == k) {
                    marker(s, k, axis_px(&ax, xs[r]), axis_px(&ay, yk[r]), col);
                }
            }
        }
        if (legend) {
            /* legend, in the strip on the right */
            double ly = T + 20.0 * k + 6;
            const char *label = named ? c->names[k] : c->cols->pdata[y + k];
            g_string_append_printf(s, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
                                      "stroke=\"%s\" stroke-width=\"2\"%s%s%s/>"
                                      "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                                   W - R + 14, ly, W - R + 50, ly, col,
                                   *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "",
                                   W - R + 58, ly + 4, label);
            marker(s, k, W - R + 32, ly, col);
        }
    }
    g_array_free(ax.ticks, TRUE);
    g_array_free(ay.ticks, TRUE);
    g_string_append(s, "</svg>\n");
    return g_string_free(s, FALSE);
}

char *
hs_curve_svg(const HsCurve *c)
{
    return curve_svg(c, c->plot_col >= 0 ? (guint) c->plot_col : c->cols->len - 1);
}

gboolean
hs_curve_emit(HsCurve *c, HsFormat format, const char *out_dir, HsOutGroup *group,
              GError **error)
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
    gboolean ok = hs_outgroup_write(group, csv, buf, len, error);
    free(buf);
    if (ok && curve_rows(c) > 1) {
        g_autofree char *svg_path = g_strdup_printf("%s/%s.svg", out_dir, c->name);
        g_autofree char *svg = curve_svg(c, c->plot_col >= 0 ? (guint) c->plot_col
                                                             : c->cols->len - 1);
        ok = hs_outgroup_write(group, svg_path, svg, strlen(svg), error);
    }
    return ok;
}

