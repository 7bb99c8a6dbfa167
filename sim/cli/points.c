/*
 * points.c - see points.h.
 */
#include "sim/cli/points.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"
#include "sim/util/param.h"

#include <math.h>
#include <string.h>

const char *const hs_metric_name[] = {
    "prefill_tokens_per_s", "decode_tokens_per_s", "decode_dram_gbps", "prefill_avg_w",
    "decode_avg_w", "prefill_npu_busy_ms", "prefill_npu_over_cpu_busy",
    "decode_cpu_share", "prefill_prepare_share", "prefill_prepare_ms",
    "prefill_fps", "decode_fps",
    "prefill_speedup", "decode_speedup", "prefill_speedup_mean",
    "prefill_latency_reduction_mean", "decode_step_ratio",
    "prefill_energy_saving", "decode_energy_saving",
};
G_STATIC_ASSERT(G_N_ELEMENTS(hs_metric_name) == HS_METRIC_COUNT);

static const char *const sync_names[] = { "fast", "driver" };   /* index: sync_driver */
static const char *const priority_names[] = { "normal", "low" };  /* index: llm_low */

gboolean
hs_metric_is_ratio(HsMetric m)
{
    return m >= HS_METRIC_PREFILL_SPEEDUP;
}

static const HsParam workload_params[] = {
    /* 0 (out of range) when absent: then "prompts" must be there */
    HS_PARAM_U32("prompt", HsPointWorkload, prompt, 1, HS_POINT_MAX_PROMPT, 0,
                 "prompt length (or prompts)"),
    HS_PARAM_U32_ARRAY("prompts", HsPointWorkload, prompts, n_prompts, HS_POINT_MAX_PROMPTS,
                       1, HS_POINT_MAX_PROMPT, FALSE, "prompt lengths, the metric averaged"),
    HS_PARAM_U32("decode", HsPointWorkload, decode, 0, HS_POINT_MAX_DECODE, HS_REQUIRED,
                 "decode steps"),
    HS_PARAM_U32("batch", HsPointWorkload, batch, 1, HS_POINT_MAX_BATCH, HS_REQUIRED,
                 "sequences decoded together"),
    /* the game's defaults are run's (--frame-ms 8, --frame-mb 48) */
    HS_PARAM_F64("render_fps", HsPointWorkload, render_fps, 0, 1000, 0,
                 "a game renders on the GPU alongside at this frame rate (0: none)"),
    HS_PARAM_F64("frame_ms", HsPointWorkload, frame_ms, 1e-3, 1000, 8,
                 "GPU time of one frame alone"),
    HS_PARAM_F64("frame_mb", HsPointWorkload, frame_mb, 0, 4096, 48,
                 "DRAM traffic of one frame in MiB"),
    HS_PARAM_ENUM("llm_priority", HsPointWorkload, llm_low, gboolean, priority_names, 2, 0,
                  "GPU queue priority of the LLM's kernels next to the game"),
    HS_PARAM_END
};

static const HsParam baseline_params[] = {
    HS_PARAM_NAME("policy", HsPointBaseline, policy, "the baseline's policy"),
    HS_PARAM_ENUM("sync", HsPointBaseline, sync_driver, gboolean, sync_names, 2, HS_REQUIRED,
                  "the baseline's sync"),
    HS_PARAM_NAME_OPT("model", HsPointBaseline, model, "the baseline's model (the point's)"),
    /* 0 (out of range) when absent: the point's batch */
    HS_PARAM_U32("batch", HsPointBaseline, batch, 1, HS_POINT_MAX_BATCH, 0,
                 "the baseline's batch (the point's)"),
    HS_PARAM_NAME_OPT("stack", HsPointBaseline, stack,
                      "the software stack the baseline was measured on (the file's "
                      "\"stacks\" entry for its policy, else the policy's)"),
    /* -1 (out of range) when absent: the point's */
    HS_PARAM_F64("render_fps", HsPointBaseline, render_fps, 0, 1000, -1,
                 "the game's frame rate beside the baseline (the point's; 0: no game)"),
    HS_PARAM_END
};

