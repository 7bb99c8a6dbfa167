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

/*
 * Node buffers are kept per phase only while the phase is under way: a
 * phase reads its own nodes' outputs and, through the KV caches, the
 * positions of earlier phases, nothing else.  So a run's (and its matched
 * reference's) buffers of a phase are compared and freed as soon as the
 * phase's last task ends, and the check's memory stays flat in decode
 * steps beyond the KV caches.  Each phase's compared output
 * (its last computed node) of the references is kept as a small copy.
 */
typedef struct State {
    float ***buf;                /* [phase] -> [node] -> tokens x features;
                                  * both lazily, NULL once freed */
    float **k_cache, **v_cache;  /* [layer * batch + b] -> max_pos x kv_dim */
    uint32_t next;               /* references: phases [0, next) computed once */
    float **out;                 /* references: [phase] -> copy of the compared output */
} State;

/* The shared part: model, graphs, tokens and the references, computed
 * phase by phase as the first run that needs a phase reaches it. */
struct SimChecker {
    EngModel *model;
    GPtrArray *graphs;           /* of MdlGraph* (see graph()) */
    gboolean *made;              /* [phase] -> its graph made by graph() */
    uint32_t layers;             /* layers computed */
    gboolean full;
    uint32_t batch;
    uint32_t max_pos;
    GArray *tokens;              /* of uint32_t: every position's token so far */
    State ref;
    /* the first node whose reference output held a NaN or an infinity
     * (ref_bad_at[0] == 0: none): reported as the model's fault */
    char ref_bad_at[64];
    gboolean keep_ref;           /* keep every reference phase's buffers (they
                                  * fit in REF_KEEP_BYTES): later runs then
                                  * need not compute them again */
    State fp;                    /* every matmul on FP16 weights: what
                                  * precision_err measures from (each phase
                                  * computed once, when a run first compares
                                  * it; only its output copy is kept) */
    gboolean recompute;          /* never copy a slice from the reference */
    gboolean fp_whole;           /* the FP reference's steps not compared
                                  * computed whole too */
    uint32_t fp_kv_from;         /* FP reference: phases [fp_kv_from,
                                  * fp.next) have their K/V rows still to
                                  * file (fp_kv_deferrable) */
    int fp_kv_direct;            /* -1 not known yet; 1: a decode step's K/V
                                  * rows read no attention (fp_kv_deferrable) */
    void (*progress)(void *opaque, const char *what, uint64_t done, uint64_t total);
    void *progress_opaque;       /* the reference's prefill, node by node */
    EngActInt8 *act8;            /* [2 * prefill node + shadow]: calibration() */
    gboolean *act8_made;
};

/* Reference phases' buffers are all kept when they take at most this
 * much (the default compare's first layer at prompt 256, decode 32: ~70
 * MiB), so every policy of a compare re-uses them; beyond it only the
 * prefill's are kept and a decode step's are computed again by each run
 * that needs them (a step is cheap; the prefill is not). */
#define REF_KEEP_BYTES ((uint64_t) 256 << 20)

/* What the matched reference needs of a kernel task: kept per phase, so
 * a streamed plan may forget the task (sim_exec_run_full). */
typedef struct Slice {
    uint32_t node;
    MdlPrecision prec;
    SimSlice slice;
} Slice;

/* A kernel task's output, computed when it starts and published into the
 * run's buffers when it ends; node-sized, so it comes from the pool of
 * large buffers (sim/util/mem.h) rather than fresh pages each time. */
typedef struct Staged {
    float *p;
    size_t bytes;
} Staged;

static void
staged_free(gpointer data)
{
    Staged *s = data;
    hs_mem_free(s->p, s->bytes);
    g_free(s);
}

/* One checked run: its own buffers, and what it has in flight. */
struct SimValues {
    SimChecker *c;
    State run;
    State matched;               /* the plan's arithmetic in order (buf NULL: none) */
    gboolean has_matched;
    uint32_t matched_from;       /* its first phase: those before hold only
                                  * W4A16 tasks, where it is the reference */
    GArray **phase_tasks;        /* [phase] -> its kernel tasks' Slices in plan
                                  * order, until the phase is compared */
    GArray **guess;              /* [phase] -> the Slices a phase computed ahead
                                  * of its tasks was computed with (matched_ahead),
                                  * until its own tasks confirm them */
    gboolean guessed_wrong;      /* a phase's own Slices were not the guess:
                                  * its steps differ, only known ones are
                                  * computed ahead from then on */
    uint32_t *left;              /* [phase] -> kernel tasks not yet ended */
    gboolean *done;              /* [phase] -> compared and freed */
    double err, ref_max, prec_err;   /* running maxima over compared phases */
    GHashTable *staging;         /* task id -> Staged */
    GHashTable *from_ref;        /* task id -> the State whose slice it takes */
    gboolean precision_changed;
    uint64_t reused;             /* slices copied from the reference */
    uint32_t *kv_same;           /* [layer * batch + b] -> leading positions of
                                  * the run's caches known to hold the bits of
                                  * its reference's (track_kv) */
};

/*
 * The graph of phase @p.  A decode step's differs from the first step's
 * only by its position (models/graph.c: every node's pos0 is the step's
 * context), so steps whose graph was not given (NULL) are made from it
 * when reached, and freed once compared (graph_done): a long decode holds
 * a few.
 */
static const MdlGraph *
graph(SimChecker *v, uint32_t p)
{
    MdlGraph *g = g_ptr_array_index(v->graphs, p);
    if (g == NULL) {
        const MdlGraph *first = g_ptr_array_index(v->graphs, 1);
        uint32_t d = p - 1;
        g = g_memdup2(first, sizeof(MdlGraph));
        g->nodes = g_memdup2(first->nodes, sizeof(MdlNode) * first->n_nodes);
        g->pos0 += d;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            g->nodes[i].pos0 += d;
        }
        v->graphs->pdata[p] = g;
        v->made[p] = TRUE;
    }
    return g;
}

/* Phase @p is compared: free its graph if graph() made it. */
static void
graph_done(SimChecker *v, uint32_t p)
{
    if (v->made[p]) {
        g_clear_pointer(&v->graphs->pdata[p], mdl_graph_free);
        v->made[p] = FALSE;
    }
}

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
    const MdlGraph *g = graph(v, phase);
    if (s->buf[phase] == NULL) {
        s->buf[phase] = g_new0(float *, g->n_nodes);
    }
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
    s->out = g_new0(float *, v->graphs->len);
    s->next = 0;
    const EngConfig *c = eng_model_config(v->model);
    size_t n = (size_t) c->layers * v->batch;
    s->k_cache = g_new0(float *, n);
    s->v_cache = g_new0(float *, n);
    const size_t bytes = sizeof(float) * v->max_pos * c->kv_heads * c->head_dim;
    /* zeroed on every thread: a batch's caches are hundreds of MB */
    #pragma omp parallel for schedule(static) if (n > 1 && bytes * n >= (1u << 24))
    for (size_t i = 0; i < n; i++) {
        if (i / v->batch < v->layers) {
            s->k_cache[i] = hs_mem_alloc0(bytes);
            s->v_cache[i] = hs_mem_alloc0(bytes);
        }
    }
}

