/*
 * fuzz-record.c - a recording (`run --record`) through trc_record_parse,
 * the reader `replay` uses: every field, the model's phase graphs, slice
 * coverage and the plan check.
 */
#include "fuzz/harness.h"
#include "traces/record.h"

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    g_autoptr(TrcRecording) r = trc_record_parse((const char *) data, size, "fuzz.json", error);
    return r != NULL;
}

HS_FUZZ_TARGET(load)
