/*
 * mllm-npu.c - mllm-NPU (arXiv:2407.05858, §3): NPU prefill with INT8 linear
 * layers, chunk-shared graphs, shadow outliers and out-of-order subgraphs;
 * decode on the CPU.
 *
 * Prefill, as the paper describes it:
 * - Linear layers run on the NPU as W8A8, per-tensor INT8 activations
 *   (§2.3: per-group matmuls cost the NPU 8.1-10.7x per-tensor ones), at
 *   the NPU's INT8 rate.  Float operators (norms, RoPE, attention,
 *   activations, residual adds) run on the CPU; so does the prefill LM
 *   head, which reads one token.
 * - Chunk-shared graphs (§3.2): the prompt is cut into chunks of
 *   --chunk tokens (default 256); the static operators of every chunk use
 *   one graph prepared offline for that shape (the last chunk is padded);
 *   attention depends on the chunk index and runs on the CPU.
 * - Shadow outliers (§3.3): the activation channels beyond the per-tensor
 *   scale (~0.2 % of channels, 5-15 per layer) are multiplied in float on
 *   the CPU and merged into the NPU's INT8 result, on FFN-down (the one
 *   linear mllm's code shadows).  Only the layers that matter most keep
 *   it — those near the input and the output, 15 % of the layers (the
 *   85 % least important are pruned, §3.3) — as MDL_PREC_W8A8_SHADOW;
 *   every other linear runs plain MDL_PREC_W8A8.  The shadow linear's
 *   CPU time is a SIM_TASK_SHADOW task: it copies its inputs, scans them
 *   for outliers on one thread, multiplies the outliers by their weight
 *   rows kept in CPU memory and adds the result into the layer's output:
 *   as in mllm's code, the NPU graph ends with the FFN's residual add and
 *   the CPU corrects that sum once the graph has returned, so the task
 *   follows the add and the add's readers wait for it.  Its values are
 *   already in the kernel's (the engine computes W8A8_SHADOW with the
 *   outliers in float).
 * - Out-of-order subgraphs (§3.4): a subgraph is a run of one chunk's
 *   operators on one processor (mllm cuts its graph where the device
 *   changes: CPU norm | NPU QKV | CPU RoPE and attention | NPU o-proj to
 *   the FFN's residual add | ...); it returns whole, so what reads it
 *   waits for all of it.  Any subgraph whose inputs are ready may run;
 *   each processor runs one at a time and picks, among its ready ones,
 *   the one with the largest contribution: on the CPU the total NPU time
 *   it unlocks, on the NPU minus the CPU time it unlocks (the paper's
 *   greedy rule), ties in program order.  The policy runs that greedy
 *   choice on its own cost estimates (the profiler) and fixes the
 *   resulting order on each processor's queue.  In order (the ablation),
 *   each processor runs its subgraphs chunk by chunk in program order.
 *
 * - mllm-npu/pairs runs the schedule of mllm's public executor instead
 *   (UbiquitousLearning/mllm, src/backends/qnn/QNNExecutor.cpp,
 *   QNNPipelineExecutor::runExp, from commit 27abc8a7 of November 2024
 *   on): the chunks go in pairs, each on one of two OpenMP threads, in
 *   lockstep: at step i the first runs its subgraph i and the second its
 *   subgraph i - 5, and both wait at a barrier before step i + 1; a last
 *   odd chunk runs alone, in order.  Subgraphs alternate CPU and NPU, so
 *   the odd gap puts the two threads on different processors.  The
 *   paper's numbers came before that code (its preprint is of July 2024;
 *   the executor of August 2024 ran a thread per chunk), so the greedy
 *   rule above stays the policy's.
 *
 * Variants reproduce the ablation of mllm-NPU §5.5 (each a policy of its
 * own name):
 *   mllm-npu/in-order   chunks + shadow, in-order subgraphs
 *   mllm-npu/per-group  chunks, accuracy kept without shadow outliers by
 *                       per-group INT8 weights (Q8_0: FP16 activations on
 *                       the NPU's FP16 path), in order
 *   mllm-npu/naive      no chunks: the prompt's exact-shape graph prepared
 *                       at request time, per-group INT8, in order
 *   mllm-npu/no-shadow  W8A8 everywhere, outliers clipped (accuracy cost)
 *   mllm-npu/no-prune   shadow outliers in every layer
 *   mllm-npu/pairs      the public executor's lockstep pairs (above)
 */
#include "sim/policies/common.h"

#include <math.h>
#include <string.h>

typedef enum {
    ACT_SHADOW_PRUNED,           /* W8A8 + shadow in the important layers */
    ACT_SHADOW_ALL,              /* W8A8 + shadow in every layer */
    ACT_W8A8,                    /* W8A8, outliers clipped */
    ACT_PER_GROUP,               /* per-group INT8 weights, FP16 activations */
} MllmAct;

