/*
 * fuzz-model.c - a model config.json through mdl_spec_from_json (what
 * mdl_spec_load, and so every --model, runs after reading the file), then
 * the parameter count and JSON dump `list models` / recordings use.
 */
#include "fuzz/harness.h"
#include "models/spec.h"
#include "sim/util/json.h"

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse((const char *) data, size, "config.json", 0, error);
    if (root == NULL) {
        return FALSE;
    }
    g_autoptr(MdlSpec) spec = mdl_spec_from_json(root, "fuzz", error);
    if (spec == NULL) {
        return FALSE;
    }
    (void) mdl_spec_param_count(spec);
    g_autoptr(cJSON) back = mdl_spec_to_json(spec);
    return back != NULL;
}

HS_FUZZ_TARGET(load)
