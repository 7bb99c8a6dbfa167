/*
 * cmd-stack.c - `hetero-sim stack show NAME|FILE` and `hetero-sim stack
 * describe`: software stack profiles, as `soc` shows SoC configs.
 */
#include "sim/cli/cli.h"
#include "sim/util/error.h"
#include "sim/cli/config.h"
#include "sim/util/json.h"
#include "hw/stack.h"

#include <stdio.h>
#include <string.h>

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE;
    g_autofree char *format_name = NULL;
    g_auto(GStrv) set = NULL;
    GOptionEntry entries[] = {
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
          "Output format: text or json (default text)", "FMT" },
        HS_SET_OPTION(&set),
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("stack", "show NAME|FILE | describe",
                      "show: a software stack profile as parsed, with units and sources "
                      "(--set stack.KEY=VALUE changes one first).\n"
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
    const char *name;
    if (!hs_cli_show_or_describe("stack", "stacks", argc, argv, hw_stack_describe, &name, error)) {
        return FALSE;
    }
    if (name == NULL) {
        return TRUE;
    }
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) set, error);
    if (ovr == NULL) {
        return FALSE;
    }
    /* a stack is its own document: the SoC's and the model's keys are
     * not in it (soc show takes stack keys with the SoC that names it) */
    for (char **a = set; a && *a; a++) {
        const char *doc = hs_override_doc(*a);
        if (strcmp(doc, "stack") != 0) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "stack show: --set %s changes a %s, not a stack (stack.KEY or "
                        "stack@NAME.KEY)", *a, strcmp(doc, "soc") == 0 ? "SoC" : doc);
            return FALSE;
        }
    }
    g_autoptr(HwStack) st = hs_config_load_stack(name, ovr, error);
    if (st == NULL) {
        return FALSE;
    }
    hs_config_warn_other_targets(set, "stack", st->name, "this one");
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) json = hw_stack_to_json(st);
        hs_json_drop_nulls(json);      /* loads back: the loader refuses null */
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