typedef enum {
    SCHED_IN_ORDER,              /* each processor chunk by chunk, program order */
    SCHED_GREEDY,                /* §3.4's out-of-order greedy choice */
    SCHED_PAIRS,                 /* mllm's executor: chunk pairs in lockstep */
} MllmSched;

typedef struct MllmVariant {
    gboolean chunk_share;        /* FALSE: one exact-shape graph, prepared online */
    MllmAct act;
    MllmSched sched;
} MllmVariant;

/* QNNPipelineExecutor::runExp: the second chunk of a pair runs this many
 * subgraphs behind the first (commit 27abc8a7, "make pipeline gap 1
 * layer") */
#define MLLM_PAIR_GAP 5

/* mllm-NPU §3.3: keep shadow execution in the 15 % most important layers */
#define MLLM_SHADOW_KEEP 0.15
/* §3.3: outliers sit in 0.1-0.3 % of channels, 5-15 channels per layer */
#define MLLM_OUTLIER_SHARE 0.002
#define MLLM_OUTLIER_MIN 5

/* One operator of one chunk (or the shadow task of a linear one). */
typedef struct Unit {
    uint32_t node;
    SimSlice slice;
    uint32_t proc;
    MdlPrecision prec;
    gboolean shadow;             /* the shadow outlier task of linear @node */
    uint32_t kernel;             /* shadow: the unit of @onto it follows */
    uint32_t onto;               /* shadow: the node whose output it corrects */
    uint32_t chunk;              /* program order: chunk, then unit index */
    uint64_t cost_ps;
    GArray *deps;                /* of uint32_t unit indices */
    GArray *users;
} Unit;

typedef struct Plan {
    const MllmVariant *v;
    GArray *units;               /* of Unit */
    uint32_t *first, *count;     /* per node: its kernel units */
    int32_t *shadow_of;          /* per kernel unit: its shadow unit, -1 */
} Plan;

/* Layers near the input and the output matter most (§3.3's offline
 * profile): the first and last of the 15 % kept, at least one each. */
static gboolean
mllm_layer_keeps_shadow(uint32_t layer, uint32_t layers)
{
    uint32_t keep = MAX(2, (uint32_t) ceil(MLLM_SHADOW_KEEP * layers));
    uint32_t head = (keep + 1) / 2, tail = keep / 2;
    return layer < head || layer + tail >= layers;
}

/* mllm's QNN graphs (UbiquitousLearning/mllm, modeling_qwen_npu.hpp,
 * QwenDecoderNPUPart2): after the attention, one NPU graph runs the
 * output projection, the residual add, the FFN's RMSNorm, the FFN with
 * its SiLU x up and the second residual add; the CPU keeps the input
 * RMSNorm, RoPE and the attention (QwenQKVmm). */
static gboolean
in_npu_part2(const MdlNode *n)
{
    if (n->op != MDL_OP_ADD && n->op != MDL_OP_ACT && n->op != MDL_OP_RMSNORM) {
        return FALSE;
    }
    const char *dot = strchr(n->name, '.');
    const char *what = dot ? dot + 1 : n->name;
    return n->layer >= 0 && strcmp(what, "attn_norm") != 0;
}

static uint32_t
n_layers(SimBuilder *b)
{
    int32_t top = -1;
    for (uint32_t i = 0; i < sim_builder_n_nodes(b); i++) {
        top = MAX(top, sim_builder_node(b, i)->layer);
    }
    return (uint32_t) (top + 1);
}

/* Shadow execution sits on FFN-down alone: the one linear whose input
 * (SiLU(gate) x up) carries the outliers.  mllm's NPU models give only it
 * a shadow linear (UbiquitousLearning/mllm, src/models/qwen/
 * modeling_qwen_npu.hpp and phonelm/modeling_phonelm_npu.hpp,
 * QwenNPU_CPUDecoderWithShadow: ShadowLinear over down_proj); the other
 * linears of every layer run plain per-tensor W8A8. */
static MdlPrecision
linear_prec(const MllmVariant *v, const MdlNode *n, uint32_t layers)
{
    switch (v->act) {
    case ACT_PER_GROUP:
        return MDL_PREC_Q8_0;
    case ACT_W8A8:
        return MDL_PREC_W8A8;
    case ACT_SHADOW_ALL:
        return n->weight == MDL_W_DOWN ? MDL_PREC_W8A8_SHADOW : MDL_PREC_W8A8;
    default:
        return n->weight == MDL_W_DOWN && n->layer >= 0 &&
               mllm_layer_keeps_shadow((uint32_t) n->layer, layers)
               ? MDL_PREC_W8A8_SHADOW : MDL_PREC_W8A8;
    }
}

