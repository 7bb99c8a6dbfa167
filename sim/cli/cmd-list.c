/*
 * cmd-list.c - `hetero-sim list socs|stacks|models|policies`: what is available,
 * one line each.
 */
#include "sim/cli/cli.h"
#include "sim/util/error.h"
#include "hw/soc.h"
#include "hw/stack.h"
#include "models/spec.h"
#include "sim/policies/policy.h"
#include "sim/run.h"

#include <stdio.h>
#include <string.h>

/* The name column's width: the longest name, at least 16 (one column
 * whatever the names: a longer one no longer pushes its row out) */
static int
name_width(char **names)
{
    size_t w = 16;
    for (char **n = names; *n; n++) {
        w = MAX(w, strlen(*n));
    }
    return (int) w;
}

static gboolean
list_socs(GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_auto(GStrv) names = hw_soc_list(dir, error);
    if (names == NULL) {
        return FALSE;
    }
    const int w = name_width(names);
    for (char **n = names; *n; n++) {
        g_autoptr(GError) local = NULL;
        g_autoptr(HwSoc) soc = hw_soc_load(*n, dir, &local);
        if (soc == NULL) {
            /* a broken shipped file is our bug, but listing must go on */
            printf("%-*s (cannot load: %s)\n", w, *n, local->message);
            continue;
        }
        printf("%-*s %s\n", w, *n, soc->description);
    }
    return TRUE;
}

static gboolean
list_stacks(GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "configs", "stacks", NULL);
    g_auto(GStrv) names = hw_stack_list(dir, error);
    if (names == NULL) {
        return FALSE;
    }
    const int w = name_width(names);
    for (char **n = names; *n; n++) {
        g_autoptr(GError) local = NULL;
        g_autoptr(HwStack) st = hw_stack_load(*n, dir, &local);
        if (st == NULL) {
            printf("%-*s (cannot load: %s)\n", w, *n, local->message);
            continue;
        }
        printf("%-*s %s\n", w, *n, st->description);
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
    const int w = name_width(names);
    for (char **n = names; *n; n++) {
        g_autoptr(GError) local = NULL;
        g_autoptr(MdlSpec) spec = mdl_spec_load(*n, dir, &local);
        if (spec == NULL) {
            printf("%-*s (cannot load: %s)\n", w, *n, local->message);
            continue;
        }
        /* billions for the real models, millions for a teaching one;
         * values checkable at the default request (prompt 256, decode 32) */
        double params = (double) mdl_spec_param_count(spec);
        g_autofree char *size = params >= 1e8 ? g_strdup_printf("%6.2f B", params / 1e9)
                                              : g_strdup_printf("%6.2f M", params / 1e6);
        g_autofree char *gap = mdl_spec_functional_gap(spec, 256 + 32);
        /* two spaces between columns: "values+timing" fills its 13 */
        printf("%-*s %s params  %-13s  %s\n", w, *n, size,
               gap ? "timing only" : "values+timing", spec->description);
    }
    return TRUE;
}

static char *plugin;                  /* list policies --policy-plugin FILE.so */

static gboolean
list_policies(GError **error)
{
    const SimPolicy *extra = NULL;
    if (plugin && (extra = sim_policy_load_plugin(plugin, error)) == NULL) {
        return FALSE;
    }
    for (const SimPolicy *const *p = sim_policy_list(); *p; p++) {
        printf("%-16s %s [stack %s]\n", (*p)->name, (*p)->desc,
               (*p)->stack ? (*p)->stack : SIM_DEFAULT_STACK);
    }
    if (extra) {
        printf("%-16s %s (plug-in %s)\n", extra->name, extra->desc ? extra->desc : "", plugin);
    }
    return TRUE;
}

typedef struct ListWhat {
    const char *name;
    gboolean (*fn)(GError **error);
} ListWhat;

static const ListWhat lists[] = {
    { "socs", list_socs },
    { "stacks", list_stacks },
    { "models", list_models },
    { "policies", list_policies },
};

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE;
    GOptionEntry entries[] = {
        { "policy-plugin", 0, 0, G_OPTION_ARG_FILENAME, &plugin,
          "With 'policies': also load and list this plug-in's policy", "FILE.so" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autoptr(GString) what = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(lists); i++) {
        g_string_append_printf(what, "%s%s", i ? "|" : "", lists[i].name);
    }
    if (!hs_cli_parse("list", what->str, "What is available, one line each.",
                      entries, &argc, &argv, &help, error)) {
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
            gboolean ok = lists[i].fn(error);
            g_clear_pointer(&plugin, g_free);
            return ok;
        }
    }
    g_clear_pointer(&plugin, g_free);
    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                "list: expected one of %s (got \"%s\")", what->str, argv[1]);
    return FALSE;
}

const HsCommand hs_cmd_list = {
    "list", "socs|stacks|models|policies", "what is available, one line each", run,
};
