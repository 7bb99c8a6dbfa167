/*
 * config.c - see config.h.
 */
#include "sim/cli/config.h"
#include "hw/stack.h"
#include "sim/cli/cli.h"
#include "sim/policies/policy.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/version-info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --set stack.KEY=VALUE on every stack the run loads (each policy's own):
 * applied, then checked here so an error names the option */
static gboolean
stack_edit(cJSON *root, void *ovr, GError **error)
{
    if (!hs_overrides_apply(ovr, "stack", root, error)) {
        return FALSE;
    }
    g_autoptr(HwStack) st = hw_stack_from_json(root, "stack", error);
    if (st == NULL) {
        hs_overrides_explain(ovr, "stack", error);
        return FALSE;
    }
    return TRUE;
}

/* @soc (NULL: its loader failed, *error set) with the run's --set
 * stack.KEY / stack@NAME.KEY attached, each NAME a shipped stack (loaded,
 * so its edited values are checked); the SoC is freed on error. */
static HwSoc *
with_stack_edits(HwSoc *soc, const HsOverrides *ovr, GError **error)
{
    if (soc == NULL) {
        hs_overrides_explain(ovr, "soc", error);
        return NULL;
    }
    if (hs_overrides_count(ovr, "stack") > 0) {
        if (!hs_overrides_check_targets(ovr, "stack", soc->stacks_dir, error)) {
            hw_soc_free(soc);
            return NULL;
        }
        soc->stack_edit = stack_edit;
        soc->stack_edit_opaque = (void *) ovr;
        /* each stack a stack@NAME edits is loaded now, so a bad value is
         * refused whether or not the run's policies use that stack */
        g_auto(GStrv) names = hs_overrides_targets(ovr, "stack");
        for (char **n = names; *n; n++) {
            if (hw_soc_stack(soc, *n, error) == NULL) {
                hw_soc_free(soc);
                return NULL;
            }
        }
    }
    return soc;
}

HwStack *
hs_config_load_stack(const char *name, const HsOverrides *ovr, GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "configs", "stacks", NULL);
    if (!hs_overrides_check_targets(ovr, "stack", dir, error)) {
        return NULL;
    }
    return hw_stack_load_edit(name, dir, hs_overrides_count(ovr, "stack") ? stack_edit : NULL,
                              (void *) ovr, error);
}

void
hs_config_warn_other_targets(char *const *set, const char *doc, const char *name,
                             const char *whose)
{
    for (char *const *a = set; a && *a; a++) {
        g_autofree char *other = hs_override_target(*a, doc);
        if (other && strcmp(other, name) != 0) {
            fprintf(stderr, "hetero-sim: warning: --set %s changes nothing (it edits the %s %s; "
                    "%s is %s)\n", *a, strcmp(doc, "soc") == 0 ? "SoC" : doc, other, whose,
                    name);
        }
    }
}

HwSoc *
hs_config_load_soc(const char *name, const HsOverrides *ovr, GError **error)
{
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    if (!hs_overrides_check_targets(ovr, "soc", configs, error)) {
        return NULL;
    }
    HwSoc *soc = hw_soc_load_edit(name, configs,
                                  hs_overrides_count(ovr, "soc") ? hs_overrides_apply_soc : NULL,
                                  (void *) ovr, error);
    return with_stack_edits(soc, ovr, error);
}

HwSoc *
hs_config_soc_from_json(const cJSON *json, const char *what, const HsOverrides *ovr,
                        GError **error)
{
    g_autoptr(cJSON) root = cJSON_Duplicate(json, TRUE);
    if (hs_overrides_count(ovr, "soc") > 0 && !hs_overrides_apply(ovr, "soc", root, error)) {
        return NULL;
    }
    HwSoc *soc = hw_soc_from_json(root, what, error);
    if (soc) {
        /* stack names are the shipped ones, as for a SoC loaded by name */
        g_free(soc->stacks_dir);
        soc->stacks_dir = g_build_filename(hs_cli_data_dir(), "configs", "stacks", NULL);
    }
    return with_stack_edits(soc, ovr, error);
}

