/*
 * tensor.c - see tensor.h.
 */
#include "engine/tensor.h"

#include <string.h>

struct EngCtx {
    GPtrArray *bufs;             /* of g_aligned_alloc'd blocks */
    size_t bytes;                /* total held */
};

EngCtx *
eng_ctx_new(void)
{
    EngCtx *ctx = g_new0(EngCtx, 1);
    ctx->bufs = g_ptr_array_new_with_free_func(g_aligned_free);
    return ctx;
}

void
eng_ctx_free(EngCtx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    g_ptr_array_unref(ctx->bufs);
    g_free(ctx);
}

void *
eng_ctx_alloc(EngCtx *ctx, size_t size_bytes)
{
    /* round up so SIMD loops may read a whole last vector */
    size_t n = (MAX(size_bytes, 1) + ENG_ALIGN_BYTES - 1) / ENG_ALIGN_BYTES * ENG_ALIGN_BYTES;
    void *p = g_aligned_alloc0(n, 1, ENG_ALIGN_BYTES);
    g_ptr_array_add(ctx->bufs, p);
    ctx->bytes += n;
    return p;
}

EngTensor
eng_ctx_tensor(EngCtx *ctx, size_t rows, size_t cols)
{
    EngTensor t = { eng_ctx_alloc(ctx, sizeof(float) * rows * cols), rows, cols };
    return t;
}

size_t
eng_ctx_bytes(const EngCtx *ctx)
{
    return ctx->bytes;
}
