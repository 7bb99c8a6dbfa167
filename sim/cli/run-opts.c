/*
 * run-opts.c - see run-opts.h.
 */
#include "sim/cli/run-opts.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <stdlib.h>
#include <string.h>

/* The long names of the options of @entries that @argv gives, in order
 * ("--name", "--name=V", "-x", "-xV", "-x V", short flags clustered),
 * as GOption will read them; a value is never taken for an option. */
static char **
given_options(int argc, char **argv, const GOptionEntry *entries)
{
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            continue;
        }
        if (a[1] == '-') {
            size_t n = strcspn(a + 2, "=");
            for (const GOptionEntry *e = entries; e->long_name; e++) {
                if (strlen(e->long_name) == n && strncmp(e->long_name, a + 2, n) == 0) {
                    g_strv_builder_add(b, e->long_name);
                    i += e->arg != G_OPTION_ARG_NONE && a[2 + n] == '\0';
                    break;
                }
            }
            continue;
        }
        for (const char *c = a + 1; *c; c++) {
            const GOptionEntry *e = entries;
            while (e->long_name && e->short_name != *c) {
                e++;
            }
            if (e->long_name == NULL) {
                break;
            }
            g_strv_builder_add(b, e->long_name);
            if (e->arg != G_OPTION_ARG_NONE) {
                i += c[1] == '\0';          /* "-x V": the next word is its value */
                break;
            }
        }
    }
    return g_strv_builder_end(b);
}

gboolean
hs_run_opts_parse(const char *command, const char *summary, const GOptionEntry *extra,
                  HsRunOpts *o, int *argc, char ***argv, gboolean *help_shown,
                  GError **error)
{
    g_autofree GOptionEntry *common = hs_run_opts_entries(o);
    guint nc = 0, ne = 0;
    while (common[nc].long_name) {
        nc++;
    }
    while (extra && extra[ne].long_name) {
        ne++;
    }
    g_autofree GOptionEntry *all = g_new0(GOptionEntry, ne + nc + 1);
    if (ne) {
        memcpy(all, extra, sizeof(GOptionEntry) * ne);
    }
    memcpy(all + ne, common, sizeof(GOptionEntry) * nc);
    hs_provenance_command(*argc, *argv);        /* before GOption takes it apart */
    o->given = given_options(*argc, *argv, all);
    if (!hs_cli_parse(command, NULL, summary, all, argc, argv, help_shown, error)) {
        return FALSE;
    }
    if (!hs_cli_governor(o->governor, &o->set, error)) {
        return FALSE;
    }
    if ((o->ovr = hs_overrides_new((const char *const *) o->set, error)) == NULL) {
        return FALSE;
    }
    return *help_shown || hs_cli_no_extra_args(*argc, *argv, 0, error);
}

gboolean
hs_cli_governor(const char *governor, char ***set, GError **error)
{
    if (governor == NULL) {
        return TRUE;
    }
    if (!g_strv_contains(hw_governor_mode_name, governor)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--governor: expected ondemand or performance (got \"%s\")", governor);
        return FALSE;
    }
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    g_autofree char *kv = g_strdup_printf("governor=%s", governor);
    g_strv_builder_add(b, kv);
    if (*set) {
        g_strv_builder_addv(b, (const char **) *set);
    }
    g_strfreev(*set);
    *set = g_strv_builder_end(b);
    return TRUE;
}

void
hs_run_opts_clear(HsRunOpts *o)
{
    g_free(o->soc);
    g_free(o->stack);
    g_free(o->model);
    g_free(o->sync);
    g_free(o->governor);
    g_free(o->format);
    g_free(o->trace);
    g_free(o->plugin);
    g_free(o->functional);
    g_free(o->llm_priority);
    g_strfreev(o->set);
    g_strfreev(o->given);
    hs_overrides_free(o->ovr);
}

static gboolean
check_range(const char *name, int v, GError **error)
{
    double lo = 0, hi = 0;
    hs_run_opts_int_range(name, &lo, &hi);      /* each name below has one */
    if (v < lo || v > hi) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--%s: expected an integer in [%.0f, %.0f] (got %d)", name, lo, hi, v);
        return FALSE;
    }
    return TRUE;
}