GStrv
hs_config_recorded_sets(const cJSON *cfg, gboolean with_soc, const char *const *more)
{
    GPtrArray *all = g_ptr_array_new();
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(cfg, "overrides");
    const cJSON *it = NULL;
    if (!cJSON_IsArray(rec)) {
        rec = NULL;
    }
    cJSON_ArrayForEach(it, rec) {
        if (!cJSON_IsString(it)) {
            continue;
        }
        g_autofree char *path = g_strndup(it->valuestring, strcspn(it->valuestring, "="));
        const char *doc = hs_override_doc(path);
        if (strcmp(doc, "model") != 0 && (with_soc || strcmp(doc, "soc") != 0)) {
            g_ptr_array_add(all, g_strdup(it->valuestring));
        }
    }
    for (const char *const *m = more; m && *m; m++) {
        g_ptr_array_add(all, g_strdup(*m));
    }
    g_ptr_array_add(all, NULL);
    return (GStrv) g_ptr_array_free(all, FALSE);
}

gboolean
hs_config_preload_stack(HwSoc *soc, const cJSON *cfg, const char *cfg_path, GError **error)
{
    const cJSON *sr = cJSON_GetObjectItemCaseSensitive(cfg, "stack_resolved");
    if (sr == NULL) {
        return TRUE;
    }
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(sr, "name_or_path");
    const cJSON *profile = cJSON_GetObjectItemCaseSensitive(sr, "profile");
    if (!cJSON_IsString(key) || !cJSON_IsObject(profile)) {
        g_autofree char *got = hs_json_describe(sr);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: $.stack_resolved: expected {\"name_or_path\": string, "
                    "\"profile\": object} (got %s)", cfg_path, got);
        return FALSE;
    }
    g_autofree char *what = g_strdup_printf("%s (its \"stack_resolved\")", cfg_path);
    return hw_soc_stack_preload(soc, key->valuestring, profile, what, error);
}

MdlSpec *
hs_config_load_model(const char *name, const HsOverrides *ovr, GError **error)
{
    g_autofree char *models = g_build_filename(hs_cli_data_dir(), "models", NULL);
    gboolean edit = hs_overrides_count(ovr, "model") > 0;
    g_autoptr(MdlSpec) spec = mdl_spec_load_edit(name, models,
                                                 edit ? hs_overrides_apply_model : NULL,
                                                 (void *) ovr, error);
    if (spec == NULL) {
        hs_overrides_explain(ovr, "model", error);
        return NULL;
    }
    if (edit) {
        /* config.json holds keys the simulator does not read: setting one
         * would change nothing, so only the keys it reads are accepted */
        g_autoptr(cJSON) known = mdl_spec_to_json(spec);
        if (!hs_overrides_check_known(ovr, "model", known, error)) {
            return NULL;
        }
    }
    return g_steal_pointer(&spec);
}

static cJSON *
workload_json(const SimWorkload *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "prompt", w->prompt);
    cJSON_AddNumberToObject(o, "decode", w->decode);
    cJSON_AddNumberToObject(o, "batch", w->batch);
    cJSON_AddStringToObject(o, "sync", sim_sync_name[w->sync]);
    cJSON_AddNumberToObject(o, "check_layers", w->check_layers);
    cJSON_AddNumberToObject(o, "seed", (double) w->seed);
    cJSON *p = cJSON_AddObjectToObject(o, "policy_options");
    cJSON_AddNumberToObject(p, "chunk_tokens", w->opts.chunk_tokens);
    cJSON_AddNumberToObject(p, "row_align", w->opts.row_align);
    cJSON_AddNumberToObject(p, "tok_align", w->opts.tok_align);
    cJSON_AddNumberToObject(p, "min_npu_shape", w->opts.min_npu_shape);
    cJSON_AddNumberToObject(p, "max_npu_shape", w->opts.max_npu_shape);
    cJSON *r = cJSON_AddObjectToObject(o, "render");
    cJSON_AddNumberToObject(r, "fps", w->render.fps);
    cJSON_AddNumberToObject(r, "frame_ms", w->render.frame_ms);
    cJSON_AddNumberToObject(r, "frame_mb", w->render.frame_mb);
    cJSON_AddNumberToObject(r, "llm_priority", w->render.llm_priority);
    return o;
}

