/*
 * tensor.h - memory of the functional engine, after ggml's context: one
 * EngCtx owns every buffer of a run (64-byte aligned, zeroed), an
 * EngTensor only points into it, and eng_ctx_free() releases everything
 * at once.  Tensors are 2-D row-major [rows, cols]: rows are tokens,
 * cols are features (that is all an LLM layer needs).
 */
#ifndef ENG_TENSOR_H
#define ENG_TENSOR_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define ENG_ALIGN_BYTES 64

typedef struct EngTensor {
    float *data;                 /* [rows, cols], row-major (owned by an EngCtx) */
    size_t rows;                 /* tokens */
    size_t cols;                 /* features; also the row stride */
} EngTensor;

typedef struct EngCtx EngCtx;

EngCtx *eng_ctx_new(void);                            /* (transfer full) */
void eng_ctx_free(EngCtx *ctx);                       /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EngCtx, eng_ctx_free)

/* A zeroed, 64-byte aligned buffer of @size_bytes owned by @ctx.  (transfer none) */
void *eng_ctx_alloc(EngCtx *ctx, size_t size_bytes);

/* A zeroed tensor [rows, cols] whose data @ctx owns (the struct is
 * returned by value; its data lives as long as @ctx). */
EngTensor eng_ctx_tensor(EngCtx *ctx, size_t rows, size_t cols);

/* A tensor view of @data [rows, cols] that somebody else owns. */
static inline EngTensor
eng_tensor_wrap(float *data, size_t rows, size_t cols)
{
    EngTensor t = { data, rows, cols };
    return t;
}

/* Bytes held by @ctx (for memory accounting). */
size_t eng_ctx_bytes(const EngCtx *ctx);

#endif /* ENG_TENSOR_H */