/* Free @s's node buffers of phase @p (made again, zeroed, if asked for). */
static void
state_drop_phase(SimChecker *v, State *s, uint32_t p)
{
    if (s->buf[p] == NULL) {
        return;
    }
    const MdlGraph *g = graph(v, p);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        hs_mem_free(s->buf[p][i], sizeof(float) * g->nodes[i].tokens * g->nodes[i].features);
    }
    g_clear_pointer(&s->buf[p], g_free);
}

static void
state_clear(SimChecker *v, State *s)
{
    if (s->buf == NULL) {
        return;
    }
    for (guint p = 0; p < v->graphs->len; p++) {
        state_drop_phase(v, s, p);
        g_free(s->out[p]);
    }
    g_free(s->buf);
    g_free(s->out);
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
 * A slice whose inputs hold exactly the bits they hold in @ref, a state
 * where the same slice was computed at the same precision: the engine
 * gives every output element the same bits whatever the cut
 * (engine/kernels.h), so computing it would give exactly @ref's output,
 * which is taken from there instead.  This is memoisation of a pure
 * function, not a shortcut in the check: a slice that reads anything else
 * (a buffer not yet written, a stale value behind a missing sync) is
 * computed, so a wrong plan still gives wrong numbers.  Only the costly
 * kernels are looked up: matmuls and attention.  A decode step's
 * attention reads every earlier position of its sequence's caches: they
 * hold @ref's bits up to @kv_same[cache] (the run's, kept by track_kv as
 * rows are filed; NULL: not known, computed).  @ref is the
 * reference (then only W4A16 slices qualify: it computed nothing else) or
 * the run's own matched reference (every precision: it computed this very
 * slice at the task's precision).
 */
static gboolean
same_inputs(SimChecker *v, State *s, State *ref, const uint32_t *kv_same, uint32_t p,
            uint32_t ni, const SimSlice *sl)
{
    const MdlGraph *g = graph(v, p);
    const MdlNode *n = &g->nodes[ni];
    if (v->recompute || s == ref) {
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
    } else if (n->op == MDL_OP_ATTENTION && kv_same) {
        /* decode: row t is sequence t's query, key and value at pos0 */
        const size_t kvd = (size_t) n->kv_heads * n->head_dim;
        for (size_t t = t0; t < t1; t++) {
            if (kv_same[(size_t) n->layer * v->batch + t] < n->pos0) {
                return FALSE;
            }
        }
        if (!same_rows(buffer(v, s, p, n->src[0]), buffer(v, ref, p, n->src[0]), n->features,
                       t0, t1) ||
            !same_rows(buffer(v, s, p, n->src[1]), buffer(v, ref, p, n->src[1]), kvd, t0, t1) ||
            !same_rows(buffer(v, s, p, n->src[2]), buffer(v, ref, p, n->src[2]), kvd, t0, t1)) {
            return FALSE;
        }
    } else {
        return FALSE;
    }
    return TRUE;
}

/* same_inputs against the reference, which computed W4A16 only, if it
 * holds phase @p (a run with its own arithmetic does not make it compute
 * a decode step: ref_needed) */
static gboolean
same_as_reference(SimChecker *v, State *s, const uint32_t *kv_same, uint32_t p, uint32_t ni,
                  const SimSlice *sl, MdlPrecision prec)
{
    return prec == MDL_PREC_W4A16 && v->ref.buf[p] != NULL &&
           same_inputs(v, s, &v->ref, kv_same, p, ni, sl);
}

static void ref_before(SimChecker *v, uint32_t p);

/*
 * Make sure v->tokens holds every token phase @p reads: when only layers
 * are checked, the fixed sequence's next ones (no reference computed for
 * them); for the whole model, the reference's greedy choices, so its
 * phases before @p are computed.
 */
static void
tokens_for(SimChecker *v, uint32_t p)
{
    if (v->full) {
        ref_before(v, p);
        return;
    }
    const MdlGraph *pre = g_ptr_array_index(v->graphs, 0);
    const uint32_t vocab = eng_model_config(v->model)->vocab;
    while (v->tokens->len < (guint) pre->tokens + p) {
        uint32_t next = (g_array_index(v->tokens, uint32_t, v->tokens->len - 1) + 1) % vocab;
        g_array_append_val(v->tokens, next);
    }
}

/* Precisions whose INT8 activations take a calibrated scale. */
static gboolean
int8_activations(MdlPrecision prec)
{
    return prec == MDL_PREC_W4A8 || prec == MDL_PREC_W8A8 || prec == MDL_PREC_W8A8_SHADOW;
}

/*
 * The INT8 activation parameters of matmul @n (with shadow outliers or
 * not; node-compute.c), calibrated offline on the reference's whole input
 * of the same matmul (same layer, same weight) in the prefill, for the
 * prefill and every decode step, as a static scale fixed before
 * deployment is.  Computed once per matmul from the prefill's buffers,
 * held from the checker's creation: a decode step needs no reference.
 */
static const EngActInt8 *
calibration(SimChecker *v, const MdlNode *n, gboolean shadow)
{
    const MdlGraph *g0 = graph(v, 0);
    uint32_t i = 0;
    while (i < g0->n_nodes && !(g0->nodes[i].op == MDL_OP_MATMUL &&
                                g0->nodes[i].layer == n->layer &&
                                g0->nodes[i].weight == n->weight)) {
        i++;
    }
    g_assert(i < g0->n_nodes);
    EngActInt8 *a = &v->act8[2 * i + shadow];
    if (!v->act8_made[2 * i + shadow]) {
        const MdlNode *twin = &g0->nodes[i];
        g_assert(v->ref.next > 0 && v->ref.buf[0] != NULL);    /* the prefill: always held */
        const float *x = buffer(v, &v->ref, 0, twin->src[0]) +
                         (size_t) twin->src_tok_offset * g0->nodes[twin->src[0]].features;
        eng_act_int8_params(x, twin->k, twin->tokens, shadow, a);
        v->act8_made[2 * i + shadow] = TRUE;
    }
    return a;
}

/* Compute tokens [t0, t1) x features [r0, r1) of node @ni of phase @p
 * from @s's buffers into @out (a full-size node buffer). */
static void
compute(SimChecker *v, State *s, uint32_t p, uint32_t ni, const SimSlice *sl,
        MdlPrecision prec, gboolean *precision_changed, float *out)
{
    /* the arithmetic: sim/node-compute.c; here, where its inputs live */
    const MdlGraph *g = graph(v, p);
    const MdlNode *n = &g->nodes[ni];
    tokens_for(v, p);
    SimNodeInputs in = { .tokens = (const uint32_t *) v->tokens->data + g->pos0 };
    for (uint32_t i = 0; i < n->n_src; i++) {
        in.src[i] = buffer(v, s, p, n->src[i]);
    }
    if (n->op == MDL_OP_MATMUL) {
        *precision_changed |= prec != MDL_PREC_W4A16;
    }
    if (n->op == MDL_OP_MATMUL && int8_activations(prec)) {
        in.act8 = calibration(v, n, prec == MDL_PREC_W8A8_SHADOW);
    }
    if (n->op == MDL_OP_ATTENTION) {
        in.k_cache = s->k_cache + (size_t) n->layer * v->batch;
        in.v_cache = s->v_cache + (size_t) n->layer * v->batch;
    }
    sim_node_compute(v->model, g, ni, &in, sl, prec, out);
}