/*
 * The shadow linear of @slice of linear node @n ([m, k] x [k, feat]) on
 * the CPU, as mllm's CPULinearINT8Shadow::execute does it
 * (UbiquitousLearning/mllm, src/backends/cpu/op/CPULinearINT8Shadow.cpp):
 * - it copies its three inputs and the output: the FP32 input (m x k),
 *   the NPU's INT8 result (m x feat) and its dequantised sum (FP32,
 *   m x feat, twice): 4 m k + 9 m feat bytes read and as many written;
 * - it walks every input element on one thread (divide by the scale,
 *   round, compare with 8 x the INT8 range) and every INT8 result
 *   (compare with the clip): m (k + feat) scalar elements;
 * - each outlier adds its weight row times its excess into the output:
 *   2 m ch feat flops over the outlier channels (§3.3: 0.1-0.3 % of
 *   channels, ~5-15 a layer).  The INT8 weight rows stay in CPU memory.
 */
static void
shadow_work(const MdlNode *n, const SimSlice *s, SimWork *w)
{
    uint64_t m = s->tok1 - s->tok0, feat = s->row1 - s->row0, k = n->k;
    uint64_t ch = MAX(MLLM_OUTLIER_MIN, (uint64_t) ceil(MLLM_OUTLIER_SHARE * k));
    *w = (SimWork) {
        .op = MDL_OP_MATMUL, .prec = MDL_PREC_FP16, .m = m, .k = ch, .n = feat,
        .flops = 2 * m * ch * feat,
        .read_bytes = 4 * m * k + 9 * m * feat + ch * feat,
        .write_bytes = 4 * m * k + 9 * m * feat,
        .serial_elems = m * (k + feat),
    };
}

static uint32_t
add_unit(Plan *p, const Unit *u)
{
    g_array_append_val(p->units, *u);
    Unit *x = &g_array_index(p->units, Unit, p->units->len - 1);
    x->deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    x->users = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    return p->units->len - 1;
}

static void
add_dep(Plan *p, uint32_t user, uint32_t dep)
{
    Unit *u = &g_array_index(p->units, Unit, user);
    for (guint i = 0; i < u->deps->len; i++) {
        if (g_array_index(u->deps, uint32_t, i) == dep) {
            return;
        }
    }
    g_array_append_val(u->deps, dep);
    g_array_append_val(g_array_index(p->units, Unit, dep).users, user);
    u->chunk = MAX(u->chunk, g_array_index(p->units, Unit, dep).chunk);
}

/* The data flow between units, as the builder will derive it: what a
 * unit reads of each source (attention: K/V of every earlier token). */
static void
link_unit(SimBuilder *b, Plan *p, uint32_t id)
{
    Unit u = g_array_index(p->units, Unit, id);
    const MdlNode *n = sim_builder_node(b, u.node);
    for (uint32_t i = 0; i < n->n_src; i++) {
        uint32_t s = n->src[i];
        uint32_t r0 = u.slice.tok0 + n->src_tok_offset, r1 = u.slice.tok1 + n->src_tok_offset;
        if (n->op == MDL_OP_ATTENTION && i >= 1) {
            r0 = 0;
        }
        for (uint32_t k = 0; k < p->count[s]; k++) {
            uint32_t d = p->first[s] + k;
            const Unit *du = &g_array_index(p->units, Unit, d);
            if (du->slice.tok0 < r1 && r0 < du->slice.tok1) {
                add_dep(p, id, d);
                if (p->shadow_of[d] >= 0) {
                    add_dep(p, id, (uint32_t) p->shadow_of[d]);
                }
            }
        }
    }
}

/* The shadow units of linear node @lin, one per kernel unit (chunk), each
 * correcting the output of node @onto's unit of that chunk (@onto ==
 * @lin: the linear's own output), after it. */
static void
add_shadows(SimBuilder *b, Plan *p, GArray *shadow, uint32_t lin, uint32_t onto)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    const MdlNode *n = sim_builder_node(b, lin);
    for (uint32_t k = 0; k < p->count[lin]; k++) {
        uint32_t kid = p->first[lin] + k, oid = p->first[onto] + k;
        Unit s = g_array_index(p->units, Unit, kid);
        SimWork w;
        s.proc = info->proc_cpu;
        s.shadow = TRUE;
        s.onto = onto;
        s.slice.pad_tokens = 0;
        shadow_work(n, &s.slice, &w);
        s.cost_ps = sim_builder_work_cost_ps(b, s.proc, &w);
        uint32_t sid = add_unit(p, &s);
        int32_t none = -1;
        g_array_append_val(shadow, none);
        p->shadow_of = (int32_t *) shadow->data;
        g_array_index(p->units, Unit, sid).kernel = oid;
        add_dep(p, sid, oid);
        p->shadow_of[oid] = (int32_t) sid;
    }
}

