/*
 * validate-sensitivity.c - `hetero-sim validate --sensitivity PCT`: how
 * much each published prediction rides on the constants no source gives.
 *
 * Every numeric key of a shipped config whose source begins "assumed"
 * (the configs' own word for a number chosen without a measurement) is
 * scaled down and up by PCT % in turn, everything else as shipped, and
 * the rows are evaluated again.  A stack key is changed where it is
 * defined and in every stack that inherits it ("base") without setting it
 * itself, as the file's value would reach them; a SoC key moves only the
 * rows run on that SoC.  Integer keys are rounded (at least one step).  A
 * scaled value its loader refuses (an efficiency above 1) is reported as
 * refused, the other direction kept.  The keys are ranked by the largest
 * change of any row's simulated value; the per-paper means of the errors
 * (as validate's table computes them) are given at both ends.
 *
 * Calibrated keys are not scaled.  They are held at their shipped values,
 * or with --refit each is fitted again (its spec in configs/calibration/,
 * as `hetero-sim calibrate` fits it) whenever the change moves what it was
 * fitted to, until none moves: then the rows that move are what the model
 * predicts differently, not what a fit would absorb.  The largest change
 * and the count of rows moved are over predicted rows (calibrated ones
 * are fits, not predictions).
 */
#include "sim/cli/validate.h"
#include "sim/calibrate/calibrate.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/override.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One --set edit that carries an assumed value. */
typedef struct Edit {
    char *path;
    double value;
} Edit;

/* One assumed constant: a key, or the same key of every element of an
 * array (an operating-point table's voltages: "gpu.dvfs.points.*.volt_mv",
 * scaled together, as one assumption), and the edits that carry it. */
typedef struct Assumed {
    char *key;                   /* as --set names it in its own file */
    char *file;                  /* "sd8gen3.json", "stacks/heterollm.json" */
    char *soc;                   /* the SoC whose rows it can move (NULL: a
                                  * stack key, any row) */
    double lo, hi;               /* its value (an array's: the range) */
    char *source;                /* (the first element's) */
    GArray *edits;               /* Edit */
} Assumed;

static void
edit_clear(Edit *e)
{
    g_free(e->path);
}

static void
assumed_free(Assumed *a)
{
    g_free(a->key);
    g_free(a->file);
    g_free(a->soc);
    g_free(a->source);
    g_array_unref(a->edits);
    g_free(a);
}

static Assumed *
assumed_new(const char *key, const char *file, const char *soc, double value,
            const char *source)
{
    Assumed *a = g_new0(Assumed, 1);
    a->key = g_strdup(key);
    a->file = g_strdup(file);
    a->soc = g_strdup(soc);
    a->lo = a->hi = value;
    a->source = g_strdup(source);
    a->edits = g_array_new(FALSE, FALSE, sizeof(Edit));
    g_array_set_clear_func(a->edits, (GDestroyNotify) edit_clear);
    return a;
}

static void
assumed_edit(Assumed *a, const char *path, double value)
{
    Edit e = { g_strdup(path), value };
    g_array_append_val(a->edits, e);
    a->lo = MIN(a->lo, value);
    a->hi = MAX(a->hi, value);
}

/* Is @leaf a number whose source begins "assumed" (or, with @derived,
 * "derived": computed from a source by a chain of reasoning)? */
static gboolean
is_assumed(const cJSON *leaf, gboolean derived, double *value, const char **source)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(leaf, "value");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(leaf, "source");
    if (!cJSON_IsNumber(v) || !cJSON_IsString(s)) {
        return FALSE;
    }
    const char *t = s->valuestring;
    while (g_ascii_isspace(*t)) {
        t++;
    }
    *value = v->valuedouble;
    *source = s->valuestring;
    return g_ascii_strncasecmp(t, "assumed", strlen("assumed")) == 0 ||
           (derived && g_ascii_strncasecmp(t, "derived", strlen("derived")) == 0);
}

/* @key (a --set path), @group the same with array indices as "*". */
typedef void (*LeafFn)(const char *key, const char *group, double value, const char *source,
                       void *data);