/* Attention node @ni's slice @sl files its K/V rows in @s's caches. */
static void
file_kv(SimChecker *v, State *s, uint32_t p, uint32_t ni, const SimSlice *sl)
{
    const MdlGraph *g = graph(v, p);
    const MdlNode *n = &g->nodes[ni];
    const float *k = buffer(v, s, p, n->src[1]);
    const float *vv = buffer(v, s, p, n->src[2]);
    const size_t kvd = (size_t) n->kv_heads * n->head_dim, layer = (size_t) n->layer;
    if (g->decode) {
        /* decode row t is sequence t's next position */
        for (size_t t = sl->tok0; t < sl->tok1; t++) {
            memcpy(s->k_cache[layer * v->batch + t] + n->pos0 * kvd, k + t * kvd,
                   sizeof(float) * kvd);
            memcpy(s->v_cache[layer * v->batch + t] + n->pos0 * kvd, vv + t * kvd,
                   sizeof(float) * kvd);
        }
        return;
    }
    /* prefill rows are positions every sequence shares: a batch's copies
     * (hundreds of MB at batch 64) on every thread */
    const size_t bytes = sizeof(float) * (sl->tok1 - sl->tok0) * kvd;
    const size_t at = (n->pos0 + sl->tok0) * kvd;
    #pragma omp parallel for schedule(static) if (v->batch > 1 && bytes * v->batch >= (1u << 20))
    for (uint32_t b = 0; b < v->batch; b++) {
        memcpy(s->k_cache[layer * v->batch + b] + at, k + sl->tok0 * kvd, bytes);
        memcpy(s->v_cache[layer * v->batch + b] + at, vv + sl->tok0 * kvd, bytes);
    }
}

/* Publish a finished slice; attention also files its K/V rows in the cache. */
static void
publish(SimChecker *v, State *s, uint32_t p, uint32_t ni, const SimSlice *sl,
        const float *staged)
{
    const MdlGraph *g = graph(v, p);
    const MdlNode *n = &g->nodes[ni];
    float *dst = buffer(v, s, p, ni);
    if (staged != dst) {
        copy_slice(sl, n->features, staged, dst);
    }
    if (n->op == MDL_OP_ATTENTION) {
        file_kv(v, s, p, ni, sl);
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

/* The phase's compared node: its last computed one (logits, or the last
 * checked layer's output). */
static uint32_t
last_computed(const SimChecker *v, const MdlGraph *g)
{
    uint32_t last = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (computed(v, &g->nodes[i])) {
            last = i;
        }
    }
    return last;
}

static size_t
node_floats(const MdlGraph *g, uint32_t i)
{
    return (size_t) g->nodes[i].tokens * g->nodes[i].features;
}

/*
 * Decode steps whose output is compared with the FP reference: the first
 * (d = 0), every power of two and the last.  Every decode step of the FP
 * reference reads all of its 16-bit weights (436 MB for Llama-3-8B's
 * first layer: 17 ms a step at this machine's 26 GB/s, 70 s over 4096
 * steps), more than a check of that decode may take (60 s);
 * these steps sample every context length at a cost logarithmic in the
 * steps.  The steps between still compute what later steps read (their
 * K/V: kv_nodes), so a compared step's FP output is exact.
 */
static gboolean
fp_compared(const SimChecker *v, uint32_t p)
{
    uint32_t d = p - 1;
    return p == 0 || p + 1 == v->graphs->len || (d & (d - 1)) == 0;
}

/* need[i] (transfer full): node i of @g is read, directly or not, by the
 * K/V rows a computed attention node files in the cache (what later
 * phases read of this one); @g's nodes are in topological order. */
static gboolean *
kv_nodes(const SimChecker *v, const MdlGraph *g)
{
    gboolean *need = g_new0(gboolean, g->n_nodes);
    for (uint32_t i = g->n_nodes; i-- > 0;) {
        const MdlNode *n = &g->nodes[i];
        if (!computed(v, n)) {
            continue;
        }
        if (n->op == MDL_OP_ATTENTION) {
            need[n->src[1]] = need[n->src[2]] = TRUE;
        }
        for (uint32_t k = 0; need[i] && k < n->n_src; k++) {
            need[n->src[k]] = TRUE;
        }
    }
    return need;
}

/*
 * Phase @p of a reference (the reference at W4A16, or the FP reference):
 * every computed node whole, in order (an FP reference's phase not
 * compared: only what its K/V need).  The first time, the copy of its
 * compared output is kept and (for the reference of the whole model) the
 * next token is chosen; computing it again later (its buffers were
 * freed) gives the same bits: the KV caches then hold later positions
 * too, which nothing in phase @p reads.
 */
static void reference_done(SimChecker *v, State *s, uint32_t p);

static void
reference_phase(SimChecker *v, State *s, uint32_t p)
{
    const MdlGraph *g = graph(v, p);
    gboolean fp = s == &v->fp, unused = FALSE;
    g_autofree gboolean *need = fp && !fp_compared(v, p) && !v->fp_whole ? kv_nodes(v, g)
                                                                          : NULL;
    uint64_t done = 0, n_computed = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        n_computed += computed(v, &g->nodes[i]);
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const MdlNode *n = &g->nodes[i];
        if (!computed(v, n)) {
            continue;
        }
        SimSlice all = { 0, n->tokens, 0, n->features, 0 };
        if (need && !need[i]) {
            if (n->op == MDL_OP_ATTENTION) {
                file_kv(v, s, p, i, &all);
            }
            continue;
        }
        /* straight into the phase's buffer: no node reads its own */
        float *out = buffer(v, s, p, i);
        compute(v, s, p, i, &all, fp && n->op == MDL_OP_MATMUL ? SIM_PREC_FP_REF : MDL_PREC_W4A16,
                &unused, out);
        publish(v, s, p, i, &all, out);
        if (v->progress && s == &v->ref && p == 0) {
            /* the prefill of a whole model takes minutes */
            v->progress(v->progress_opaque, "computing the reference", ++done, n_computed);
        }
    }
    reference_done(v, s, p);
}

/* Phase @p of reference @s is computed: the reference's first non-finite
 * value noted; the first time, its compared output kept and (the whole
 * model's reference) the next token chosen. */
static void
reference_done(SimChecker *v, State *s, uint32_t p)
{
    const MdlGraph *g = graph(v, p);
    const gboolean fp = s == &v->fp;
    for (uint32_t i = 0; s == &v->ref && v->ref_bad_at[0] == '\0' && i < g->n_nodes; i++) {
        /* one pass over what was written: cheap beside computing it */
        const float *out = computed(v, &g->nodes[i]) ? s->buf[p][i] : NULL;
        for (size_t e = 0; out && e < node_floats(g, i); e++) {
            if (!isfinite(out[e])) {
                g_autofree char *phase = p == 0 ? g_strdup("prefill")
                                                : g_strdup_printf("decode step %u", p - 1);
                g_snprintf(v->ref_bad_at, sizeof(v->ref_bad_at), "%s of %s", g->nodes[i].name,
                           phase);
                break;
            }
        }
    }
    if (p < s->next) {
        return;
    }
    uint32_t last = last_computed(v, g);
    if (!fp || fp_compared(v, p)) {
        s->out[p] = g_memdup2(buffer(v, s, p, last), sizeof(float) * node_floats(g, last));
    }
    s->next = p + 1;
    if (!fp && v->full && p + 1 < v->graphs->len) {
        /* its greedy tokens drive the decode steps of every run */
        uint32_t next = argmax(s->out[p], g->nodes[last].features);
        g_array_append_val(v->tokens, next);
    }
}

