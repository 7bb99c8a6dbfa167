/*
 * cmd-infer.c - `hetero-sim infer`: run a model functionally (no timing):
 * prefill of the given token ids, then greedy decode steps.  This is how a
 * user checks that the functional path computes what the model computes.
 */
#include "engine/model.h"
#include "sim/forward.h"
#include "sim/cli/cli.h"
#include "sim/run.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/mem.h"
#include "sim/util/outfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gboolean
parse_tokens(const char *text, uint32_t vocab, GArray *out, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    for (char **p = parts; *p; p++) {
        char *end = NULL;
        g_strstrip(*p);
        long long v = strtoll(*p, &end, 10);
        if (**p == '\0' || *end != '\0' || v < 0 || v >= vocab) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--tokens: expected comma-separated token ids in [0, %u) (got \"%s\")",
                        vocab, *p);
            return FALSE;
        }
        uint32_t t = (uint32_t) v;
        g_array_append_val(out, t);
    }
    if (out->len == 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--tokens: expected comma-separated token ids in [0, %u) (got \"%s\")",
                    vocab, text);
        return FALSE;
    }
    return TRUE;
}

static uint32_t
argmax(const float *x, uint32_t n)
{
    uint32_t best = 0;
    for (uint32_t i = 1; i < n; i++) {
        if (x[i] > x[best]) {
            best = i;
        }
    }
    return best;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE;
    g_autofree char *model = NULL, *tokens = NULL, *dump = NULL, *format_name = NULL;
    g_autofree char *weights = NULL;
    int steps = 8;
    gint64 seed = 1;
    GOptionEntry entries[] = {
        { "model", 'm', 0, G_OPTION_ARG_STRING, &model,
          "A model name (synthetic weights) or a Hugging Face model directory "
          "(config.json + *.safetensors)", "NAME|DIR" },
        { "tokens", 't', 0, G_OPTION_ARG_STRING, &tokens, "Prompt token ids: 1,2,3", "IDS" },
        { "steps", 'n', 0, G_OPTION_ARG_INT, &steps, "Greedy decode steps (default 8)", "N" },
        { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Seed of synthetic weights (default 1)", "S" },
        { "weights", 'w', 0, G_OPTION_ARG_STRING, &weights,
          "Matmul weights: w4a16 (INT4 groups of 128 with FP16 scales, default), fp16 or fp32", "W" },
        { "dump-logits", 0, 0, G_OPTION_ARG_FILENAME, &dump,
          "Write the logits of every prompt position and generated step as little-endian "
          "float32 rows of vocab_size", "FILE" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "text or json", "FMT" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("infer", NULL, "Run a model functionally: prefill, then greedy decode.",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    if (!hs_cli_no_extra_args(argc, argv, 0, error) ||
        !hs_cli_format(format_name, HS_FORMATS_TEXT_JSON, &format, error)) {
        return FALSE;
    }
    if (model == NULL || tokens == NULL) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "infer: expected --model and --tokens (see 'hetero-sim infer --help')");
        return FALSE;
    }
    if (steps < 0 || steps > 4096) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--steps: expected an integer in [0, 4096] (got %d)", steps);
        return FALSE;
    }
    EngWFormat wfmt = ENG_WFMT_W4A16;
    if (weights != NULL) {
        for (wfmt = 0; wfmt < ENG_WFMT_COUNT; wfmt++) {
            if (strcmp(weights, eng_wfmt_name[wfmt]) == 0) {
                break;
            }
        }
        if (wfmt == ENG_WFMT_COUNT) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--weights: expected w4a16, fp16 or fp32 (got \"%s\")", weights);
            return FALSE;
        }
    }
    g_autofree char *models = g_build_filename(hs_cli_data_dir(), "models", NULL);
    g_autoptr(MdlSpec) spec = mdl_spec_load(model, models, error);
    if (spec == NULL) {
        return FALSE;
    }
    g_autoptr(GArray) toks = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    if (!parse_tokens(tokens, spec->vocab_size, toks, error)) {
        return FALSE;
    }
    EngModelConfig cfg;
    sim_run_engine_config(spec, (uint64_t) seed, &cfg);
    cfg.attention_bias = spec->attention_bias;
    cfg.weights = wfmt;
    g_autofree char *gap = mdl_spec_functional_gap(spec, (uint64_t) toks->len + (uint64_t) steps);
    if (gap) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE, "%s: %s",
                    spec->path ? spec->path : spec->name, gap);
        return FALSE;
    }
    if (!eng_config_check(&cfg, error)) {
        g_prefix_error(error, "%s: ", spec->path ? spec->path : spec->name);
        return FALSE;
    }
    uint32_t n = toks->len, total = n + (uint32_t) steps;
    /* weights, the KV cache and every position's logits */
    uint64_t need = eng_model_bytes(&cfg)
                    + 2 * sizeof(float) * (uint64_t) cfg.layers * total * cfg.kv_heads * cfg.head_dim
                    + sizeof(float) * (uint64_t) total * cfg.vocab;
    g_autofree char *what = g_strdup_printf("infer: %s with %s weights over %u positions",
                                            spec->name, eng_wfmt_name[cfg.weights], total);
    if (!hs_mem_fits(need, what, cfg.weights == ENG_WFMT_W4A16
                                     ? "try a smaller model"
                                     : "try a smaller model or --weights w4a16", error)) {
        return FALSE;
    }
    if (g_file_test(model, G_FILE_TEST_IS_DIR)) {
        hs_input_note_dir(model);
    }
    if (dump && !hs_outfile_check(dump, error)) {
        return FALSE;            /* before the forward passes, not after */
    }
    g_autoptr(EngModel) m = NULL;
    if (g_file_test(model, G_FILE_TEST_IS_DIR)) {
        /* a model directory: its config.json gave the spec, its
         * *.safetensors the weights */
        m = eng_model_load(&cfg, model, error);
        if (m == NULL) {
            return FALSE;
        }
    } else {
        m = eng_model_new(&cfg);
    }
    g_autoptr(EngKV) kv = eng_kv_new(&cfg, total);
    g_autofree float *logits = g_new(float, (size_t) total * cfg.vocab);
    sim_forward(m, spec, kv, (uint32_t *) toks->data, n, 0, logits);
    g_autoptr(GArray) gen = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (int s = 0; s < steps; s++) {
        uint32_t pos = n + (uint32_t) s;
        uint32_t next = argmax(logits + (size_t) (pos - 1) * cfg.vocab, cfg.vocab);
        g_array_append_val(gen, next);
        sim_forward(m, spec, kv, &next, 1, pos, logits + (size_t) pos * cfg.vocab);
    }
    if (dump) {
        /* prompt positions, then one row per generated step; floats in the
         * host's order, which is little-endian on every target we build for */
        G_STATIC_ASSERT(G_BYTE_ORDER == G_LITTLE_ENDIAN);
        if (!hs_outfile_write_all(dump, logits, sizeof(float) * (size_t) total * cfg.vocab,
                                  error)) {
            return FALSE;
        }
    }
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", spec->name);
        cJSON *arr = cJSON_AddArrayToObject(j, "tokens");
        for (guint i = 0; i < gen->len; i++) {
            cJSON_AddItemToArray(arr, cJSON_CreateNumber(g_array_index(gen, uint32_t, i)));
        }
        cJSON_AddNumberToObject(j, "steps", steps);
        g_autofree char *s = hs_json_print(j, FALSE);
        printf("%s\n", s);
    } else {
        printf("%s: prompt of %u tokens, %d greedy steps:", spec->name, n, steps);
        for (guint i = 0; i < gen->len; i++) {
            printf(" %u", g_array_index(gen, uint32_t, i));
        }
        printf("\n");
    }
    return TRUE;
}

const HsCommand hs_cmd_infer = {
    "infer", "--model M --tokens IDS [--steps N]", "run a model functionally (no timing)", run,
};