/* Every assumed leaf under @node, its key @prefix + the components. */
static void
walk(const cJSON *node, const char *prefix, const char *group, gboolean derived, LeafFn fn,
     void *data)
{
    double value;
    const char *source;
    if (cJSON_IsObject(node) && cJSON_HasObjectItem(node, "value")) {
        if (is_assumed(node, derived, &value, &source)) {
            fn(prefix, group, value, source, data);
        }
        return;
    }
    const cJSON *it = NULL;
    int i = 0;
    cJSON_ArrayForEach(it, node) {
        g_autofree char *comp = cJSON_IsArray(node) ? g_strdup_printf("%d", i)
                                : g_strdup(it->string);
        g_autofree char *key = g_strconcat(prefix, ".", comp, NULL);
        g_autofree char *grp = g_strconcat(group, ".", cJSON_IsArray(node) ? "*" : comp, NULL);
        if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
            walk(it, key, grp, derived, fn, data);
        }
        i++;
    }
}

typedef struct Collect {
    GPtrArray *out;              /* Assumed */
    const char *file, *soc;
    GHashTable *stacks;          /* stack name -> its file's JSON, for a stack key */
    const char *stack;           /* the stack being walked */
} Collect;

static void
add_soc_key(const char *key, const char *group, double value, const char *source, void *data)
{
    Collect *c = data;
    for (guint i = 0; i < c->out->len; i++) {
        Assumed *a = g_ptr_array_index(c->out, i);
        if (strcmp(a->key, group) == 0 && strcmp(a->file, c->file) == 0) {
            /* another element of the array */
            g_autofree char *path = g_strdup_printf("soc@%s.%s", c->soc, key);
            assumed_edit(a, path, value);
            return;
        }
    }
    Assumed *a = assumed_new(group, c->file, c->soc, value, source);
    g_autofree char *path = g_strdup_printf("soc@%s.%s", c->soc, key);
    assumed_edit(a, path, value);
    g_ptr_array_add(c->out, a);
}

/* Does the stack file @doc set @key itself ("cpu.dequant.q4_0_gbps")? */
static gboolean
sets_key(const cJSON *doc, const char *key)
{
    g_auto(GStrv) comps = g_strsplit(key, ".", -1);
    const cJSON *at = doc;
    for (char **c = comps; *c && at; c++) {
        at = cJSON_GetObjectItemCaseSensitive(at, *c);
    }
    return at != NULL;
}

/* Is @key of @stack's file what @t gets: @stack in @t's chain of bases,
 * no file before it setting @key? */
static gboolean
inherits(GHashTable *stacks, const char *t, const char *stack, const char *key)
{
    for (guint depth = 0; t && depth < 32; depth++) {
        if (strcmp(t, stack) == 0) {
            return TRUE;
        }
        const cJSON *doc = g_hash_table_lookup(stacks, t);
        if (doc == NULL || sets_key(doc, key)) {
            return FALSE;
        }
        const cJSON *base = cJSON_GetObjectItemCaseSensitive(doc, "base");
        t = cJSON_IsString(base) ? base->valuestring : NULL;
    }
    return FALSE;
}

static void
add_stack_key(const char *key, const char *group, double value, const char *source,
              void *data)
{
    Collect *c = data;
    g_autofree char *name = g_strdup_printf("stack@%s.%s", c->stack, group);
    Assumed *a = assumed_new(name, c->file, NULL, value, source);
    g_autoptr(GList) names = g_hash_table_get_keys(c->stacks);
    names = g_list_sort(names, (GCompareFunc) strcmp);
    for (GList *l = names; l; l = l->next) {
        if (inherits(c->stacks, l->data, c->stack, key)) {
            g_autofree char *path = g_strdup_printf("stack@%s.%s", (char *) l->data, key);
            assumed_edit(a, path, value);
        }
    }
    g_ptr_array_add(c->out, a);
}

