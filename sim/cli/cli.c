/*
 * cli.c - see cli.h.
 */
#include "sim/cli/cli.h"
#include "sim/util/nearest.h"
#include "sim/util/error.h"
#include "hw/soc.h"
#include "models/spec.h"
#include "sim/policies/policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static gboolean check_numbers(const char *command, const GOptionEntry *entries, int argc,
                              char **argv, GPtrArray *keep, GError **error);
static void suggest_option(GError *error, const GOptionEntry *entries, char **argv, int argc);

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
    /*
     * Every text option is taken as bytes, as a file name is: GLib converts
     * a G_OPTION_ARG_STRING from the locale's charset to UTF-8, so under
     * LC_ALL=C a path or a --set value with a byte >= 0x80 was refused
     * ("Invalid byte sequence in conversion input").  The storage is the
     * same (char * / char **); our messages escape what they quote.
     */
    g_autofree GOptionEntry *raw = NULL;
    guint n_entries = 0;
    while (entries && entries[n_entries].long_name) {
        n_entries++;
    }
    if (entries) {
        raw = g_memdup2(entries, sizeof(GOptionEntry) * (n_entries + 1));
        for (guint i = 0; i < n_entries; i++) {
            if (raw[i].arg == G_OPTION_ARG_STRING) {
                raw[i].arg = G_OPTION_ARG_FILENAME;
            } else if (raw[i].arg == G_OPTION_ARG_STRING_ARRAY) {
                raw[i].arg = G_OPTION_ARG_FILENAME_ARRAY;
            }
        }
        g_option_context_add_main_entries(ctx, raw, NULL);
    }
    g_option_context_add_main_entries(ctx, help_entry, NULL);
    *help_shown = FALSE;
    /* the decimal spellings check_numbers() puts in place of the numbers
     * given: GLib consumes them while parsing */
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
    if (!check_numbers(command, entries, *argc, *argv, keep, error)) {
        return FALSE;
    }
    g_autofree char **before = g_memdup2(*argv, sizeof(char *) * (*argc + 1));
    int before_argc = *argc;
    if (!g_option_context_parse(ctx, argc, argv, &local)) {
        if (g_error_matches(local, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION)) {
            suggest_option(local, entries, before, before_argc);
        }
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "%s: %s (see 'hetero-sim %s --help')", command,
                    local->message, command);
        return FALSE;
    }
    if (help) {
        g_autofree char *text = g_option_context_get_help(ctx, TRUE, NULL);
        /*
         * GLib writes "Usage: PRG [OPTION…] PARAMS", which for us read
         * "hetero-sim [OPTION…] run": the command comes first on our command
         * line, so the usage line is rewritten "hetero-sim run [OPTION…] PARAMS".
         */
        g_autofree char *glib_line = NULL;
        g_autofree char *ours = NULL;
        const char *opt = strstr(text, "[OPTION");
        const char *close = opt ? strchr(opt, ']') : NULL;
        if (close) {
            g_autofree char *word = g_strndup(opt, (gsize) (close + 1 - opt));
            glib_line = g_strdup_printf("%s %s %s", g_get_prgname(), word, title);
            ours = g_strdup_printf("%s %s %s%s%s", g_get_prgname(), command, word,
                                   params ? " " : "", params ? params : "");
        }
        const char *at = glib_line ? strstr(text, glib_line) : NULL;
        if (at) {
            fwrite(text, 1, (size_t) (at - text), stdout);
            fputs(ours, stdout);
            fputs(at + strlen(glib_line), stdout);
        } else {
            fputs(text, stdout);
        }
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

/* configs/ and models/: $HS_DATA_DIR; else, for a binary that runs from
 * where `meson install` put it, the installed copies; else the source
 * tree the build came from. */
const char *
hs_cli_data_dir(void)
{
    const char *env = g_getenv("HS_DATA_DIR");
    if (env && *env) {
        return env;
    }
    static gsize once;
    static const char *dir;
    if (g_once_init_enter(&once)) {
        g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
        g_autofree char *exe_dir = exe ? g_path_get_dirname(exe) : NULL;
        dir = exe_dir && strcmp(exe_dir, HS_INSTALL_BINDIR) == 0 ? HS_INSTALL_DATA_DIR
                                                                 : HS_SOURCE_ROOT;
        g_once_init_leave(&once, 1);
    }
    return dir;
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

gboolean
hs_cli_show_or_describe(const char *cmd, const char *list, int argc, char **argv,
                        void (*describe)(GString *out), const char **name, GError **error)
{
    *name = NULL;
    if (argc >= 2 && strcmp(argv[1], "describe") == 0) {
        if (!hs_cli_no_extra_args(argc, argv, 1, error)) {
            return FALSE;
        }
        g_autoptr(GString) out = g_string_new(NULL);
        describe(out);
        fputs(out->str, stdout);
        return TRUE;
    }
    if (argc < 2 || strcmp(argv[1], "show") != 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "%s: expected 'show NAME|FILE' or 'describe' (see 'hetero-sim %s --help')",
                    cmd, cmd);
        return FALSE;
    }
    if (argc < 3) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "%s show: missing NAME|FILE (see 'hetero-sim list %s')", cmd, list);
        return FALSE;
    }
    if (!hs_cli_no_extra_args(argc, argv, 2, error)) {
        return FALSE;
    }
    *name = argv[2];
    return TRUE;
}