/* The reference's phases before @p computed (the first time: each is
 * freed at once unless all are kept). */
static void
ref_before(SimChecker *v, uint32_t p)
{
    while (v->ref.next < p) {
        uint32_t q = v->ref.next;
        reference_phase(v, &v->ref, q);
        if (!v->keep_ref && q > 0) {
            state_drop_phase(v, &v->ref, q);
        }
    }
}

/* The reference's buffers of phase @p, computed (with every phase before
 * it, the first time) if they are not held: a decode step with the steps
 * after it not held either, as one block (ref_block). */
static gboolean ref_block(SimChecker *v, uint32_t p);

static void
ref_phase(SimChecker *v, uint32_t p)
{
    ref_before(v, p);
    if (v->ref.buf[p] == NULL && !ref_block(v, p)) {
        reference_phase(v, &v->ref, p);
    }
}

/*
 * The FP reference's steps that are not compared compute only their K/V
 * rows (kv_nodes).  When those read no attention node (the first checked
 * layer's: embedding, norm, K and V projections, RoPE), a row depends on
 * its position and token alone, so a run of such steps is left pending
 * and its rows are computed together, when a later step first reads the
 * caches, as the prefill of those positions: one pass over the 16-bit
 * weights for up to FP_KV_CHUNK positions, where each step made its own
 * (the matmuls' per-row arithmetic is the same whatever the token count:
 * the same bits; /sim/run/fp-reference-sampled).  Batch 1 only: a
 * batch's rows are its sequences, whose next rows all share a position.
 * Measured: ~2.4 ms of CPU a step of Llama-3-8B's first layer (FP16 K
 * and V weights, 16 MB, widened to FP32 for one row each step).
 */
#define FP_KV_CHUNK 256

static gboolean
fp_kv_deferrable(SimChecker *v, uint32_t p)
{
    if (p == 0 || v->batch != 1 || v->fp_whole || fp_compared(v, p)) {
        return FALSE;
    }
    if (v->fp_kv_direct < 0) {
        const MdlGraph *g = graph(v, 1);
        g_autofree gboolean *need = kv_nodes(v, g);
        v->fp_kv_direct = 1;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            if (need[i] && g->nodes[i].op == MDL_OP_ATTENTION) {
                v->fp_kv_direct = 0;
            }
        }
    }
    return v->fp_kv_direct == 1;
}

/* File the FP reference's K/V rows of the pending phases [fp_kv_from,
 * fp.next): the first decode step's graph as the prefill of their
 * positions, FP_KV_CHUNK at a time, its K/V nodes only. */
static void
fp_kv_catch_up(SimChecker *v)
{
    if (v->fp_kv_from >= v->fp.next) {
        return;
    }
    const MdlGraph *step = graph(v, 1);
    g_autofree gboolean *need = kv_nodes(v, step);
    for (uint32_t q0 = v->fp_kv_from; q0 < v->fp.next; q0 += FP_KV_CHUNK) {
        uint32_t n_pos = MIN(FP_KV_CHUNK, v->fp.next - q0);
        tokens_for(v, q0 + n_pos - 1);
        MdlGraph chunk = *step;
        g_autofree MdlNode *nodes = g_memdup2(step->nodes, sizeof(MdlNode) * step->n_nodes);
        chunk.nodes = nodes;
        chunk.decode = FALSE;
        chunk.tokens = n_pos;
        chunk.pos0 = step->pos0 + (q0 - 1);
        for (uint32_t i = 0; i < chunk.n_nodes; i++) {
            nodes[i].tokens = n_pos;
            nodes[i].pos0 += q0 - 1;
        }
        g_autofree float **buf = g_new0(float *, chunk.n_nodes);
        for (uint32_t i = 0; i < chunk.n_nodes; i++) {
            const MdlNode *n = &nodes[i];
            if (!computed(v, n) || !need[i] || n->op == MDL_OP_ATTENTION) {
                continue;
            }
            g_assert(n->src_tok_offset == 0);
            SimNodeInputs in = { .tokens = (const uint32_t *) v->tokens->data + chunk.pos0 };
            for (uint32_t k = 0; k < n->n_src; k++) {
                in.src[k] = buf[n->src[k]];
            }
            SimSlice all = { 0, n->tokens, 0, n->features, 0 };
            buf[i] = hs_mem_alloc0(sizeof(float) * n->tokens * n->features);
            sim_node_compute(v->model, &chunk, i, &in, &all,
                             n->op == MDL_OP_MATMUL ? SIM_PREC_FP_REF : MDL_PREC_W4A16, buf[i]);
        }
        for (uint32_t i = 0; i < chunk.n_nodes; i++) {
            const MdlNode *n = &nodes[i];
            if (computed(v, n) && n->op == MDL_OP_ATTENTION) {
                size_t kvd = (size_t) n->kv_heads * n->head_dim;
                size_t bytes = sizeof(float) * n_pos * kvd;
                memcpy(v->fp.k_cache[n->layer] + (size_t) n->pos0 * kvd, buf[n->src[1]], bytes);
                memcpy(v->fp.v_cache[n->layer] + (size_t) n->pos0 * kvd, buf[n->src[2]], bytes);
            }
        }
        for (uint32_t i = 0; i < chunk.n_nodes; i++) {
            hs_mem_free(buf[i], sizeof(float) * nodes[i].tokens * nodes[i].features);
        }
    }
    v->fp_kv_from = v->fp.next;
}

/* The FP reference's compared output of phase @p, NULL if @p is not
 * compared (fp_compared) (phases computed once, in order, their buffers
 * freed at once; K/V rows perhaps left pending: fp_kv_deferrable). */
static const float *
fp_out(SimChecker *v, uint32_t p)
{
    while (v->fp.next <= p) {
        uint32_t q = v->fp.next;
        if (fp_kv_deferrable(v, q)) {
            v->fp.next = q + 1;
            continue;
        }
        fp_kv_catch_up(v);
        reference_phase(v, &v->fp, q);
        state_drop_phase(v, &v->fp, q);
        v->fp_kv_from = v->fp.next;
    }
    return v->fp.out[p];
}

const float *
sim_checker_fp_output(SimChecker *c, uint32_t phase, size_t *n)
{
    const MdlGraph *g = graph(c, phase);
    *n = node_floats(g, last_computed(c, g));
    return fp_out(c, phase);
}

const uint32_t *
sim_checker_tokens(SimChecker *c, uint32_t *n)
{
    tokens_for(c, c->graphs->len - 1);
    *n = c->tokens->len;
    return (const uint32_t *) c->tokens->data;
}

/* Bytes of the computed nodes' outputs of phase @p. */
static uint64_t
phase_bytes(const SimChecker *v, const MdlGraph *g)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (computed(v, &g->nodes[i])) {
            b += (uint64_t) node_floats(g, i) * sizeof(float);
        }
    }
    return b;
}