/* The assumed keys of the SoCs @socs and of every shipped stack. */
static GPtrArray *
collect(GPtrArray *socs, char **pats, gboolean derived, GError **error)
{
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func((GDestroyNotify) assumed_free);
    for (guint i = 0; i < socs->len; i++) {
        const char *soc = g_ptr_array_index(socs, i);
        g_autofree char *base = g_strconcat(soc, ".json", NULL);
        g_autofree char *file = g_build_filename(configs, base, NULL);
        if (strchr(soc, '/') || g_str_has_suffix(soc, ".json") ||
            !g_file_test(file, G_FILE_TEST_IS_REGULAR)) {
            /* a SoC given as a file: its keys cannot be targeted by name */
            fprintf(stderr, "hetero-sim: warning: validate --sensitivity: %s is not a shipped "
                    "SoC config; its keys are not scaled\n", soc);
            continue;
        }
        g_autoptr(cJSON) doc = hs_json_load_file(file, HS_CONFIG_ERROR, error);
        if (doc == NULL) {
            return NULL;
        }
        Collect c = { all, base, soc, NULL, NULL };
        const cJSON *it = NULL;
        cJSON_ArrayForEach(it, doc) {
            if (strcmp(it->string, "processors") == 0) {
                const cJSON *p = NULL;
                cJSON_ArrayForEach(p, it) {
                    const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
                    if (cJSON_IsString(name)) {
                        walk(p, name->valuestring, name->valuestring, derived, add_soc_key, &c);
                    }
                }
            } else if (cJSON_IsObject(it)) {
                walk(it, it->string, it->string, derived, add_soc_key, &c);
            }
        }
    }
    g_autofree char *dir = g_build_filename(configs, "stacks", NULL);
    g_auto(GStrv) stems = hs_json_list_stems(dir, error);
    if (stems == NULL) {
        return NULL;
    }
    g_autoptr(GHashTable) stacks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) cJSON_Delete);
    for (char **s = stems; *s; s++) {
        g_autofree char *base = g_strconcat(*s, ".json", NULL);
        g_autofree char *file = g_build_filename(dir, base, NULL);
        cJSON *doc = hs_json_load_file(file, HS_CONFIG_ERROR, error);
        if (doc == NULL) {
            return NULL;
        }
        g_hash_table_insert(stacks, g_strdup(*s), doc);
    }
    for (char **s = stems; *s; s++) {
        g_autofree char *file = g_strconcat("stacks/", *s, ".json", NULL);
        Collect c = { all, file, NULL, stacks, *s };
        const cJSON *it = NULL;
        cJSON_ArrayForEach(it, (const cJSON *) g_hash_table_lookup(stacks, *s)) {
            if (cJSON_IsObject(it)) {
                walk(it, it->string, it->string, derived, add_stack_key, &c);
            }
        }
    }
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify) assumed_free);
    for (guint i = 0; i < all->len; i++) {
        Assumed *a = g_ptr_array_index(all, i);
        if (hs_validate_matches(pats, a->key)) {
            g_ptr_array_add(out, g_ptr_array_steal_index(all, i--));
        }
    }
    return out;
}

/* One end of a key's range: the rows at its value. */
typedef struct End {
    double factor;               /* the scale asked */
    gboolean integer;            /* the loader wanted integers: rounded */
    char *refused;               /* the loader's message (NULL: evaluated) */
    HsValidateRow *rows;
    double max_change_pct;       /* the largest |change| of a predicted row */
    guint argmax, moved;         /* that row; predicted rows moved by >= 1 % */
    GPtrArray *refit;            /* --refit: "PATH=VALUE" of the keys refitted */
} End;

typedef struct Result {
    const Assumed *a;
    End end[2];                  /* scaled down, up */
    double rank;                 /* the larger of the ends' max_change_pct */
    gboolean zero;               /* its value is 0: no scale changes it */
} Result;

/* @v scaled by @f; for a key its loader takes as an integer (@integer),
 * rounded, at least one step from @v */
static double
scaled(double v, double f, gboolean integer)
{
    double s = v * f;
    if (integer && f != 1) {
        s = round(s);
        if (s == v) {
            s = v + (f > 1 ? 1 : -1);
        }
    }
    return s;
}

/* --refit: the shipped calibrations, what their measurements read as
 * shipped, and each key's shipped value beside what its fit gives there
 * (a shipped value may be the fit rounded to a tile, 96 rows for a fit of
 * 93: a refit moves the key by its fit's ratio, so a change the fit does
 * not feel leaves the key as shipped). */
typedef struct Refits {
    GPtrArray *specs;            /* HsCalSpec, owned */
    GPtrArray *base;             /* per spec: double[n_meas], owned */
    GPtrArray *shipped, *fit0;   /* per spec: double[n_keys], owned */
} Refits;

