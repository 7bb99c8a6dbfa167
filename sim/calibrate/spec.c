/*
 * spec.c - a calibration spec: see calibrate.h and docs/calibrate.md for
 * the format.
 *
 *   { "description": "...",
 *     "soc": "sd8gen3",                 base SoC (name or path)
 *     "stack": "mllm",                  base stack (keys "stack.*"; default
 *                                       stack of inline and CSV measurements)
 *     "keys": { "npu.stationary_kib": { "min": 64, "max": 4096, "integer": true,
 *                                       "prior": {"value": 360, "spread": 100},
 *                                       "start": 360 } },
 *     "measurements": [ { "id": "...", "model": "...", "policy": "...",
 *                         "sync": "fast", "workload": {"prompt": 256, "decode": 0,
 *                         "batch": 1}, "metric": "prefill_tokens_per_s",
 *                         "value": 41.2, "uncertainty_pct": 5 },
 *                       { "probe": "gemm" | "sync" | "membw", ...,
 *                         "baseline": { the probe fields that differ },
 *                         "metric": "gemm_time_us", "value": 9.4 } ],
 *     "points": "configs/points/heterollm.json", "rows": ["id", ...],
 *     "csv": "phone.csv",
 *     "starts": 4, "max_evals": 120 }
 *
 * A measurement is a point of a points file (sim/cli/points.h) with
 * "value" for "published" and an uncertainty for the tolerance: it is
 * checked by the points reader, so metric names, workloads and baselines
 * are validate's; its errors are moved to the measurement's own path.
 */
#include "sim/calibrate/calibrate.h"
#include "sim/util/error.h"
#include "sim/util/infile.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"
#include "sim/util/override.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static gboolean fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void probe_clear(HsCalProbe *p);

static gboolean
fail(GError **error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE, m);
    return FALSE;
}
#define FAIL(...) fail(error, __VA_ARGS__)

void
hs_cal_spec_free(HsCalSpec *s)
{
    if (s == NULL) {
        return;
    }
    g_free(s->path);
    g_free(s->dir);
    g_free(s->description);
    g_free(s->soc);
    g_free(s->stack);
    g_strfreev(s->fixed);
    for (guint i = 0; i < s->n_keys; i++) {
        g_free(s->keys[i].path);
    }
    for (guint i = 0; i < s->n_meas; i++) {
        g_free(s->meas[i].id);
        g_free(s->meas[i].origin);
        probe_clear(&s->meas[i].probe);
    }
    g_free(s->meas);
    if (s->point_sets) {
        g_ptr_array_free(s->point_sets, TRUE);
    }
    g_free(s);
}

gboolean
hs_cal_spec_fits(const HsCalSpec *s, const char *doc)
{
    for (guint k = 0; k < s->n_keys; k++) {
        if (strcmp(hs_override_doc(s->keys[k].path), doc) == 0) {
            return TRUE;
        }
    }
    return FALSE;
}

/* a finite number at @path in @o (absent: *@v untouched, FALSE *present) */
static gboolean
get_number(const cJSON *o, const char *name, const char *path, double lo, double hi,
           double *v, gboolean *present, GError **error)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);
    if (present) {
        *present = j != NULL;
    }
    if (j == NULL) {
        return TRUE;
    }
    g_autofree char *p = hs_json_path_key(path, name);
    if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || j->valuedouble < lo ||
        j->valuedouble > hi) {
        g_autofree char *got = hs_json_describe(j);
        return FAIL("%s: expected a number in [%g, %g] (got %s)", p, lo, hi, got);
    }
    *v = j->valuedouble;
    return TRUE;
}

static gboolean
get_string(const cJSON *o, const char *name, const char *path, char **out, GError **error)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);
    if (j == NULL) {
        return TRUE;
    }
    if (!cJSON_IsString(j) || j->valuestring[0] == '\0') {
        g_autofree char *p = hs_json_path_key(path, name);
        g_autofree char *got = hs_json_describe(j);
        return FAIL("%s: expected a non-empty string (got %s)", p, got);
    }
    g_free(*out);
    *out = g_strdup(j->valuestring);
    return TRUE;
}

