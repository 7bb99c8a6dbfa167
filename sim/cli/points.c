/*
 * points.c - see points.h.
 */
#include "sim/cli/points.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"

#include <math.h>
#include <string.h>

const char *const hs_metric_name[] = {
    "prefill_tokens_per_s", "decode_tokens_per_s", "decode_dram_gbps", "prefill_avg_w",
    "decode_avg_w", "prefill_npu_busy_ms", "prefill_npu_over_cpu_busy",
    "decode_cpu_share", "prefill_prepare_share",
    "prefill_speedup", "decode_speedup", "prefill_speedup_mean",
    "prefill_latency_reduction_mean", "decode_step_ratio",
};
G_STATIC_ASSERT(G_N_ELEMENTS(hs_metric_name) == HS_METRIC_COUNT);

/* What a workload may ask for: the limits `run` puts on its options. */
#define MAX_PROMPT 32768
#define MAX_PROMPTS 64
#define MAX_DECODE 4096
#define MAX_BATCH 256

gboolean
hs_metric_is_ratio(HsMetric m)
{
    return m >= HS_METRIC_PREFILL_SPEEDUP;
}

static gboolean
fail(GError **error, const char *path, const cJSON *got, const char *want)
{
    g_autofree char *g = hs_json_describe(got);
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                "%s: expected %s (got %s)", path, want, g);
    return FALSE;
}

static gboolean
get_str(const cJSON *o, const char *path, const char *key, char **out, GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    g_autofree char *p = hs_json_path_key(path, key);
    if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
        return fail(error, p, v, "a string");
    }
    *out = g_strdup(v->valuestring);
    return TRUE;
}

/* An optional string: absent is NULL, present must be a non-empty string. */
static gboolean
get_opt_str(const cJSON *o, const char *path, const char *key, char **out, GError **error)
{
    if (cJSON_GetObjectItemCaseSensitive(o, key) == NULL) {
        *out = NULL;
        return TRUE;
    }
    return get_str(o, path, key, out, error);
}

static gboolean
get_num(const cJSON *v, const char *path, double lo, double hi, double *out, GError **error)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi)) {
        g_autofree char *want = g_strdup_printf("a number in [%g, %g]", lo, hi);
        return fail(error, path, v, want);
    }
    *out = v->valuedouble;
    return TRUE;
}

static gboolean
get_int(const cJSON *v, const char *path, uint32_t lo, uint32_t hi, uint32_t *out,
        GError **error)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        !(v->valuedouble >= lo && v->valuedouble <= hi)) {
        g_autofree char *want = g_strdup_printf("an integer in [%u, %u]", lo, hi);
        return fail(error, path, v, want);
    }
    *out = (uint32_t) v->valuedouble;
    return TRUE;
}

static gboolean
get_sync(const cJSON *o, const char *path, gboolean *driver, GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "sync");
    g_autofree char *p = hs_json_path_key(path, "sync");
    if (!cJSON_IsString(v) ||
        (strcmp(v->valuestring, "driver") != 0 && strcmp(v->valuestring, "fast") != 0)) {
        return fail(error, p, v, "\"driver\" or \"fast\"");
    }
    *driver = strcmp(v->valuestring, "driver") == 0;
    return TRUE;
}