static void
refits_free(Refits *r)
{
    if (r) {
        g_ptr_array_unref(r->specs);
        g_ptr_array_unref(r->base);
        g_ptr_array_unref(r->shipped);
        g_ptr_array_unref(r->fit0);
        g_free(r);
    }
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Refits, refits_free)

/* @s's measurements under the overrides @set into @v; FALSE with *error. */
static gboolean
spec_values(const HsCalSpec *s, const char *const *set, double *v, GError **error)
{
    for (guint i = 0; i < s->n_meas; i++) {
        if (!hs_cal_eval(&s->meas[i], set, &v[i], error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* The shipped value of @s's key @k: in its stack (bases merged) or in its
 * SoC's file (a processor by its name).  FALSE with *error. */
static gboolean
shipped_value(const HsCalSpec *s, guint k, double *v, GError **error)
{
    const char *path = s->keys[k].path;
    const gboolean stack = strcmp(hs_override_doc(path), "stack") == 0;
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autofree char *stacks = g_build_filename(configs, "stacks", NULL);
    g_autofree char *file = NULL;
    g_autoptr(cJSON) doc = stack ? hs_json_load_based(s->stack, stacks, "stack", NULL, NULL,
                                                      &file, NULL, error)
                           : hs_json_load_named(s->soc, configs, "SoC", NULL, NULL, &file,
                                                error);
    if (doc == NULL) {
        return FALSE;
    }
    const char *rest = strchr(path, '@') ? strchr(strchr(path, '@'), '.') + 1
                       : stack || g_str_has_prefix(path, "soc.") ? strchr(path, '.') + 1
                       : path;
    g_auto(GStrv) comps = g_strsplit(rest, ".", -1);
    const cJSON *at = doc;
    for (char **c = comps; *c && at; c++) {
        const cJSON *next = NULL;
        if (at == doc && !stack) {
            const cJSON *p = NULL;
            cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(doc, "processors")) {
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
                if (cJSON_IsString(name) && strcmp(name->valuestring, *c) == 0) {
                    next = p;
                }
            }
        }
        at = next ? next : cJSON_GetObjectItemCaseSensitive(at, *c);
    }
    const cJSON *val = cJSON_IsObject(at) ? cJSON_GetObjectItemCaseSensitive(at, "value") : at;
    if (!cJSON_IsNumber(val)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: %s: expected the shipped number it fits (got none)", s->path, path);
        return FALSE;
    }
    *v = val->valuedouble;
    return TRUE;
}

static Refits *
refits_load(const char *const *set, GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "configs", "calibration", NULL);
    g_auto(GStrv) stems = hs_json_list_stems(dir, error);
    if (stems == NULL) {
        return NULL;
    }
    g_autoptr(Refits) r = g_new0(Refits, 1);
    r->specs = g_ptr_array_new_with_free_func((GDestroyNotify) hs_cal_spec_free);
    r->base = g_ptr_array_new_with_free_func(g_free);
    r->shipped = g_ptr_array_new_with_free_func(g_free);
    r->fit0 = g_ptr_array_new_with_free_func(g_free);
    for (char **st = stems; *st; st++) {
        g_autofree char *base = g_strconcat(*st, ".json", NULL);
        g_autofree char *file = g_build_filename(dir, base, NULL);
        HsCalSpec *s = hs_cal_spec_load(file, error);
        if (s == NULL) {
            return NULL;
        }
        g_ptr_array_add(r->specs, s);
        double *v = g_new0(double, MAX(s->n_meas, 1));
        g_ptr_array_add(r->base, v);
        double *shipped = g_new0(double, MAX(s->n_keys, 1));
        double *fit0 = g_new0(double, MAX(s->n_keys, 1));
        g_ptr_array_add(r->shipped, shipped);
        g_ptr_array_add(r->fit0, fit0);
        s->fixed = g_strdupv((char **) set);
        g_autoptr(HsCalResult) res = NULL;
        if (!hs_cal_spec_resolve(s, error) || !spec_values(s, set, v, error) ||
            (res = hs_cal_fit(s, FALSE, error)) == NULL) {
            g_prefix_error(error, "validate --refit: ");
            return NULL;
        }
        g_clear_pointer(&s->fixed, g_strfreev);
        for (guint k = 0; k < s->n_keys; k++) {
            fit0[k] = res->keys[k].value;
            if (!shipped_value(s, k, &shipped[k], error)) {
                g_prefix_error(error, "validate --refit: ");
                return NULL;
            }
        }
    }
    return g_steal_pointer(&r);
}

/* The --set path of @s's key @k as validate's rows take it: a stack key
 * for the spec's stack only, a SoC key for its SoC only. */
static char *
refit_path(const HsCalSpec *s, guint k)
{
    const char *path = s->keys[k].path;
    if (strcmp(hs_override_doc(path), "stack") == 0 && s->stack && !strchr(path, '@')) {
        return g_strdup_printf("stack@%s.%s", s->stack, path + strlen("stack."));
    }
    if (strcmp(hs_override_doc(path), "soc") == 0 && !strchr(path, '@')) {
        return g_strdup_printf("soc@%s.%s", s->soc,
                               g_str_has_prefix(path, "soc.") ? path + strlen("soc.") : path);
    }
    return g_strdup(path);
}

/* Replace (or add) "@path=..." in @args (a NULL-terminated GPtrArray). */
static void
args_put(GPtrArray *args, const char *path, double value)
{
    g_ptr_array_remove_index(args, args->len - 1);          /* the NULL */
    const size_t n = strlen(path);
    for (guint i = 0; i < args->len; i++) {
        const char *a = g_ptr_array_index(args, i);
        if (strncmp(a, path, n) == 0 && a[n] == '=') {
            g_ptr_array_remove_index(args, i--);
        }
    }
    g_ptr_array_add(args, g_strdup_printf("%s=%.17g", path, value));
    g_ptr_array_add(args, NULL);
}

/* Refit every calibration whose measurements @args move, until none
 * moves (at most a few rounds: one fit's key can move another's
 * measurement); each fitted key put in @args and said in @e->refit.
 * FALSE with *error only for a failure that is not the scaled value's. */
static gboolean
refit(Refits *r, GPtrArray *args, End *e, GError **error)
{
    e->refit = g_ptr_array_new_with_free_func(g_free);
    for (guint pass = 0; pass < 4; pass++) {
        gboolean any = FALSE;
        for (guint i = 0; i < r->specs->len; i++) {
            HsCalSpec *s = g_ptr_array_index(r->specs, i);
            const double *base = g_ptr_array_index(r->base, i);
            g_autofree double *v = g_new0(double, MAX(s->n_meas, 1));
            g_autoptr(GError) err = NULL;
            if (!spec_values(s, (const char *const *) args->pdata, v, &err)) {
                e->refused = g_strdup(err->message);
                return TRUE;
            }
            gboolean moved = FALSE;
            for (guint m = 0; m < s->n_meas; m++) {
                moved = moved || fabs(v[m] - base[m]) > 1e-4 * fabs(base[m]);
            }
            if (!moved) {
                continue;
            }
            g_strfreev(s->fixed);
            s->fixed = g_strdupv((char **) args->pdata);
            g_autoptr(HsCalResult) res = hs_cal_fit(s, FALSE, &err);
            g_clear_pointer(&s->fixed, g_strfreev);
            if (res == NULL) {
                e->refused = g_strdup_printf("refitting %s: %s", s->path, err->message);
                return TRUE;
            }
            const double *shipped = g_ptr_array_index(r->shipped, i);
            const double *fit0 = g_ptr_array_index(r->fit0, i);
            for (guint k = 0; k < s->n_keys; k++) {
                g_autofree char *path = refit_path(s, k);
                double x = fit0[k] != 0 ? shipped[k] * res->keys[k].value / fit0[k]
                                        : res->keys[k].value;
                if (s->keys[k].integer) {
                    x = round(x);
                }
                x = CLAMP(x, s->keys[k].lo, s->keys[k].hi);
                args_put(args, path, x);
                for (guint j = 0; j < e->refit->len; j++) {
                    const char *old = g_ptr_array_index(e->refit, j);
                    if (g_str_has_prefix(old, path) && old[strlen(path)] == '=') {
                        g_ptr_array_remove_index(e->refit, j--);
                    }
                }
                g_ptr_array_add(e->refit, g_strdup_printf("%s=%.4g", path, x));
            }
            any = TRUE;
        }
        if (!any) {
            break;
        }
    }
    (void) error;
    return TRUE;
}

static gboolean
evaluate(const HsValidateRow *base, guint n, const char *const *set, const Assumed *a,
         Refits *refits, End *e, GError **error)
{
    g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *s = set; s && *s; s++) {
        g_ptr_array_add(args, g_strdup(*s));
    }
    for (guint i = 0; i < a->edits->len; i++) {
        const Edit *ed = &g_array_index(a->edits, Edit, i);
        g_ptr_array_add(args, g_strdup_printf("%s=%.17g", ed->path,
                                              scaled(ed->value, e->factor, e->integer)));
    }
    g_ptr_array_add(args, NULL);
    if (refits && (!refit(refits, args, e, error) || e->refused)) {
        return e->refused != NULL;
    }
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) args->pdata, error);
    if (ovr == NULL) {
        return FALSE;
    }
    g_autoptr(HsPointCache) c = hs_point_cache_new(ovr);
    e->rows = g_new(HsValidateRow, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        e->rows[i] = base[i];
        if (a->soc && strcmp(base[i].pt->soc, a->soc) != 0) {
            continue;                   /* another SoC's file */
        }
        g_autoptr(GError) err = NULL;
        if (!hs_validate_eval(c, &e->rows[i], &err)) {
            /* the rows ran as shipped: the scaled value is what the loader
             * refuses (out of its range, or against another key) */
            e->refused = g_strdup(err->message);
            return TRUE;
        }
        double d = base[i].simulated != 0 && !base[i].pt->calibrated
                   ? 100.0 * (e->rows[i].simulated - base[i].simulated) / fabs(base[i].simulated)
                   : 0;
        if (fabs(d) > fabs(e->max_change_pct)) {
            e->max_change_pct = d;
            e->argmax = i;
        }
        e->moved += fabs(d) >= 1;
    }
    return TRUE;
}

