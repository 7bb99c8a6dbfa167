/*
 * graph.c - builds the operator DAG of a prefill or a decode step, and
 * says what any slice of a node costs.  See graph.h.
 *
 * Costs per output element of the elementwise ops (FP16 activations):
 *   rmsnorm   5 flops (square, sum, scale, weight, rsqrt share), reads x
 *   rope      6 flops (2 mul + 1 add per pair, both halves), reads x
 *   act       SwiGLU ~8 flops (exp, div, 2 mul), GeGLU ~12; reads gate+up
 *   add       1 flop, reads both inputs
 *   embed     0 flops, reads one row of the table
 * Matmul: 2 flops per MAC.  Attention: 4 flops per (query, key, dim)
 * (QK^T and PV) plus 5 per score for the softmax; reads the K/V cache up
 * to the last query's position once per slice.  With a sliding window W
 * (Mistral) a query scores at most W keys and a slice reads the W + t - 1
 * positions its t queries see.  LayerNorm costs what RMSNorm does (one
 * more pass over a row that is in cache); a three-way add (Phi's parallel
 * block) reads three inputs.
 */
#include "models/graph.h"

#include <stdio.h>
#include <string.h>

const char *const mdl_op_name[] = {
    "embed", "rmsnorm", "matmul", "rope", "attention", "act", "add", "layernorm",
};
G_STATIC_ASSERT(G_N_ELEMENTS(mdl_op_name) == MDL_OP_COUNT);
const char *const mdl_weight_name[] = {
    "none", "q", "k", "v", "o", "gate", "up", "down", "lm_head",
};
G_STATIC_ASSERT(G_N_ELEMENTS(mdl_weight_name) == MDL_W_COUNT);
const char *const mdl_precision_name[] = {
    "w4a16", "w8a16", "w8a8", "w4a8", "fp16", "w8a8-shadow", "fp4a16", "q4_0", "q8_0",
};
G_STATIC_ASSERT(G_N_ELEMENTS(mdl_precision_name) == MDL_PREC_COUNT);

typedef struct Builder {
    GArray *nodes;
    uint32_t tokens, pos0;
} Builder;

static uint32_t
add_node(Builder *b, MdlOp op, int32_t layer, const char *name, uint32_t features,
         uint32_t n_src, const uint32_t *src)
{
    MdlNode n = { .op = op, .layer = layer, .tokens = b->tokens, .features = features,
                  .n_src = n_src, .pos0 = b->pos0 };
    g_assert(n_src <= MDL_MAX_SRC);
    if (layer >= 0) {
        g_snprintf(n.name, sizeof(n.name), "L%d.%s", layer, name);
    } else {
        g_snprintf(n.name, sizeof(n.name), "%s", name);
    }
    for (uint32_t i = 0; i < n_src; i++) {
        g_assert(src[i] < b->nodes->len);               /* topological */
        n.src[i] = src[i];
    }
    g_array_append_val(b->nodes, n);
    return b->nodes->len - 1;
}

static MdlNode *
node_at(Builder *b, uint32_t i)
{
    return &g_array_index(b->nodes, MdlNode, i);
}

static uint32_t
matmul(Builder *b, int32_t layer, const char *name, MdlWeight w, uint32_t in,
       uint32_t k, uint32_t features)
{
    g_assert(node_at(b, in)->features == k);            /* shapes chain */
    uint32_t id = add_node(b, MDL_OP_MATMUL, layer, name, features, 1, &in);
    node_at(b, id)->weight = w;
    node_at(b, id)->k = k;
    return id;
}

/* A norm node of @kind's weights (Phi-2: LayerNorm) over @in. */
static uint32_t
norm(Builder *b, const MdlSpec *s, int32_t layer, const char *name, int which, uint32_t in)
{
    uint32_t id = add_node(b, s->layer_norm ? MDL_OP_LAYERNORM : MDL_OP_RMSNORM, layer, name,
                           node_at(b, in)->features, 1, &in);
    node_at(b, id)->norm = (uint8_t) which;
    return id;
}

