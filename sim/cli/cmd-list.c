/*
 * cmd-list.c - `hetero-sim list socs|models|policies`: what is available,
 * one line each.
 */
#include "sim/cli/cli.h"
#include "sim/util/error.h"
#include "hw/soc.h"
#include "models/spec.h"
#include "sim/policies/policy.h"

#include <stdio.h>
#include <string.h>

static gboolean
list_socs(GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_auto(GStrv) names = hw_soc_list(dir, error);
    if (names == NULL) {
        return FALSE;
    }
    for (char **n = names; *n; n++) {
        g_autoptr(GError) local = NULL;
        g_autoptr(HwSoc) soc = hw_soc_load(*n, dir, &local);
        if (soc == NULL) {
            /* a broken shipped file is our bug, but listing must go on */
            printf("%-16s (cannot load: %s)\n", *n, local->message);
            continue;
        }
        printf("%-16s %s\n", *n, soc->description);
    }
    return TRUE;
}

static gboolean
list_models(GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "models", NULL);
    g_auto(GStrv) names = mdl_spec_list(dir, error);
    if (names == NULL) {
        return FALSE;
    }
    for (char **n = names; *n; n++) {
        g_autoptr(GError) local = NULL;
        g_autoptr(MdlSpec) spec = mdl_spec_load(*n, dir, &local);
        if (spec == NULL) {
            printf("%-16s (cannot load: %s)\n", *n, local->message);
            continue;
        }
        /* values checkable at the default request (prompt 256, decode 32) */
        g_autofree char *gap = mdl_spec_functional_gap(spec, 256 + 32);
        printf("%-16s %6.2f B params  %-13s %s\n", *n,
               (double) mdl_spec_param_count(spec) / 1e9,
               gap ? "timing only" : "values+timing", spec->description);
    }
    return TRUE;
}

static gboolean
list_policies(GError **error)
{
    for (const SimPolicy *const *p = sim_policy_list(); *p; p++) {
        printf("%-16s %s\n", (*p)->name, (*p)->desc);
    }
    return TRUE;
}

typedef struct ListWhat {
    const char *name;
    gboolean (*fn)(GError **error);
} ListWhat;

static const ListWhat lists[] = {
    { "socs", list_socs },
    { "models", list_models },
    { "policies", list_policies },
};

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE;
    g_autoptr(GString) what = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(lists); i++) {
        g_string_append_printf(what, "%s%s", i ? "|" : "", lists[i].name);
    }
    if (!hs_cli_parse("list", what->str, "What is available, one line each.",
                      NULL, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    if (argc < 2) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "list: expected one of %s", what->str);
        return FALSE;
    }
    if (!hs_cli_no_extra_args(argc, argv, 1, error)) {
        return FALSE;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(lists); i++) {
        if (strcmp(argv[1], lists[i].name) == 0) {
            return lists[i].fn(error);
        }
    }
    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                "list: expected one of %s (got \"%s\")", what->str, argv[1]);
    return FALSE;
}

const HsCommand hs_cmd_list = {
    "list", "socs|models|policies", "what is available, one line each", run,
};