uint64_t
sim_checker_bytes(const EngConfig *c, const GPtrArray *graphs, uint32_t layers,
                  uint32_t batch)
{
    SimChecker probe = { .layers = layers, .full = layers == 0 || layers >= c->layers };
    probe.layers = probe.full ? c->layers : layers;
    const MdlGraph *pre = g_ptr_array_index((GPtrArray *) graphs, 0);
    uint64_t max_pos = pre->tokens + graphs->len;
    uint64_t weights = 0, ref_all = 0, widest = 0, outs = 0;
    const MdlGraph *g = NULL;
    for (guint p = 0; p < graphs->len; p++) {
        /* a step not given is the one before moved on: as large */
        g = g_ptr_array_index((GPtrArray *) graphs, p) ? g_ptr_array_index((GPtrArray *) graphs, p)
                                                       : g;
        uint64_t b = phase_bytes(&probe, g);
        ref_all += b;
        widest = MAX(widest, b);
        uint32_t last = last_computed(&probe, g);
        outs += 2 * (uint64_t) node_floats(g, last) * sizeof(float);
        for (uint32_t i = 0; p == 0 && i < g->n_nodes; i++) {
            const MdlNode *n = &g->nodes[i];
            if (computed(&probe, n) && n->op == MDL_OP_MATMUL) {
                /* W4A16: 64 bytes of INT4 + an FP16 scale per 128; and the
                 * FP reference's FP16 copy */
                weights += (uint64_t) n->features * ((n->k + ENG_W4_GROUP - 1) / ENG_W4_GROUP)
                           * (64 + 2) + (uint64_t) n->features * n->k * 2;
            }
        }
    }
    const MdlGraph *g0 = g_ptr_array_index((GPtrArray *) graphs, 0);
    uint64_t ref = ref_all <= REF_KEEP_BYTES ? ref_all : phase_bytes(&probe, g0) + widest;
    uint64_t kv = 2 * (uint64_t) probe.layers * batch * max_pos * c->kv_heads * c->head_dim
                  * sizeof(float);
    /* the KV caches of the reference, the FP reference, the run and a
     * matched reference; the reference's phases kept; two phases of each
     * of the other three in flight (a phase's last tasks overlap the next
     * one's first); the compared outputs' copies */
    return weights + 4 * kv + ref + 3 * 2 * widest + outs;
}

SimChecker *
sim_checker_new(EngModel *model, GPtrArray *graphs, uint32_t layers, uint32_t batch,
                void (*progress)(void *opaque, const char *what, uint64_t done,
                                 uint64_t total),
                void *progress_opaque)
{
    const EngConfig *c = eng_model_config(model);
    SimChecker *v = g_new0(SimChecker, 1);
    v->model = model;
    sim_node_weights_for_fp_ref(model);
    v->progress = progress;
    v->progress_opaque = progress_opaque;
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
    v->fp_whole = g_getenv("HS_VALUES_FP_WHOLE") != NULL;
    v->made = g_new0(gboolean, graphs->len);
    v->act8 = g_new0(EngActInt8, 2 * (size_t) pre->n_nodes);
    v->act8_made = g_new0(gboolean, 2 * (size_t) pre->n_nodes);
    uint64_t ref_all = 0;
    const MdlGraph *g = NULL;
    for (guint p = 0; p < graphs->len; p++) {
        g = g_ptr_array_index(graphs, p) ? g_ptr_array_index(graphs, p) : g;
        ref_all += phase_bytes(v, g);
    }
    v->keep_ref = ref_all <= REF_KEEP_BYTES;
    state_init(v, &v->ref);
    state_init(v, &v->fp);
    v->fp_kv_direct = -1;
    /* the prefill now (it is the costly phase, shared by every run); the
     * rest as runs reach it */
    ref_phase(v, 0);
    /* The FP reference whole now too (checked layers: its tokens are the
     * fixed sequence, known in advance), so its FP16 weights go before
     * the first run makes its own formats: held until that run ended,
     * they were in use beside them (Llama-3-8B's first layer: 436 MB;
     * `run -P mllm-npu` peaked at 1.13 GB).  The same phases, computed
     * earlier: the same bits.  Whole models choose their tokens from the
     * reference as runs reach them, so theirs waits. */
    if (!v->full) {
        fp_out(v, graphs->len - 1);
        eng_model_release_format(model, ENG_QFMT_F16);
    }
    v->progress = NULL;
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
    for (guint p = 0; p < v->graphs->len; p++) {
        graph_done(v, p);
    }
    g_free(v->made);
    g_free(v->act8);
    g_free(v->act8_made);
    g_array_free(v->tokens, TRUE);
    g_ptr_array_unref(v->graphs);
    eng_model_free(v->model);
    g_free(v);
}

static gboolean matched_for(const SimValues *v, uint32_t p);

/*
 * Does run @v need the reference's phase @p?  A run compared with the
 * reference does; a run compared with its own arithmetic only for the
 * whole model, whose tokens are the reference's: when layers are
 * checked, its INT8 scales are calibrated on the prefill (compute()) and
 * the W4A16 slices it could copy from the reference are computed instead
 * (no dearer than the reference computing them), so a decode step costs
 * one pass over the checked layers, not two.
 */
static gboolean
ref_needed(const SimValues *v, uint32_t p)
{
    return v->c->full || !matched_for(v, p);
}

/* Node @ni of phase @q of a reference @m (the plan's own arithmetic, or
 * the reference in blocks): each of its slices in @sls at its task's
 * precision, straight into the phase's buffer, then published (K/V
 * filed) once all are computed. */
static void
node_slices(SimChecker *c, State *m, uint32_t q, uint32_t ni, const GArray *sls)
{
    const MdlNode *n = &graph(c, q)->nodes[ni];
    gboolean unused = FALSE;
    float *out = NULL;
    for (guint k = 0; k < sls->len; k++) {
        const Slice *t = &g_array_index(sls, Slice, k);
        if (t->node != ni) {
            continue;
        }
        if (out == NULL) {
            out = buffer(c, m, q, ni);
        }
        if (same_as_reference(c, m, NULL, q, ni, &t->slice, t->prec)) {
            copy_slice(&t->slice, n->features, buffer(c, &c->ref, q, ni), out);
        } else {
            compute(c, m, q, ni, &t->slice, t->prec, &unused, out);
        }
    }
    for (guint k = 0; out && k < sls->len; k++) {
        const Slice *t = &g_array_index(sls, Slice, k);
        if (t->node == ni) {
            publish(c, m, q, ni, &t->slice, out);
        }
    }
}