cJSON *
hs_config_resolved(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "soc", hw_soc_to_json(soc));
    cJSON_AddItemToObject(o, "model", mdl_spec_to_json(spec));
    cJSON_AddItemToObject(o, "workload", workload_json(w));
    return o;
}

char *
hs_config_hash(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w)
{
    g_autoptr(cJSON) c = hs_config_resolved(soc, spec, w);
    g_autofree char *text = hs_json_print(c, FALSE);
    return g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
}

cJSON *
hs_config_json(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
               const SimWorkload *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "overrides", hs_overrides_to_json(ovr));
    g_autofree char *hash = hs_config_hash(soc, spec, w);
    cJSON_AddStringToObject(o, "hash", hash);
    return o;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* hs_config_request() without its "soc_sources" */
static cJSON *
config_request(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
               const SimWorkload *w, const char *policy, const char *stack)
{
    cJSON *o = hs_config_resolved(soc, spec, w);
    hs_json_drop_nulls(cJSON_GetObjectItemCaseSensitive(o, "soc"));    /* loads back */
    if (policy) {
        cJSON_AddStringToObject(o, "policy", policy);
    }
    if (stack) {
        cJSON_AddStringToObject(o, "stack", stack);
    } else {
        cJSON_AddNullToObject(o, "stack");
    }
    cJSON_AddItemToObject(o, "overrides", hs_overrides_to_json(ovr));
    g_autofree char *hash = hs_config_hash(soc, spec, w);
    cJSON_AddStringToObject(o, "hash", hash);
    /* the stack itself, as the run loaded it (a replay runs it, not what
     * the name stands for by then) */
    const SimPolicy *p = policy ? sim_policy_find(policy) : NULL;
    const char *key = stack ? stack : p ? p->stack : NULL;
    const HwStack *st = key ? hw_soc_stack(soc, key, NULL) : NULL;
    if (st) {
        cJSON *sr = cJSON_AddObjectToObject(o, "stack_resolved");
        cJSON_AddStringToObject(sr, "name_or_path", key);
        cJSON_AddItemToObject(sr, "profile", hw_stack_to_json(st));
    }
    return o;
}

cJSON *
hs_config_request(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
                  const SimWorkload *w, const char *policy, const char *stack)
{
    cJSON *o = config_request(ovr, soc, spec, w, policy, stack);
    /* where each SoC number comes from, by its JSON path (sorted) */
    cJSON *src = cJSON_AddObjectToObject(o, "soc_sources");
    if (soc->sources) {
        g_autofree gpointer *keys = g_hash_table_get_keys_as_array(soc->sources, NULL);
        guint n = g_hash_table_size(soc->sources);
        qsort(keys, n, sizeof(gpointer), cmp_str);
        for (guint i = 0; i < n; i++) {
            const char *v = g_hash_table_lookup(soc->sources, keys[i]);
            cJSON_AddStringToObject(src, keys[i], v ? v : "");
        }
    }
    return o;
}

cJSON *
hs_provenance_with_config(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
                          const SimWorkload *w, const char *policy, const char *stack)
{
    cJSON *prov = hs_provenance_json();
    cJSON_AddItemToObject(prov, "config", config_request(ovr, soc, spec, w, policy, stack));
    return prov;
}

void
hs_json_drop_nulls(cJSON *j)
{
    cJSON *c = j ? j->child : NULL;
    while (c) {
        cJSON *next = c->next;
        if (cJSON_IsNull(c) && cJSON_IsObject(j)) {
            cJSON_Delete(cJSON_DetachItemViaPointer(j, c));
        } else {
            hs_json_drop_nulls(c);
        }
        c = next;
    }
}

/* ---- provenance ----------------------------------------------------------- */

struct HsProvenance {
    char *command;               /* "hetero-sim run --soc x.json" */
    char *hash;
    const char *soc, *model, *stack;     /* labels */
    char *soc_file, *model_file, *stack_file;    /* as given, when files */
    char *line;
};
static HsProvenance prov;

