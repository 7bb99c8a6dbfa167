/*
 * node-compute.c - see node-compute.h.
 */
#include "sim/node-compute.h"
#include "engine/kernels.h"
#include "engine/quant-formats.h"

#include <math.h>
#include <string.h>

static EngWeight
eng_weight(MdlWeight w)
{
    switch (w) {
    case MDL_W_Q: return ENG_W_Q;
    case MDL_W_K: return ENG_W_K;
    case MDL_W_V: return ENG_W_V;
    case MDL_W_O: return ENG_W_O;
    case MDL_W_GATE: return ENG_W_GATE;
    case MDL_W_UP: return ENG_W_UP;
    case MDL_W_DOWN: return ENG_W_DOWN;
    case MDL_W_LM_HEAD: return ENG_W_COUNT;
    default: g_assert_not_reached();
    }
}

static EngAct
eng_act(uint8_t act)
{
    switch (act) {
    case MDL_ACT_SILU: return ENG_ACT_SILU;
    case MDL_ACT_GELU_TANH: return ENG_ACT_GELU_TANH;
    case MDL_ACT_GELU: return ENG_ACT_GELU;
    default: g_assert_not_reached();
    }
}

/* The weight format each precision stores (W4A16 and W4A8: the model's own). */
static const int prec_qfmt[MDL_PREC_COUNT + 1] = {
    [SIM_PREC_FP_REF] = ENG_QFMT_F16,
    [MDL_PREC_W4A16] = -1, [MDL_PREC_W4A8] = -1,
    [MDL_PREC_W8A16] = ENG_QFMT_W8, [MDL_PREC_W8A8] = ENG_QFMT_W8,
    [MDL_PREC_W8A8_SHADOW] = ENG_QFMT_W8, [MDL_PREC_FP16] = ENG_QFMT_F16,
    [MDL_PREC_FP4A16] = ENG_QFMT_FP4, [MDL_PREC_Q4_0] = ENG_QFMT_Q4_0,
    [MDL_PREC_Q8_0] = ENG_QFMT_Q8_0,
};

void
sim_node_weights_for_fp_ref(EngModel *m)
{
    eng_model_also_make(m, (EngQFormat) prec_qfmt[SIM_PREC_FP_REF]);
}

/*
 * Y[t0:t1, r0:r1] = X . W^T at @prec (engine/quant-formats.h defines each
 * format).  Per-tensor INT8 activations use a static scale (and, with
 * shadow outliers, a static outlier threshold) calibrated offline, as
 * mllm-NPU does (mllm-NPU §3.3): @act8, calibrated on data that
 * exist before the run starts (sim/values.c: the W4A16 reference's whole
 * input of this matmul in the prefill, for the prefill and every decode
 * step alike).  So a slice reads nothing but its own rows, every cut and
 * every order quantise alike, and the run and its own-arithmetic
 * reference use the same parameters.  (Taking them from the run's own
 * input when a task starts would read the rows of later chunks, which do
 * not exist yet.)  FP16 activations are rounded row by row.  The whole
 * input's shape also fixes the engine's tile grid, as in the engine's own
 * forward pass; padded rows are zeros whose outputs are cropped, so
 * computing the real rows gives the cropped result.
 */
static void
matmul_at(EngModel *model, uint32_t layer, EngWeight which, const EngMatrix *w,
          MdlPrecision prec, EngTensor *xv, const EngActInt8 *act8, EngTensor *yv, size_t t0,
          size_t t1, size_t r0, size_t r1)
{
    g_autofree float *xq = NULL;
    const EngQMatrix *wq = prec_qfmt[prec] < 0 ? NULL
                           : eng_model_weight_as(model, layer, which,
                                                 (EngQFormat) prec_qfmt[prec]);
    switch (prec) {
    case MDL_PREC_W4A8: {
        /* INT8 per-tensor activations on the W4A16 weights */
        xq = g_new0(float, xv->rows * xv->cols);
        /* the plain per-tensor scale: the largest |x| / 127 */
        g_assert(act8 && isinf(act8->limit));
        eng_quant_act_int8_apply(xv->data, xq, xv->cols, t0, t1, act8->scale);
        EngTensor x8 = { xq, xv->rows, xv->cols };
        eng_matmul(&x8, w, yv, t0, t1, r0, r1);
        break;
    }
    case MDL_PREC_W8A8:
    case MDL_PREC_W8A8_SHADOW: {
        g_assert(act8);
        eng_qmatmul_a8(xv, act8, wq, yv, t0, t1, r0, r1);
        break;
    }
    case MDL_PREC_FP16: {
        xq = g_new0(float, xv->rows * xv->cols);
        eng_fp16_round_rows(xv->data, xq, xv->cols, t0, t1);
        EngTensor x16 = { xq, xv->rows, xv->cols };
        eng_qmatmul(&x16, wq, yv, t0, t1, r0, r1);
        break;
    }
    case SIM_PREC_FP_REF:            /* FP16 weights, FP32 activations */
    case MDL_PREC_W8A16:
    case MDL_PREC_FP4A16:
    case MDL_PREC_Q4_0:
    case MDL_PREC_Q8_0:
        eng_qmatmul(xv, wq, yv, t0, t1, r0, r1);
        break;
    default:
        eng_matmul(xv, w, yv, t0, t1, r0, r1);
        break;
    }
}