static gboolean
only_keys(const cJSON *o, const char *path, const char *const *known, GError **error)
{
    if (!hs_json_check_unique_keys(o, path, HS_CONFIG_ERROR, error)) {
        return FALSE;
    }
    for (const cJSON *c = o->child; c; c = c->next) {
        if (!g_strv_contains(known, c->string)) {
            g_autofree char *p = hs_json_path_key(path, c->string);
            g_autofree char *list = g_strjoinv(", ", (char **) known);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_UNKNOWN_KEY,
                        "%s: unknown key (expected one of %s)", p, list);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
parse_key(HsCalKey *k, const cJSON *j, const char *path, GError **error)
{
    static const char *const known[] = { "min", "max", "integer", "prior", "start", NULL };
    if (!hs_override_key_valid(k->path)) {
        return FAIL("%s: expected a --set path like npu.stationary_kib", path);
    }
    const char *doc = hs_override_doc(k->path);
    if (strcmp(doc, "soc") != 0 && strcmp(doc, "stack") != 0) {
        return FAIL("%s: expected a key of the SoC or of a stack (\"stack.npu.KEY\"), not of "
                    "the %s", path, doc);
    }
    if (!cJSON_IsObject(j)) {
        g_autofree char *got = hs_json_describe(j);
        return FAIL("%s: expected an object {\"min\", \"max\", ...} (got %s)", path, got);
    }
    if (!only_keys(j, path, known, error)) {
        return FALSE;
    }
    gboolean has_lo, has_hi;
    if (!get_number(j, "min", path, -1e15, 1e15, &k->lo, &has_lo, error) ||
        !get_number(j, "max", path, -1e15, 1e15, &k->hi, &has_hi, error)) {
        return FALSE;
    }
    if (has_lo != has_hi) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: missing key \"%s\" (both bounds, or neither: the key's documented "
                    "range)", path, has_lo ? "max" : "min");
        return FALSE;
    }
    k->has_bounds = has_lo;
    if (!k->has_bounds) {
        k->lo = -1e15;           /* until hs_cal_spec_resolve */
        k->hi = 1e15;
    } else if (!(k->hi > k->lo)) {
        g_autofree char *p = hs_json_path_key(path, "max");
        return FAIL("%s: expected a number above min %g (got %g)", p, k->lo, k->hi);
    }
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(j, "integer");
    if (in) {
        if (!cJSON_IsBool(in)) {
            g_autofree char *p = hs_json_path_key(path, "integer");
            g_autofree char *got = hs_json_describe(in);
            return FAIL("%s: expected true or false (got %s)", p, got);
        }
        k->integer = cJSON_IsTrue(in);
        k->has_integer = TRUE;
    }
    if (k->integer && k->has_bounds && (k->lo != floor(k->lo) || k->hi != floor(k->hi))) {
        return FAIL("%s: an integer key's min and max must be integers (got %g, %g)", path,
                    k->lo, k->hi);
    }
    k->log = k->lo > 0;
    if (!get_number(j, "start", path, k->lo, k->hi, &k->start, &k->has_start, error)) {
        return FALSE;
    }
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(j, "prior");
    if (pr) {
        static const char *const pknown[] = { "value", "spread", NULL };
        g_autofree char *pp = hs_json_path_key(path, "prior");
        gboolean hv, hs;
        if (!cJSON_IsObject(pr)) {
            g_autofree char *got = hs_json_describe(pr);
            return FAIL("%s: expected an object {\"value\", \"spread\"} (got %s)", pp, got);
        }
        if (!only_keys(pr, pp, pknown, error) ||
            !get_number(pr, "value", pp, k->lo, k->hi, &k->prior, &hv, error) ||
            !get_number(pr, "spread", pp, 1e-300, 1e15, &k->prior_spread, &hs, error)) {
            return FALSE;
        }
        if (!hv || !hs) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                        "%s: missing key \"%s\"", pp, hv ? "spread" : "value");
            return FALSE;
        }
        k->has_prior = TRUE;
    }
    return TRUE;
}

/* "$.points[0]..." of the points reader -> @path (the measurement's own) */
static void
move_error(GError *e, const char *what, const char *path)
{
    g_autofree char *from = g_strdup_printf("%s: $.points[0]", what);
    if (g_str_has_prefix(e->message, from)) {
        char *m = g_strdup_printf("%s%s", path, e->message + strlen(from));
        g_free(e->message);
        e->message = m;
    }
}

const char *const hs_cal_probe_metric_name[] = { "gemm_time_us", "gemm_tflops",
                                                  "sync_round_trip_us", "membw_gbps", NULL };
G_STATIC_ASSERT(G_N_ELEMENTS(hs_cal_probe_metric_name) == HS_CAL_PROBE_COUNT + 1);
const char *const hs_cal_probe_ratio_name[] = { "gemm_time_ratio", "gemm_tflops_ratio",
                                                 "sync_round_trip_ratio", "membw_ratio", NULL };
G_STATIC_ASSERT(G_N_ELEMENTS(hs_cal_probe_ratio_name) == HS_CAL_PROBE_COUNT + 1);
/* probe membw's rows, in its order */
const char *const hs_cal_membw_set_name[] = { "cpu", "gpu", "npu", "gpu+npu", "cpu+gpu",
                                               "cpu+npu", "all", NULL };
/* ... as processor kinds (bit 1 << HwKind: cpu 0, gpu 1, npu 2) */
static const unsigned membw_masks[] = { 1, 2, 4, 6, 3, 5, 7 };
G_STATIC_ASSERT(G_N_ELEMENTS(hs_cal_membw_set_name) == G_N_ELEMENTS(membw_masks) + 1);

static void
probe_clear(HsCalProbe *p)
{
    g_free(p->soc);
    g_free(p->stack);
    g_free(p->processor);
    if (p->base) {
        probe_clear(p->base);
        g_free(p->base);
    }
    memset(p, 0, sizeof(*p));
}

