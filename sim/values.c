/*
 * values.c - see values.h.
 */
#include "sim/values.h"
#include "sim/node-compute.h"
#include "engine/kernels.h"
#include "engine/quant-formats.h"
#include "sim/util/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct State {
    float ***buf;                /* [phase][node] -> tokens x features, lazily */
    float **k_cache, **v_cache;  /* [layer * batch + b] -> max_pos x kv_dim */
} State;

/* The shared part: model, graphs, tokens and the reference's buffers. */
struct SimChecker {
    EngModel *model;
    GPtrArray *graphs;           /* of MdlGraph* */
    uint32_t layers;             /* layers computed */
    gboolean full;
    uint32_t batch;
    uint32_t max_pos;
    GArray *tokens;              /* of uint32_t: every position's token */
    State ref;
    State fp;                    /* every matmul on FP16 weights: what
                                  * precision_err measures from (made on
                                  * first use) */
    gboolean recompute;          /* never copy a slice from the reference */
};

/* One checked run: its own buffers, and what it has in flight. */
struct SimValues {
    SimChecker *c;
    State run;
    State matched;               /* the plan's arithmetic in order (buf NULL: none) */
    GHashTable *staging;         /* task id -> float* */
    GHashTable *from_ref;        /* task ids whose slice is the reference's */
    gboolean precision_changed;
    uint64_t reused;             /* slices copied from the reference */
};

static gboolean
computed(const SimChecker *v, const MdlNode *n)
{
    if (n->layer >= 0) {
        return (uint32_t) n->layer < v->layers;
    }
    return n->op == MDL_OP_EMBED || v->full;
}

static float *
buffer(SimChecker *v, State *s, uint32_t phase, uint32_t node)
{
    const MdlGraph *g = g_ptr_array_index(v->graphs, phase);
    if (s->buf[phase][node] == NULL) {
        const MdlNode *n = &g->nodes[node];
        s->buf[phase][node] = hs_mem_alloc0(sizeof(float) * n->tokens * n->features);
    }
    return s->buf[phase][node];
}

static void
state_init(SimChecker *v, State *s)
{
    s->buf = g_new0(float **, v->graphs->len);
    for (guint p = 0; p < v->graphs->len; p++) {
        s->buf[p] = g_new0(float *, ((MdlGraph *) g_ptr_array_index(v->graphs, p))->n_nodes);
    }
    const EngConfig *c = eng_model_config(v->model);
    size_t n = (size_t) c->layers * v->batch;
    s->k_cache = g_new0(float *, n);
    s->v_cache = g_new0(float *, n);
    for (size_t i = 0; i < n; i++) {
        if (i / v->batch < v->layers) {
            s->k_cache[i] = hs_mem_alloc0(sizeof(float) * v->max_pos * c->kv_heads * c->head_dim);
            s->v_cache[i] = hs_mem_alloc0(sizeof(float) * v->max_pos * c->kv_heads * c->head_dim);
        }
    }
}

static void
state_clear(SimChecker *v, State *s)
{
    if (s->buf == NULL) {
        return;
    }
    for (guint p = 0; p < v->graphs->len; p++) {
        const MdlGraph *g = g_ptr_array_index(v->graphs, p);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            free(s->buf[p][i]);
        }
        g_free(s->buf[p]);
    }
    g_free(s->buf);
    size_t n = (size_t) eng_model_config(v->model)->layers * v->batch;
    for (size_t i = 0; i < n; i++) {
        free(s->k_cache[i]);
        free(s->v_cache[i]);
    }
    g_free(s->k_cache);
    g_free(s->v_cache);
}

/* Slice @sl of one full-size [tokens, @d] node buffer into another. */
static void
copy_slice(const SimSlice *sl, size_t d, const float *src, float *dst)
{
    for (size_t t = sl->tok0; t < sl->tok1; t++) {
        memcpy(dst + t * d + sl->row0, src + t * d + sl->row0,
               sizeof(float) * (sl->row1 - sl->row0));
    }
}

/* Rows [r0, r1) of two [*, cols] buffers hold the same bits. */
static gboolean
same_rows(const float *a, const float *b, size_t cols, size_t r0, size_t r1)
{
    return r1 <= r0 || memcmp(a + r0 * cols, b + r0 * cols, sizeof(float) * (r1 - r0) * cols) == 0;
}