gboolean
hs_run_opts_resolve(const HsRunOpts *o, unsigned formats, HsFormat *format,
                    HwSoc **soc, MdlSpec **spec, SimWorkload *w, GError **error)
{
    if (!hs_cli_format(o->format, formats, format, error) ||
        !check_range("prompt", o->prompt, error) ||
        !check_range("decode", o->decode, error) ||
        !check_range("batch", o->batch, error) ||
        !check_range("chunk", o->chunk, error)) {
        return FALSE;
    }
    sim_workload_init(w);
    w->prompt = (uint32_t) o->prompt;
    w->decode = (uint32_t) o->decode;
    w->batch = (uint32_t) o->batch;
    w->opts.chunk_tokens = (uint32_t) o->chunk;
    if (o->sync == NULL || strcmp(o->sync, "fast") == 0) {
        w->sync = SIM_SYNC_FAST;
    } else if (strcmp(o->sync, "driver") == 0) {
        w->sync = SIM_SYNC_DRIVER;
    } else {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--sync: expected driver or fast (got \"%s\")", o->sync);
        return FALSE;
    }
    const char *f = o->functional ? o->functional : "layers=1";
    if (!sim_functional_parse(f, &w->check_layers)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--functional: expected off, full or layers=N with N in [1, 1000] "
                    "(got \"%s\")", f);
        return FALSE;
    }
    if (o->seed < 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--seed: expected a non-negative integer (got %" G_GINT64_FORMAT ")",
                    o->seed);
        return FALSE;
    }
    w->seed = (uint64_t) o->seed;
    if (!(o->render_fps >= 0 && o->render_fps <= 1000)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--render: expected a frame rate in [0, 1000] (got %g)", o->render_fps);
        return FALSE;
    }
    if (!(o->frame_ms > 0 && o->frame_ms <= 1000) || !(o->frame_mb >= 0 && o->frame_mb <= 4096)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--frame-ms / --frame-mb: expected (0, 1000] ms and [0, 4096] MiB "
                    "(got %g and %g)", o->frame_ms, o->frame_mb);
        return FALSE;
    }
    w->render = (SimRender) { .fps = o->render_fps, .frame_ms = o->frame_ms,
                              .frame_mb = o->frame_mb, .llm_priority = HW_PRIO_NORMAL };
    if (o->llm_priority && strcmp(o->llm_priority, "low") == 0) {
        w->render.llm_priority = HW_PRIO_LOW;
    } else if (o->llm_priority && strcmp(o->llm_priority, "normal") != 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--llm-priority: expected low or normal (got \"%s\")", o->llm_priority);
        return FALSE;
    }
    *soc = hs_config_load_soc(o->soc ? o->soc : "sd8gen3", o->ovr, error);
    if (*soc == NULL) {
        return FALSE;
    }
    w->stack = o->stack;
    if (o->stack && hw_soc_stack(*soc, o->stack, error) == NULL) {
        g_clear_pointer(soc, hw_soc_free);
        return FALSE;
    }
    *spec = hs_config_load_model(o->model ? o->model : "llama-3-8b", o->ovr, error);
    if (*spec == NULL || !hs_cli_check_fits(*spec, w, error)) {
        g_clear_pointer(spec, mdl_spec_free);
        g_clear_pointer(soc, hw_soc_free);
        return FALSE;
    }
    /* a model directory: its config gave the spec, its weights the check */
    w->weights_dir = o->model && g_file_test(o->model, G_FILE_TEST_IS_DIR) ? o->model : NULL;
    if (w->weights_dir) {
        hs_input_note_dir(w->weights_dir);   /* no --trace over the weights */
    }
    return TRUE;
}

gboolean
hs_cli_check_fits(const MdlSpec *spec, const SimWorkload *w, GError **error)
{
    /* positions past the model's context have no trained RoPE meaning:
     * a run there times a request the model cannot serve */
    if ((uint64_t) w->prompt + w->decode > spec->max_position_embeddings) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--prompt + --decode: expected at most %s's context length, "
                    "max_position_embeddings %u (got %u + %u)", spec->name,
                    spec->max_position_embeddings, w->prompt, w->decode);
        return FALSE;
    }
    if (w->check_layers > 0 && (uint32_t) w->check_layers > spec->num_hidden_layers) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--functional: expected layers=N with N at most %s's %u layers "
                    "(got layers=%d; 'full' checks them all and the logits)",
                    spec->name, spec->num_hidden_layers, w->check_layers);
        return FALSE;
    }
    return TRUE;
}

const SimPolicy *
hs_run_opts_policy(const HsRunOpts *o, const char *name, GError **error)
{
    return hs_cli_policy(o->plugin, name, error);
}

const SimPolicy *
hs_cli_policy(const char *plugin, const char *name, GError **error)
{
    if (plugin) {
        hs_input_note(plugin);
        const SimPolicy *p = sim_policy_load_plugin(plugin, error);
        if (p == NULL) {
            return NULL;
        }
        /* no name: the plug-in was loaded to be run */
        if (name == NULL || strcmp(name, p->name) == 0) {
            return p;
        }
    }
    if (name == NULL) {
        name = "hetero-tensor";
    }
    const SimPolicy *p = sim_policy_find(name);
    if (p == NULL) {
        g_autoptr(GString) list = g_string_new(NULL);
        g_autoptr(GString) variants = g_string_new(NULL);
        for (const SimPolicy *const *q = sim_policy_list(); *q; q++) {
            g_string_append_printf(list, "%s%s", list->len ? ", " : "", (*q)->name);
        }
        for (const SimPolicy *const *q = sim_policy_variants(); *q; q++) {
            g_string_append_printf(variants, "%s%s", variants->len ? ", " : "", (*q)->name);
        }
        /* like an unknown SoC or model: bad input (exit 1), and main()
         * adds "did you mean" (hs_cli_suggest) */
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_NOT_FOUND,
                    "unknown policy \"%s\" (known: %s; variants: %s%s)", name, list->str,
                    variants->str, plugin ? "; or the plug-in's" : "");
    }
    return p;
}