static void
end_clear(End *e)
{
    g_clear_pointer(&e->rows, g_free);
    g_clear_pointer(&e->refused, g_free);
    g_clear_pointer(&e->refit, g_ptr_array_unref);
    e->max_change_pct = 0;
    e->argmax = e->moved = 0;
}

static int
by_rank(gconstpointer pa, gconstpointer pb)
{
    const Result *a = pa, *b = pb;
    if (a->rank != b->rank) {
        return a->rank > b->rank ? -1 : 1;
    }
    return strcmp(a->a->key, b->a->key);
}

/* "360", or an array's "540-875" */
static char *
value_text(const Assumed *a, const End *e)
{
    double f = e ? e->factor : 1;
    gboolean integer = e && e->integer;
    double lo = scaled(a->lo, f, integer), hi = scaled(a->hi, f, integer);
    return lo == hi ? g_strdup_printf("%.4g", lo) : g_strdup_printf("%.4g-%.4g", lo, hi);
}

static void
print_end(const Result *r, int i, const HsValidateRow *rows)
{
    const End *e = &r->end[i];
    g_autofree char *v = value_text(r->a, e);
    if (e->refused) {
        printf(" %s: refused |", v);
    } else if (e->max_change_pct == 0) {
        printf(" %s: none |", v);
    } else {
        printf(" %s: %s %+.1f %% |", v, rows[e->argmax].pt->id, e->max_change_pct);
    }
}