/*
 * A slice whose inputs hold exactly the reference's bits: the engine gives
 * every output element the same bits whatever the cut (engine/kernels.h),
 * so computing it would give exactly the reference's output, which is
 * taken from there instead.  This is memoisation of a pure
 * function, not a shortcut in the check: a slice that reads anything else
 * (a buffer not yet written, a stale value behind a missing sync) is
 * computed, so a wrong plan still gives wrong numbers.  Only the costly
 * kernels at the reference's own precision are looked up: the W4A16 (or
 * FP) matmul and prefill attention; the INT8 precisions are always
 * computed.
 */
static gboolean
same_as_reference(SimChecker *v, State *s, uint32_t p, uint32_t ni, const SimSlice *sl,
                  MdlPrecision prec)
{
    const MdlGraph *g = g_ptr_array_index(v->graphs, p);
    const MdlNode *n = &g->nodes[ni];
    State *ref = &v->ref;
    if (v->recompute || s == ref || prec != MDL_PREC_W4A16) {
        return FALSE;
    }
    const size_t t0 = sl->tok0, t1 = sl->tok1;
    if (n->op == MDL_OP_MATMUL) {
        /* the rows the matmul reads: [t0, t1) of k inputs, from the offset */
        size_t base = (size_t) n->src_tok_offset * g->nodes[n->src[0]].features;
        if (!same_rows(buffer(v, s, p, n->src[0]) + base, buffer(v, ref, p, n->src[0]) + base,
                       n->k, t0, t1)) {
            return FALSE;
        }
    } else if (n->op == MDL_OP_ATTENTION && !g->decode) {
        /* queries [t0, t1); keys and values of every position up to t1 */
        const size_t kvd = (size_t) n->kv_heads * n->head_dim;
        const size_t cache = (size_t) n->layer * v->batch;
        if (!same_rows(buffer(v, s, p, n->src[0]), buffer(v, ref, p, n->src[0]), n->features,
                       t0, t1) ||
            !same_rows(buffer(v, s, p, n->src[1]), buffer(v, ref, p, n->src[1]), kvd, 0, t1) ||
            !same_rows(buffer(v, s, p, n->src[2]), buffer(v, ref, p, n->src[2]), kvd, 0, t1) ||
            !same_rows(s->k_cache[cache], ref->k_cache[cache], kvd, 0, n->pos0) ||
            !same_rows(s->v_cache[cache], ref->v_cache[cache], kvd, 0, n->pos0)) {
            return FALSE;
        }
    } else {
        return FALSE;
    }
    return TRUE;
}

/* Compute tokens [t0, t1) x features [r0, r1) of node @ni of phase @p
 * from @s's buffers into @out (a full-size node buffer). */
static void
compute(SimChecker *v, State *s, uint32_t p, uint32_t ni, const SimSlice *sl,
        MdlPrecision prec, gboolean *precision_changed, float *out)
{
    /* the arithmetic: sim/node-compute.c; here, where its inputs live */
    const MdlGraph *g = g_ptr_array_index(v->graphs, p);
    const MdlNode *n = &g->nodes[ni];
    SimNodeInputs in = { .tokens = (const uint32_t *) v->tokens->data + g->pos0 };
    for (uint32_t i = 0; i < n->n_src; i++) {
        in.src[i] = buffer(v, s, p, n->src[i]);
    }
    if (n->op == MDL_OP_MATMUL) {
        /* offline calibration data: the reference's input (node-compute.c) */
        in.calib = buffer(v, &v->ref, p, n->src[0]);
        *precision_changed |= prec != MDL_PREC_W4A16;
    }
    if (n->op == MDL_OP_ATTENTION) {
        in.k_cache = s->k_cache + (size_t) n->layer * v->batch;
        in.v_cache = s->v_cache + (size_t) n->layer * v->batch;
    }
    sim_node_compute(v->model, g, ni, &in, sl, prec, out);
}