static const HsParam point_params[] = {
    HS_PARAM_NAME("id", HsPoint, id, "unique in the file"),
    HS_PARAM_NAME("paper", HsPoint, paper, "paper and section"),
    HS_PARAM_NAME("soc", HsPoint, soc, "SoC config"),
    HS_PARAM_NAME("model", HsPoint, model, "model"),
    HS_PARAM_ENUM("metric", HsPoint, metric, HsMetric, hs_metric_name, HS_METRIC_COUNT,
                  HS_REQUIRED, "what is compared"),
    HS_PARAM_NAME("policy", HsPoint, policy, "scheduling policy"),
    HS_PARAM_ENUM("sync", HsPoint, sync_driver, gboolean, sync_names, 2, HS_REQUIRED,
                  "NPU sync mode"),
    HS_PARAM_OBJ("baseline", HsPoint, base, HsPointBaseline, baseline_params, FALSE,
                 "ratios only: the run divided by"),
    HS_PARAM_OBJ("workload", HsPoint, wl, HsPointWorkload, workload_params, TRUE,
                 "what is run"),
    /* 0 (out of range) when absent: then "published_range" must be there */
    HS_PARAM_F64("published", HsPoint, published, 1e-9, 1e9, 0,
                 "the published value (or published_range)"),
    HS_PARAM_RANGE("published_range", HsPoint, published_range, 1e-9, 1e9,
                   "the published bounds (or published)"),
    HS_PARAM_F64("tolerance_pct", HsPoint, tolerance_pct, 0, 1000, HS_REQUIRED,
                 "allowed error"),
    HS_PARAM_NAME_OPT("known_miss", HsPoint, known_miss, "why the model misses it"),
    HS_PARAM_NAME_OPT("calibrated", HsPoint, calibrated, "the parameter fitted to it"),
    HS_PARAM_STR("note", HsPoint, note, "", NULL, "free text"),
    HS_PARAM_NAME_OPT("stack", HsPoint, stack,
                      "the software stack of the run (the file's \"stacks\" entry for "
                      "its policy, else the policy's)"),
    HS_PARAM_END
};

/* Is @m measured on the decode steps? */
static gboolean
metric_is_decode(HsMetric m)
{
    switch (m) {
    case HS_METRIC_DECODE_TPS:
    case HS_METRIC_DECODE_GBPS:
    case HS_METRIC_DECODE_W:
    case HS_METRIC_DECODE_CPU_SHARE:
    case HS_METRIC_DECODE_SPEEDUP:
    case HS_METRIC_DECODE_STEP_RATIO:
    case HS_METRIC_DECODE_FPS:
    case HS_METRIC_DECODE_ENERGY_SAVING:
        return TRUE;
    default:
        return FALSE;
    }
}

/* "exactly one of" @a and @b, present or not in @o */
static gboolean
one_of(const cJSON *o, const char *path, const char *a, const char *b, GError **error)
{
    gboolean has_a = cJSON_HasObjectItem(o, a), has_b = cJSON_HasObjectItem(o, b);
    if (has_a == has_b) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected exactly one of \"%s\" and \"%s\" (got %s)", path, a, b,
                    has_a ? "both" : "neither");
        return FALSE;
    }
    return TRUE;
}

