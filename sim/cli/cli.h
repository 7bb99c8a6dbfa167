/*
 * cli.h - what every hetero-sim command shares: the command table entry,
 * option parsing without exit(), output formats, and SoC/model lookup.
 *
 * A command is one file cmd-<name>.c exporting one HsCommand.  It parses
 * its own options, writes results to stdout and returns FALSE with a GError
 * on failure; main() prints "hetero-sim: <message>" and picks the exit
 * status (2 for HS_USAGE_ERROR, 1 otherwise).  Nothing below main() calls
 * exit().
 */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <glib.h>

typedef struct HsCommand {
    const char *name;       /* "soc" */
    const char *args;       /* "show NAME|FILE" for the usage line */
    const char *summary;    /* one line for `hetero-sim --help` */
    gboolean (*run)(int argc, char **argv, GError **error);
} HsCommand;

typedef enum {
    HS_FORMAT_TEXT,
    HS_FORMAT_JSON,
    HS_FORMAT_CSV,
} HsFormat;

/*
 * Parse @argv with @entries.  --help is handled here (printed to stdout,
 * *help_shown set, TRUE returned) so GLib never exits behind our back.
 * Bad options become HS_USAGE_ERROR.  @argc/@argv are updated to the
 * positional arguments (argv[0] is the command name).
 */
gboolean hs_cli_parse(const char *command, const char *params,
                      const char *summary, GOptionEntry *entries,
                      int *argc, char ***argv, gboolean *help_shown,
                      GError **error);

/* "text" / "json" / "csv" -> HsFormat; @allowed is a mask of 1 << format. */
gboolean hs_cli_format(const char *name, unsigned allowed, HsFormat *out,
                       GError **error);
#define HS_FORMATS_TEXT_JSON ((1u << HS_FORMAT_TEXT) | (1u << HS_FORMAT_JSON))
#define HS_FORMATS_ALL (HS_FORMATS_TEXT_JSON | (1u << HS_FORMAT_CSV))

/* Where shipped data lives: $HS_DATA_DIR, else the source tree. */
const char *hs_cli_data_dir(void);

/* The --set entry every command that loads a SoC or model takes. */
#define HS_SET_OPTION(strv_ptr) \
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, (strv_ptr), \
      "Change one config key: npu.stationary_kib=2048, memory.ceiling_gbps=50, " \
      "model.num_hidden_layers=16 (repeatable; see README)", "PATH=VALUE" }

/* Reject leftover positional arguments after the first @max. */
gboolean hs_cli_no_extra_args(int argc, char **argv, int max, GError **error);

/*
 * The verbs of `soc` and `stack`: "describe" prints @describe's text
 * (*@name = NULL); "show NAME|FILE" sets *@name.  Anything else is a
 * usage error naming @cmd and @list, the `list` topic of the choices.
 */
gboolean hs_cli_show_or_describe(const char *cmd, const char *list, int argc, char **argv,
                                 void (*describe)(GString *out), const char **name,
                                 GError **error);


/* An "unknown SoC / model / policy" error (HS_CONFIG_ERROR_NOT_FOUND)
 * gets "did you mean NAME?" when a known name is a few edits away. */
void hs_cli_suggest(GError *error);

#endif /* HS_CLI_H */
