/*
 * fuzz-points.c - libFuzzer target: hs_load_points() (fuzz/loaders.c) on every input.
 */
#include "fuzz/harness.h"
#include "fuzz/loaders.h"

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    return hs_load_points(data, size, "fuzz-input", error);
}

HS_FUZZ_TARGET(load)