/* one of @names (NULL-terminated) at @o.@name; absent: *@out untouched */
static gboolean
get_choice(const cJSON *o, const char *name, const char *path, const char *const *names,
           int *out, GError **error)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);
    if (j == NULL) {
        return TRUE;
    }
    for (int i = 0; cJSON_IsString(j) && names[i]; i++) {
        if (strcmp(names[i], j->valuestring) == 0) {
            *out = i;
            return TRUE;
        }
    }
    g_autofree char *p = hs_json_path_key(path, name);
    g_autofree char *list = g_strjoinv(", ", (char **) names);
    g_autofree char *got = hs_json_describe(j);
    return FAIL("%s: expected one of %s (got %s)", p, list, got);
}

/* Is @a the same probe as @b (a ratio of it over itself is 1)? */
static gboolean
probe_same(const HsCalProbe *a, const HsCalProbe *b)
{
    return a->metric == b->metric && g_strcmp0(a->soc, b->soc) == 0 &&
           g_strcmp0(a->stack, b->stack) == 0 && g_strcmp0(a->processor, b->processor) == 0 &&
           a->m == b->m && a->k == b->k && a->n == b->n && a->dtype == b->dtype &&
           a->driver == b->driver && a->membw_mask == b->membw_mask;
}

/* Does a SoC or stack reference name a file (a '/' or ".json", as
 * hs_json_load_named() reads it) rather than a shipped config? */
static gboolean
is_file_ref(const char *name)
{
    return strchr(name, '/') || g_str_has_suffix(name, ".json");
}

/* A SoC or stack as a spec names it: a name as it is, a relative path
 * read from the spec's folder, as its "points" and "csv" files are. */
static char *resolve(const char *dir, const char *file);

static char *
config_ref(const HsCalSpec *s, const char *name)
{
    return s->dir && is_file_ref(name) ? resolve(s->dir, name) : g_strdup(name);
}

/* *@ref (read from the spec as written) -> config_ref() of it */
static void
resolve_ref(const HsCalSpec *s, char **ref)
{
    if (*ref) {
        char *r = config_ref(s, *ref);
        g_free(*ref);
        *ref = r;
    }
}

/* a micro-measurement: {"probe": "gemm", "processor": "npu", "m", "k", "n",
 * "dtype", "metric": "gemm_time_us" | "gemm_tflops"}, {"probe": "sync",
 * "mechanism": "fast" | "driver", "metric": "sync_round_trip_us"} or
 * {"probe": "membw", "set": "gpu+npu", "metric": "membw_gbps"}; with
 * "baseline": {the fields that differ} (@allow_base), the value is the
 * probe's over the baseline probe's */