/* Publish a finished slice; attention also files its K/V rows in the cache. */
static void
publish(SimChecker *v, State *s, uint32_t p, uint32_t ni, const SimSlice *sl,
        const float *staged)
{
    const MdlGraph *g = g_ptr_array_index(v->graphs, p);
    const MdlNode *n = &g->nodes[ni];
    copy_slice(sl, n->features, staged, buffer(v, s, p, ni));
    if (n->op == MDL_OP_ATTENTION) {
        const float *k = buffer(v, s, p, n->src[1]);
        const float *vv = buffer(v, s, p, n->src[2]);
        size_t kvd = (size_t) n->kv_heads * n->head_dim;
        uint32_t layer = (uint32_t) n->layer;
        for (size_t t = sl->tok0; t < sl->tok1; t++) {
            for (uint32_t b = 0; b < v->batch; b++) {
                /* prefill rows are positions shared by every sequence;
                 * decode row b is sequence b's next position */
                if (g->decode && b != t) {
                    continue;
                }
                size_t pos = g->decode ? n->pos0 : n->pos0 + t;
                memcpy(s->k_cache[layer * v->batch + b] + pos * kvd, k + t * kvd,
                       sizeof(float) * kvd);
                memcpy(s->v_cache[layer * v->batch + b] + pos * kvd, vv + t * kvd,
                       sizeof(float) * kvd);
            }
        }
    }
}

static uint32_t
argmax(const float *x, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        if (x[i] > x[best]) {
            best = i;
        }
    }
    return (uint32_t) best;
}

const uint32_t *
sim_checker_tokens(const SimChecker *c, uint32_t *n)
{
    *n = c->tokens->len;
    return (const uint32_t *) c->tokens->data;
}

uint64_t
sim_checker_bytes(const EngConfig *c, const GPtrArray *graphs, uint32_t layers,
                  uint32_t batch)
{
    SimChecker probe = { .layers = layers, .full = layers == 0 || layers >= c->layers };
    probe.layers = probe.full ? c->layers : layers;
    const MdlGraph *pre = g_ptr_array_index((GPtrArray *) graphs, 0);
    uint64_t max_pos = pre->tokens + graphs->len;
    uint64_t weights = 0, acts = 0;
    for (guint p = 0; p < graphs->len; p++) {
        const MdlGraph *g = g_ptr_array_index((GPtrArray *) graphs, p);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const MdlNode *n = &g->nodes[i];
            if (!computed(&probe, n)) {
                continue;
            }
            acts += (uint64_t) n->tokens * n->features * sizeof(float);
            if (p == 0 && n->op == MDL_OP_MATMUL) {
                /* W4A16: 64 bytes of INT4 + an FP16 scale per 128; and the
                 * FP reference's FP16 copy */
                weights += (uint64_t) n->features * ((n->k + ENG_W4_GROUP - 1) / ENG_W4_GROUP)
                           * (64 + 2) + (uint64_t) n->features * n->k * 2;
            }
        }
    }
    uint64_t kv = 2 * (uint64_t) probe.layers * batch * max_pos * c->kv_heads * c->head_dim
                  * sizeof(float);
    /* reference, FP reference, run, and a matched reference */
    return weights + 4 * (acts + kv);
}

SimChecker *
sim_checker_new(EngModel *model, GPtrArray *graphs, uint32_t layers, uint32_t batch)
{
    const EngConfig *c = eng_model_config(model);
    SimChecker *v = g_new0(SimChecker, 1);
    v->model = model;
    v->graphs = g_ptr_array_ref(graphs);
    v->full = layers == 0 || layers >= c->layers;
    v->layers = v->full ? c->layers : layers;
    v->batch = batch;
    const MdlGraph *pre = g_ptr_array_index(graphs, 0);
    v->max_pos = pre->tokens + graphs->len;
    v->tokens = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t i = 0; i < pre->tokens; i++) {
        uint32_t tok = (uint32_t) ((i * 7919u + 13u) % c->vocab);   /* a fixed prompt */
        g_array_append_val(v->tokens, tok);
    }
    v->recompute = g_getenv("HS_VALUES_RECOMPUTE") != NULL;
    state_init(v, &v->ref);
    gboolean unused = FALSE;

    /* the reference: every node whole, in order; its greedy tokens drive
     * the decode steps of both runs */
    for (guint p = 0; p < graphs->len; p++) {
        const MdlGraph *g = g_ptr_array_index(graphs, p);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const MdlNode *n = &g->nodes[i];
            if (!computed(v, n)) {
                continue;
            }
            SimSlice all = { 0, n->tokens, 0, n->features, 0 };
            g_autofree float *out = g_new0(float, (size_t) n->tokens * n->features);
            compute(v, &v->ref, p, i, &all, MDL_PREC_W4A16, &unused, out);
            publish(v, &v->ref, p, i, &all, out);
        }
        if (p + 1 < graphs->len) {
            uint32_t next;
            if (v->full) {
                const MdlNode *head = &g->nodes[g->n_nodes - 1];
                next = argmax(buffer(v, &v->ref, p, g->n_nodes - 1), head->features);
            } else {
                next = (g_array_index(v->tokens, uint32_t, v->tokens->len - 1) + 1) % c->vocab;
            }
            g_array_append_val(v->tokens, next);
        }
    }
    return v;
}