/* The node whose output a shadow linear on @lin corrects: mllm's NPU
 * graph ends with the FFN's residual add, and the CPU's shadow linear
 * adds its outlier product into that sum once the graph has returned
 * (QwenDecoderNPUPart2WithShadow returns the add's output beside the
 * shadow's two inputs; QwenNPU_CPUDecoderWithShadow then calls
 * shadow_linear on them).  The linear itself when no NPU add reads it. */
static uint32_t
shadow_onto(SimBuilder *b, uint32_t lin)
{
    for (uint32_t j = lin + 1; j < sim_builder_n_nodes(b); j++) {
        const MdlNode *n = sim_builder_node(b, j);
        for (uint32_t i = 0; i < n->n_src; i++) {
            if (n->src[i] == lin) {
                return n->op == MDL_OP_ADD && in_npu_part2(n) ? j : lin;
            }
        }
    }
    return lin;
}

static void
build_units(SimBuilder *b, Plan *p, uint32_t chunk, uint32_t layers)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    uint32_t n_nodes = sim_builder_n_nodes(b);
    p->first = g_new0(uint32_t, n_nodes);
    p->count = g_new0(uint32_t, n_nodes);
    /* per node: the shadow linear whose correction lands on its output */
    g_autofree int32_t *shadow_from = g_new(int32_t, n_nodes);
    for (uint32_t i = 0; i < n_nodes; i++) {
        shadow_from[i] = -1;
    }
    GArray *shadow = g_array_new(FALSE, FALSE, sizeof(int32_t));
    for (uint32_t i = 0; i < n_nodes; i++) {
        const MdlNode *n = sim_builder_node(b, i);
        gboolean linear = n->op == MDL_OP_MATMUL && n->weight != MDL_W_LM_HEAD;
        gboolean npu = linear || in_npu_part2(n);
        MdlPrecision prec = linear ? linear_prec(p->v, n, layers) : MDL_PREC_W4A16;
        if (prec == MDL_PREC_W8A8_SHADOW) {
            shadow_from[shadow_onto(b, i)] = (int32_t) i;
        }
        p->first[i] = p->units->len;
        for (uint32_t t0 = 0; t0 < n->tokens; t0 += chunk) {
            uint32_t t1 = MIN(n->tokens, t0 + chunk);
            Unit u = {
                .node = i, .slice = sim_builder_full(b, i),
                .proc = npu ? info->proc_npu : info->proc_cpu, .prec = prec,
                .chunk = t0 / chunk,
            };
            u.slice.tok0 = t0;
            u.slice.tok1 = t1;
            u.slice.pad_tokens = linear && t1 - t0 < chunk ? chunk : 0;
            u.cost_ps = sim_builder_cost_ps(b, i, u.proc, u.slice, prec);
            uint32_t id = add_unit(p, &u);
            int32_t none = -1;
            g_array_append_val(shadow, none);
            p->shadow_of = (int32_t *) shadow->data;
            link_unit(b, p, id);
            p->count[i]++;
        }
        /* the CPU runs the shadow linear once the NPU graph has returned
         * (QwenNPU_CPUDecoderWithShadow: toCPU, then shadow_linear), so
         * it follows the node it corrects, and that node's readers wait
         * on it */
        if (shadow_from[i] >= 0) {
            add_shadows(b, p, shadow, (uint32_t) shadow_from[i], i);
        }
    }
    p->shadow_of = (int32_t *) g_array_free(shadow, FALSE);
}

static void
plan_clear(Plan *p)
{
    for (guint i = 0; i < p->units->len; i++) {
        Unit *u = &g_array_index(p->units, Unit, i);
        g_array_free(u->deps, TRUE);
        g_array_free(u->users, TRUE);
    }
    g_array_free(p->units, TRUE);
    g_free(p->first);
    g_free(p->count);
    g_free(p->shadow_of);
}

/* Program order: chunk by chunk, units in graph order within a chunk. */
static gint
cmp_program(gconstpointer a, gconstpointer b, gpointer units)
{
    const Unit *ua = &g_array_index((GArray *) units, Unit, *(const uint32_t *) a);
    const Unit *ub = &g_array_index((GArray *) units, Unit, *(const uint32_t *) b);
    if (ua->chunk != ub->chunk) {
        return ua->chunk < ub->chunk ? -1 : 1;
    }
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return x < y ? -1 : (x > y);
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : (x > y);
}

/*
 * The schedule, simulated on the policy's own cost estimates: returns the
 * units of @p, which are in program order (subgraphs_plan), in the order
 * they start (a topological order).  Two processors (the CPU and the NPU)
 * each run one unit at a time; a hand-off between them costs one sync.
 * Out of order, a free processor takes the ready unit with the largest
 * contribution (ties: the earlier in program order); in order, its next
 * unit in program order once that is ready.
 */
