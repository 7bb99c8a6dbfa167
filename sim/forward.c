/*
 * forward.c - see forward.h.
 */
#include "sim/forward.h"
#include "models/graph.h"
#include "sim/node-compute.h"

void
sim_forward(EngModel *m, const MdlSpec *spec, EngKV *kv, const uint32_t *tokens, uint32_t n,
            uint32_t pos0, float *logits)
{
    g_assert(n > 0 && pos0 <= eng_kv_len(kv) && pos0 + n <= eng_kv_max_pos(kv));
    g_autoptr(MdlGraph) g = mdl_graph_new_forward(spec, n, pos0);
    const uint32_t last = g->n_nodes - 1;
    /* a node's buffer lives until its last reader has run */
    g_autofree uint32_t *last_use = g_new0(uint32_t, g->n_nodes);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        for (uint32_t s = 0; s < g->nodes[i].n_src; s++) {
            last_use[g->nodes[i].src[s]] = i;
        }
    }
    g_autofree float **buf = g_new0(float *, g->n_nodes);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const MdlNode *nd = &g->nodes[i];
        g_assert(i != last || (nd->tokens == n && nd->op == MDL_OP_MATMUL));
        buf[i] = i == last ? logits : g_new0(float, (size_t) nd->tokens * nd->features);
        float *kc = NULL, *vc = NULL;
        SimNodeInputs in = { .tokens = tokens, .k_cache = &kc, .v_cache = &vc };
        for (uint32_t s = 0; s < nd->n_src; s++) {
            in.src[s] = buf[nd->src[s]];
        }
        if (nd->op == MDL_OP_ATTENTION) {
            kc = eng_kv_k(kv, (uint32_t) nd->layer);
            vc = eng_kv_v(kv, (uint32_t) nd->layer);
        }
        SimSlice all = { 0, nd->tokens, 0, nd->features, 0 };
        sim_node_compute(m, g, i, &in, &all, MDL_PREC_W4A16, buf[i]);
        if (nd->op == MDL_OP_ATTENTION) {
            /* this step's K (rotated) and V join the cache */
            eng_kv_store_rows(in.src[1], in.src[2], kc, vc,
                              (size_t) nd->kv_heads * nd->head_dim, pos0, 0, n);
        }
        for (uint32_t s = 0; s < nd->n_src; s++) {
            uint32_t src = nd->src[s];
            if (last_use[src] == i && buf[src]) {
                g_free(buf[src]);
                buf[src] = NULL;
            }
        }
    }
    for (uint32_t i = 0; i < last; i++) {
        g_free(buf[i]);
    }
    eng_kv_set_len(kv, MAX(eng_kv_len(kv), pos0 + n));
}

void
sim_forward_prefill(EngModel *m, const MdlSpec *spec, EngKV *kv, const uint32_t *tokens,
                    uint32_t n, float *logits)
{
    sim_forward(m, spec, kv, tokens, n, eng_kv_len(kv), logits);
}

void
sim_forward_decode(EngModel *m, const MdlSpec *spec, EngKV *kv, uint32_t token, float *logits)
{
    sim_forward(m, spec, kv, &token, 1, eng_kv_len(kv), logits);
}
