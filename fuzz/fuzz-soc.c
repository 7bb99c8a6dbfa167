/*
 * fuzz-soc.c - SoC config JSON through hw_soc_from_json (what hw_soc_load,
 * and so every --soc, runs after reading the file), then `soc show`'s text
 * and JSON dumps of what was accepted.
 */
#include "fuzz/harness.h"
#include "hw/soc.h"
#include "sim/util/json.h"

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse((const char *) data, size, "fuzz.json", 0, error);
    if (root == NULL) {
        return FALSE;
    }
    g_autoptr(HwSoc) soc = hw_soc_from_json(root, "fuzz.json", error);
    if (soc == NULL) {
        return FALSE;
    }
    g_autoptr(GString) text = g_string_new(NULL);
    hw_soc_dump_text(soc, text);
    g_autoptr(cJSON) back = hw_soc_to_json(soc);
    return back != NULL;
}

HS_FUZZ_TARGET(load)