static uint32_t *
schedule(SimBuilder *b, Plan *p)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    uint32_t n = p->units->len;
    Unit *u = (Unit *) p->units->data;
    uint64_t sync_ps = sim_builder_sync_cost_ps(b, info->proc_npu, info->proc_cpu);
    g_autofree uint32_t *remaining = g_new(uint32_t, n);
    g_autofree uint64_t *ready_ps = g_new0(uint64_t, n);
    g_autofree uint64_t *end_ps = g_new0(uint64_t, n);
    g_autofree gboolean *done = g_new0(gboolean, n);
    uint32_t *order = g_new(uint32_t, n);
    for (uint32_t i = 0; i < n; i++) {
        remaining[i] = u[i].deps->len;
        g_assert(i == 0 || u[i].chunk >= u[i - 1].chunk);   /* program order */
    }
    const uint32_t procs[2] = { info->proc_npu, info->proc_cpu };
    /* released units (every dependency placed) of each processor */
    g_autoptr(GArray) rel_npu = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_autoptr(GArray) rel_cpu = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GArray *rel[2] = { rel_npu, rel_cpu };
    for (uint32_t i = 0; i < n; i++) {
        if (remaining[i] == 0) {
            g_array_append_val(rel[u[i].proc == procs[0] ? 0 : 1], i);
        }
    }
    uint64_t free_ps[2] = { 0, 0 };
    uint32_t next_prog[2] = { 0, 0 };    /* in order: next unit of each */
    for (uint32_t placed = 0; placed < n; placed++) {
        int best_p = -1;
        uint32_t best = 0;
        uint64_t best_t = UINT64_MAX;
        for (int q = 0; q < 2; q++) {
            uint64_t t = UINT64_MAX;
            uint32_t pick = UINT32_MAX;
            if (p->v->sched == SCHED_IN_ORDER) {
                while (next_prog[q] < n &&
                       (u[next_prog[q]].proc != procs[q] || done[next_prog[q]])) {
                    next_prog[q]++;
                }
                if (next_prog[q] < n && remaining[next_prog[q]] == 0) {
                    pick = next_prog[q];
                    t = MAX(free_ps[q], ready_ps[pick]);
                }
            } else {
                /* when the first unit is ready, then the best unit ready then */
                for (guint r = 0; r < rel[q]->len; r++) {
                    uint32_t i = g_array_index(rel[q], uint32_t, r);
                    t = MIN(t, MAX(free_ps[q], ready_ps[i]));
                }
                double best_c = -INFINITY;
                for (guint r = 0; t != UINT64_MAX && r < rel[q]->len; r++) {
                    uint32_t i = g_array_index(rel[q], uint32_t, r);
                    if (ready_ps[i] > t) {
                        continue;
                    }
                    double c = 0;
                    for (guint k = 0; k < u[i].users->len; k++) {
                        const Unit *w = &u[g_array_index(u[i].users, uint32_t, k)];
                        if (remaining[w - u] == 1 && w->proc != u[i].proc) {
                            c += (double) w->cost_ps;
                        }
                    }
                    c = u[i].proc == info->proc_npu ? -c : c;
                    if (c > best_c || (c == best_c && i < pick)) {
                        best_c = c;
                        pick = i;
                    }
                }
            }
            if (pick != UINT32_MAX && t < best_t) {
                best_t = t;
                best_p = q;
                best = pick;
            }
        }
        g_assert(best_p >= 0);      /* the units form a DAG */
        done[best] = TRUE;
        for (guint r = 0; r < rel[best_p]->len; r++) {
            if (g_array_index(rel[best_p], uint32_t, r) == best) {
                g_array_remove_index_fast(rel[best_p], r);
                break;
            }
        }
        end_ps[best] = best_t + u[best].cost_ps;
        free_ps[best_p] = end_ps[best];
        order[placed] = best;
        for (guint k = 0; k < u[best].users->len; k++) {
            uint32_t w = g_array_index(u[best].users, uint32_t, k);
            uint64_t at = end_ps[best] + (u[w].proc != u[best].proc ? sync_ps : 0);
            ready_ps[w] = MAX(ready_ps[w], at);
            if (--remaining[w] == 0) {
                g_array_append_val(rel[u[w].proc == procs[0] ? 0 : 1], w);
            }
        }
    }
    return order;
}

/*
 * The subgraphs of a prefill.  mllm cuts its graph where the device
 * changes, so a subgraph is a run of one chunk's units, in program order,
 * on one processor; mllm-NPU §3.4 schedules these whole, and a graph's
 * outputs come back when all of it has run.
 */