void
sim_checker_set_recompute(SimChecker *c, gboolean recompute)
{
    c->recompute = recompute;
}

void
sim_checker_free(SimChecker *v)
{
    if (v == NULL) {
        return;
    }
    state_clear(v, &v->ref);
    state_clear(v, &v->fp);
    g_array_free(v->tokens, TRUE);
    g_ptr_array_unref(v->graphs);
    eng_model_free(v->model);
    g_free(v);
}

/* Key of (phase, node) in by_node: both parts are 32-bit (decode steps
 * reach 4096 and more, graphs have any number of nodes), so the key is 64-bit
 * (a 32-bit `phase << 20 | node` collided at decode step 4096). */
static gint64 *
node_key(uint32_t phase, uint32_t node)
{
    gint64 *k = g_new(gint64, 1);
    *k = (gint64) (((guint64) phase << 32) | node);
    return k;
}

/* The plan's own arithmetic, node by node in graph order, each of the
 * node's slices at its task's precision from the complete inputs. */
static void
matched_reference(SimChecker *c, const SimPlan *plan, State *m)
{
    /* kernel tasks of each (phase, node), in plan order */
    g_autoptr(GHashTable) by_node = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                                          (GDestroyNotify) g_array_unref);
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->kind != SIM_TASK_KERNEL) {
            continue;
        }
        gint64 *key = node_key(sim_values_phase_index(t), (uint32_t) t->node);
        GArray *ids = g_hash_table_lookup(by_node, key);
        if (ids == NULL) {
            ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
            g_hash_table_insert(by_node, key, ids);
        } else {
            g_free(key);
        }
        g_array_append_val(ids, i);
    }
    state_init(c, m);
    gboolean unused = FALSE;
    for (guint p = 0; p < c->graphs->len; p++) {
        const MdlGraph *g = g_ptr_array_index(c->graphs, p);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const MdlNode *n = &g->nodes[i];
            gint64 key = (gint64) (((guint64) p << 32) | i);
            GArray *ids = g_hash_table_lookup(by_node, &key);
            if (!computed(c, n) || ids == NULL) {
                continue;
            }
            g_autofree float *out = g_new0(float, (size_t) n->tokens * n->features);
            for (guint k = 0; k < ids->len; k++) {
                const SimTask *t = sim_plan_task(plan, g_array_index(ids, uint32_t, k));
                if (same_as_reference(c, m, p, i, &t->slice, t->work.prec)) {
                    copy_slice(&t->slice, n->features, buffer(c, &c->ref, p, i), out);
                } else {
                    compute(c, m, p, i, &t->slice, t->work.prec, &unused, out);
                }
            }
            for (guint k = 0; k < ids->len; k++) {
                const SimTask *t = sim_plan_task(plan, g_array_index(ids, uint32_t, k));
                publish(c, m, p, i, &t->slice, out);
            }
        }
    }
}

SimValues *
sim_values_new(SimChecker *checker, const SimPlan *plan)
{
    SimValues *v = g_new0(SimValues, 1);
    v->c = checker;
    state_init(checker, &v->run);
    v->staging = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    v->from_ref = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->kind == SIM_TASK_KERNEL && t->work.prec != MDL_PREC_W4A16) {
            matched_reference(checker, plan, &v->matched);
            break;
        }
    }
    return v;
}

void
sim_values_free(SimValues *v)
{
    if (v == NULL) {
        return;
    }
    state_clear(v->c, &v->run);
    state_clear(v->c, &v->matched);
    g_hash_table_destroy(v->staging);
    g_hash_table_destroy(v->from_ref);
    g_free(v);
}

