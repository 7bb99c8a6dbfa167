/*
 * cmd-calibrate.c - `hetero-sim calibrate SPEC`: fit keys of a SoC or a
 * stack to measurements (calibrate.h), print what the fit is worth (text
 * or JSON) and with --out write the base config with the fitted keys
 * replaced, each carrying its provenance in its source.
 */
#include "sim/calibrate/calibrate.h"
#include "sim/cli/cli.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"
#include "sim/util/override.h"
#include "sim/util/version-info.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static char *
key_interval(const HsCalKey *k, const HsCalKeyResult *r)
{
    if (r->unconstrained) {
        return g_strdup_printf("%.4g (not constrained: [%.4g, %.4g] is the data's)", r->value,
                               r->lo95, r->hi95);
    }
    return g_strdup_printf("%.4g (95 %% interval %.4g to %.4g%s)", r->value, r->lo95, r->hi95,
                           k->log ? ", from ln x" : "");
}

/* the objects of @j whose "source" is @old: the source becomes @new */
static guint
replace_source(cJSON *j, const char *old, const char *new)
{
    guint n = 0;
    for (cJSON *c = j ? j->child : NULL; c; c = c->next) {
        if (c->string && strcmp(c->string, "source") == 0 && cJSON_IsString(c) &&
            strcmp(c->valuestring, old) == 0) {
            cJSON_SetValuestring(c, new);
            n++;
        } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            n += replace_source(c, old, new);
        }
    }
    return n;
}

/* The base @doc ("soc" or "stack") as its file holds it (reading it notes
 * the file as an input, which no output may overwrite). */
static cJSON *
load_base(const HsCalSpec *s, const char *doc, GError **error)
{
    gboolean stack = strcmp(doc, "stack") == 0;
    g_autofree char *dir = stack ? g_build_filename(hs_cli_data_dir(), "configs", "stacks", NULL)
                                 : g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autofree char *file = NULL;
    return hs_json_load_named(stack ? s->stack : s->soc, dir, stack ? "stack" : "SoC", NULL,
                              NULL, &file, error);
}

/* The base @doc ("soc" or "stack") with the fitted keys of that document
 * replaced, to @out; @opt names the option in errors. */
static gboolean
write_out(const HsCalSpec *s, const HsCalResult *r, const char *doc, const char *out,
          const char *opt, GError **error)
{
    g_autoptr(cJSON) root = load_base(s, doc, error);
    if (root == NULL) {
        return FALSE;
    }
    double x[HS_CAL_MAX_KEYS];
    for (guint k = 0; k < s->n_keys; k++) {
        x[k] = r->keys[k].value;
    }
    g_auto(GStrv) set = hs_cal_overrides(s, x);
    /* (the other document's overrides are not applied to this one) */
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) set, error);
    if (ovr == NULL || !hs_overrides_apply(ovr, doc, root, error)) {
        return FALSE;
    }
    for (guint k = 0; k < s->n_keys; k++) {
        if (strcmp(hs_override_doc(s->keys[k].path), doc) != 0) {
            continue;
        }
        g_autofree char *old = g_strdup_printf("--set %s", set[k]);
        g_autofree char *iv = key_interval(&s->keys[k], &r->keys[k]);
        g_autofree char *src = g_strdup_printf(
            "calibrated by hetero-sim calibrate %s (%s, hetero-sim %s): %u measurements, %s",
            s->path, hs_cal_method_name, hs_version(), s->n_meas, iv);
        if (replace_source(root, old, src) == 0) {
            /* a plain number in the base: it gains the {value, source} form */
            g_debug("%s had no source to replace", s->keys[k].path);
        }
    }
    g_autofree char *text = hs_json_print(root, TRUE);
    g_autofree char *with_nl = g_strconcat(text, "\n", NULL);
    /* whole or not at all, and never over an input the fit read */
    if (!hs_outfile_write_all(out, with_nl, strlen(with_nl), error)) {
        g_prefix_error(error, "%s: ", opt);
        return FALSE;
    }
    return TRUE;
}

