/*
 * fuzz-safetensors.c - one *.safetensors file (8-byte length, JSON header,
 * data) through the reader the weight loader uses, then every tensor read
 * back as FP32 at its own shape (dtype conversion, the finite check).
 */
#include "fuzz/harness.h"
#include "engine/safetensors.h"

/* Tensors larger than this are not converted: the reader's checks come
 * before the copy, and a fuzz input is small anyway. */
#define FUZZ_MAX_VALUES (1u << 20)

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    g_autoptr(EngSafetensors) st = eng_safetensors_open_bytes(data, size, "fuzz.safetensors",
                                                              error);
    if (st == NULL) {
        return FALSE;
    }
    g_auto(GStrv) names = eng_safetensors_names(st);
    for (char **n = names; *n; n++) {
        uint64_t shape[8];
        int rank = eng_safetensors_shape(st, *n, shape);
        uint64_t count = 1;
        for (int i = 0; i < rank && count <= FUZZ_MAX_VALUES; i++) {
            count = shape[i] ? count * shape[i] : 0;
        }
        if (count > FUZZ_MAX_VALUES) {
            continue;
        }
        g_autofree float *out = g_new(float, MAX(count, 1));
        if (!eng_safetensors_read_f32(st, *n, shape, rank, out, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

HS_FUZZ_TARGET(load)