static gboolean
same_slices(const GArray *a, const GArray *b)
{
    if (a->len != b->len) {
        return FALSE;
    }
    for (guint k = 0; k < a->len; k++) {
        const Slice *x = &g_array_index(a, Slice, k), *y = &g_array_index(b, Slice, k);
        if (x->node != y->node || x->prec != y->prec || x->slice.tok0 != y->slice.tok0 ||
            x->slice.tok1 != y->slice.tok1 || x->slice.row0 != y->slice.row0 ||
            x->slice.row1 != y->slice.row1) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Decode steps the matched reference computes at once (matched_ahead),
 * and the most their node buffers may hold meanwhile */
#define AHEAD_STEPS 32
#define AHEAD_BYTES ((uint64_t) 64 << 20)

/* The most phases from @q a block may take: AHEAD_STEPS, the last phase,
 * and AHEAD_BYTES of node buffers */
static uint32_t
block_most(SimChecker *c, uint32_t q)
{
    const MdlGraph *g = graph(c, q);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        bytes += computed(c, &g->nodes[i]) ? sizeof(float) * node_floats(g, i) : 0;
    }
    return (uint32_t) MIN(MIN((uint64_t) AHEAD_STEPS, c->graphs->len - q),
                          MAX(AHEAD_BYTES / MAX(bytes, 1), 1));
}

/*
 * How many phases from decode phase @q the matched reference computes as
 * one block: @q's Slices are known, and the phases after it either have
 * the same Slices or are not planned yet (then guessed to be the same:
 * from the second decode step on, a built-in policy plans every step as
 * a copy of one template, sim/run.c; from the first only when the second
 * is planned like it; once a guess was wrong, only phases planned
 * already).  Only when the checked layers' tokens are known ahead
 * (not the whole model's, whose next token is the reference's choice)
 * and the block's buffers fit AHEAD_BYTES.
 */
static uint32_t
ahead_steps(const SimValues *run, uint32_t q)
{
    SimChecker *c = run->c;
    const uint32_t np = c->graphs->len;
    if (c->full || q < 1 || q + 1 >= np || run->phase_tasks[q] == NULL ||
        !graph(c, q)->decode) {
        return 1;
    }
    /* the first step's plan is not the template's: the steps after it are
     * guessed from it only when the second step is planned like it */
    if (q == 1 && (run->phase_tasks[2] == NULL ||
                   !same_slices(run->phase_tasks[2], run->phase_tasks[1]))) {
        return 1;
    }
    const uint32_t most = block_most(c, q);
    uint32_t n = 1;
    while (n < most && (run->phase_tasks[q + n] == NULL
                        ? !run->guessed_wrong
                        : same_slices(run->phase_tasks[q + n], run->phase_tasks[q]))) {
        n++;
    }
    return n;
}

/*
 * Matmul node @ni's slice @t in the @nph phases from @q at once: their
 * inputs stacked, one pass over the weights for all of them (a decode
 * step alone is a matvec, which streams every weight for one row), then
 * each phase's rows put back.  A step whose rows (a batch's sequences)
 * all hold the same input, as a checked batch's do, gives one row to the
 * stack, copied to all (sim/node-compute.c computes such a step so too).
 * Every engine kernel gives a row the same bits whatever rows are
 * computed with it, so each phase gets exactly what it would alone.
 */
static void
stacked_matmul(SimChecker *c, State *m, uint32_t q, uint32_t nph, uint32_t ni, const Slice *t)
{
    const MdlGraph *g = graph(c, q);
    const MdlNode *n = &g->nodes[ni];
    const size_t rows = n->tokens, k = n->k, d = n->features;
    const size_t off = (size_t) n->src_tok_offset * g->nodes[n->src[0]].features;
    g_autofree size_t *at = g_new(size_t, nph + 1);     /* phase j's rows in the stack */
    at[0] = 0;
    for (uint32_t j = 0; j < nph; j++) {
        const float *src = buffer(c, m, q + j, n->src[0]) + off;
        at[j + 1] = at[j] + (sim_rows_same(src, rows, k) ? 1 : rows);
    }
    float *x = hs_mem_alloc0(sizeof(float) * at[nph] * k);
    float *y = hs_mem_alloc0(sizeof(float) * at[nph] * d);
    for (uint32_t j = 0; j < nph; j++) {
        memcpy(x + at[j] * k, buffer(c, m, q + j, n->src[0]) + off,
               sizeof(float) * (at[j + 1] - at[j]) * k);
    }
    const EngActInt8 *act8 = int8_activations(t->prec)
                             ? calibration(c, n, t->prec == MDL_PREC_W8A8_SHADOW) : NULL;
    SimSlice all = t->slice;
    all.tok0 = 0;
    all.tok1 = (uint32_t) at[nph];
    sim_node_matmul(c->model, n, x, at[nph], act8, &all, t->prec, y);
    const size_t r0 = t->slice.row0, r1 = t->slice.row1;
    for (uint32_t j = 0; j < nph; j++) {
        float *out = buffer(c, m, q + j, ni);
        const gboolean one = at[j + 1] - at[j] == 1;
        for (size_t r = 0; r < rows; r++) {
            memcpy(out + r * d + r0, y + (at[j] + (one ? 0 : r)) * d + r0,
                   sizeof(float) * (r1 - r0));
        }
    }
    hs_mem_free(x, sizeof(float) * at[nph] * k);
    hs_mem_free(y, sizeof(float) * at[nph] * d);
}

/*
 * Phases [q, q + nph) of @s with the Slices @sls each, node by node
 * across the phases: a matmul's slices as one stacked pass
 * (stacked_matmul) when each covers all of a step's rows; every other
 * node phase after phase, so a step's attention reads the K/V its
 * predecessors filed.
 */
static void
block_phases(SimChecker *c, State *s, uint32_t q, uint32_t nph, const GArray *sls)
{
    for (uint32_t j = 0; j < nph; j++) {
        tokens_for(c, q + j);
    }
    const MdlGraph *g = graph(c, q);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const MdlNode *n = &g->nodes[i];
        if (!computed(c, n)) {
            continue;
        }
        gboolean stack = n->op == MDL_OP_MATMUL;
        for (guint k = 0; stack && k < sls->len; k++) {
            const Slice *t = &g_array_index(sls, Slice, k);
            stack = t->node != i || (t->slice.tok0 == 0 && t->slice.tok1 == n->tokens &&
                                     sim_node_rows_apart(c->model, n, t->prec));
        }
        if (!stack) {
            for (uint32_t j = 0; j < nph; j++) {
                node_slices(c, s, q + j, i, sls);
            }
            continue;
        }
        for (guint k = 0; k < sls->len; k++) {
            const Slice *t = &g_array_index(sls, Slice, k);
            if (t->node == i) {
                stacked_matmul(c, s, q, nph, i, t);
            }
        }
    }
}

/*
 * The matched reference's phases [q, q + nph) as one block
 * (block_phases).  Phases not planned yet are computed with @q's Slices
 * and remember them (guess): sim_values_add compares them with the tasks
 * when they come.
 */
static void
matched_ahead(SimValues *run, uint32_t q, uint32_t nph)
{
    const GArray *sls = run->phase_tasks[q];
    for (uint32_t j = 1; j < nph; j++) {
        if (run->phase_tasks[q + j] == NULL) {
            run->guess[q + j] = g_array_ref((GArray *) sls);
        }
    }
    block_phases(run->c, &run->matched, q, nph, sls);
}

/*
 * The reference's decode phases from @p whose buffers are not held, up
 * to AHEAD_STEPS and AHEAD_BYTES, as one block (block_phases: every
 * computed node whole at W4A16, as reference_phase computes them), when
 * the checked layers' tokens are known ahead.  Returns FALSE (nothing
 * done) when it would be one phase.
 */
static gboolean
ref_block(SimChecker *v, uint32_t p)
{
    const uint32_t np = v->graphs->len;
    if (v->full || p == 0 || p + 1 >= np || !graph(v, p)->decode) {
        return FALSE;
    }
    const MdlGraph *g = graph(v, p);
    g_autoptr(GArray) sls = g_array_new(FALSE, FALSE, sizeof(Slice));
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const MdlNode *n = &g->nodes[i];
        if (computed(v, n)) {
            Slice t = { i, MDL_PREC_W4A16, { 0, n->tokens, 0, n->features, 0 } };
            g_array_append_val(sls, t);
        }
    }
    const uint32_t most = block_most(v, p);
    uint32_t nph = 1;
    while (nph < most && v->ref.buf[p + nph] == NULL) {
        nph++;
    }
    if (nph < 2) {
        return FALSE;
    }
    block_phases(v, &v->ref, p, nph, sls);
    for (uint32_t j = 0; j < nph; j++) {
        reference_done(v, &v->ref, p + j);
    }
    return TRUE;
}