/* Reject keys outside @known (NULL-terminated): a typo must not pass. */
static gboolean
check_keys(const cJSON *o, const char *path, const char *const *known, GError **error)
{
    if (!hs_json_check_unique_keys(o, path, HS_CONFIG_ERROR, error)) {
        return FALSE;
    }
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, o) {
        gboolean ok = FALSE;
        for (size_t i = 0; known[i] && !ok; i++) {
            ok = strcmp(it->string, known[i]) == 0;
        }
        if (!ok) {
            g_autofree char *list = g_strjoinv(", ", (char **) known);
            g_autofree char *key = hs_escape(it->string);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_UNKNOWN_KEY,
                        "%s: unknown key \"%s\" (known: %s)", path, key, list);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
parse_workload(const cJSON *pt, const char *path, HsPoint *p, GError **error)
{
    static const char *const keys[] = { "prompt", "prompts", "decode", "batch", NULL };
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(pt, "workload");
    g_autofree char *wpath = hs_json_path_key(path, "workload");
    if (!cJSON_IsObject(wl)) {
        return fail(error, wpath, wl, "an object");
    }
    if (!check_keys(wl, wpath, keys, error)) {
        return FALSE;
    }
    g_autofree char *dpath = hs_json_path_key(wpath, "decode");
    g_autofree char *bpath = hs_json_path_key(wpath, "batch");
    if (!get_int(cJSON_GetObjectItemCaseSensitive(wl, "decode"), dpath, 0, MAX_DECODE,
                 &p->decode, error) ||
        !get_int(cJSON_GetObjectItemCaseSensitive(wl, "batch"), bpath, 1, MAX_BATCH,
                 &p->batch, error)) {
        return FALSE;
    }
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(wl, "prompt");
    const cJSON *many = cJSON_GetObjectItemCaseSensitive(wl, "prompts");
    if ((one == NULL) == (many == NULL)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected exactly one of \"prompt\" and \"prompts\" (got %s)", wpath,
                    one ? "both" : "neither");
        return FALSE;
    }
    if (one) {
        g_autofree char *pp = hs_json_path_key(wpath, "prompt");
        p->prompts = g_new(uint32_t, 1);
        p->n_prompts = 1;
        return get_int(one, pp, 1, MAX_PROMPT, &p->prompts[0], error);
    }
    g_autofree char *pp = hs_json_path_key(wpath, "prompts");
    int n = cJSON_IsArray(many) ? cJSON_GetArraySize(many) : 0;
    if (n < 1 || n > MAX_PROMPTS) {
        g_autofree char *got = !cJSON_IsArray(many) ? hs_json_describe(many)
                               : g_strdup_printf("%d of them", n);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected an array of 1 to %d prompt lengths (got %s)", pp,
                    MAX_PROMPTS, got);
        return FALSE;
    }
    p->prompts = g_new(uint32_t, n);
    p->n_prompts = (uint32_t) n;
    for (int i = 0; i < n; i++) {
        g_autofree char *ip = hs_json_path_index(pp, i);
        if (!get_int(cJSON_GetArrayItem(many, i), ip, 1, MAX_PROMPT, &p->prompts[i], error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
parse_published(const cJSON *pt, const char *path, HsPoint *p, GError **error)
{
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(pt, "published");
    const cJSON *rng = cJSON_GetObjectItemCaseSensitive(pt, "published_range");
    if ((val == NULL) == (rng == NULL)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected exactly one of \"published\" and \"published_range\" "
                    "(got %s)", path, val ? "both" : "neither");
        return FALSE;
    }
    if (val) {
        g_autofree char *vp = hs_json_path_key(path, "published");
        if (!get_num(val, vp, 1e-9, 1e9, &p->published, error)) {
            return FALSE;
        }
        p->lo = p->hi = p->published;
        return TRUE;
    }
    g_autofree char *rp = hs_json_path_key(path, "published_range");
    if (!cJSON_IsArray(rng) || cJSON_GetArraySize(rng) != 2) {
        return fail(error, rp, rng, "[lo, hi] (null for an open end)");
    }
    double b[2] = { -INFINITY, INFINITY };
    for (int i = 0; i < 2; i++) {
        const cJSON *e = cJSON_GetArrayItem(rng, i);
        g_autofree char *ip = hs_json_path_index(rp, i);
        if (!cJSON_IsNull(e) && !get_num(e, ip, 1e-9, 1e9, &b[i], error)) {
            return FALSE;
        }
    }
    if (isinf(b[0]) && isinf(b[1])) {
        return fail(error, rp, rng, "at least one finite bound");
    }
    if (b[0] > b[1]) {
        g_autofree char *ip = hs_json_path_index(rp, 1);
        g_autofree char *want = g_strdup_printf("a bound at least the lower one, %g", b[0]);
        return fail(error, ip, cJSON_GetArrayItem(rng, 1), want);
    }
    p->range = TRUE;
    p->lo = b[0];
    p->hi = b[1];
    p->published = isinf(b[0]) ? b[1] : isinf(b[1]) ? b[0] : (b[0] + b[1]) / 2;
    return TRUE;
}

static gboolean
parse_baseline(const cJSON *pt, const char *path, HsPoint *p, GError **error)
{
    static const char *const keys[] = { "policy", "sync", "model", "batch", NULL };
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(pt, "baseline");
    g_autofree char *bpath = hs_json_path_key(path, "baseline");
    if (!hs_metric_is_ratio(p->metric)) {
        if (base) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: a %s point has no baseline (only ratios do)", bpath,
                        hs_metric_name[p->metric]);
            return FALSE;
        }
        return TRUE;
    }
    if (base == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: missing key \"baseline\" (a %s compares two runs)", path,
                    hs_metric_name[p->metric]);
        return FALSE;
    }
    if (!cJSON_IsObject(base)) {
        return fail(error, bpath, base, "an object");
    }
    if (!check_keys(base, bpath, keys, error) ||
        !get_str(base, bpath, "policy", &p->base_policy, error) ||
        !get_sync(base, bpath, &p->base_sync_driver, error) ||
        !get_opt_str(base, bpath, "model", &p->base_model, error)) {
        return FALSE;
    }
    p->base_batch = p->batch;
    const cJSON *bb = cJSON_GetObjectItemCaseSensitive(base, "batch");
    if (bb) {
        g_autofree char *pp = hs_json_path_key(bpath, "batch");
        if (!get_int(bb, pp, 1, MAX_BATCH, &p->base_batch, error)) {
            return FALSE;
        }
    }
    if (p->base_model == NULL) {
        p->base_model = g_strdup(p->model);
    }
    return TRUE;
}