static gboolean
parse_probe(const HsCalSpec *s, const cJSON *j, const char *path, gboolean allow_base,
            HsCalProbe *p, GError **error)
{
    static const char *const known[] = { "id", "probe", "processor", "m", "k", "n", "dtype",
                                         "mechanism", "set", "metric", "value", "uncertainty",
                                         "uncertainty_pct", "soc", "stack", "note", "paper",
                                         "baseline", NULL };
    /* what a baseline may change: the probe and its metric are the measurement's */
    static const char *const bknown[] = { "soc", "stack", "processor", "m", "k", "n", "dtype",
                                          "mechanism", "set", NULL };
    static const char *const probes[] = { "gemm", "sync", "membw", NULL };
    /* the probe each metric belongs to */
    static const int metric_probe[] = { 0, 0, 1, 2 };
    G_STATIC_ASSERT(G_N_ELEMENTS(metric_probe) == HS_CAL_PROBE_COUNT);
    static const char *const kinds[] = { "cpu", "gpu", "npu", NULL };
    static const char *const mechs[] = { "fast", "driver", NULL };
    if (!only_keys(j, path, known, error)) {
        return FALSE;
    }
    int what = -1, metric = -1, kind = -1, dtype = HS_PROBE_DT_FP16, mech = 0, set = -1;
    if (!get_choice(j, "probe", path, probes, &what, error) ||
        !get_choice(j, "metric", path, hs_cal_probe_metric_name, &metric, error) ||
        !get_choice(j, "processor", path, kinds, &kind, error) ||
        !get_choice(j, "dtype", path, hs_probe_dtype_name, &dtype, error) ||
        !get_choice(j, "mechanism", path, mechs, &mech, error) ||
        !get_choice(j, "set", path, hs_cal_membw_set_name, &set, error)) {
        return FALSE;
    }
    if (metric < 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: missing key \"metric\" (gemm_time_us, gemm_tflops, "
                    "sync_round_trip_us or membw_gbps)", path);
        return FALSE;
    }
    if (metric_probe[metric] != what) {
        return FAIL("%s.metric: expected a metric of the %s probe (got %s)", path,
                    probes[what], hs_cal_probe_metric_name[metric]);
    }
    p->metric = (HsCalProbeMetric) metric;
    p->dtype = (HsProbeDtype) dtype;
    p->driver = mech == 1;
    if (what == 0) {
        double d[3] = { 0, 0, 0 };
        gboolean has[3];
        static const char *const dims[] = { "m", "k", "n" };
        for (int i = 0; i < 3; i++) {
            if (!get_number(j, dims[i], path, 1, 1048576, &d[i], &has[i], error)) {
                return FALSE;
            }
            if (!has[i] || d[i] != floor(d[i])) {
                g_autofree char *dp = hs_json_path_key(path, dims[i]);
                return FAIL("%s: expected an integer in [1, 1048576] (the matmul's shape)", dp);
            }
        }
        if (kind < 0) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                        "%s: missing key \"processor\" (cpu, gpu or npu)", path);
            return FALSE;
        }
        p->m = (uint32_t) d[0];
        p->k = (uint32_t) d[1];
        p->n = (uint32_t) d[2];
        p->processor = g_strdup(kinds[kind]);
    }
    if (what == 2) {
        if (set < 0) {
            g_autofree char *list = g_strjoinv(", ", (char **) hs_cal_membw_set_name);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                        "%s: missing key \"set\" (the processors streaming at once: %s)",
                        path, list);
            return FALSE;
        }
        p->membw_set = set;
        p->membw_mask = membw_masks[set];
    }
    p->soc = g_strdup(s->soc);
    p->stack = g_strdup(s->stack);
    if (!get_string(j, "soc", path, &p->soc, error) ||
        !get_string(j, "stack", path, &p->stack, error)) {
        return FALSE;
    }
    if (cJSON_HasObjectItem(j, "soc")) {
        resolve_ref(s, &p->soc);
    }
    if (cJSON_HasObjectItem(j, "stack")) {
        resolve_ref(s, &p->stack);
    }
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "baseline");
    if (b == NULL) {
        return TRUE;
    }
    g_autofree char *bpath = hs_json_path_key(path, "baseline");
    if (!allow_base) {
        return FAIL("%s: a baseline has no baseline of its own", bpath);
    }
    if (!cJSON_IsObject(b) || b->child == NULL) {
        g_autofree char *got = hs_json_describe(b);
        return FAIL("%s: expected an object of the probe's fields that differ (soc, stack, "
                    "processor, m, k, n, dtype, mechanism, set; got %s)", bpath, got);
    }
    if (!only_keys(b, bpath, bknown, error)) {
        return FALSE;
    }
    /* the measurement's probe with the baseline's fields in their place */
    g_autoptr(cJSON) merged = cJSON_Duplicate(j, TRUE);
    cJSON_DeleteItemFromObjectCaseSensitive(merged, "baseline");
    for (const cJSON *c = b->child; c; c = c->next) {
        cJSON_DeleteItemFromObjectCaseSensitive(merged, c->string);
        cJSON_AddItemToObject(merged, c->string, cJSON_Duplicate(c, TRUE));
    }
    p->base = g_new0(HsCalProbe, 1);
    if (!parse_probe(s, merged, bpath, FALSE, p->base, error)) {
        return FALSE;
    }
    if (probe_same(p, p->base)) {
        return FAIL("%s: expected a probe other than the measurement's own (the ratio of a "
                    "probe over itself is 1 by definition)", bpath);
    }
    return TRUE;
}

/* One measurement object @j (at @path, "FILE: $.measurements[i]" in
 * errors: @what and @jpath) into @s. */