HsProvenance *
hs_provenance_push(void)
{
    HsProvenance *saved = g_memdup2(&prov, sizeof prov);
    memset(&prov, 0, sizeof prov);
    return saved;
}

void
hs_provenance_pop(HsProvenance *saved)
{
    g_free(prov.command);
    g_free(prov.hash);
    g_free(prov.soc_file);
    g_free(prov.model_file);
    g_free(prov.stack_file);
    g_free(prov.line);
    prov = *saved;
    g_free(saved);
}

char *
hs_shell_quote(const char *arg)
{
    gboolean plain = arg[0] != '\0';
    for (const char *c = arg; *c && plain; c++) {
        plain = g_ascii_isalnum(*c) || strchr("_-./:=,+@%", *c) != NULL;
    }
    return plain ? g_strdup(arg) : g_shell_quote(arg);
}

void
hs_provenance_command(int argc, char *const *argv)
{
    g_autoptr(GString) s = g_string_new("hetero-sim");
    for (int i = 0; i < argc && argv[i]; i++) {
        g_autofree char *q = hs_shell_quote(argv[i]);
        g_string_append_printf(s, " %s", q);
    }
    g_free(prov.command);
    prov.command = g_string_free(g_steal_pointer(&s), FALSE);
    g_clear_pointer(&prov.line, g_free);
}

/* a name from configs/ is a bare word; anything else given was a file */
static gboolean
is_file_arg(const char *arg)
{
    return arg && (strchr(arg, '/') || g_str_has_suffix(arg, ".json") ||
                   g_file_test(arg, G_FILE_TEST_EXISTS));
}

const char *
hs_provenance_label(const char *arg, const char *name)
{
    if (!is_file_arg(arg)) {
        return g_intern_string(name);
    }
    g_autofree char *base = g_path_get_basename(arg);
    g_autofree char *label = g_strdup_printf("%s (from %s)", base, name);
    return g_intern_string(label);
}

void
hs_provenance_config(const char *soc_arg, const char *model_arg, const char *stack_arg,
                     const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w)
{
    g_free(prov.hash);
    prov.hash = hs_config_hash(soc, spec, w);
    prov.soc = hs_provenance_label(soc_arg, soc->name);
    prov.model = hs_provenance_label(model_arg, spec->name);
    const HwStack *st = stack_arg ? hw_soc_stack(soc, stack_arg, NULL) : NULL;
    prov.stack = stack_arg ? hs_provenance_label(stack_arg, st ? st->name : stack_arg) : NULL;
    g_free(prov.soc_file);
    g_free(prov.model_file);
    g_free(prov.stack_file);
    prov.soc_file = is_file_arg(soc_arg) ? g_strdup(soc_arg) : NULL;
    prov.model_file = is_file_arg(model_arg) ? g_strdup(model_arg) : NULL;
    prov.stack_file = is_file_arg(stack_arg) ? g_strdup(stack_arg) : NULL;
}

const char *
hs_provenance_soc(void)
{
    return prov.soc;
}

const char *
hs_provenance_model(void)
{
    return prov.model;
}

const char *
hs_provenance_command_line(void)
{
    return prov.command ? prov.command : "hetero-sim";
}

const char *
hs_provenance_hash(void)
{
    return prov.hash;
}

const char *
hs_provenance_line(void)
{
    if (prov.line == NULL) {
        prov.line = g_strdup_printf("hetero-sim %s: %s", hs_version(),
                                    hs_provenance_command_line());
    }
    return prov.line;
}

cJSON *
hs_provenance_json(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "version", hs_version());
    cJSON_AddStringToObject(o, "command", hs_provenance_command_line());
    const struct {
        const char *key, *value;
    } opt[] = {
        { "config_hash", prov.hash }, { "soc", prov.soc }, { "soc_file", prov.soc_file },
        { "model", prov.model }, { "model_file", prov.model_file },
        { "stack", prov.stack }, { "stack_file", prov.stack_file },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(opt); i++) {
        if (opt[i].value) {
            cJSON_AddStringToObject(o, opt[i].key, opt[i].value);
        }
    }
    return o;
}