/* Keys a simulation never reads but to check another key against them
 * (hw/npu.c: stationary_kib <= sram_kib; hw/soc.c: ceiling_gbps <=
 * peak_gbps): setting one changes no result. */
static const struct {
    const char *section, *key, *why;
} bound_only[] = {
    { "processors", "sram_kib", "only bounds npu.stationary_kib, the TCM a matmul's tiling uses" },
    { "memory", "peak_gbps", "only bounds memory.ceiling_gbps, the bandwidth the processors "
      "share" },
};

/* The config hash with the bound-only keys left out. */
static char *
effective_hash(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w)
{
    g_autoptr(cJSON) c = hs_config_resolved(soc, spec, w);
    cJSON *socj = cJSON_GetObjectItemCaseSensitive(c, "soc");
    for (size_t i = 0; i < G_N_ELEMENTS(bound_only); i++) {
        cJSON *sec = cJSON_GetObjectItemCaseSensitive(socj, bound_only[i].section);
        if (cJSON_IsArray(sec)) {
            cJSON *p = NULL;
            cJSON_ArrayForEach(p, sec) {
                cJSON_DeleteItemFromObjectCaseSensitive(p, bound_only[i].key);
            }
        } else if (cJSON_IsObject(sec)) {
            cJSON_DeleteItemFromObjectCaseSensitive(sec, bound_only[i].key);
        }
    }
    g_autofree char *text = hs_json_print(c, FALSE);
    return g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
}

static const char *
bound_only_why(const char *arg)
{
    g_autofree char *key = g_strndup(arg, strcspn(arg, "="));
    const char *dot = strrchr(key, '.');
    const char *leaf = dot ? dot + 1 : key;
    for (size_t i = 0; i < G_N_ELEMENTS(bound_only); i++) {
        if (strcmp(leaf, bound_only[i].key) == 0) {
            return bound_only[i].why;
        }
    }
    return NULL;
}

void
hs_run_opts_warn_noop(const HsRunOpts *o, const HwSoc *soc, const MdlSpec *spec,
                      const SimWorkload *w)
{
    (void) spec;
    if (o->set == NULL) {
        return;
    }
    /* a key of another SoC: said by name, not loaded and hashed */
    hs_config_warn_other_targets(o->set, "soc", soc->name, "this run's");
    const char *soc_name = o->soc ? o->soc : "sd8gen3";
    const char *model_name = o->model ? o->model : "llama-3-8b";
    /* the run without any --set: each one is judged alone against it */
    g_autoptr(HwSoc) base_soc = hs_config_load_soc(soc_name, NULL, NULL);
    g_autoptr(MdlSpec) base_spec = hs_config_load_model(model_name, NULL, NULL);
    if (base_soc == NULL || base_spec == NULL) {
        return;                  /* the file needs a --set to load: nothing to compare */
    }
    g_autofree char *base = effective_hash(base_soc, base_spec, w);
    /* --governor G is the first --set (hs_cli_governor): said as itself */
    for (guint i = o->governor ? 1 : 0; o->set[i]; i++) {
        const char *arg = o->set[i];
        g_autofree char *other = hs_override_target(arg, "soc");
        if (strcmp(hs_override_doc(arg), "stack") == 0 || (other && strcmp(other, soc->name))) {
            continue;            /* stacks are loaded per policy, not in the hash;
                                  * another SoC's key was said above */
        }
        const char *one[] = { arg, NULL };
        g_autoptr(HsOverrides) ovr = hs_overrides_new(one, NULL);
        if (ovr == NULL) {
            continue;
        }
        g_autoptr(HwSoc) s1 = hs_config_load_soc(soc_name, ovr, NULL);
        g_autoptr(MdlSpec) m1 = hs_config_load_model(model_name, ovr, NULL);
        if (s1 == NULL || m1 == NULL) {
            continue;            /* valid only with another --set: judged together */
        }
        g_autofree char *h = effective_hash(s1, m1, w);
        if (strcmp(h, base) == 0) {
            const char *why = bound_only_why(arg);
            g_autofree char *key = g_strndup(arg, strcspn(arg, "="));
            if (why) {
                fprintf(stderr, "hetero-sim: warning: --set %s changes nothing (%s is never "
                        "read by the simulation: it %s)\n", arg, key, why);
            } else {
                fprintf(stderr, "hetero-sim: warning: --set %s changes nothing (%s is already "
                        "that value: the resolved config hash is unchanged)\n", arg, key);
            }
        }
    }
}