static gboolean
add_measurement(HsCalSpec *s, const cJSON *j, const char *what, const char *jpath,
                int index, GError **error)
{
    g_autofree char *origin = g_strdup_printf("%s: %s", what, jpath);
    if (!cJSON_IsObject(j)) {
        g_autofree char *got = hs_json_describe(j);
        return FAIL("%s: expected a measurement object (got %s)", origin, got);
    }
    if (s->n_meas >= HS_CAL_MAX_MEAS) {
        return FAIL("%s: expected at most %d measurements", origin, HS_CAL_MAX_MEAS);
    }
    g_autoptr(cJSON) pt = cJSON_Duplicate(j, TRUE);
    double value = 0, abs_u = 0, rel_pct = HS_CAL_DEFAULT_UNCERTAINTY_PCT;
    gboolean has_v, has_abs, has_rel;
    if (!get_number(j, "value", origin, 1e-9, 1e9, &value, &has_v, error) ||
        !get_number(j, "uncertainty", origin, 1e-300, 1e9, &abs_u, &has_abs, error) ||
        !get_number(j, "uncertainty_pct", origin, 0.01, 1000, &rel_pct, &has_rel, error)) {
        return FALSE;
    }
    if (!has_v) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: missing key \"value\" (the measured number)", origin);
        return FALSE;
    }
    if (has_abs && has_rel) {
        return FAIL("%s: expected at most one of \"uncertainty\" and \"uncertainty_pct\" "
                    "(got both)", origin);
    }
    if (cJSON_HasObjectItem(j, "probe")) {
        HsCalMeas *m = &s->meas[s->n_meas];
        if (!parse_probe(s, j, origin, TRUE, &m->probe, error)) {
            probe_clear(&m->probe);
            return FALSE;
        }
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        s->n_meas++;
        m->pt = NULL;
        m->metric = m->probe.base ? hs_cal_probe_ratio_name[m->probe.metric]
                                  : hs_cal_probe_metric_name[m->probe.metric];
        m->id = cJSON_IsString(id) ? g_strdup(id->valuestring) : g_strdup_printf("m%d", index);
        m->origin = g_steal_pointer(&origin);
        m->value = value;
        m->absolute = has_abs;
        m->uncertainty = has_abs ? abs_u : rel_pct / 100.0;
        return TRUE;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(pt, "value");
    cJSON_DeleteItemFromObjectCaseSensitive(pt, "uncertainty");
    cJSON_DeleteItemFromObjectCaseSensitive(pt, "uncertainty_pct");
    if (!cJSON_HasObjectItem(pt, "id")) {
        g_autofree char *id = g_strdup_printf("m%d", index);
        cJSON_AddStringToObject(pt, "id", id);
    }
    if (!cJSON_HasObjectItem(pt, "paper")) {
        cJSON_AddStringToObject(pt, "paper", "measured");
    }
    /* its SoC and stacks (its own, its baseline's) as the spec's are read */
    cJSON *base = cJSON_GetObjectItemCaseSensitive(pt, "baseline");
    struct { cJSON *obj; const char *key; } refs[] = {
        { pt, "soc" }, { pt, "stack" }, { cJSON_IsObject(base) ? base : NULL, "stack" },
    };
    for (guint r = 0; r < G_N_ELEMENTS(refs); r++) {
        const cJSON *v = refs[r].obj ? cJSON_GetObjectItemCaseSensitive(refs[r].obj, refs[r].key)
                                     : NULL;
        if (cJSON_IsString(v)) {
            g_autofree char *ref = config_ref(s, v->valuestring);
            cJSON_ReplaceItemInObjectCaseSensitive(refs[r].obj, refs[r].key,
                                                   cJSON_CreateString(ref));
        }
    }
    if (!cJSON_HasObjectItem(pt, "soc")) {
        cJSON_AddStringToObject(pt, "soc", s->soc);
    }
    if (!cJSON_HasObjectItem(pt, "sync")) {
        cJSON_AddStringToObject(pt, "sync", "fast");
    }
    if (s->stack && !cJSON_HasObjectItem(pt, "stack")) {
        cJSON_AddStringToObject(pt, "stack", s->stack);
    }
    cJSON *wl = cJSON_GetObjectItemCaseSensitive(pt, "workload");
    if (cJSON_IsObject(wl)) {
        if (!cJSON_HasObjectItem(wl, "decode")) {
            cJSON_AddNumberToObject(wl, "decode", 0);
        }
        if (!cJSON_HasObjectItem(wl, "batch")) {
            cJSON_AddNumberToObject(wl, "batch", 1);
        }
    }
    cJSON_AddNumberToObject(pt, "published", value);
    cJSON_AddNumberToObject(pt, "tolerance_pct", has_abs ? fmin(1000, 100 * abs_u / value)
                                                         : rel_pct);
    g_autoptr(cJSON) root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "points");
    cJSON_AddItemToArray(arr, g_steal_pointer(&pt));
    g_autofree char *text = hs_json_print(root, FALSE);
    HsPoints *ps = hs_points_parse(text, strlen(text), what, error);
    if (ps == NULL) {
        move_error(*error, what, origin);
        return FALSE;
    }
    g_ptr_array_add(s->point_sets, ps);
    HsCalMeas *m = &s->meas[s->n_meas++];
    m->pt = &ps->points[0];
    m->metric = hs_metric_name[m->pt->metric];
    m->id = g_strdup(m->pt->id);
    m->origin = g_steal_pointer(&origin);
    m->value = value;
    m->absolute = has_abs;
    m->uncertainty = has_abs ? abs_u : rel_pct / 100.0;
    return TRUE;
}

static char *
resolve(const char *dir, const char *file)
{
    return g_path_is_absolute(file) ? g_strdup(file) : g_build_filename(dir, file, NULL);
}

/* A points file's rows name the SoC they were measured on ("sd8gen3").
 * When the spec's base SoC is a file of that name (a user's edited copy of
 * sd8gen3.json), those rows run on the file: it is what the fit changes
 * and what --out writes, so fitting on the embedded SoC instead would
 * silently ignore the user's other edits.  Rows naming another SoC stay
 * on it. */
static gboolean
rows_on_base_soc(const HsCalSpec *s, HsPoints *ps, const char *what, GError **error)
{
    if (!is_file_ref(s->soc)) {
        return TRUE;
    }
    g_autofree char *file = NULL;
    g_autoptr(cJSON) root = hs_json_load_named(s->soc, NULL, "SoC", NULL, NULL, &file, error);
    if (root == NULL) {
        g_prefix_error(error, "%s: $.soc: ", what);
        return FALSE;
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(name)) {
        return TRUE;
    }
    for (guint i = 0; i < ps->n; i++) {
        HsPoint *p = &ps->points[i];
        if (g_strcmp0(p->soc, name->valuestring) == 0) {
            g_free(p->soc);
            p->soc = g_strdup(s->soc);
        }
    }
    return TRUE;
}