static gboolean
parse_point(const cJSON *pt, const char *path, HsPoint *p, GError **error)
{
    static const char *const keys[] = {
        "id", "paper", "soc", "model", "metric", "policy", "sync", "baseline", "workload",
        "published", "published_range", "tolerance_pct", "known_miss", "calibrated", "note",
        NULL,
    };
    if (!cJSON_IsObject(pt)) {
        return fail(error, path, pt, "an object");
    }
    char *metric = NULL;
    if (!check_keys(pt, path, keys, error) ||
        !get_str(pt, path, "id", &p->id, error) ||
        !get_str(pt, path, "paper", &p->paper, error) ||
        !get_str(pt, path, "soc", &p->soc, error) ||
        !get_str(pt, path, "model", &p->model, error) ||
        !get_str(pt, path, "metric", &metric, error)) {
        return FALSE;
    }
    int m = -1;
    for (int i = 0; i < HS_METRIC_COUNT; i++) {
        if (strcmp(metric, hs_metric_name[i]) == 0) {
            m = i;
        }
    }
    if (m < 0) {
        g_autofree char *list = g_strjoinv(", ", (char **) hs_metric_name);
        g_autofree char *got = hs_escape(metric);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.metric: expected one of %s (got \"%s\")", path, list, got);
        g_free(metric);
        return FALSE;
    }
    g_free(metric);
    p->metric = (HsMetric) m;
    g_autofree char *tpath = hs_json_path_key(path, "tolerance_pct");
    if (!get_str(pt, path, "policy", &p->policy, error) ||
        !get_sync(pt, path, &p->sync_driver, error) ||
        !get_num(cJSON_GetObjectItemCaseSensitive(pt, "tolerance_pct"), tpath, 0, 1000,
                 &p->tolerance_pct, error) ||
        !get_opt_str(pt, path, "known_miss", &p->known_miss, error) ||
        !get_opt_str(pt, path, "calibrated", &p->calibrated, error) ||
        !parse_published(pt, path, p, error) ||
        !parse_workload(pt, path, p, error) ||
        !parse_baseline(pt, path, p, error)) {
        return FALSE;
    }
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(pt, "note");
    if (note && !cJSON_IsString(note)) {
        g_autofree char *np = hs_json_path_key(path, "note");
        return fail(error, np, note, "a string");
    }
    if (p->known_miss && p->calibrated) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected at most one of known_miss and calibrated (got both)", path);
        return FALSE;
    }
    return TRUE;
}