typedef struct Subgraphs {
    uint32_t n;
    uint32_t *prog;              /* the units in program order */
    uint32_t *start;             /* per subgraph: its first place in prog; [n] = units */
    uint32_t *of;                /* per unit: its subgraph */
    uint32_t *local;             /* per subgraph: its index in its chunk */
} Subgraphs;

static void
subgraphs_find(const Plan *p, Subgraphs *s)
{
    uint32_t n = p->units->len;
    const Unit *u = (const Unit *) p->units->data;
    s->prog = g_new(uint32_t, n);
    for (uint32_t i = 0; i < n; i++) {
        s->prog[i] = i;
    }
    g_qsort_with_data(s->prog, n, sizeof(uint32_t), cmp_program, p->units);
    s->start = g_new(uint32_t, n + 1);
    s->of = g_new(uint32_t, n);
    s->local = g_new(uint32_t, n);
    s->n = 0;
    for (uint32_t k = 0; k < n; k++) {
        const Unit *x = &u[s->prog[k]], *prev = k > 0 ? &u[s->prog[k - 1]] : NULL;
        if (prev == NULL || x->chunk != prev->chunk || x->proc != prev->proc) {
            s->local[s->n] = prev == NULL || x->chunk != prev->chunk ? 0
                             : s->local[s->n - 1] + 1;
            s->start[s->n++] = k;
        }
        s->of[s->prog[k]] = s->n - 1;
    }
    s->start[s->n] = n;
}

static void
subgraphs_clear(Subgraphs *s)
{
    g_free(s->prog);
    g_free(s->start);
    g_free(s->of);
    g_free(s->local);
}

/* The plan whose units are @s's subgraphs (each its units' cost, the
 * union of their dependencies on other subgraphs), into @coarse. */
static void
subgraphs_plan(const Plan *p, const Subgraphs *s, Plan *coarse)
{
    const Unit *u = (const Unit *) p->units->data;
    *coarse = (Plan) { p->v, g_array_new(FALSE, FALSE, sizeof(Unit)), NULL, NULL, NULL };
    for (uint32_t g = 0; g < s->n; g++) {
        const Unit *first = &u[s->prog[s->start[g]]];
        Unit c = { .node = first->node, .proc = first->proc, .chunk = first->chunk };
        for (uint32_t k = s->start[g]; k < s->start[g + 1]; k++) {
            c.cost_ps += u[s->prog[k]].cost_ps;
        }
        add_unit(coarse, &c);
    }
    for (uint32_t i = 0; i < p->units->len; i++) {
        for (guint d = 0; d < u[i].deps->len; d++) {
            uint32_t dep = g_array_index(u[i].deps, uint32_t, d);
            if (s->of[dep] != s->of[i]) {
                add_dep(coarse, s->of[i], s->of[dep]);
            }
        }
    }
}

/* SCHED_PAIRS, mllm's executor: each unit's step (a chunk pair after the
 * one before; in a pair the second chunk MLLM_PAIR_GAP subgraphs behind;
 * a last odd chunk alone). */
static uint32_t *
pairs_steps(const Plan *p, const Subgraphs *s, uint32_t n_chunks)
{
    const Unit *u = (const Unit *) p->units->data;
    g_autofree uint32_t *n_sub = g_new0(uint32_t, n_chunks);
    for (uint32_t g = 0; g < s->n; g++) {
        uint32_t c = u[s->prog[s->start[g]]].chunk;
        n_sub[c] = MAX(n_sub[c], s->local[g] + 1);
    }
    g_autofree uint32_t *first_step = g_new(uint32_t, n_chunks);
    uint32_t base = 0;
    for (uint32_t c = 0; c < n_chunks; c += 2) {
        first_step[c] = base;
        if (c + 1 < n_chunks) {
            first_step[c + 1] = base + MLLM_PAIR_GAP;
            base += MAX(n_sub[c], n_sub[c + 1] + MLLM_PAIR_GAP);
        } else {
            base += n_sub[c];
        }
    }
    uint32_t *step = g_new(uint32_t, p->units->len);
    for (uint32_t i = 0; i < p->units->len; i++) {
        step[i] = first_step[u[i].chunk] + s->local[s->of[i]];
    }
    return step;
}

/* The units in the order they are queued: subgraphs in the schedule's
 * order (SCHED_PAIRS: by step, the pair's first chunk first), each
 * subgraph's units in program order. */
