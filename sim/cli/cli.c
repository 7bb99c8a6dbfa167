/*
 * cli.c - see cli.h.
 */
#include "sim/cli/cli.h"
#include "sim/util/error.h"

#include <stdio.h>
#include <string.h>

gboolean
hs_cli_parse(const char *command, const char *params, const char *summary,
             GOptionEntry *entries, int *argc, char ***argv,
             gboolean *help_shown, GError **error)
{
    gboolean help = FALSE;
    GOptionEntry help_entry[] = {
        { "help", 'h', 0, G_OPTION_ARG_NONE, &help, "Show this help", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autofree char *title = g_strdup_printf("%s%s%s", command,
                                             params ? " " : "", params ? params : "");
    g_autoptr(GOptionContext) ctx = g_option_context_new(title);
    g_autoptr(GError) local = NULL;

    g_option_context_set_help_enabled(ctx, FALSE);
    g_option_context_set_summary(ctx, summary);
    if (entries) {
        g_option_context_add_main_entries(ctx, entries, NULL);
    }
    g_option_context_add_main_entries(ctx, help_entry, NULL);
    *help_shown = FALSE;
    if (!g_option_context_parse(ctx, argc, argv, &local)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "%s: %s (see 'hetero-sim %s --help')", command,
                    local->message, command);
        return FALSE;
    }
    if (help) {
        g_autofree char *text = g_option_context_get_help(ctx, TRUE, NULL);
        /* GLib names the program after argv[0]; we are "hetero-sim CMD". */
        fputs(text, stdout);
        *help_shown = TRUE;
    }
    return TRUE;
}

gboolean
hs_cli_format(const char *name, unsigned allowed, HsFormat *out, GError **error)
{
    static const char *const names[] = { "text", "json", "csv" };
    g_autoptr(GString) list = g_string_new(NULL);

    for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
        if (!(allowed & (1u << i))) {
            continue;
        }
        if (name && strcmp(name, names[i]) == 0) {
            *out = (HsFormat) i;
            return TRUE;
        }
        g_string_append_printf(list, "%s%s", list->len ? ", " : "", names[i]);
    }
    if (name == NULL) {
        *out = HS_FORMAT_TEXT;
        return TRUE;
    }
    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                "--format: expected one of %s (got \"%s\")", list->str, name);
    return FALSE;
}

const char *
hs_cli_data_dir(void)
{
    const char *env = g_getenv("HS_DATA_DIR");
    return (env && *env) ? env : HS_SOURCE_ROOT;
}

gboolean
hs_cli_no_extra_args(int argc, char **argv, int max, GError **error)
{
    if (argc - 1 > max) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "%s: unexpected argument \"%s\"", argv[0], argv[max + 1]);
        return FALSE;
    }
    return TRUE;
}