/* The names an "unknown KIND" message is about, or NULL.  (transfer full) */
static GStrv
names_for(const char *message)
{
    g_autofree char *dir = NULL;
    if (g_str_has_prefix(message, "unknown SoC \"")) {
        dir = g_build_filename(hs_cli_data_dir(), "configs", NULL);
        return hw_soc_list(dir, NULL);
    }
    if (g_str_has_prefix(message, "unknown model \"")) {
        dir = g_build_filename(hs_cli_data_dir(), "models", NULL);
        return mdl_spec_list(dir, NULL);
    }
    if (g_str_has_prefix(message, "unknown policy \"")) {
        g_autoptr(GPtrArray) a = g_ptr_array_new();
        for (const SimPolicy *const *p = sim_policy_list(); *p; p++) {
            g_ptr_array_add(a, g_strdup((*p)->name));
        }
        for (const SimPolicy *const *p = sim_policy_variants(); *p; p++) {
            g_ptr_array_add(a, g_strdup((*p)->name));
        }
        g_ptr_array_add(a, NULL);
        return (GStrv) g_ptr_array_free(g_steal_pointer(&a), FALSE);
    }
    return NULL;
}

void
hs_cli_suggest(GError *error)
{
    if (error == NULL || !(error->domain == HS_CONFIG_ERROR &&
                           error->code == HS_CONFIG_ERROR_NOT_FOUND)) {
        return;
    }
    g_auto(GStrv) names = names_for(error->message);
    const char *open = strchr(error->message, '"');
    const char *close = open ? strchr(open + 1, '"') : NULL;
    if (names == NULL || close == NULL) {
        return;
    }
    g_autofree char *name = g_strndup(open + 1, close - open - 1);
    const char *near = hs_nearest(name, (const char *const *) names);
    if (near == NULL) {
        return;
    }
    g_autofree char *head = g_strndup(error->message, close + 1 - error->message);
    const char *rest = close + 1;
    char *msg = g_str_has_prefix(rest, " (")
                ? g_strdup_printf("%s (did you mean %s? %s", head, near, rest + 2)
                : g_strdup_printf("%s (did you mean %s?)%s", head, near, rest);
    g_free(error->message);
    error->message = msg;
}

