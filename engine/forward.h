/*
 * forward.h - the whole model, unpartitioned: what `hetero-sim infer`
 * runs, one sequence at a time, with a KV cache.
 */
#ifndef ENG_FORWARD_H
#define ENG_FORWARD_H

#include "engine/model.h"

typedef struct EngKV EngKV;

/* A KV cache for @max_pos positions.  (transfer full) */
EngKV *eng_kv_new(const EngConfig *cfg, uint32_t max_pos);
void eng_kv_free(EngKV *kv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EngKV, eng_kv_free)

/*
 * Run @n tokens at positions [pos0, pos0 + n) (the cache holds [0, pos0))
 * and write the logits of every position to @logits [n, vocab].
 */
void eng_forward(EngModel *m, EngKV *kv, const uint32_t *tokens, uint32_t n,
                 uint32_t pos0, float *logits);

#endif /* ENG_FORWARD_H */
