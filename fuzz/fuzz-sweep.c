/*
 * fuzz-sweep.c - libFuzzer target: hs_load_sweep() (fuzz/loaders.c) on every input.
 */
#include "fuzz/harness.h"
#include "fuzz/loaders.h"

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    return hs_load_sweep(data, size, "fuzz-input", error);
}

HS_FUZZ_TARGET(load)