static MdlGraph *
build(const MdlSpec *s, uint32_t tokens, uint32_t pos0, gboolean decode, gboolean all_logits)
{
    Builder b = { g_array_new(FALSE, TRUE, sizeof(MdlNode)), tokens, pos0 };
    const uint32_t h = s->hidden_size, f = s->intermediate_size;
    const uint32_t q_dim = s->num_attention_heads * s->head_dim;
    const uint32_t kv_dim = s->num_key_value_heads * s->head_dim;

    g_assert(tokens > 0);
    uint32_t x = add_node(&b, MDL_OP_EMBED, -1, "embed", h, 0, NULL);
    for (uint32_t l = 0; l < s->num_hidden_layers; l++) {
        int32_t L = (int32_t) l;
        uint32_t an = norm(&b, s, L, "attn_norm", MDL_NORM_ATTN, x);
        uint32_t q = matmul(&b, L, "wq", MDL_W_Q, an, h, q_dim);
        uint32_t k = matmul(&b, L, "wk", MDL_W_K, an, h, kv_dim);
        uint32_t v = matmul(&b, L, "wv", MDL_W_V, an, h, kv_dim);
        uint32_t qr = add_node(&b, MDL_OP_ROPE, L, "rope_q", q_dim, 1, &q);
        uint32_t kr = add_node(&b, MDL_OP_ROPE, L, "rope_k", kv_dim, 1, &k);
        uint32_t at = add_node(&b, MDL_OP_ATTENTION, L, "attn", q_dim, 3,
                               (uint32_t[]) { qr, kr, v });
        for (uint32_t id = qr; id <= at; id++) {
            MdlNode *n = node_at(&b, id);
            n->heads = s->num_attention_heads;
            n->kv_heads = s->num_key_value_heads;
            n->head_dim = s->head_dim;
            n->rotary_dim = mdl_spec_rotary_dim(s);
            n->rope_interleaved = (uint8_t) s->rope_interleaved;
            n->rope_theta = s->rope_theta;
            n->window = s->sliding_window;
            if (s->rope_scaling && strcmp(s->rope_scaling, "llama3") == 0) {
                n->rope_scale[0] = s->rope_factor;
                n->rope_scale[1] = s->rope_low_freq_factor;
                n->rope_scale[2] = s->rope_high_freq_factor;
                n->rope_scale[3] = s->rope_original_max_pos;
            }
        }
        uint32_t o = matmul(&b, L, "wo", MDL_W_O, at, q_dim, h);
        /* the parallel block's MLP reads the attention's norm, and waits
         * for nothing of the attention */
        uint32_t h1 = x, fn = an;
        if (!s->parallel_block) {
            h1 = add_node(&b, MDL_OP_ADD, L, "attn_add", h, 2, (uint32_t[]) { x, o });
            fn = norm(&b, s, L, "ffn_norm", MDL_NORM_FFN, h1);
        }
        uint32_t a;
        if (s->gated_mlp) {
            uint32_t g = matmul(&b, L, "ffn_gate", MDL_W_GATE, fn, h, f);
            uint32_t u = matmul(&b, L, "ffn_up", MDL_W_UP, fn, h, f);
            a = add_node(&b, MDL_OP_ACT, L, "ffn_act", f, 2, (uint32_t[]) { g, u });
        } else {
            /* Phi's fc1 -> GELU -> fc2: no gate */
            uint32_t u = matmul(&b, L, "ffn_up", MDL_W_UP, fn, h, f);
            a = add_node(&b, MDL_OP_ACT, L, "ffn_act", f, 1, &u);
        }
        node_at(&b, a)->act = (uint8_t) s->act;
        uint32_t d = matmul(&b, L, "ffn_down", MDL_W_DOWN, a, f, h);
        if (s->parallel_block) {
            /* Phi: attn_outputs + feed_forward_hidden_states + residual */
            x = add_node(&b, MDL_OP_ADD, L, "block_add", h, 3, (uint32_t[]) { o, d, x });
        } else {
            x = add_node(&b, MDL_OP_ADD, L, "ffn_add", h, 2, (uint32_t[]) { h1, d });
        }
    }
    /* Prefill needs the logits of the last token only; decode of each
     * sequence in the batch. */
    uint32_t head_tokens = decode || all_logits ? tokens : 1;
    b.tokens = head_tokens;
    uint32_t fn = norm(&b, s, -1, "final_norm", MDL_NORM_FINAL, x);
    node_at(&b, fn)->src_tok_offset = tokens - head_tokens;
    node_at(&b, fn)->pos0 = pos0 + tokens - head_tokens;
    uint32_t lm = matmul(&b, -1, "lm_head", MDL_W_LM_HEAD, fn, h, s->vocab_size);
    node_at(&b, lm)->pos0 = pos0 + tokens - head_tokens;

    /* biases: on Q/K/V, O, the MLP, the head as the config says */
    for (uint32_t i = 0; i < b.nodes->len; i++) {
        MdlNode *n = node_at(&b, i);
        switch (n->op == MDL_OP_MATMUL ? n->weight : MDL_W_NONE) {
        case MDL_W_Q: case MDL_W_K: case MDL_W_V: n->bias = (uint8_t) s->attention_bias; break;
        case MDL_W_O:       n->bias = (uint8_t) s->o_bias;    break;
        case MDL_W_LM_HEAD: n->bias = (uint8_t) s->head_bias; break;
        case MDL_W_GATE: case MDL_W_UP: case MDL_W_DOWN:
            n->bias = (uint8_t) s->mlp_bias;
            break;
        default:
            break;
        }
    }

    MdlGraph *gr = g_new0(MdlGraph, 1);
    gr->n_nodes = b.nodes->len;
    gr->nodes = (MdlNode *) g_array_free(b.nodes, FALSE);
    gr->tokens = tokens;
    gr->pos0 = pos0;
    gr->decode = decode;
    return gr;
}

