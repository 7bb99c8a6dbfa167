/*
 * fuzz-sweep-db.c - libFuzzer target: hs_load_sweep_db() (fuzz/loaders.c)
 * on every input, an SQLite file: quick_check and the schema checks, then
 * --show and a resume's reads and upgrade of what they let through.
 */
#include "fuzz/harness.h"
#include "fuzz/loaders.h"

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    return hs_load_sweep_db(data, size, "fuzz-input", error);
}

HS_FUZZ_TARGET(load)