/*
 * Phase @q's tasks have come: if it was computed ahead with guessed
 * Slices (matched_ahead) that are not its own, it and every phase
 * computed after it (from its K/V) are computed again when reached.  A
 * stale K/V row is written again before any step reads it: a step reads
 * only earlier positions.
 */
static void
confirm_guess(SimValues *run, uint32_t q)
{
    if (run->guess[q] == NULL) {
        return;
    }
    gboolean same = same_slices(run->guess[q], run->phase_tasks[q]);
    g_clear_pointer(&run->guess[q], g_array_unref);
    if (same) {
        return;
    }
    run->guessed_wrong = TRUE;
    State *m = &run->matched;
    for (uint32_t r = q; r < m->next; r++) {
        state_drop_phase(run->c, m, r);
        if (run->guess[r]) {
            g_clear_pointer(&run->guess[r], g_array_unref);
        }
    }
    m->next = q;
}

/* Phase @p of the plan's own arithmetic: node by node in graph order,
 * each of the node's slices at its task's precision from the complete
 * inputs (phases before it computed first; decode steps in blocks,
 * matched_ahead).  Before the first phase with another precision than
 * W4A16 it is the reference itself (a W4A16 slice from the reference's
 * inputs is the reference's, engine/kernels.h): its KV caches start as a
 * copy of the reference's. */
static void
matched_phase(SimValues *run, uint32_t p)
{
    SimChecker *c = run->c;
    State *m = &run->matched;
    if (m->next < run->matched_from) {
        const EngConfig *cfg = eng_model_config(c->model);
        ref_before(c, run->matched_from);
        size_t bytes = sizeof(float) * c->max_pos * cfg->kv_heads * cfg->head_dim;
        for (size_t i = 0; i < (size_t) c->layers * c->batch; i++) {
            memcpy(m->k_cache[i], c->ref.k_cache[i], bytes);
            memcpy(m->v_cache[i], c->ref.v_cache[i], bytes);
        }
        m->next = run->matched_from;
    }
    while (m->next <= p) {
        uint32_t q = m->next;
        uint32_t nph = ref_needed(run, q) ? 1 : ahead_steps(run, q);
        if (nph > 1) {
            matched_ahead(run, q, nph);
            m->next = q + nph;
            continue;
        }
        m->next++;
        if (ref_needed(run, q)) {
            ref_phase(c, q);
        }
        const MdlGraph *g = graph(c, q);
        GArray *sls = run->phase_tasks[q];
        for (uint32_t i = 0; sls && i < g->n_nodes; i++) {
            if (computed(c, &g->nodes[i])) {
                node_slices(c, m, q, i, sls);
            }
        }
    }
}

/* Is phase @p compared with the run's matched reference? */
static gboolean
matched_for(const SimValues *v, uint32_t p)
{
    return v->has_matched && p >= v->matched_from;
}

void
sim_values_add(SimValues *v, const SimPlan *plan, uint32_t from)
{
    for (uint32_t i = from; i < sim_plan_len(plan); i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->kind != SIM_TASK_KERNEL) {
            continue;
        }
        uint32_t p = sim_values_phase_index(t);
        v->left[p]++;
        if (!v->has_matched && t->work.prec != MDL_PREC_W4A16) {
            /* the plan's own arithmetic, phase by phase as the run
             * reaches it, from here on */
            v->has_matched = TRUE;
            v->matched_from = p;
            state_init(v->c, &v->matched);
        }
        if (v->phase_tasks[p] == NULL) {
            v->phase_tasks[p] = g_array_new(FALSE, FALSE, sizeof(Slice));
        }
        Slice sl = { (uint32_t) t->node, t->work.prec, t->slice };
        g_array_append_val(v->phase_tasks[p], sl);
    }
    /* a phase is planned whole (sim/run.c): the ones that came are complete */
    for (uint32_t i = from; i < sim_plan_len(plan); i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->kind == SIM_TASK_KERNEL) {
            confirm_guess(v, sim_values_phase_index(t));
        }
    }
}

SimValues *
sim_values_new(SimChecker *checker, const SimPlan *plan)
{
    SimValues *v = g_new0(SimValues, 1);
    const guint np = checker->graphs->len;
    v->c = checker;
    state_init(checker, &v->run);
    v->staging = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, staged_free);
    v->from_ref = g_hash_table_new(g_direct_hash, g_direct_equal);
    v->left = g_new0(uint32_t, np);
    v->done = g_new0(gboolean, np);
    v->phase_tasks = g_new0(GArray *, np);
    v->guess = g_new0(GArray *, np);
    v->kv_same = g_new0(uint32_t,
                        (size_t) eng_model_config(checker->model)->layers * checker->batch);
    for (uint32_t i = plan->base; i < sim_plan_len(plan) && !v->has_matched; i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->kind == SIM_TASK_KERNEL && t->work.prec != MDL_PREC_W4A16) {
            /* a whole plan: the matched reference from the first phase */
            v->has_matched = TRUE;
            state_init(checker, &v->matched);
        }
    }
    sim_values_add(v, plan, plan->base);
    return v;
}

/*
 * Run @v ended: the model stops holding the weights its precisions made
 * (W8, FP4, Q4_0, Q8_0: another run may use another), which stay in the
 * engine's shared cache while its budget allows (engine/wcache.h), and
 * the FP reference's FP16 copy once every phase of it is computed.  The
 * next run that asks for one takes it from there or makes it again, the
 * same bits: so a compare holds its weights in one run's formats at a
 * time, not in every policy's at once (Llama-3-8B's first layer in all
 * six: 1.2 GB).
 */
static void
release_formats(SimChecker *c)
{
    for (int f = 0; f < ENG_QFMT_COUNT; f++) {
        if (f == ENG_QFMT_F16 && c->fp.next < c->graphs->len) {
            continue;
        }
        eng_model_release_format(c->model, (EngQFormat) f);
    }
}

void
sim_values_free(SimValues *v)
{
    if (v == NULL) {
        return;
    }
    release_formats(v->c);
    state_clear(v->c, &v->run);
    state_clear(v->c, &v->matched);
    for (guint p = 0; v->phase_tasks && p < v->c->graphs->len; p++) {
        if (v->phase_tasks[p]) {
            g_array_unref(v->phase_tasks[p]);
        }
        if (v->guess[p]) {
            g_array_unref(v->guess[p]);
        }
    }
    g_free(v->phase_tasks);
    g_free(v->guess);
    g_free(v->kv_same);
    g_free(v->left);
    g_free(v->done);
    g_hash_table_destroy(v->staging);
    g_hash_table_destroy(v->from_ref);
    g_free(v);
}

/* max |a - b| into *err (NaN: worst), max |b| into *ref, over @n values */
static void
max_diff(const float *a, const float *b, size_t n, double *err, double *ref)
{
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double) a[i] - b[i]);
        if (!(e <= *err)) {
            *err = isnan(e) ? INFINITY : e;
        }
        *ref = MAX(*ref, fabs((double) b[i]));
    }
}

