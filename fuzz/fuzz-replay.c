/*
 * fuzz-replay.c - libFuzzer target: hs_load_replay() (fuzz/loaders.c) on every input: a
 * recording checked against its model's graph, then planned on its SoC and timed.
 */
#include "fuzz/harness.h"
#include "fuzz/loaders.h"

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    return hs_load_replay(data, size, "fuzz-input", error);
}

HS_FUZZ_TARGET(load)