/* What the table cannot say: which keys go together. */
static gboolean
check_point(void *elem, const cJSON *pt, const char *path, GError **error)
{
    HsPoint *p = elem;
    if (!one_of(pt, path, "published", "published_range", error)) {
        return FALSE;
    }
    if (cJSON_HasObjectItem(pt, "published_range")) {
        double lo = p->published_range[0], hi = p->published_range[1];
        p->range = TRUE;
        p->lo = lo;
        p->hi = hi;
        p->published = isinf(lo) ? hi : isinf(hi) ? lo : (lo + hi) / 2;
    } else {
        p->lo = p->hi = p->published;
    }

    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(pt, "workload");
    g_autofree char *wpath = hs_json_path_key(path, "workload");
    if (!one_of(wl, wpath, "prompt", "prompts", error)) {
        return FALSE;
    }
    if (p->wl.prompt) {
        p->wl.prompts[0] = p->wl.prompt;
        p->wl.n_prompts = 1;
    } else if (p->wl.n_prompts == 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.prompts: expected an array of 1 to %d prompt lengths (got 0 of them)",
                    wpath, HS_POINT_MAX_PROMPTS);
        return FALSE;
    }

    gboolean has_base = cJSON_HasObjectItem(pt, "baseline");
    if (!hs_metric_is_ratio(p->metric) && has_base) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.baseline: a %s point has no baseline (only ratios do)", path,
                    hs_metric_name[p->metric]);
        return FALSE;
    }
    if (hs_metric_is_ratio(p->metric) && !has_base) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: missing key \"baseline\" (a %s compares two runs)", path,
                    hs_metric_name[p->metric]);
        return FALSE;
    }
    if (has_base) {
        if (p->base.model == NULL) {
            p->base.model = g_strdup(p->model);
        }
        if (p->base.batch == 0) {
            p->base.batch = p->wl.batch;
        }
        if (p->base.render_fps < 0) {
            p->base.render_fps = p->wl.render_fps;
        }
    }
    /* a frame rate is read off the game's frames */
    if ((p->metric == HS_METRIC_PREFILL_FPS || p->metric == HS_METRIC_DECODE_FPS) &&
        !(p->wl.render_fps > 0)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.render_fps: expected a frame rate above 0 for a %s point (got %s)",
                    wpath, hs_metric_name[p->metric],
                    cJSON_HasObjectItem(wl, "render_fps") ? "0" : "none");
        return FALSE;
    }
    /* the metric against the workload it is measured on: a decode metric
     * of no decode step is a division by 0 (a NaN in validate's table) */
    if (metric_is_decode(p->metric) && p->wl.decode == 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.decode: expected at least 1 decode step for a %s point (got 0)", wpath,
                    hs_metric_name[p->metric]);
        return FALSE;
    }
    /* a ratio of a run over itself is 1 whatever the simulator does */
    if (has_base && strcmp(p->base.policy, p->policy) == 0 &&
        p->base.sync_driver == p->sync_driver && strcmp(p->base.model, p->model) == 0 &&
        p->base.batch == p->wl.batch && p->base.render_fps == p->wl.render_fps &&
        g_strcmp0(p->base.stack, p->stack) == 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.baseline: expected a run other than the point's own (its policy, sync, "
                    "model, batch, stack and game are the point's: the %s is 1 by "
                    "definition)", path,
                    hs_metric_name[p->metric]);
        return FALSE;
    }
    if (p->known_miss && p->calibrated) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected at most one of known_miss and calibrated (got both)", path);
        return FALSE;
    }
    return TRUE;
}

/* $.stacks.POLICY: a stack's name */
static gboolean
stack_entry(const char *policy, const cJSON *v, const char *path, GError **error)
{
    if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
        g_autofree char *got = hs_json_describe(v);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected the name of a stack (got %s)", path, got);
        return FALSE;
    }
    return TRUE;
}

static const HsParam root_params[] = {
    HS_PARAM_NAME_OPT("description", HsPoints, description, "what the file holds"),
    HS_PARAM_NAME_OPT("paper", HsPoints, name, "the paper (the file's stem)"),
    HS_PARAM_STR_ARRAY("notes", HsPoints, notes, 0, "free text"),
    HS_PARAM_OBJ_ARRAY("points", HsPoints, points, n, HsPoint, point_params, check_point, 1,
                       HS_POINTS_MAX, "the published numbers"),
    HS_PARAM_MAP("stacks", HsPoints, stacks, stack_entry, "an object of policy -> stack",
                 "the stack this paper measured each baseline policy on"),
    HS_PARAM_END
};

void
hs_points_free(HsPoints *p)
{
    if (p == NULL) {
        return;
    }
    hs_param_clear(root_params, p);
    g_free(p);
}

/* The root, checked; @stem names the paper if $.paper does not. */
static HsPoints *
points_from_json(const cJSON *root, const char *stem, GError **error)
{
    g_autoptr(HsPoints) out = g_new0(HsPoints, 1);
    if (!hs_param_apply(root, "$", root_params, out, NULL, NULL, error)) {
        return NULL;
    }
    if (out->name == NULL) {
        out->name = g_strdup(stem);
    }
    /* a side without its own stack takes the file's for its policy */
    for (guint i = 0; out->stacks && i < out->n; i++) {
        HsPoint *p = &out->points[i];
        const cJSON *s;
        if (p->stack == NULL &&
            (s = cJSON_GetObjectItemCaseSensitive(out->stacks, p->policy))) {
            p->stack = g_strdup(s->valuestring);
        }
        if (p->base.policy && p->base.stack == NULL &&
            (s = cJSON_GetObjectItemCaseSensitive(out->stacks, p->base.policy))) {
            p->base.stack = g_strdup(s->valuestring);
        }
    }
    g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < out->n; i++) {
        const HsPoint *p = &out->points[i];
        if (!g_hash_table_add(ids, p->id)) {
            g_autofree char *path = hs_json_path_index("$.points", (int) i);
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