/* $.points (+ $.rows): a points file's rows as measurements, each with
 * its tolerance as the uncertainty */
static gboolean
add_points(HsCalSpec *s, const cJSON *root, const char *what, const char *dir, GError **error)
{
    const cJSON *pj = cJSON_GetObjectItemCaseSensitive(root, "points");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows");
    if (pj == NULL) {
        if (rows) {
            return FAIL("%s: $.rows: only with \"points\" (a points file's row ids)", what);
        }
        return TRUE;
    }
    if (!cJSON_IsString(pj) || pj->valuestring[0] == '\0') {
        g_autofree char *got = hs_json_describe(pj);
        return FAIL("%s: $.points: expected a points file's path (got %s)", what, got);
    }
    if (rows && (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0)) {
        g_autofree char *got = hs_json_describe(rows);
        return FAIL("%s: $.rows: expected a non-empty array of row ids (got %s)", what, got);
    }
    if (dir == NULL) {
        return FAIL("%s: $.points: files are not read from a spec in memory", what);
    }
    g_autofree char *file = resolve(dir, pj->valuestring);
    HsPoints *ps = hs_points_load(file, error);
    if (ps == NULL) {
        g_prefix_error(error, "%s: $.points: ", what);
        return FALSE;
    }
    g_ptr_array_add(s->point_sets, ps);
    if (!rows_on_base_soc(s, ps, what, error)) {
        return FALSE;
    }
    int n_rows = rows ? cJSON_GetArraySize(rows) : (int) ps->n;
    guint others = 0;            /* rows left on another SoC than the spec's file */
    const char *other = NULL;
    for (int r = 0; r < n_rows; r++) {
        const HsPoint *p = NULL;
        if (rows) {
            const cJSON *id = cJSON_GetArrayItem(rows, r);
            if (!cJSON_IsString(id)) {
                g_autofree char *got = hs_json_describe(id);
                return FAIL("%s: $.rows[%d]: expected a row id (got %s)", what, r, got);
            }
            for (guint i = 0; i < ps->n && p == NULL; i++) {
                if (strcmp(ps->points[i].id, id->valuestring) == 0) {
                    p = &ps->points[i];
                }
            }
            if (p == NULL) {
                return FAIL("%s: $.rows[%d]: no row \"%s\" in %s", what, r, id->valuestring,
                            file);
            }
        } else {
            p = &ps->points[r];
        }
        if (p->range) {
            return FAIL("%s: $.rows[%d]: row \"%s\" is a published range, not a value", what, r,
                        p->id);
        }
        if (is_file_ref(s->soc) && g_strcmp0(p->soc, s->soc) != 0) {
            others++;
            other = p->soc;
        }
        if (s->n_meas >= HS_CAL_MAX_MEAS) {
            return FAIL("%s: $.points: expected at most %d measurements", what,
                        HS_CAL_MAX_MEAS);
        }
        HsCalMeas *m = &s->meas[s->n_meas++];
        m->pt = p;
        m->metric = hs_metric_name[p->metric];
        m->id = g_strdup(p->id);
        m->origin = g_strdup_printf("%s: row %s", file, p->id);
        m->value = p->published;
        /* the row's tolerance as one standard deviation (a tolerance of
         * 0 would make the weight infinite) */
        m->uncertainty = fmax(p->tolerance_pct, 0.01) / 100.0;
    }
    if (others) {
        /* not an error (a ratio across SoCs is legitimate), but not
         * silent: a renamed copy of a paper's SoC leaves the paper's rows
         * on the SoC they were measured on */
        fprintf(stderr, "hetero-sim: warning: %s: %u row(s) of %s run on the SoC they name (%s), "
                "not on the spec's %s; the fitted keys are set on it too\n", what, others,
                file, other, s->soc);
    }
    return TRUE;
}

