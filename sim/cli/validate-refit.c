/*
 * validate-refit.c - `validate --sensitivity --refit`: the shipped
 * calibrations (configs/calibration/) fitted again under a changed
 * config (see validate.h: hs_refits_load, hs_refits_apply), as
 * `hetero-sim calibrate` fits them, so a changed assumption is judged by
 * what the model predicts once its fits have absorbed what they can.
 */
#include "sim/cli/validate.h"
#include "sim/calibrate/calibrate.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/override.h"

#include <math.h>
#include <string.h>

/* --refit: the shipped calibrations, what their measurements read as
 * shipped, and each key's shipped value beside what its fit gives there
 * (a shipped value may be the fit rounded to a tile, 96 rows for a fit of
 * 93: a refit moves the key by its fit's ratio, so a change the fit does
 * not feel leaves the key as shipped). */
struct HsRefits {
    GPtrArray *specs;            /* HsCalSpec, owned */
    GPtrArray *base;             /* per spec: double[n_meas], owned */
    GPtrArray *shipped, *fit0;   /* per spec: double[n_keys], owned */
};

void
hs_refits_free(HsRefits *r)
{
    if (r) {
        g_ptr_array_unref(r->specs);
        g_ptr_array_unref(r->base);
        g_ptr_array_unref(r->shipped);
        g_ptr_array_unref(r->fit0);
        g_free(r);
    }
}

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
    if (!hs_override_get_number(doc, path, v)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: %s: expected the shipped number it fits (got none)", s->path, path);
        return FALSE;
    }
    return TRUE;
}

HsRefits *
hs_refits_load(const char *const *set, GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "configs", "calibration", NULL);
    g_auto(GStrv) stems = hs_json_list_stems(dir, error);
    if (stems == NULL) {
        return NULL;
    }
    g_autoptr(HsRefits) r = g_new0(HsRefits, 1);
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

gboolean
hs_refits_apply(HsRefits *r, GPtrArray *args, GPtrArray *said, char **refused)
{
    for (guint pass = 0; pass < 4; pass++) {
        gboolean any = FALSE;
        for (guint i = 0; i < r->specs->len; i++) {
            HsCalSpec *s = g_ptr_array_index(r->specs, i);
            const double *base = g_ptr_array_index(r->base, i);
            g_autofree double *v = g_new0(double, MAX(s->n_meas, 1));
            g_autoptr(GError) err = NULL;
            if (!spec_values(s, (const char *const *) args->pdata, v, &err)) {
                *refused = g_strdup(err->message);
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
                *refused = g_strdup_printf("refitting %s: %s", s->path, err->message);
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
                for (guint j = 0; j < said->len; j++) {
                    const char *old = g_ptr_array_index(said, j);
                    if (g_str_has_prefix(old, path) && old[strlen(path)] == '=') {
                        g_ptr_array_remove_index(said, j--);
                    }
                }
                g_ptr_array_add(said, g_strdup_printf("%s=%.4g", path, x));
            }
            any = TRUE;
        }
        if (!any) {
            break;
        }
    }
    return TRUE;
}

