/*
 * cmd-stack.c - `hetero-sim stack show NAME|FILE` and `hetero-sim stack
 * describe`: software stack profiles, as `soc` shows SoC configs.
 */
#include "sim/cli/cli.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "hw/stack.h"

#include <stdio.h>
#include <string.h>

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE;
    g_autofree char *format_name = NULL;
    GOptionEntry entries[] = {
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
          "Output format: text or json (default text)", "FMT" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("stack", "show NAME|FILE | describe",
                      "show: a software stack profile as parsed, with units and sources.\n"
                      "describe: every key a stack profile accepts.",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    if (!hs_cli_format(format_name, HS_FORMATS_TEXT_JSON, &format, error)) {
        return FALSE;
    }
    if (argc >= 2 && strcmp(argv[1], "describe") == 0) {
        if (!hs_cli_no_extra_args(argc, argv, 1, error)) {
            return FALSE;
        }
        g_autoptr(GString) out = g_string_new(NULL);
        hw_stack_describe(out);
        fputs(out->str, stdout);
        return TRUE;
    }
    if (argc < 2 || strcmp(argv[1], "show") != 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "stack: expected 'show NAME|FILE' or 'describe' (see 'hetero-sim stack --help')");
        return FALSE;
    }
    if (argc < 3) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "stack show: missing NAME|FILE (see 'hetero-sim list stacks')");
        return FALSE;
    }
    if (!hs_cli_no_extra_args(argc, argv, 2, error)) {
        return FALSE;
    }
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "configs", "stacks", NULL);
    g_autoptr(HwStack) st = hw_stack_load(argv[2], dir, error);
    if (st == NULL) {
        return FALSE;
    }
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) json = hw_stack_to_json(st);
        g_autofree char *text = hs_json_print(json, TRUE);
        printf("%s\n", text);
    } else {
        g_autoptr(GString) out = g_string_new(NULL);
        hw_stack_dump_text(st, out);
        fputs(out->str, stdout);
    }
    return TRUE;
}

const HsCommand hs_cmd_stack = {
    "stack", "show NAME|FILE | describe",
    "show a software stack profile as parsed, or every key it accepts", run,
};