static uint32_t *
unit_order(SimBuilder *b, const Plan *p, const Subgraphs *s, const uint32_t *step,
           Plan *coarse)
{
    const Unit *u = (const Unit *) p->units->data;
    g_autofree uint32_t *sub_order = NULL;
    if (step == NULL) {
        sub_order = schedule(b, coarse);
    } else {
        g_autofree uint64_t *key = g_new(uint64_t, s->n);
        for (uint32_t g = 0; g < s->n; g++) {
            uint32_t i = s->prog[s->start[g]];
            key[g] = ((uint64_t) step[i] << 33) | ((uint64_t) (u[i].chunk & 1) << 32) | g;
        }
        qsort(key, s->n, sizeof(uint64_t), cmp_u64);
        sub_order = g_new(uint32_t, s->n);
        for (uint32_t g = 0; g < s->n; g++) {
            sub_order[g] = (uint32_t) (key[g] & 0xffffffffu);
        }
    }
    uint32_t *order = g_new(uint32_t, p->units->len), n = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        uint32_t g = sub_order[k];
        for (uint32_t j = s->start[g]; j < s->start[g + 1]; j++) {
            order[n++] = s->prog[j];
        }
    }
    return order;
}

static gboolean
mllm_prefill(SimBuilder *b, const MllmVariant *v, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    uint32_t chunk = v->chunk_share ? info->opts->chunk_tokens : info->tokens;
    if (v->chunk_share) {
        sim_builder_npu_offline(b, chunk);      /* one graph for every chunk */
    } else {
        sim_builder_prepare(b, chunk);          /* the prompt's own, at request */
    }
    Plan p = { v, g_array_new(FALSE, FALSE, sizeof(Unit)), NULL, NULL, NULL };
    build_units(b, &p, chunk, n_layers(b));
    Subgraphs s;
    subgraphs_find(&p, &s);
    Plan coarse;
    subgraphs_plan(&p, &s, &coarse);
    g_autofree uint32_t *step = v->sched == SCHED_PAIRS
                                ? pairs_steps(&p, &s, (info->tokens + chunk - 1) / chunk) : NULL;
    g_autofree uint32_t *order = unit_order(b, &p, &s, step, &coarse);
    uint32_t last[2] = { UINT32_MAX, UINT32_MAX };   /* npu, cpu */
    /* SCHED_PAIRS: the last task of each thread's subgraph in the step
     * before, which the barrier makes the next step wait for */
    uint32_t bar_prev[2] = { UINT32_MAX, UINT32_MAX }, bar_cur[2] = { UINT32_MAX, UINT32_MAX };
    g_autofree uint32_t *task_of = g_new(uint32_t, p.units->len);
    gboolean ok = TRUE;
    g_autoptr(GArray) waits = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (guint i = 0; i < p.units->len && ok; i++) {
        const Unit *u = &g_array_index(p.units, Unit, order[i]);
        /* what it waits on beyond the data it reads, each through a
         * hand-off when on the other processor (made before the task) */
        g_array_set_size(waits, 0);
        if (u->shadow) {
            /* it corrects the output of the unit it follows */
            uint32_t h = sim_builder_handoff(b, task_of[u->kernel], u->proc);
            g_array_append_val(waits, h);
        }
        uint32_t g = s.of[order[i]];
        if (s.prog[s.start[g]] == order[i]) {
            /* a subgraph starts once the graphs it reads have returned
             * whole, not as soon as the operators it reads have run */
            const Unit *c = &g_array_index(coarse.units, Unit, g);
            for (guint d = 0; d < c->deps->len; d++) {
                uint32_t dg = g_array_index(c->deps, uint32_t, d);
                uint32_t h = sim_builder_handoff(b, task_of[s.prog[s.start[dg + 1] - 1]],
                                                 u->proc);
                g_array_append_val(waits, h);
            }
        }
        if (step != NULL) {
            if (i > 0 && step[order[i]] != step[order[i - 1]]) {
                memcpy(bar_prev, bar_cur, sizeof bar_prev);
                bar_cur[0] = bar_cur[1] = UINT32_MAX;
            }
            for (int t = 0; t < 2; t++) {
                if (bar_prev[t] != UINT32_MAX) {
                    uint32_t h = sim_builder_handoff(b, bar_prev[t], u->proc);
                    g_array_append_val(waits, h);
                }
            }
        }
        uint32_t id;
        if (u->shadow) {
            SimWork w;
            const MdlNode *lin = sim_builder_node(b, u->node);
            shadow_work(lin, &u->slice, &w);
            SimSlice on = sim_builder_full(b, u->onto);
            on.tok0 = u->slice.tok0;
            on.tok1 = u->slice.tok1;
            id = sim_builder_shadow(b, u->node, u->proc, u->slice, &w, "shadow",
                                    u->onto, u->onto == u->node ? u->slice : on);
        } else {
            id = sim_builder_kernel(b, u->node, u->proc, u->slice, u->prec, error);
            ok = id != UINT32_MAX;
        }
        task_of[order[i]] = id;
        if (ok) {
            /* what explain shows: the subgraph and the rule that placed it */
            const Unit *f = &g_array_index(p.units, Unit, s.prog[s.start[g]]);
            const Unit *l = &g_array_index(p.units, Unit, s.prog[s.start[g + 1] - 1]);
            g_autofree char *why = g_strdup_printf(
                "subgraph %u of chunk %u (%s%s .. %s%s), %s", s.local[g], u->chunk,
                sim_builder_node(b, f->node)->name, f->shadow ? "'s shadow" : "",
                sim_builder_node(b, l->node)->name, l->shadow ? "'s shadow" : "",
                step != NULL ? "at the step of mllm's executor that runs it (chunk pairs in "
                               "lockstep, the second 5 subgraphs behind)"
                : v->sched == SCHED_GREEDY ? "in the order the greedy rule of mllm-NPU §3.4 "
                                             "ran it on its processor"
                : "in program order, chunk by chunk");
            sim_builder_note(b, id, why);
        }
        for (guint k = 0; ok && k < waits->len; k++) {
            sim_builder_after(b, id, g_array_index(waits, uint32_t, k));
        }
        if (step != NULL) {
            bar_cur[u->chunk & 1] = id;
        }
        /* the schedule's order on each processor's queue */
        uint32_t *l = &last[u->proc == info->proc_npu ? 0 : 1];
        if (ok && *l != UINT32_MAX) {
            sim_builder_after(b, id, *l);
        }
        *l = id;
    }
    plan_clear(&coarse);
    subgraphs_clear(&s);
    plan_clear(&p);
    return ok;
}