static HsCalSpec *
spec_from_json(const cJSON *root, const char *what, const char *dir, GError **error)
{
    static const char *const known[] = { "description", "soc", "stack", "keys",
                                         "measurements", "points", "rows", "csv", "starts",
                                         "max_evals", NULL };
    if (!cJSON_IsObject(root)) {
        g_autofree char *got = hs_json_describe(root);
        FAIL("%s: $: expected an object (got %s)", what, got);
        return NULL;
    }
    if (!only_keys(root, "$", known, error)) {
        g_prefix_error(error, "%s: ", what);
        return NULL;
    }
    g_autoptr(HsCalSpec) s = g_new0(HsCalSpec, 1);
    s->path = g_strdup(what);
    s->point_sets = g_ptr_array_new_with_free_func((GDestroyNotify) hs_points_free);
    s->meas = g_new0(HsCalMeas, HS_CAL_MAX_MEAS);
    s->starts = 4;
    if (!get_string(root, "description", "$", &s->description, error) ||
        !get_string(root, "soc", "$", &s->soc, error) ||
        !get_string(root, "stack", "$", &s->stack, error)) {
        g_prefix_error(error, "%s: ", what);
        return NULL;
    }
    if (s->soc == NULL) {
        s->soc = g_strdup("sd8gen3");
    }
    s->dir = g_strdup(dir);
    resolve_ref(s, &s->soc);
    resolve_ref(s, &s->stack);
    double starts = 4, max_evals = 0;
    if (!get_number(root, "starts", "$", 1, HS_CAL_MAX_STARTS, &starts, NULL, error) ||
        !get_number(root, "max_evals", "$", 1, 100000, &max_evals, NULL, error)) {
        g_prefix_error(error, "%s: ", what);
        return NULL;
    }
    s->starts = (guint) starts;
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(root, "keys");
    if (!cJSON_IsObject(keys) || keys->child == NULL) {
        g_autofree char *got = keys ? hs_json_describe(keys) : g_strdup("nothing");
        FAIL("%s: $.keys: expected an object of 1 to %d keys to fit (got %s)", what,
             HS_CAL_MAX_KEYS, got);
        return NULL;
    }
    if (!hs_json_check_unique_keys(keys, "$.keys", HS_CONFIG_ERROR, error)) {
        g_prefix_error(error, "%s: ", what);
        return NULL;
    }
    for (const cJSON *k = keys->child; k; k = k->next) {
        g_autofree char *kp = hs_json_path_key("$.keys", k->string);
        if (s->n_keys >= HS_CAL_MAX_KEYS) {
            FAIL("%s: %s: expected at most %d keys", what, kp, HS_CAL_MAX_KEYS);
            return NULL;
        }
        HsCalKey *ck = &s->keys[s->n_keys++];
        ck->path = g_strdup(k->string);
        if (!parse_key(ck, k, kp, error)) {
            g_prefix_error(error, "%s: ", what);
            return NULL;
        }
    }
    if (hs_cal_spec_fits(s, "stack") && s->stack == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: $: missing key \"stack\" (the stack whose stack.* keys are fitted)",
                    what);
        return NULL;
    }
    s->max_evals = max_evals > 0 ? (guint) max_evals : 60 * s->n_keys;

    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "measurements");
    if (ms && !cJSON_IsArray(ms)) {
        g_autofree char *got = hs_json_describe(ms);
        FAIL("%s: $.measurements: expected an array (got %s)", what, got);
        return NULL;
    }
    int i = 0;
    for (const cJSON *m = ms ? ms->child : NULL; m; m = m->next, i++) {
        g_autofree char *mp = hs_json_path_index("$.measurements", i);
        if (!add_measurement(s, m, what, mp, i, error)) {
            return NULL;
        }
    }
    if (!add_points(s, root, what, dir, error)) {
        return NULL;
    }
    const cJSON *csv = cJSON_GetObjectItemCaseSensitive(root, "csv");
    if (csv) {
        if (!cJSON_IsString(csv) || csv->valuestring[0] == '\0') {
            g_autofree char *got = hs_json_describe(csv);
            FAIL("%s: $.csv: expected a CSV file's path (got %s)", what, got);
            return NULL;
        }
        if (dir == NULL) {
            FAIL("%s: $.csv: files are not read from a spec in memory", what);
            return NULL;
        }
        g_autofree char *file = resolve(dir, csv->valuestring);
        g_autofree char *text = NULL;
        gsize len = 0;
        if (!hs_infile_read(file, "a CSV file", HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, &text, &len,
                            error)) {
            g_prefix_error(error, "%s: $.csv: ", what);
            return NULL;
        }
        hs_input_note(file);     /* --out may not overwrite it */
        g_autoptr(cJSON) rows = hs_cal_csv_parse(text, len, file, error);
        if (rows == NULL) {
            return NULL;
        }
        int r = 0;
        for (const cJSON *m = rows->child; m; m = m->next, r++) {
            const cJSON *line = cJSON_GetObjectItemCaseSensitive(m, "line");
            g_autofree char *lp = g_strdup_printf("line %d", line->valueint);
            cJSON_DeleteItemFromObjectCaseSensitive((cJSON *) m, "line");
            if (!add_measurement(s, m, file, lp, i + r, error)) {
                return NULL;
            }
        }
    }
    if (s->n_meas == 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: $: expected measurements (\"measurements\", \"points\" or \"csv\"; "
                    "got none)", what);
        return NULL;
    }
    g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint m = 0; m < s->n_meas; m++) {
        if (!g_hash_table_add(ids, s->meas[m].id)) {
            FAIL("%s: duplicate measurement id \"%s\"", s->meas[m].origin, s->meas[m].id);
            return NULL;
        }
    }
    return g_steal_pointer(&s);
}