gboolean
sim_node_rows_apart(EngModel *m, const MdlNode *n, MdlPrecision prec)
{
    if (prec_qfmt[prec] >= 0) {
        return TRUE;
    }
    if (n->weight == MDL_W_LM_HEAD) {
        return FALSE;                /* the head: its own storage, perhaps FP32 */
    }
    EngWeight wid = eng_weight(n->weight);
    return eng_model_weight(m, n->layer < 0 ? 0 : (uint32_t) n->layer, wid)->format ==
           ENG_WFMT_W4A16;
}

gboolean
sim_rows_same(const float *x, size_t rows, size_t k)
{
    for (size_t t = 1; t < rows; t++) {
        if (memcmp(x + t * k, x, sizeof(float) * k) != 0) {
            return FALSE;
        }
    }
    return TRUE;
}

/*
 * Whether the rows [tok0 + 1, tok1) of decode node @n's sources hold the
 * bits of row tok0, for an op whose output row reads only its own input
 * rows.  A decode step's rows are sequences, and in a check they often
 * are the same sequence: a batch shares its prompt and its checked tokens
 * (the embedding of every row is token [0]), so a batch of 64 would
 * compute 64 copies of one row.  Such a slice is computed for its first
 * row and copied: every kernel gives an output row the same bits whatever
 * rows are computed with it (engine/kernels.h), except OpenBLAS, whose
 * FP32/FP16 model weights are left out.  Attention reads each sequence's
 * own cache and is always computed row by row.
 */
static gboolean
rows_repeat(EngModel *m, const MdlGraph *g, const MdlNode *n, const SimNodeInputs *in,
            const SimSlice *sl, MdlPrecision prec)
{
    if (!g->decode || sl->tok1 - sl->tok0 < 2 || n->src_tok_offset != 0) {
        return FALSE;
    }
    switch (n->op) {
    case MDL_OP_MATMUL:
        if (!sim_node_rows_apart(m, n, prec)) {
            return FALSE;
        }
        break;
    case MDL_OP_RMSNORM:
    case MDL_OP_LAYERNORM:
    case MDL_OP_ROPE:
    case MDL_OP_ACT:
    case MDL_OP_ADD:
        break;
    default:
        return FALSE;
    }
    for (uint32_t k = 0; k < n->n_src; k++) {
        const size_t row = g->nodes[n->src[k]].features;
        if (!sim_rows_same(in->src[k] + sl->tok0 * row, sl->tok1 - sl->tok0, row)) {
            return FALSE;
        }
    }
    return TRUE;
}

void
sim_node_matmul(EngModel *m, const MdlNode *n, const float *x, size_t tokens,
                const EngActInt8 *act8, const SimSlice *sl, MdlPrecision prec, float *out)
{
    const EngModelConfig *c = eng_model_config(m);
    const uint32_t layer = n->layer < 0 ? c->layers : (uint32_t) n->layer;
    const size_t d = n->features;
    EngWeight wid = eng_weight(n->weight);
    const EngMatrix *w = wid == ENG_W_COUNT ? eng_model_lm_head(m)
                                            : eng_model_weight(m, layer, wid);
    EngTensor xv = { (float *) x, tokens, n->k };
    EngTensor yv = { out, tokens, d };
    matmul_at(m, layer, wid, w, prec, &xv, act8, &yv, sl->tok0, sl->tok1, sl->row0, sl->row1);
    /* the projection's bias: one add per element */
    const float *b = n->bias ? eng_model_bias(m, layer, wid) : NULL;
    g_assert(b || !n->bias);
    for (size_t t = sl->tok0; b && t < sl->tok1; t++) {
        for (size_t r = sl->row0; r < sl->row1; r++) {
            out[t * d + r] += b[r];
        }
    }
}