static void
values_start(void *opaque, uint32_t id, const SimTask *t)
{
    SimValues *v = opaque;
    if (t->kind != SIM_TASK_KERNEL) {
        return;
    }
    uint32_t p = sim_values_phase_index(t);
    const MdlGraph *g = g_ptr_array_index(v->c->graphs, p);
    const MdlNode *n = &g->nodes[t->node];
    if (!computed(v->c, n)) {
        return;
    }
    if (same_as_reference(v->c, &v->run, p, (uint32_t) t->node, &t->slice, t->work.prec)) {
        /* its output is the reference's: published from there at the end */
        g_hash_table_add(v->from_ref, GUINT_TO_POINTER(id));
        v->reused++;
        return;
    }
    float *out = g_new0(float, (size_t) n->tokens * n->features);
    compute(v->c, &v->run, p, (uint32_t) t->node, &t->slice, t->work.prec,
            &v->precision_changed, out);
    g_hash_table_insert(v->staging, GUINT_TO_POINTER(id), out);
}

static void
values_end(void *opaque, uint32_t id, const SimTask *t)
{
    SimValues *v = opaque;
    uint32_t p = sim_values_phase_index(t);
    if (g_hash_table_remove(v->from_ref, GUINT_TO_POINTER(id))) {
        publish(v->c, &v->run, p, (uint32_t) t->node, &t->slice,
                buffer(v->c, &v->c->ref, p, (uint32_t) t->node));
        return;
    }
    float *out = g_hash_table_lookup(v->staging, GUINT_TO_POINTER(id));
    if (out == NULL) {
        return;
    }
    publish(v->c, &v->run, p, (uint32_t) t->node, &t->slice, out);
    g_hash_table_remove(v->staging, GUINT_TO_POINTER(id));
}

const SimValuesOps sim_values_ops = { values_start, values_end };

/* max |a - b| over the last computed node of every phase (NaN: worst),
 * and max |b| */
static void
compare_states(SimChecker *v, State *a_state, State *b_state, double *err, double *ref)
{
    *err = 0;
    *ref = 0;
    for (guint p = 0; p < v->graphs->len; p++) {
        const MdlGraph *g = g_ptr_array_index(v->graphs, p);
        /* the phase's last computed node: logits, or layer N-1's output */
        uint32_t last = 0;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            if (computed(v, &g->nodes[i])) {
                last = i;
            }
        }
        const MdlNode *n = &g->nodes[last];
        const float *a = buffer(v, a_state, p, last), *b = buffer(v, b_state, p, last);
        for (size_t i = 0; i < (size_t) n->tokens * n->features; i++) {
            double e = fabs((double) a[i] - b[i]);
            if (!(e <= *err)) {
                *err = isnan(e) ? INFINITY : e;
            }
            *ref = MAX(*ref, fabs((double) b[i]));
        }
    }
}

/* The FP reference: the reference's computation (same tokens) with every
 * matmul on FP16 weights made from the values before quantisation (what
 * the papers measure accuracy against, mllm-NPU §6), FP32 activations. */
static void
fp_reference(SimChecker *v)
{
    state_init(v, &v->fp);
    gboolean unused = FALSE;
    for (guint p = 0; p < v->graphs->len; p++) {
        const MdlGraph *g = g_ptr_array_index(v->graphs, p);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const MdlNode *n = &g->nodes[i];
            if (!computed(v, n)) {
                continue;
            }
            SimSlice all = { 0, n->tokens, 0, n->features, 0 };
            g_autofree float *out = g_new0(float, (size_t) n->tokens * n->features);
            compute(v, &v->fp, p, i, &all, n->op == MDL_OP_MATMUL ? SIM_PREC_FP_REF
                                                                  : MDL_PREC_W4A16,
                    &unused, out);
            publish(v, &v->fp, p, i, &all, out);
        }
    }
}

void
sim_values_check(SimValues *run, SimCheck *out)
{
    SimChecker *v = run->c;
    *out = (SimCheck) { .checked = TRUE, .layers = v->layers, .full = v->full,
                        .precision_changed = run->precision_changed, .reused = run->reused };
    State *against = run->matched.buf ? &run->matched : &v->ref;
    compare_states(v, &run->run, against, &out->max_abs_err, &out->max_abs_ref);
    if (v->fp.buf == NULL) {
        fp_reference(v);
    }
    double unused;
    compare_states(v, &run->run, &v->fp, &out->precision_err, &unused);
    /* BLAS slices may differ from the whole product in the last bits */
    out->match = out->max_abs_err <= 1e-4 * MAX(1.0, out->max_abs_ref);
}