static void
point_clear(HsPoint *p)
{
    g_free(p->id);
    g_free(p->paper);
    g_free(p->soc);
    g_free(p->model);
    g_free(p->policy);
    g_free(p->prompts);
    g_free(p->base_policy);
    g_free(p->base_model);
    g_free(p->known_miss);
    g_free(p->calibrated);
}

void
hs_points_free(HsPoints *p)
{
    if (p == NULL) {
        return;
    }
    for (guint i = 0; i < p->n; i++) {
        point_clear(&p->points[i]);
    }
    g_free(p->points);
    g_free(p->name);
    g_free(p);
}

/* The root, checked; @stem names the paper if $.paper does not. */
static HsPoints *
points_from_json(const cJSON *root, const char *stem, GError **error)
{
    static const char *const keys[] = { "description", "paper", "notes", "points", NULL };
    if (!cJSON_IsObject(root)) {
        fail(error, "$", root, "an object");
        return NULL;
    }
    if (!check_keys(root, "$", keys, error)) {
        return NULL;
    }
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(root, "notes");
    if (notes) {
        const cJSON *it = NULL;
        int i = 0;
        if (!cJSON_IsArray(notes)) {
            fail(error, "$.notes", notes, "an array of strings");
            return NULL;
        }
        cJSON_ArrayForEach(it, notes) {
            if (!cJSON_IsString(it)) {
                g_autofree char *ip = hs_json_path_index("$.notes", i);
                fail(error, ip, it, "a string");
                return NULL;
            }
            i++;
        }
    }
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
    if (!cJSON_IsArray(pts) || cJSON_GetArraySize(pts) == 0) {
        fail(error, "$.points", pts, "a non-empty array of points");
        return NULL;
    }
    g_autoptr(HsPoints) out = g_new0(HsPoints, 1);
    if (!get_opt_str(root, "$", "paper", &out->name, error)) {
        return NULL;
    }
    if (out->name == NULL) {
        out->name = g_strdup(stem);
    }
    out->points = g_new0(HsPoint, cJSON_GetArraySize(pts));
    g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
    const cJSON *pt = NULL;
    cJSON_ArrayForEach(pt, pts) {
        g_autofree char *path = hs_json_path_index("$.points", (int) out->n);
        HsPoint *p = &out->points[out->n++];
        if (!parse_point(pt, path, p, error)) {
            return NULL;
        }
        if (!g_hash_table_add(ids, p->id)) {
            g_autofree char *ip = hs_json_path_key(path, "id");
            g_autofree char *id = hs_escape(p->id);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: duplicate id \"%s\"", ip, id);
            return NULL;
        }
    }
    return g_steal_pointer(&out);
}

static char *
stem_of(const char *path)
{
    g_autofree char *base = g_path_get_basename(path);
    char *dot = strrchr(base, '.');
    if (dot && dot != base) {
        *dot = '\0';
    }
    return g_strdup(base);
}

HsPoints *
hs_points_parse(const char *text, gsize len, const char *what, GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse(text, len, what, HS_CONFIG_ERROR, error);
    if (root == NULL) {
        return NULL;
    }
    g_autofree char *stem = stem_of(what);
    HsPoints *p = points_from_json(root, stem, error);
    if (p == NULL) {
        g_prefix_error(error, "%s: ", what);
    }
    return p;
}

HsPoints *
hs_points_load(const char *path, GError **error)
{
    g_autoptr(cJSON) root = hs_json_load_file(path, HS_CONFIG_ERROR, error);
    if (root == NULL) {
        return NULL;
    }
    g_autofree char *stem = stem_of(path);
    HsPoints *p = points_from_json(root, stem, error);
    if (p == NULL) {
        g_prefix_error(error, "%s: ", path);
    }
    return p;
}