static void
print_text(const Result *res, guint nk, const HsValidateRow *rows, guint n, double pct,
           gboolean with_refit)
{
    printf("Sensitivity of the predictions to the assumed constants: each scaled by "
           "%g and %g (integers rounded), the rest as shipped, %s; %u row%s.\n"
           "Largest change of a predicted row's simulated value at each end; predicted rows "
           "moved by 1 %% or more; the mean error over predicted rows, all papers, at each "
           "end.\n\n", 1 - pct / 100, 1 + pct / 100,
           with_refit ? "each calibrated key refitted to what it was fitted to (--refit)"
                      : "calibrated keys held at their shipped values", n, n == 1 ? "" : "s");
    HsValidateSummary s0 = hs_validate_summarise(rows, n, NULL);
    printf("| key | file | value | lower: largest change | higher: largest change | "
           "rows moved | MAPE lower / higher (now %.1f %%) |\n|---|---|---|---|---|---|---|\n",
           s0.mape);
    GString *still = g_string_new(NULL);
    guint n_still = 0;
    for (guint k = 0; k < nk; k++) {
        const Result *r = &res[k];
        if (r->zero) {
            continue;
        }
        if (r->rank < 0.1 && !r->end[0].refused && !r->end[1].refused) {
            g_string_append_printf(still, "%s%s", n_still++ ? ", " : "", r->a->key);
            continue;
        }
        g_autofree char *v = value_text(r->a, NULL);
        printf("| %s | %s | %s |", r->a->key, r->a->file, v);
        print_end(r, 0, rows);
        print_end(r, 1, rows);
        printf(" %u |", MAX(r->end[0].moved, r->end[1].moved));
        for (int i = 0; i < 2; i++) {
            if (r->end[i].refused) {
                printf(" -%s", i ? " |" : " /");
            } else {
                HsValidateSummary s = hs_validate_summarise(r->end[i].rows, n, NULL);
                printf(" %.1f %%%s", s.mape, i ? " |" : " /");
            }
        }
        printf("\n");
    }
    for (guint k = 0; k < nk && with_refit; k++) {
        for (int i = 0; i < 2; i++) {
            const End *e = &res[k].end[i];
            if (e->refit && e->refit->len && res[k].rank >= 0.1) {
                g_autofree char *v = value_text(res[k].a, e);
                printf("%s%s at %s refitted", k + i ? "" : "\n", res[k].a->key, v);
                for (guint j = 0; j < e->refit->len; j++) {
                    printf("%s %s", j ? "," : "", (char *) g_ptr_array_index(e->refit, j));
                }
                printf("\n");
            }
        }
    }
    if (n_still) {
        printf("\nmoved no row by 0.1 %% or more (%u): %s\n", n_still, still->str);
    }
    for (guint k = 0, z = 0; k < nk; k++) {
        if (res[k].zero) {
            printf("%s%s", z++ ? ", " : "\n0, so not scaled: ", res[k].a->key);
        }
        if (k + 1 == nk && z) {
            printf("\n");
        }
    }
    for (guint k = 0; k < nk; k++) {
        for (int i = 0; i < 2; i++) {
            if (res[k].end[i].refused) {
                g_autofree char *v = value_text(res[k].a, &res[k].end[i]);
                printf("\n%s at %s refused: %s", res[k].a->key, v, res[k].end[i].refused);
            }
        }
    }
    g_string_free(still, TRUE);
    printf("\n%s\n", hs_provenance_line());
}

