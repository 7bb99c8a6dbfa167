/*
 * override.h - `--set PATH=VALUE`: one key of a config document changed
 * on the command line, before the document's loader reads it.
 *
 * An override edits the parsed JSON, so the loader's own param tables
 * check it (unknown key, wrong type, out of range) exactly as they check
 * the file; hs_overrides_explain() then turns the loader's message about
 * that JSON path into one naming the --set option.
 *
 * PATH names a document by its first component (see hs_override_docs in
 * override.c: "model.num_hidden_layers" edits the model's config.json)
 * and otherwise edits the SoC: "memory.peak_gbps", "sync.fast.poll_us",
 * or a processor by its name, "npu.sram_kib" -> $.processors[i].sram_kib.
 * "stack.gpu.matmul_efficiency" edits every stack a run loads (each
 * policy's own, either side of a ratio); "stack@NAME.gpu.matmul_efficiency"
 * only the stack called NAME (what calibrate fits: one stack's key);
 * "soc@NAME.npu.arrays" only the SoC called NAME (a run, or a
 * calibration, that loads two).  An array's element is named by its
 * index: "gpu.dvfs.points.3.volt_mv".
 * VALUE is JSON (16384, true, "x") or, if it does not parse, a string.
 * A value written {"value": v, "source": s} keeps its form: v is replaced
 * and the source becomes "--set PATH=VALUE".
 */
#ifndef HS_OVERRIDE_H
#define HS_OVERRIDE_H

#include <glib.h>
#include <cjson/cJSON.h>

typedef struct HsOverrides HsOverrides;

/* Parse "PATH=VALUE" strings (@args NULL-terminated, may be NULL).  Errors:
 * HS_USAGE_ERROR "--set X: expected PATH=VALUE ...".  (transfer full) */
HsOverrides *hs_overrides_new(const char *const *args, GError **error);
void hs_overrides_free(HsOverrides *o);            /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsOverrides, hs_overrides_free)

/* Is @key a PATH --set takes: dot-separated non-empty components of
 * letters, digits, '_' and '-'? */
gboolean hs_override_key_valid(const char *key);

/* The document a path edits: "soc", "model", ... */
const char *hs_override_doc(const char *path);

/* NAME of a "DOC@NAME.KEY=VALUE" argument that edits one document of kind
 * @doc ("stack", "soc"), or NULL (another kind, every one, or not a
 * valid --set).  (transfer full) */
char *hs_override_target(const char *arg, const char *doc);

/* Number of overrides aimed at @doc (all of them if @doc is NULL). */
guint hs_overrides_count(const HsOverrides *o, const char *doc);

/*
 * Apply the overrides aimed at @doc to @root, in command-line order (a
 * later one wins).  @o is passed as void * so this serves as an
 * HsJsonEditFn for the loaders.  Errors: HS_USAGE_ERROR naming the --set
 * option (a processor or section that does not exist).
 */
gboolean hs_overrides_apply_soc(cJSON *root, void *o, GError **error);
gboolean hs_overrides_apply_model(cJSON *root, void *o, GError **error);
gboolean hs_overrides_apply(const HsOverrides *o, const char *doc, cJSON *root,
                            GError **error);

/*
 * After a loader failed on an edited @doc: if *error is about a JSON path
 * an override set (or an unknown key it added), replace it with
 * "--set PATH=VALUE: <what the loader said>" (HS_USAGE_ERROR); if it is
 * about another key (a check across keys), prefix "with --set ...: ".
 */
void hs_overrides_explain(const HsOverrides *o, const char *doc, GError **error);

/*
 * For documents whose loader ignores keys it does not know (a model's
 * config.json holds many): fail, naming the option, for an override of
 * @doc whose key is not a member of @known (the loaded values as JSON).
 */
gboolean hs_overrides_check_known(const HsOverrides *o, const char *doc,
                                  const cJSON *known, GError **error);

/* Does every "@doc@NAME" override ("stack@NAME", "soc@NAME") name a file
 * NAME.json in @dir?  Errors: HS_USAGE_ERROR naming the option. */
gboolean hs_overrides_check_targets(const HsOverrides *o, const char *doc, const char *dir,
                                    GError **error);

/* The distinct NAMEs of the "@doc@NAME" overrides, in order.  (transfer
 * full) */
GStrv hs_overrides_targets(const HsOverrides *o, const char *doc);

/* The number the --set @path (its document's prefix and target, if any,
 * ignored: "stack@mllm.npu.matmul_efficiency" reads npu.matmul_efficiency)
 * names in the document @root, read through a {value, source} form.
 * FALSE when @path names no number there. */
gboolean hs_override_get_number(const cJSON *root, const char *path, double *value);

/* ["npu.sram_kib=16384", ...] as given.  (transfer full) */
cJSON *hs_overrides_to_json(const HsOverrides *o);

#endif /* HS_OVERRIDE_H */