void
sim_node_compute(EngModel *m, const MdlGraph *g, uint32_t ni, const SimNodeInputs *in,
                 const SimSlice *sl, MdlPrecision prec, float *out)
{
    const MdlNode *rn = &g->nodes[ni];
    if (rows_repeat(m, g, rn, in, sl, prec)) {
        SimSlice one = *sl;
        one.tok1 = sl->tok0 + 1;
        sim_node_compute(m, g, ni, in, &one, prec, out);
        /* norms and RoPE write whole rows, the rest the slice's features */
        const gboolean whole = rn->op == MDL_OP_RMSNORM || rn->op == MDL_OP_LAYERNORM ||
                               rn->op == MDL_OP_ROPE;
        const size_t d = rn->features, c0 = whole ? 0 : sl->row0, c1 = whole ? d : sl->row1;
        for (size_t t = sl->tok0 + 1; t < sl->tok1; t++) {
            memcpy(out + t * d + c0, out + sl->tok0 * d + c0, sizeof(float) * (c1 - c0));
        }
        return;
    }
    const MdlNode *n = &g->nodes[ni];
    const EngModelConfig *c = eng_model_config(m);
    const size_t d = n->features, t0 = sl->tok0, t1 = sl->tok1;
    const float *src0 = in->src[0];
    const size_t src_d = n->n_src > 0 ? g->nodes[n->src[0]].features : 0;
    const size_t off = n->src_tok_offset;
    /* a layer's weights, or the final norm's and the head's */
    const uint32_t layer = n->layer < 0 ? c->layers : (uint32_t) n->layer;
    const int which_norm = n->norm == MDL_NORM_FFN ? 1 : 0;

    switch (n->op) {
    case MDL_OP_EMBED:
        for (size_t t = t0; t < t1; t++) {
            g_autofree float *row = g_new(float, d);
            eng_model_embed(m, in->tokens[g->decode ? 0 : t], row);
            memcpy(out + t * d + sl->row0, row + sl->row0,
                   sizeof(float) * (sl->row1 - sl->row0));
        }
        break;
    case MDL_OP_RMSNORM:
        eng_rmsnorm_rows(src0 + off * src_d, eng_model_norm(m, layer, which_norm), out, d,
                         c->rms_eps, c->norm_plus_one, t0, t1);
        break;
    case MDL_OP_LAYERNORM:
        eng_layernorm_rows(src0 + off * src_d, eng_model_norm(m, layer, which_norm),
                           eng_model_norm_bias(m, layer, which_norm), out, d, c->rms_eps,
                           t0, t1);
        break;
    case MDL_OP_MATMUL:
        sim_node_matmul(m, n, src0 + off * src_d, n->tokens, in->act8, sl, prec, out);
        break;
    case MDL_OP_ROPE: {
        size_t heads = d / n->head_dim;
        EngRopeScale scale = { n->rope_scale[0], n->rope_scale[1], n->rope_scale[2],
                               n->rope_scale[3] };
        if (!g->decode) {
            eng_rope_rows_part(src0, out, heads, n->head_dim, n->rotary_dim,
                               n->rope_interleaved, n->rope_theta, &scale, n->pos0, t0, t1);
        } else {
            /* every row (sequence) sits at the same position */
            for (size_t t = t0; t < t1; t++) {
                eng_rope_rows_part(src0 + t * d, out + t * d, heads, n->head_dim,
                                   n->rotary_dim, n->rope_interleaved, n->rope_theta, &scale,
                                   n->pos0, 0, 1);
            }
        }
        break;
    }
    case MDL_OP_ATTENTION: {
        const float *q = src0, *k = in->src[1], *vv = in->src[2];
        size_t h0 = sl->row0 / n->head_dim, h1 = (sl->row1 + n->head_dim - 1) / n->head_dim;
        size_t kvd = (size_t) n->kv_heads * n->head_dim;
        if (!g->decode) {
            eng_attention_rows_window(q, k, vv, in->k_cache[0], in->v_cache[0], out, n->heads,
                                      n->kv_heads, n->head_dim, n->window, n->pos0, t0, t1,
                                      h0, h1);
        } else {
            /* each row is its own sequence at position pos0 */
            for (size_t t = t0; t < t1; t++) {
                eng_attention_rows_window(q + t * d, k + t * kvd, vv + t * kvd,
                                          in->k_cache[t], in->v_cache[t], out + t * d,
                                          n->heads, n->kv_heads, n->head_dim, n->window,
                                          n->pos0, 0, 1, h0, h1);
            }
        }
        break;
    }
    case MDL_OP_ACT:
        /* gated: act(gate) * up; ungated (one source): act(up) */
        eng_act_rows(src0, n->n_src > 1 ? in->src[1] : NULL, out, d, eng_act(n->act), t0, t1,
                     sl->row0, sl->row1);
        break;
    case MDL_OP_ADD:
        /* two sources, or three summed left to right ((o + down) + x:
         * Phi's attn_outputs + feed_forward_hidden_states + residual) */
        eng_add_rows(src0, in->src[1], out, d, t0, t1, sl->row0, sl->row1);
        if (n->n_src > 2) {
            eng_add_rows(out, in->src[2], out, d, t0, t1, sl->row0, sl->row1);
        }
        break;
    default:
        g_assert_not_reached();
    }
}