static cJSON *
report_json(const HsCalSpec *s, const HsCalResult *r, gboolean loo)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "spec", s->path);
    cJSON_AddStringToObject(j, "method", hs_cal_method_name);
    cJSON_AddNumberToObject(j, "measurements", s->n_meas);
    cJSON_AddNumberToObject(j, "cost", r->cost);
    cJSON_AddNumberToObject(j, "s2", r->s2);
    cJSON_AddNumberToObject(j, "evaluations", r->evals);
    cJSON_AddNumberToObject(j, "singular_value_ratio", r->sv_min_ratio);
    cJSON *keys = cJSON_AddArrayToObject(j, "keys");
    for (guint k = 0; k < s->n_keys; k++) {
        const HsCalKeyResult *kr = &r->keys[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(keys, o);
        cJSON_AddStringToObject(o, "key", s->keys[k].path);
        cJSON_AddNumberToObject(o, "value", kr->value);
        cJSON_AddNumberToObject(o, "lo95", kr->lo95);
        cJSON_AddNumberToObject(o, "hi95", kr->hi95);
        cJSON_AddNumberToObject(o, "min", s->keys[k].lo);
        cJSON_AddNumberToObject(o, "max", s->keys[k].hi);
        cJSON_AddBoolToObject(o, "unconstrained", kr->unconstrained);
        cJSON_AddBoolToObject(o, "at_bound", kr->at_bound);
        cJSON *corr = cJSON_AddObjectToObject(o, "correlation");
        for (guint b = 0; b < s->n_keys; b++) {
            if (b != k) {
                cJSON_AddNumberToObject(corr, s->keys[b].path, r->corr[k][b]);
            }
        }
    }
    cJSON *ms = cJSON_AddArrayToObject(j, "measurements_fit");
    for (guint i = 0; i < s->n_meas; i++) {
        const HsCalMeasResult *mr = &r->meas[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(ms, o);
        cJSON_AddStringToObject(o, "id", s->meas[i].id);
        cJSON_AddStringToObject(o, "metric", s->meas[i].metric);
        cJSON_AddNumberToObject(o, "measured", s->meas[i].value);
        cJSON_AddNumberToObject(o, "simulated", mr->simulated);
        cJSON_AddNumberToObject(o, "error_pct", mr->error_pct);
        cJSON_AddNumberToObject(o, "residual", mr->residual);
        if (loo && isfinite(mr->loo_error_pct)) {
            cJSON_AddNumberToObject(o, "loo_simulated", mr->loo_simulated);
            cJSON_AddNumberToObject(o, "loo_error_pct", mr->loo_error_pct);
        }
    }
    cJSON *w = cJSON_AddArrayToObject(j, "warnings");
    for (guint i = 0; i < r->warnings->len; i++) {
        cJSON_AddItemToArray(w, cJSON_CreateString(r->warnings->pdata[i]));
    }
    return j;
}

static void
report_text(const HsCalSpec *s, const HsCalResult *r, gboolean loo, GString *o)
{
    g_string_append_printf(o, "calibrate %s: %u keys, %u measurements, %s, %u runs of the "
                              "objective; cost %.4g, s^2 %.3g\n\n",
                           s->path, s->n_keys, s->n_meas, hs_cal_method_name, r->evals, r->cost,
                           r->s2);
    g_string_append_printf(o, "%-36s %12s %12s %12s  %s\n", "key", "value", "95% lo", "95% hi",
                           "note");
    for (guint k = 0; k < s->n_keys; k++) {
        const HsCalKeyResult *kr = &r->keys[k];
        g_string_append_printf(o, "%-36s %12.6g %12.6g %12.6g  %s%s\n", s->keys[k].path,
                               kr->value, kr->lo95, kr->hi95,
                               kr->unconstrained ? "unconstrained " : "",
                               kr->at_bound ? "at a bound" : "");
    }
    g_string_append_printf(o, "\n%-32s %-24s %11s %11s %8s %6s", "measurement", "metric",
                           "measured", "simulated", "error", "resid");
    if (loo) {
        g_string_append_printf(o, " %9s", "LOO error");
    }
    g_string_append(o, "\n");
    double in2 = 0, loo2 = 0;
    for (guint i = 0; i < s->n_meas; i++) {
        const HsCalMeasResult *mr = &r->meas[i];
        g_string_append_printf(o, "%-32s %-24s %11.5g %11.5g %+7.1f%% %6.2f", s->meas[i].id,
                               s->meas[i].metric, s->meas[i].value,
                               mr->simulated, mr->error_pct, mr->residual);
        if (loo && isfinite(mr->loo_error_pct)) {
            g_string_append_printf(o, " %+8.1f%%", mr->loo_error_pct);
        } else if (loo) {
            g_string_append_printf(o, " %9s", "-");    /* one measurement: none left */
        }
        g_string_append(o, "\n");
        in2 += mr->error_pct * mr->error_pct;
        loo2 += mr->loo_error_pct * mr->loo_error_pct;
    }
    if (loo && s->n_meas > 1) {
        g_string_append_printf(o, "\nRMS error: in-sample %.2f %%, leave-one-out %.2f %%\n",
                               sqrt(in2 / s->n_meas), sqrt(loo2 / s->n_meas));
    }
    if (s->n_keys > 1) {
        g_string_append(o, "\ncorrelations:");
        for (guint a = 0; a < s->n_keys; a++) {
            for (guint b = a + 1; b < s->n_keys; b++) {
                g_string_append_printf(o, " %s~%s %+.2f", s->keys[a].path, s->keys[b].path,
                                       r->corr[a][b]);
            }
        }
        g_string_append(o, "\n");
    }
    for (guint i = 0; i < r->warnings->len; i++) {
        g_string_append_printf(o, "%swarning: %s\n", i == 0 ? "\n" : "",
                               (char *) r->warnings->pdata[i]);
    }
}

static gboolean
run(int argc, char **argv, GError **error)
{
    hs_provenance_command(argc, argv);          /* before GOption takes it apart */
    gboolean help = FALSE, loo = FALSE;
    g_autofree char *format_name = NULL, *out = NULL, *out_soc = NULL, *out_stack = NULL;
    GOptionEntry entries[] = {
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
          "Output format: text or json (default text)", "FMT" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "Write the base SoC (or stack) with the fitted keys, each sourced, to FILE (a spec "
          "fitting keys of one of them)", "FILE" },
        { "out-soc", 0, 0, G_OPTION_ARG_FILENAME, &out_soc,
          "Write the base SoC with its fitted keys to FILE (a spec fitting SoC keys, alone or "
          "with stack keys)", "FILE" },
        { "out-stack", 0, 0, G_OPTION_ARG_FILENAME, &out_stack,
          "Write the base stack with its fitted stack.* keys to FILE", "FILE" },
        { "loo", 0, 0, G_OPTION_ARG_NONE, &loo,
          "Also refit leaving each measurement out: its error when predicted", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("calibrate", "SPEC",
                      "Fit keys of a SoC or software stack to measurements (timing-only runs,\n"
                      "NLopt BOBYQA from several starts), with 95 % intervals from the\n"
                      "Jacobian, warnings for keys the data do not constrain or that trade\n"
                      "off, and the residual of each measurement (--loo: when left out).",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    if (!hs_cli_format(format_name, HS_FORMATS_TEXT_JSON, &format, error) ||
        !hs_cli_no_extra_args(argc, argv, 1, error)) {
        return FALSE;
    }
    if (argc < 2) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "calibrate: expected a spec file (hetero-sim calibrate SPEC)");
        return FALSE;
    }
    g_autoptr(HsCalSpec) s = hs_cal_spec_load(argv[1], error);
    if (s == NULL || !hs_cal_spec_resolve(s, error)) {
        return FALSE;
    }
    /* which file each fitted document goes to, checked before the fit */
    gboolean fits_soc = hs_cal_spec_fits(s, "soc"), fits_stack = hs_cal_spec_fits(s, "stack");
    if (out && (out_soc || out_stack)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--out: expected either --out or --out-soc / --out-stack (got both)");
        return FALSE;
    }
    if (out && fits_soc && fits_stack) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--out: %s fits keys of both the SoC and the stack: expected --out-soc FILE "
                    "and --out-stack FILE", s->path);
        return FALSE;
    }
    if ((out_soc && !fits_soc) || (out_stack && !fits_stack)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--out-%s: %s fits no %s key", out_soc && !fits_soc ? "soc" : "stack",
                    s->path, out_soc && !fits_soc ? "SoC" : "stack");
        return FALSE;
    }
    if (out) {
        *(fits_soc ? &out_soc : &out_stack) = g_steal_pointer(&out);
    }
    /* An output may not be an input (the spec, its points and CSV files,
     * the base SoC and stack, read here so that they are noted), refused
     * before the fit; the files its measurements name are checked again
     * when the output is written. */
    cJSON_Delete(load_base(s, "soc", NULL));
    if (s->stack) {
        cJSON_Delete(load_base(s, "stack", NULL));
    }
    if ((out_soc && !hs_outfile_check(out_soc, error)) ||
        (out_stack && !hs_outfile_check(out_stack, error))) {
        return FALSE;
    }
    g_autoptr(HsCalResult) r = hs_cal_fit(s, loo, error);
    if (r == NULL) {
        return FALSE;
    }
    if ((out_soc && !write_out(s, r, "soc", out_soc, "--out-soc", error)) ||
        (out_stack && !write_out(s, r, "stack", out_stack, "--out-stack", error))) {
        return FALSE;
    }
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) j = report_json(s, r, loo);
        cJSON_AddItemToObject(j, "provenance", hs_provenance_json());
        g_autofree char *text = hs_json_print(j, TRUE);
        printf("%s\n", text);
    } else {
        g_autoptr(GString) o = g_string_new(NULL);
        report_text(s, r, loo, o);
        /* what printed it, as run's and validate's text */
        g_string_append_printf(o, "%s\n", hs_provenance_line());
        fputs(o->str, stdout);
    }
    return TRUE;
}

const HsCommand hs_cmd_calibrate = {
    "calibrate", "SPEC",
    "fit SoC or stack keys to measurements, with intervals and leave-one-out errors", run,
};