MdlGraph *
mdl_graph_new_prefill(const MdlSpec *spec, uint32_t seq, uint32_t pos0)
{
    return build(spec, seq, pos0, FALSE, FALSE);
}

MdlGraph *
mdl_graph_new_forward(const MdlSpec *spec, uint32_t seq, uint32_t pos0)
{
    return build(spec, seq, pos0, FALSE, TRUE);
}

MdlGraph *
mdl_graph_new_decode(const MdlSpec *spec, uint32_t ctx, uint32_t batch)
{
    return build(spec, batch, ctx, TRUE, FALSE);
}

void
mdl_graph_free(MdlGraph *g)
{
    if (g == NULL) {
        return;
    }
    g_free(g->nodes);
    g_free(g);
}

double
mdl_prec_weight_bytes(MdlPrecision prec)
{
    switch (prec) {
    case MDL_PREC_W4A16:
    case MDL_PREC_W4A8:
        return 0.5 + 2.0 / 128.0;      /* INT4 + an FP16 scale per 128 */
    case MDL_PREC_W8A16:
    case MDL_PREC_W8A8:
    case MDL_PREC_W8A8_SHADOW:
        return 1.0;
    case MDL_PREC_FP16:
        return 2.0;
    case MDL_PREC_FP4A16:
        return 0.5 + 4.0 / 128.0;      /* FP4 + FP16 scale and bias per 128 */
    case MDL_PREC_Q4_0:
        return 0.5 + 2.0 / 32.0;       /* INT4 + an FP16 scale per 32 */
    case MDL_PREC_Q8_0:
        return 1.0 + 2.0 / 32.0;       /* INT8 + an FP16 scale per 32 */
    default:
        g_assert_not_reached();
    }
}

double
mdl_prec_act_bytes(MdlPrecision prec)
{
    return (prec == MDL_PREC_W8A8 || prec == MDL_PREC_W4A8 ||
            prec == MDL_PREC_W8A8_SHADOW) ? 1.0 : 2.0;
}