static cJSON *
end_json(const End *e, const HsValidateRow *rows, guint n, GPtrArray *files)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "factor", e->factor);
    cJSON_AddBoolToObject(o, "rounded", e->integer);
    if (e->refused) {
        cJSON_AddStringToObject(o, "refused", e->refused);
        return o;
    }
    if (e->refit) {
        cJSON *rf = cJSON_AddObjectToObject(o, "refit");
        for (guint i = 0; i < e->refit->len; i++) {
            const char *kv = g_ptr_array_index(e->refit, i);
            g_autofree char *path = g_strndup(kv, strcspn(kv, "="));
            cJSON_AddNumberToObject(rf, path, g_ascii_strtod(strchr(kv, '=') + 1, NULL));
        }
    }
    cJSON *moved = cJSON_AddObjectToObject(o, "rows");
    for (guint i = 0; i < n; i++) {
        if (e->rows[i].simulated != rows[i].simulated) {
            cJSON *r = cJSON_AddObjectToObject(moved, rows[i].pt->id);
            cJSON_AddNumberToObject(r, "simulated", e->rows[i].simulated);
            cJSON_AddNumberToObject(r, "change_pct",
                                    100.0 * (e->rows[i].simulated - rows[i].simulated) /
                                    fabs(rows[i].simulated));
        }
    }
    cJSON *mape = cJSON_AddObjectToObject(o, "mape_pct");
    for (guint f = 0; f <= files->len; f++) {
        const char *file = f < files->len ? g_ptr_array_index(files, f) : NULL;
        HsValidateSummary s = hs_validate_summarise(e->rows, n, file);
        cJSON_AddNumberToObject(mape, file ? file : "all", s.mape);
    }
    return o;
}