/* Phase @p of the run has ended: compare its output with its reference
 * (the matched one, or the reference) and the FP reference, then free
 * the run's and the matched reference's buffers of it (and the
 * reference's, unless they are all kept). */
static void
finish_phase(SimValues *v, uint32_t p)
{
    SimChecker *c = v->c;
    if (v->done[p]) {
        return;
    }
    v->done[p] = TRUE;
    const MdlGraph *g = graph(c, p);
    uint32_t last = last_computed(c, g);
    size_t n = node_floats(g, last);
    const float *mine = buffer(c, &v->run, p, last);
    const float *against;
    if (matched_for(v, p)) {
        matched_phase(v, p);
        against = buffer(c, &v->matched, p, last);
    } else {
        ref_phase(c, p);
        against = c->ref.out[p];
    }
    max_diff(mine, against, n, &v->err, &v->ref_max);
    double unused = 0;
    const float *fp = fp_out(c, p);
    if (fp) {
        max_diff(mine, fp, n, &v->prec_err, &unused);
    }
    state_drop_phase(c, &v->run, p);
    if (matched_for(v, p)) {
        state_drop_phase(c, &v->matched, p);
    }
    if (v->phase_tasks[p]) {
        g_clear_pointer(&v->phase_tasks[p], g_array_unref);
    }
    graph_done(c, p);
    if (!c->keep_ref && p > 0) {
        state_drop_phase(c, &c->ref, p);
    }
}

static void
values_start(void *opaque, uint32_t id, const SimTask *t)
{
    SimValues *v = opaque;
    if (t->kind != SIM_TASK_KERNEL) {
        return;
    }
    uint32_t p = sim_values_phase_index(t);
    const MdlGraph *g = graph(v->c, p);
    const MdlNode *n = &g->nodes[t->node];
    if (!computed(v->c, n)) {
        return;
    }
    if (ref_needed(v, p)) {
        ref_phase(v->c, p);
    }
    gboolean matched = matched_for(v, p);
    if (matched) {
        matched_phase(v, p);
    }
    /* with a matched reference, the same slice at the same precision was
     * computed there; without one, the reference computed W4A16 */
    State *same = matched ? &v->matched : &v->c->ref;
    if (matched ? same_inputs(v->c, &v->run, same, v->kv_same, p, (uint32_t) t->node,
                              &t->slice)
                : same_as_reference(v->c, &v->run, v->kv_same, p, (uint32_t) t->node,
                                    &t->slice, t->work.prec)) {
        /* its output is @same's: published from there at the end */
        g_hash_table_insert(v->from_ref, GUINT_TO_POINTER(id), same);
        v->reused++;
        v->precision_changed |= n->op == MDL_OP_MATMUL && t->work.prec != MDL_PREC_W4A16;
        return;
    }
    Staged *out = g_new(Staged, 1);
    out->bytes = sizeof(float) * n->tokens * n->features;
    out->p = hs_mem_alloc0(out->bytes);
    compute(v->c, &v->run, p, (uint32_t) t->node, &t->slice, t->work.prec,
            &v->precision_changed, out->p);
    g_hash_table_insert(v->staging, GUINT_TO_POINTER(id), out);
}

/*
 * The run's attention slice @sl of phase @p has filed its K/V rows: each
 * cache it wrote holds its reference's bits (the matched reference, or
 * the reference, whichever the phase is compared with; both hold the
 * same before the matched one's first phase, where it copied them) at
 * that position or not.  v->kv_same[cache] counts the leading positions
 * known equal: one more when the next is, cut back when one is not (a
 * later stale write).  It may count fewer than are equal, never more:
 * the reference's rows of a position are final once it computed the
 * phase, which happens when the run starts the phase, before any of its
 * attention slices ends.
 */
static void
track_kv(SimValues *v, uint32_t p, uint32_t ni, const SimSlice *sl)
{
    SimChecker *c = v->c;
    const MdlGraph *g = graph(c, p);
    const MdlNode *n = &g->nodes[ni];
    State *ref = matched_for(v, p) ? &v->matched : &c->ref;
    const gboolean final = ref == &v->matched ? v->matched.next > p : c->ref.next > p;
    const size_t kvd = (size_t) n->kv_heads * n->head_dim;
    for (size_t t = sl->tok0; t < sl->tok1; t++) {
        for (uint32_t b = 0; b < c->batch; b++) {
            if (g->decode && b != t) {
                continue;
            }
            size_t pos = g->decode ? n->pos0 : n->pos0 + t;
            size_t i = (size_t) n->layer * c->batch + b;
            gboolean eq = final &&
                          same_rows(v->run.k_cache[i], ref->k_cache[i], kvd, pos, pos + 1) &&
                          same_rows(v->run.v_cache[i], ref->v_cache[i], kvd, pos, pos + 1);
            if (eq && v->kv_same[i] == pos) {
                v->kv_same[i] = (uint32_t) pos + 1;
            } else if (!eq && pos < v->kv_same[i]) {
                v->kv_same[i] = (uint32_t) pos;
            }
        }
    }
}

static void
values_end(void *opaque, uint32_t id, const SimTask *t)
{
    SimValues *v = opaque;
    if (t->kind != SIM_TASK_KERNEL) {
        return;
    }
    uint32_t p = sim_values_phase_index(t);
    State *same = g_hash_table_lookup(v->from_ref, GUINT_TO_POINTER(id));
    Staged *out = g_hash_table_lookup(v->staging, GUINT_TO_POINTER(id));
    if (same) {
        if (same == &v->c->ref) {
            ref_phase(v->c, p);
        }
        publish(v->c, &v->run, p, (uint32_t) t->node, &t->slice,
                buffer(v->c, same, p, (uint32_t) t->node));
        g_hash_table_remove(v->from_ref, GUINT_TO_POINTER(id));
    } else if (out) {
        publish(v->c, &v->run, p, (uint32_t) t->node, &t->slice, out->p);
        g_hash_table_remove(v->staging, GUINT_TO_POINTER(id));
    }
    if ((same || out) && graph(v->c, p)->nodes[t->node].op == MDL_OP_ATTENTION) {
        track_kv(v, p, (uint32_t) t->node, &t->slice);
    }
    if (--v->left[p] == 0) {
        finish_phase(v, p);
    }
}

const SimValuesOps sim_values_ops = { values_start, values_end };

void
sim_values_check(SimValues *run, SimCheck *out)
{
    SimChecker *v = run->c;
    /* phases whose tasks did not all end (or that had none) */
    for (guint p = 0; p < v->graphs->len; p++) {
        finish_phase(run, p);
    }
    *out = (SimCheck) { .checked = TRUE, .layers = v->layers, .full = v->full,
                        .precision_changed = run->precision_changed, .reused = run->reused,
                        .max_abs_err = run->err, .max_abs_ref = run->ref_max,
                        .precision_err = run->prec_err };
    /* BLAS slices may differ from the whole product in the last bits */
    out->match = out->max_abs_err <= 1e-4 * MAX(1.0, out->max_abs_ref);
    if (v->ref_bad_at[0]) {
        out->ref_nonfinite = TRUE;
        g_strlcpy(out->ref_nonfinite_at, v->ref_bad_at, sizeof(out->ref_nonfinite_at));
    }
}