void
mdl_node_work(const MdlNode *node, uint32_t tok0, uint32_t tok1, uint32_t row0,
              uint32_t row1, uint32_t pad_tokens, MdlPrecision prec, MdlWork *w)
{
    g_assert(tok0 < tok1 && tok1 <= node->tokens);
    g_assert(row0 < row1 && row1 <= node->features);
    const uint64_t t = tok1 - tok0, r = row1 - row0;
    const uint64_t m = pad_tokens ? pad_tokens : t;
    const double ab = mdl_prec_act_bytes(prec);
    const double elems = (double) (m * r);

    *w = (MdlWork) { .m = m, .k = 1, .n = r };
    switch (node->op) {
    case MDL_OP_MATMUL: {
        double wb = mdl_prec_weight_bytes(prec);
        if (prec == MDL_PREC_W8A16) {
            wb += 2.0 / node->k;                /* FP16 scale per row */
        }
        w->k = node->k;
        w->flops = 2 * m * node->k * r;
        w->read_bytes = (uint64_t) ((double) (r * node->k) * wb + 0.5) +
                        (uint64_t) ((double) (m * node->k) * ab);
        w->write_bytes = (uint64_t) (elems * ab);
        break;
    }
    case MDL_OP_ATTENTION: {
        /* rows select whole query heads; query i sees keys [0, pos0 + i],
         * or the last `window` of them */
        uint64_t hd = node->head_dim;
        uint64_t heads = MAX(1, r / hd);
        uint64_t kvh = MAX(1, heads * node->kv_heads / node->heads);
        uint64_t first = node->pos0 + tok0 + 1, last = node->pos0 + tok1;
        uint64_t scores = (first + last) * t / 2;
        uint64_t keys = last;               /* positions of K/V read */
        if (node->window && last > node->window) {
            /* a query sees min(n, window) keys: those past the window
             * count window each */
            uint64_t w0 = MAX(first, node->window);     /* first capped query */
            uint64_t below = w0 > first ? (first + w0 - 1) * (w0 - first) / 2 : 0;
            scores = below + (last - w0 + 1) * node->window;
            keys = MIN(last, node->window + t - 1);
        }
        w->m = t;
        w->k = hd;
        w->n = keys;
        w->flops = heads * scores * (4 * hd + 5);
        w->read_bytes = t * r * 2 + 2 * kvh * hd * keys * 2;   /* Q; K and V */
        w->write_bytes = t * r * 2;
        break;
    }
    case MDL_OP_EMBED:
        w->read_bytes = (uint64_t) (elems * 2);
        w->write_bytes = (uint64_t) (elems * 2);
        break;
    case MDL_OP_RMSNORM:
    case MDL_OP_LAYERNORM:          /* the same passes over the row */
        w->flops = (uint64_t) (elems * 5);
        w->read_bytes = (uint64_t) (elems * 2);
        w->write_bytes = (uint64_t) (elems * 2);
        break;
    case MDL_OP_ROPE:
        /* rotated K goes to the KV cache: its write is this write */
        w->flops = (uint64_t) (elems * 6);
        w->read_bytes = (uint64_t) (elems * 2);
        w->write_bytes = (uint64_t) (elems * 2);
        break;
    case MDL_OP_ACT:
        /* gated: reads gate and up; ungated (Phi): up only */
        w->flops = (uint64_t) (elems * 8);
        w->read_bytes = (uint64_t) (elems * 2 * node->n_src);
        w->write_bytes = (uint64_t) (elems * 2);
        break;
    case MDL_OP_ADD:
        w->flops = (uint64_t) elems;
        w->read_bytes = (uint64_t) (elems * 2 * node->n_src);
        w->write_bytes = (uint64_t) (elems * 2);
        break;
    default:
        g_assert_not_reached();
    }
}

void
mdl_graph_total(const MdlGraph *g, MdlPrecision prec, MdlWork *out)
{
    *out = (MdlWork) { 0 };
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const MdlNode *n = &g->nodes[i];
        MdlWork w;
        mdl_node_work(n, 0, n->tokens, 0, n->features, 0, prec, &w);
        out->flops += w.flops;
        out->read_bytes += w.read_bytes;
        out->write_bytes += w.write_bytes;
    }
}
