/*
 * bench-calibrate.c - `hetero-sim bench calibrate`: a 5-key,
 * 20-measurement fit and its wall time.  The measurements are the
 * simulator's own numbers at known stack keys (llama-3.2-1b on sd8gen3,
 * timing only: prefill and decode tokens/s of gpu-only, cpu-only,
 * npu-only and hetero-tensor at 4 prompts, ...), so the fit also says how
 * far from the known keys it lands.  --quick: 1 start instead of 2.
 */
#include "sim/calibrate/calibrate.h"
#include "sim/cli/bench.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>

static const char *const keys[] = { "stack.gpu.matmul_efficiency", "stack.cpu.simd_efficiency",
                                    "stack.gpu.dram_scale", "stack.cpu.dram_scale",
                                    "stack.npu.matmul_efficiency" };
static const double truth[] = { 0.3, 0.6, 0.8, 0.9, 0.5 };
static const char *const policies[] = { "gpu-only", "cpu-only", "npu-only", "hetero-tensor" };
static const int prompts[] = { 64, 128, 256, 512, 1024 };

static gboolean
run(gboolean quick, HsFormat format, GError **error)
{
    /* 4 policies x 5 prompts = 20 measurements: prefill tokens/s, and
     * decode tokens/s at the first two prompts of gpu-only and cpu-only */
    g_autoptr(GString) s = g_string_new(NULL);
    g_string_append_printf(s, "{\"stack\": \"heterollm\", \"starts\": %d, \"keys\": {",
                           quick ? 1 : 2);
    for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
        /* bounds: each key's documented range; the start 40 % above the truth */
        g_string_append_printf(s, "%s\"%s\": {\"start\": %g}", k ? ", " : "", keys[k],
                               fmin(1, truth[k] * 1.4));
    }
    g_string_append(s, "}, \"measurements\": [");
    guint n = 0;
    for (guint p = 0; p < G_N_ELEMENTS(policies); p++) {
        for (guint i = 0; i < G_N_ELEMENTS(prompts); i++) {
            gboolean dec = p < 2 && i < 2;
            g_string_append_printf(s, "%s{\"id\": \"%s-%d%s\", \"model\": \"llama-3.2-1b\", "
                                      "\"policy\": \"%s\", \"workload\": {\"prompt\": %d, "
                                      "\"decode\": %d}, \"metric\": \"%s\", \"value\": 1}",
                                   n++ ? ", " : "", policies[p], prompts[i], dec ? "-dec" : "",
                                   policies[p], prompts[i], dec ? 4 : 0,
                                   dec ? "decode_tokens_per_s" : "prefill_tokens_per_s");
        }
    }
    g_string_append(s, "]}");
    g_autoptr(HsCalSpec) spec = hs_cal_spec_parse(s->str, s->len, "bench-calibrate", NULL,
                                                  error);
    if (spec == NULL || !hs_cal_spec_resolve(spec, error)) {
        return FALSE;
    }
    /* the measured values: the simulator's at the known keys */
    g_auto(GStrv) set = hs_cal_overrides(spec, truth);
    for (guint i = 0; i < spec->n_meas; i++) {
        if (!hs_cal_eval(&spec->meas[i], (const char *const *) set, &spec->meas[i].value,
                         error)) {
            return FALSE;
        }
    }
    double t0 = hs_bench_now_s();
    g_autoptr(HsCalResult) r = hs_cal_fit(spec, FALSE, error);
    double wall = hs_bench_now_s() - t0;
    if (r == NULL) {
        return FALSE;
    }
    double worst = 0;
    guint wk = 0, inside = 0;
    for (guint k = 0; k < spec->n_keys; k++) {
        double e = fabs(r->keys[k].value / truth[k] - 1);
        if (e > worst) {
            worst = e;
            wk = k;
        }
        inside += r->keys[k].lo95 <= truth[k] && truth[k] <= r->keys[k].hi95;
    }
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "calibrate");
        cJSON_AddNumberToObject(root, "keys", spec->n_keys);
        cJSON_AddNumberToObject(root, "measurements", spec->n_meas);
        cJSON_AddNumberToObject(root, "objective_calls", r->evals);
        cJSON_AddNumberToObject(root, "wall_s", wall);
        cJSON_AddNumberToObject(root, "worst_key_error", worst);
        cJSON_AddStringToObject(root, "worst_key", keys[wk]);
        cJSON_AddNumberToObject(root, "keys_inside_interval", inside);
        g_autofree char *text = hs_json_print(root, FALSE);
        printf("%s\n", text);
    } else {
        printf("calibrate, %u keys x %u measurements (sd8gen3, llama-3.2-1b, timing only): "
               "%.2f s, %u objective calls (%.0f runs/s); worst key %s %.2f %% from the "
               "truth (%.4g, 95 %% interval %.4g to %.4g%s); %u of %u keys' intervals hold "
               "the truth\n",
               spec->n_keys, spec->n_meas, wall, r->evals, r->evals * spec->n_meas / wall,
               keys[wk], 100 * worst, r->keys[wk].value, r->keys[wk].lo95, r->keys[wk].hi95,
               r->keys[wk].unconstrained ? ", unconstrained" : "", inside, spec->n_keys);
    }
    return TRUE;
}

const HsBench hs_bench_calibrate = {
    "calibrate", "a 5-key, 20-measurement fit of the simulator's own numbers and its wall time",
    run,
};