static gboolean
mllm_plan(SimBuilder *b, const MllmVariant *v, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    if (info->phase == SIM_PHASE_DECODE) {
        return policy_all_on(b, info->proc_cpu, error);     /* MLLM's CPU backend */
    }
    return mllm_prefill(b, v, error);
}

#define MLLM_VARIANT(fn, ...)                                                   \
    static gboolean fn(SimBuilder *b, GError **error)                          \
    {                                                                           \
        static const MllmVariant v = { __VA_ARGS__ };                           \
        return mllm_plan(b, &v, error);                                         \
    }

MLLM_VARIANT(plan_full, TRUE, ACT_SHADOW_PRUNED, SCHED_GREEDY)
MLLM_VARIANT(plan_in_order, TRUE, ACT_SHADOW_PRUNED, SCHED_IN_ORDER)
MLLM_VARIANT(plan_per_group, TRUE, ACT_PER_GROUP, SCHED_IN_ORDER)
MLLM_VARIANT(plan_naive, FALSE, ACT_PER_GROUP, SCHED_IN_ORDER)
MLLM_VARIANT(plan_no_shadow, TRUE, ACT_W8A8, SCHED_GREEDY)
MLLM_VARIANT(plan_no_prune, TRUE, ACT_SHADOW_ALL, SCHED_GREEDY)
MLLM_VARIANT(plan_pairs, TRUE, ACT_SHADOW_PRUNED, SCHED_PAIRS)

const SimPolicy sim_policy_mllm_npu = {
    SIM_POLICY_ABI, "mllm-npu",
    "mllm-NPU: W8A8 on the NPU with shadow outliers on the CPU, chunk-shared graphs, "
    "out-of-order subgraphs; decode on the CPU", plan_full, "mllm",
};
const SimPolicy sim_policy_mllm_npu_in_order = {
    SIM_POLICY_ABI, "mllm-npu/in-order",
    "mllm-npu ablation: subgraphs in program order", plan_in_order, "mllm",
};
const SimPolicy sim_policy_mllm_npu_per_group = {
    SIM_POLICY_ABI, "mllm-npu/per-group",
    "mllm-npu ablation: per-group INT8 weights instead of shadow outliers, in order",
    plan_per_group, "mllm",
};
const SimPolicy sim_policy_mllm_npu_naive = {
    SIM_POLICY_ABI, "mllm-npu/naive",
    "mllm-npu ablation: no chunks (graph prepared per prompt), per-group INT8, in order",
    plan_naive, "mllm",
};
const SimPolicy sim_policy_mllm_npu_no_shadow = {
    SIM_POLICY_ABI, "mllm-npu/no-shadow",
    "mllm-npu ablation: W8A8 with outliers clipped (no shadow execution)",
    plan_no_shadow, "mllm",
};
const SimPolicy sim_policy_mllm_npu_no_prune = {
    SIM_POLICY_ABI, "mllm-npu/no-prune",
    "mllm-npu ablation: shadow outliers in every layer", plan_no_prune, "mllm",
};
const SimPolicy sim_policy_mllm_npu_pairs = {
    SIM_POLICY_ABI, "mllm-npu/pairs",
    "mllm-npu as mllm's public executor schedules it (November 2024): chunks in pairs, "
    "in lockstep, the second 5 subgraphs behind", plan_pairs, "mllm",
};