static void
print_json(const Result *res, guint nk, const HsValidateRow *rows, guint n, GPtrArray *files,
           double pct)
{
    g_autoptr(cJSON) root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "pct", pct);
    cJSON *keys = cJSON_AddArrayToObject(root, "keys");
    for (guint k = 0; k < nk; k++) {
        const Result *r = &res[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", r->a->key);
        cJSON_AddStringToObject(o, "file", r->a->file);
        cJSON_AddStringToObject(o, "source", r->a->source);
        cJSON *edits = cJSON_AddObjectToObject(o, "set");
        for (guint i = 0; i < r->a->edits->len; i++) {
            const Edit *ed = &g_array_index(r->a->edits, Edit, i);
            cJSON_AddNumberToObject(edits, ed->path, ed->value);
        }
        if (r->zero) {
            cJSON_AddStringToObject(o, "not_scaled", "its value is 0");
        } else {
            cJSON_AddItemToObject(o, "lower", end_json(&r->end[0], rows, n, files));
            cJSON_AddItemToObject(o, "higher", end_json(&r->end[1], rows, n, files));
        }
        cJSON_AddItemToArray(keys, o);
    }
    cJSON_AddItemToObject(root, "provenance", hs_provenance_json());
    g_autofree char *text = hs_json_print(root, FALSE);
    printf("%s\n", text);
}

gboolean
hs_validate_sensitivity(const HsValidateRow *rows, guint n, GPtrArray *files,
                        const char *const *set, double pct, char **keys, gboolean derived,
                        gboolean with_refit, HsFormat format, GError **error)
{
    if (!(pct > 0 && pct < 100)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "validate: --sensitivity: expected a percentage in (0, 100) (got %g)", pct);
        return FALSE;
    }
    g_autoptr(GPtrArray) socs = g_ptr_array_new();
    for (guint i = 0; i < n; i++) {
        if (!g_ptr_array_find_with_equal_func(socs, rows[i].pt->soc, g_str_equal, NULL)) {
            g_ptr_array_add(socs, rows[i].pt->soc);
        }
    }
    g_autoptr(GPtrArray) assumed = collect(socs, keys, derived, error);
    if (assumed == NULL) {
        return FALSE;
    }
    if (assumed->len == 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "validate: --keys: expected a pattern matching an assumed key such as "
                    "npu.stationary_kib or stack@heterollm.cpu.call_us (got none matching)");
        return FALSE;
    }
    g_autoptr(Refits) refits = with_refit ? refits_load(set, error) : NULL;
    if (with_refit && refits == NULL) {
        return FALSE;
    }
    const guint nk = assumed->len;
    g_autofree Result *res = g_new0(Result, nk);
    const gboolean progress = isatty(STDERR_FILENO);
    gboolean ok = TRUE;
    for (guint k = 0; k < nk && ok; k++) {
        Result *r = &res[k];
        r->a = g_ptr_array_index(assumed, k);
        if (progress) {
            fprintf(stderr, "\rvalidate --sensitivity: key %u of %u", k + 1, nk);
        }
        if (r->a->lo == 0 && r->a->hi == 0) {
            r->zero = TRUE;
            r->rank = -1;
            continue;
        }
        for (int i = 0; i < 2 && ok; i++) {
            End *e = &r->end[i];
            e->factor = i ? 1 + pct / 100 : 1 - pct / 100;
            ok = evaluate(rows, n, set, r->a, refits, e, error);
            if (ok && e->refused && strstr(e->refused, "expected an integer")) {
                /* an integer key (cores, arrays): again, rounded */
                end_clear(e);
                e->integer = TRUE;
                ok = evaluate(rows, n, set, r->a, refits, e, error);
            }
            r->rank = MAX(r->rank, fabs(r->end[i].max_change_pct));
        }
    }
    if (progress) {
        fprintf(stderr, "\r%*s\r", 48, "");
    }
    if (ok) {
        qsort(res, nk, sizeof(Result), by_rank);
        if (format == HS_FORMAT_JSON) {
            print_json(res, nk, rows, n, files, pct);
        } else {
            print_text(res, nk, rows, n, pct, with_refit);
        }
    }
    for (guint k = 0; k < nk; k++) {
        end_clear(&res[k].end[0]);
        end_clear(&res[k].end[1]);
    }
    return ok;
}