HsCalSpec *
hs_cal_spec_parse(const char *text, gsize len, const char *what, const char *dir,
                  GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse(text, len, what, HS_CONFIG_ERROR, error);
    return root ? spec_from_json(root, what, dir, error) : NULL;
}

HsCalSpec *
hs_cal_spec_load(const char *path, GError **error)
{
    g_autoptr(cJSON) root = hs_json_load_file(path, HS_CONFIG_ERROR, error);
    if (root == NULL) {
        return NULL;
    }
    g_autofree char *dir = g_path_get_dirname(path);
    return spec_from_json(root, path, dir, error);
}

/*
 * CSV: a header row naming the columns, then one measurement per row.
 * Columns (any order; '#' lines and blank lines skipped; no quoting):
 *   model, metric, value, prompt       required
 *   id, policy (hetero-tensor), sync (fast), decode (0), batch (1),
 *   stack, soc, uncertainty_pct, uncertainty   optional (an empty cell:
 *                                              the default)
 */
cJSON *
hs_cal_csv_parse(const char *text, gsize len, const char *what, GError **error)
{
    static const char *const cols[] = { "id", "model", "policy", "sync", "prompt", "decode",
                                        "batch", "metric", "value", "uncertainty_pct",
                                        "uncertainty", "stack", "soc", NULL };
    static const char *const required[] = { "model", "metric", "value", "prompt", NULL };
    g_autofree char *copy = g_strndup(text, len);
    if (strlen(copy) != len) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_PARSE,
                    "%s: expected text (got a NUL byte)", what);
        return NULL;
    }
    g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
    g_auto(GStrv) header = NULL;
    g_autoptr(cJSON) out = cJSON_CreateArray();
    int hline = 0;
    for (int ln = 0; lines[ln]; ln++) {
        char *l = g_strstrip(lines[ln]);
        if (l[0] == '\0' || l[0] == '#') {
            continue;
        }
        g_auto(GStrv) cells = g_strsplit(l, ",", -1);
        for (int c = 0; cells[c]; c++) {
            g_strstrip(cells[c]);
        }
        if (header == NULL) {
            header = g_steal_pointer(&cells);
            hline = ln + 1;
            for (int c = 0; header[c]; c++) {
                if (!g_strv_contains(cols, header[c])) {
                    g_autofree char *list = g_strjoinv(", ", (char **) cols);
                    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_UNKNOWN_KEY,
                                "%s:%d: unknown column \"%s\" (expected: %s)", what, hline,
                                header[c], list);
                    return NULL;
                }
                for (int d = 0; d < c; d++) {
                    if (strcmp(header[c], header[d]) == 0) {
                        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                                    "%s:%d: duplicate column \"%s\"", what, hline, header[c]);
                        return NULL;
                    }
                }
            }
            for (const char *const *r = required; *r; r++) {
                if (!g_strv_contains((const char *const *) header, *r)) {
                    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                                "%s:%d: missing column \"%s\" (required: model, metric, value, "
                                "prompt)", what, hline, *r);
                    return NULL;
                }
            }
            continue;
        }
        if (g_strv_length(cells) != g_strv_length(header)) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s:%d: expected %u cells, as the header has (got %u)", what, ln + 1,
                        g_strv_length(header), g_strv_length(cells));
            return NULL;
        }
        if (cJSON_GetArraySize(out) >= HS_CAL_MAX_MEAS) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s:%d: expected at most %d measurements", what, ln + 1,
                        HS_CAL_MAX_MEAS);
            return NULL;
        }
        cJSON *m = cJSON_CreateObject();
        cJSON_AddItemToArray(out, m);
        cJSON *wl = cJSON_AddObjectToObject(m, "workload");
        for (int c = 0; header[c]; c++) {
            const char *h = header[c], *v = cells[c];
            if (v[0] == '\0') {
                continue;
            }
            gboolean numeric = strcmp(h, "prompt") == 0 || strcmp(h, "decode") == 0 ||
                               strcmp(h, "batch") == 0 || strcmp(h, "value") == 0 ||
                               g_str_has_prefix(h, "uncertainty");
            if (numeric) {
                char *end = NULL;
                double d = g_ascii_strtod(v, &end);
                if (end == v || *end != '\0' || !isfinite(d)) {
                    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                                "%s:%d: column %s: expected a number (got \"%s\")", what, ln + 1,
                                h, v);
                    return NULL;
                }
                cJSON_AddNumberToObject(strcmp(h, "prompt") == 0 || strcmp(h, "decode") == 0 ||
                                        strcmp(h, "batch") == 0 ? wl : m, h, d);
            } else {
                cJSON_AddStringToObject(m, h, v);
            }
        }
        if (!cJSON_HasObjectItem(m, "policy")) {
            cJSON_AddStringToObject(m, "policy", "hetero-tensor");
        }
        cJSON_AddNumberToObject(m, "line", ln + 1);
    }
    if (header == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_PARSE,
                    "%s: expected a header row naming the columns (got an empty file)", what);
        return NULL;
    }
    return g_steal_pointer(&out);
}
