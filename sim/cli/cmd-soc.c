/*
 * cmd-soc.c - `hetero-sim soc show NAME|FILE` and `hetero-sim soc describe`.
 */
#include "sim/cli/cli.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "hw/soc.h"

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
    if (!hs_cli_parse("soc", "show NAME|FILE | describe",
                      "show: the parsed SoC config with defaults filled in, units "
                      "and sources.\ndescribe: every key a SoC config accepts.",
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
    if (!hs_cli_show_or_describe("soc", "socs", argc, argv, hw_soc_describe, &name, error)) {
        return FALSE;
    }
    if (name == NULL) {
        return TRUE;
    }
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) set, error);
    if (ovr == NULL) {
        return FALSE;
    }
    if (hs_overrides_count(ovr, "model") > 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "soc show: --set model.* changes a model, not a SoC");
        return FALSE;
    }
    g_autoptr(HwSoc) soc = hs_config_load_soc(name, ovr, error);
    if (soc == NULL) {
        return FALSE;
    }
    /* what the shown SoC does not carry: said, as run says it */
    hs_config_warn_other_targets(set, "soc", soc->name, "this one");
    for (char **a = set; a && *a; a++) {
        if (strcmp(hs_override_doc(*a), "stack") == 0) {
            fprintf(stderr, "hetero-sim: warning: --set %s is checked but not shown: a "
                    "stack is its own document ('hetero-sim stack show NAME --set ...')\n", *a);
        }
    }
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) json = hw_soc_to_json(soc);
        hs_json_drop_nulls(json);      /* loads back: the loader refuses null */
        g_autofree char *text = hs_json_print(json, TRUE);
        printf("%s\n", text);
    } else {
        g_autoptr(GString) out = g_string_new(NULL);
        hw_soc_dump_text(soc, out);
        fputs(out->str, stdout);
    }
    return TRUE;
}

const HsCommand hs_cmd_soc = {
    "soc", "show NAME|FILE | describe", "show a SoC config as parsed, or every key it accepts", run,
};