static const GOptionEntry *
entry_for(const GOptionEntry *entries, const char *arg, const char **value, gboolean *inline_value)
{
    *value = NULL;
    *inline_value = FALSE;
    for (const GOptionEntry *e = entries; e && e->long_name; e++) {
        if (g_str_has_prefix(arg, "--")) {
            size_t n = strlen(e->long_name);
            if (strncmp(arg + 2, e->long_name, n) == 0 && (arg[2 + n] == '\0' || arg[2 + n] == '=')) {
                if (arg[2 + n] == '=') {
                    *value = arg + 3 + n;
                    *inline_value = TRUE;
                }
                return e;
            }
        } else if (arg[0] == '-' && e->short_name && arg[1] == e->short_name) {
            if (arg[2]) {
                *value = arg + 2;
                *inline_value = TRUE;
            }
            return e;
        }
    }
    return NULL;
}

/*
 * GLib's own message for a bad number ("Cannot parse integer value “abc”
 * for --prompt") is translated, curly-quoted and unlike ours: check the
 * numeric options' values first and say it our way.  An integer is
 * decimal: GLib reads it with strtol base 0, so "-p 010" was a prompt of 8
 * and "0x10" sixteen; each integer value is put back in @argv spelled the
 * way GLib reads as we do (the new strings kept in @keep).
 */
static gboolean
check_numbers(const char *command, const GOptionEntry *entries, int argc, char **argv,
              GPtrArray *keep, GError **error)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        gboolean inl;
        if (strcmp(arg, "--") == 0) {
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            continue;
        }
        const GOptionEntry *e = entry_for(entries, arg, &v, &inl);
        if (e == NULL || e->arg == G_OPTION_ARG_NONE) {
            continue;
        }
        int at = i;                      /* where the value is */
        if (!inl) {
            v = i + 1 < argc ? argv[++i] : NULL;
            at = i;
        }
        if (v == NULL) {
            continue;                    /* GLib says "Missing argument" */
        }
        gboolean ok = TRUE;
        const char *what = NULL;
        if (e->arg == G_OPTION_ARG_INT || e->arg == G_OPTION_ARG_INT64) {
            gint64 x;
            ok = g_ascii_string_to_signed(v, 10, e->arg == G_OPTION_ARG_INT ? G_MININT : G_MININT64,
                                          e->arg == G_OPTION_ARG_INT ? G_MAXINT : G_MAXINT64,
                                          &x, NULL);
            what = "an integer";
            if (ok) {
                char *canon = g_strdup_printf("%.*s%" G_GINT64_FORMAT,
                                              inl ? (int) (v - argv[at]) : 0, argv[at], x);
                g_ptr_array_add(keep, canon);
                argv[at] = canon;
            }
        } else if (e->arg == G_OPTION_ARG_DOUBLE) {
            char *end = NULL;
            double x = g_ascii_strtod(v, &end);
            ok = *v && end && *end == '\0' && isfinite(x);
            what = "a number";
        }
        if (!ok) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "%s: --%s: expected %s (got \"%s\")", command, e->long_name, what, v);
            return FALSE;
        }
    }
    return TRUE;
}

/* "run: Unknown option --promt" -> add "did you mean --prompt?" */
static void
suggest_option(GError *error, const GOptionEntry *entries, char **argv, int argc)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (const GOptionEntry *e = entries; e && e->long_name; e++) {
        g_ptr_array_add(names, (gpointer) e->long_name);
    }
    g_ptr_array_add(names, (gpointer) "help");
    g_ptr_array_add(names, NULL);
    for (int i = 1; i < argc; i++) {
        if (!g_str_has_prefix(argv[i], "--") || strstr(error->message, argv[i]) == NULL) {
            continue;
        }
        g_autofree char *name = g_strndup(argv[i] + 2, strcspn(argv[i] + 2, "="));
        const char *near = hs_nearest(name, (const char *const *) names->pdata);
        if (near) {
            char *msg = g_strdup_printf("%s (did you mean --%s?)", error->message, near);
            g_free(error->message);
            error->message = msg;
        }
        return;
    }
}
