/*
 * builder.c - see builder.h.
 */
#include "sim/builder.h"
#include "sim/cost.h"
#include "sim/util/error.h"

#include <string.h>

typedef struct Produced {
    uint32_t task;
    uint32_t proc;
    SimSlice slice;
    gboolean timing_only;          /* a SHADOW task: not part of the coverage */
} Produced;

struct SimBuilder {
    SimPlan *plan;                 /* (transfer none) */
    const MdlNode *nodes;
    uint32_t n_nodes;
    SimPhaseInfo info;
    const SimCostModel *cost;
    GArray *entry;                 /* of uint32_t */
    GArray **produced;             /* per node: GArray of Produced */
    GHashTable *syncs;             /* (node, from, to) key -> task id + 1 */
    GHashTable *offline;           /* prepared NPU shapes (tokens) */
    GHashTable *prepare;           /* in-plan NPU shapes -> prepare task id + 1 */
    gboolean drop_syncs;
    uint32_t first_id;             /* the phase's first task in the plan */
};

void
sim_policy_options_init(SimPolicyOptions *o)
{
    *o = (SimPolicyOptions) {
        .chunk_tokens = 256,       /* mllm-NPU default chunk */
        .row_align = 256,          /* HeteroLLM §4.1 partition alignment */
        .tok_align = 32,           /* HeteroLLM §4.1: sequence cuts at 32 */
        .min_npu_shape = 32,       /* HeteroLLM: standard shapes 32..1024 */
        .max_npu_shape = 1024,
    };
}

SimBuilder *
sim_builder_new(SimPlan *plan, const MdlGraph *graph, const SimPhaseInfo *info, const SimCostModel *cost,
                const uint32_t *entry, uint32_t n_entry)
{
    SimBuilder *b = g_new0(SimBuilder, 1);
    b->plan = plan;
    b->nodes = graph->nodes;
    b->n_nodes = graph->n_nodes;
    b->info = *info;
    b->cost = cost;
    b->first_id = sim_plan_len(plan);
    b->entry = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    if (n_entry) {
        g_array_append_vals(b->entry, entry, n_entry);
    }
    b->produced = g_new0(GArray *, b->n_nodes);
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        b->produced[i] = g_array_new(FALSE, FALSE, sizeof(Produced));
    }
    b->syncs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    b->offline = g_hash_table_new(g_direct_hash, g_direct_equal);
    b->prepare = g_hash_table_new(g_direct_hash, g_direct_equal);
    return b;
}

void
sim_builder_free(SimBuilder *b)
{
    if (b == NULL) {
        return;
    }
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        g_array_free(b->produced[i], TRUE);
    }
    g_free(b->produced);
    g_array_free(b->entry, TRUE);
    g_hash_table_destroy(b->syncs);
    g_hash_table_destroy(b->offline);
    g_hash_table_destroy(b->prepare);
    g_free(b);
}

const SimPhaseInfo *
sim_builder_info(const SimBuilder *b)
{
    return &b->info;
}

uint32_t
sim_builder_n_nodes(const SimBuilder *b)
{
    return b->n_nodes;
}

const MdlNode *
sim_builder_node(const SimBuilder *b, uint32_t i)
{
    g_assert(i < b->n_nodes);
    return &b->nodes[i];
}

SimSlice
sim_builder_full(const SimBuilder *b, uint32_t node)
{
    const MdlNode *n = sim_builder_node(b, node);
    return (SimSlice) { 0, n->tokens, 0, n->features, 0 };
}

void
sim_builder_set_drop_syncs(SimBuilder *b, gboolean drop)
{
    b->drop_syncs = drop;
}

uint32_t
sim_builder_std_shape(const SimBuilder *b, uint32_t tokens)
{
    for (uint32_t s = b->info.opts->min_npu_shape; s <= b->info.opts->max_npu_shape;
         s *= 2) {
        if (s >= tokens) {
            return s;
        }
    }
    return 0;
}

void
sim_builder_npu_offline(SimBuilder *b, uint32_t tokens)
{
    g_hash_table_add(b->offline, GUINT_TO_POINTER(tokens));
    sim_plan_npu_offline(b->plan, tokens);
}

uint32_t
sim_builder_prepare(SimBuilder *b, uint32_t tokens)
{
    gpointer have = g_hash_table_lookup(b->prepare, GUINT_TO_POINTER(tokens));
    if (have) {
        return GPOINTER_TO_UINT(have) - 1;
    }
    g_autofree char *name = g_strdup_printf("npu.prepare[tokens %u]", tokens);
    SimTask t = {
        .kind = SIM_TASK_PREPARE, .phase = b->info.phase, .step = b->info.step,
        .proc = b->info.proc_npu, .node = -1, .name = name,
        .n_deps = b->entry->len, .deps = (uint32_t *) b->entry->data,
        .work = { .op = MDL_OP_MATMUL, .m = tokens },
    };
    uint32_t id = sim_plan_add(b->plan, &t);
    g_hash_table_insert(b->prepare, GUINT_TO_POINTER(tokens), GUINT_TO_POINTER(id + 1));
    return id;
}

/* The hand-off to @to of the tasks @writers (of node @src, all on
 * @from) that the consumer reads.  A fast hand-off polls the flag each
 * output is written with, so it covers those alone (a chunk's reader does
 * not wait for a later chunk placed before it); a driver hand-off is a
 * finish that drains the producer's queue, so one covers everything
 * @from wrote of @src so far, and the readers after it need no other.
 * The last hand-off of (@src, @from, @to) is reused when it covers the
 * same tasks. */
static uint32_t
sync_task(SimBuilder *b, uint32_t src, uint32_t from, uint32_t to, GArray *writers)
{
    if (b->info.sync == SIM_SYNC_DRIVER) {
        /* everything @from wrote of @src, in order, then any of @writers
         * recorded under another node (sim_builder_handoff's task may be
         * a shadow task, a producer of the node it corrects) */
        GArray *all = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        GArray *prod = b->produced[src];
        for (guint i = 0; i < prod->len; i++) {
            const Produced *p = &g_array_index(prod, Produced, i);
            if (p->proc == from) {
                g_array_append_val(all, p->task);
            }
        }
        guint n_prod = all->len;
        for (guint j = 0; j < writers->len; j++) {
            uint32_t w = g_array_index(writers, uint32_t, j);
            gboolean have = FALSE;
            for (guint i = 0; i < n_prod && !have; i++) {
                have = g_array_index(all, uint32_t, i) == w;
            }
            if (!have) {
                g_array_append_val(all, w);
            }
        }
        g_array_set_size(writers, 0);
        g_array_append_vals(writers, all->data, all->len);
        g_array_free(all, TRUE);
    }
    /* node and two processor indices: 32 bits for the node (a graph has
     * any number), 16 each for the processors (8 each collided from the
     * 256th processor on; a SoC config does not bound their number) */
    gint64 key = (gint64) (((guint64) src << 32) | ((guint64) (from & 0xffff) << 16) |
                           (to & 0xffff));
    gpointer have = g_hash_table_lookup(b->syncs, &key);
    if (have) {
        const SimTask *h = sim_plan_task(b->plan, GPOINTER_TO_UINT(have) - 1);
        if (h->n_deps == writers->len &&
            memcmp(h->deps, writers->data, writers->len * sizeof(uint32_t)) == 0) {
            return GPOINTER_TO_UINT(have) - 1;
        }
    }
    g_autofree char *name = g_strdup_printf("sync %s %s", b->nodes[src].name,
                                            sim_sync_name[b->info.sync]);
    SimTask t = {
        .kind = SIM_TASK_SYNC, .phase = b->info.phase, .step = b->info.step,
        .proc = b->info.proc_control, .node = (int32_t) src, .sync = b->info.sync,
        .sync_from = from, .sync_to = to, .n_deps = writers->len,
        .deps = (uint32_t *) writers->data, .name = name,
    };
    uint32_t id = sim_plan_add(b->plan, &t);
    gint64 *k = g_new(gint64, 1);
    *k = key;
    g_hash_table_replace(b->syncs, k, GUINT_TO_POINTER(id + 1));
    return id;
}

static void
work_of(const SimBuilder *b, const MdlNode *n, uint32_t proc, const SimSlice *s,
        MdlPrecision prec, SimWork *w)
{
    MdlWork mw;
    mdl_node_work(n, s->tok0, s->tok1, s->row0, s->row1, s->pad_tokens, prec, &mw);
    *w = (SimWork) {
        .op = n->op, .prec = prec, .m = mw.m, .k = mw.k, .n = mw.n,
        .flops = mw.flops, .read_bytes = mw.read_bytes, .write_bytes = mw.write_bytes,
        /* HeteroLLM's order-aware permutation: on the NPU compute W . X^T
         * so the small activation operand is the stationary one */
        .weight_lhs = proc == b->info.proc_npu && n->op == MDL_OP_MATMUL,
    };
}

static gboolean
overlap(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1)
{
    return a0 < b1 && b0 < a1;
}

static char *
task_name(const MdlNode *n, const SimSlice *s)
{
    GString *name = g_string_new(n->name);
    gboolean rows = s->row0 != 0 || s->row1 != n->features;
    gboolean toks = s->tok0 != 0 || s->tok1 != n->tokens;
    if (rows || toks || s->pad_tokens) {
        g_string_append_c(name, '[');
        if (rows) {
            g_string_append_printf(name, "rows %u:%u", s->row0, s->row1);
        }
        if (toks) {
            g_string_append_printf(name, "%stokens %u:%u", rows ? " " : "", s->tok0, s->tok1);
        }
        if (s->pad_tokens) {
            g_string_append_printf(name, "%spad %u", rows || toks ? " " : "", s->pad_tokens);
        }
        g_string_append_c(name, ']');
    }
    return g_string_free(name, FALSE);
}

/* What a task of @slice of @n on @proc waits on: the writers of what it
 * reads (through syncs from other processors); appended to @deps. */
static void
gather_deps(SimBuilder *b, const MdlNode *n, uint32_t proc, const SimSlice *s_,
            GArray *deps)
{
    SimSlice slice = *s_;
    for (uint32_t i = 0; i < n->n_src; i++) {
        uint32_t s = n->src[i];
        /* attention reads K and V (src 1, 2) of every earlier token; the
         * prefill LM head reads the last token only */
        uint32_t r0 = slice.tok0 + n->src_tok_offset;
        uint32_t r1 = slice.tok1 + n->src_tok_offset;
        if (n->op == MDL_OP_ATTENTION && i >= 1) {
            r0 = 0;
        }
        GArray *prod = b->produced[s];
        /* writers on other processors, per processor (at[q]: where the
         * sync from q goes in @deps, where the first of them was met) */
        g_autofree GArray **writers = g_new0(GArray *, b->info.n_procs);
        g_autofree guint *at = g_new(guint, b->info.n_procs);
        for (guint j = 0; j < prod->len; j++) {
            const Produced *p = &g_array_index(prod, Produced, j);
            if (!overlap(r0, r1, p->slice.tok0, p->slice.tok1)) {
                continue;
            }
            /* act and add are feature-local: a row slice reads the same rows */
            if ((n->op == MDL_OP_ACT || n->op == MDL_OP_ADD) &&
                b->nodes[s].features == n->features &&
                !overlap(slice.row0, slice.row1, p->slice.row0, p->slice.row1)) {
                continue;
            }
            if (p->proc == proc) {
                g_array_append_val(deps, p->task);
                continue;
            }
            if (b->drop_syncs) {
                continue;
            }
            if (writers[p->proc] == NULL) {
                writers[p->proc] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
                at[p->proc] = deps->len;
                g_array_append_val(deps, p->task);      /* the sync's place */
            }
            g_array_append_val(writers[p->proc], p->task);
        }
        for (uint32_t q = 0; q < b->info.n_procs; q++) {
            if (writers[q] != NULL) {
                g_array_index(deps, uint32_t, at[q]) = sync_task(b, s, q, proc, writers[q]);
                g_array_free(writers[q], TRUE);
            }
        }
    }
    if (n->n_src == 0) {
        g_array_append_vals(deps, b->entry->data, b->entry->len);
    }
}

/* Add @t with @deps (freed here) de-duplicated in first-seen order
 * (deterministic) and record it as a producer of @slice of node @node
 * (its own, but for a shadow task that corrects another node's output). */
static uint32_t
add_task_as(SimBuilder *b, SimTask *t, GArray *deps, gboolean timing_only, uint32_t node,
            SimSlice slice)
{
    GArray *uniq = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (guint i = 0; i < deps->len; i++) {
        uint32_t d = g_array_index(deps, uint32_t, i);
        gboolean seen = FALSE;
        for (guint j = 0; j < uniq->len && !seen; j++) {
            seen = g_array_index(uniq, uint32_t, j) == d;
        }
        if (!seen) {
            g_array_append_val(uniq, d);
        }
    }
    t->n_deps = uniq->len;
    t->deps = (uint32_t *) uniq->data;
    uint32_t id = sim_plan_add(b->plan, t);
    g_array_free(uniq, TRUE);
    g_array_free(deps, TRUE);

    Produced p = { id, t->proc, slice, timing_only };
    g_array_append_val(b->produced[node], p);
    return id;
}

static uint32_t
add_task(SimBuilder *b, SimTask *t, GArray *deps, gboolean timing_only)
{
    return add_task_as(b, t, deps, timing_only, (uint32_t) t->node, t->slice);
}

uint32_t
sim_builder_kernel(SimBuilder *b, uint32_t node, uint32_t proc, SimSlice slice,
                   MdlPrecision prec, GError **error)
{
    const MdlNode *n = sim_builder_node(b, node);
    g_assert(proc < b->info.n_procs);
    g_assert(slice.tok0 < slice.tok1 && slice.tok1 <= n->tokens);
    g_assert(slice.row0 < slice.row1 && slice.row1 <= n->features);
    g_assert(slice.pad_tokens == 0 || slice.pad_tokens >= slice.tok1 - slice.tok0);

    GArray *deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    uint32_t shape = slice.pad_tokens ? slice.pad_tokens : slice.tok1 - slice.tok0;
    if (proc == b->info.proc_npu && n->op == MDL_OP_MATMUL) {
        gpointer prep = g_hash_table_lookup(b->prepare, GUINT_TO_POINTER(shape));
        if (prep) {
            uint32_t id = GPOINTER_TO_UINT(prep) - 1;
            g_array_append_val(deps, id);
        } else if (!g_hash_table_contains(b->offline, GUINT_TO_POINTER(shape))) {
            g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_UNSUPPORTED,
                        "%s: no NPU graph prepared for %u tokens (static shapes "
                        "must be prepared offline or in the plan)", n->name, shape);
            g_array_free(deps, TRUE);
            return UINT32_MAX;
        }
    }

    gather_deps(b, n, proc, &slice, deps);

    SimTask t = {
        .kind = SIM_TASK_KERNEL, .phase = b->info.phase, .step = b->info.step,
        .proc = proc, .node = (int32_t) node, .slice = slice,
    };
    work_of(b, n, proc, &slice, prec, &t.work);
    g_autofree char *name = task_name(n, &slice);
    t.name = name;
    return add_task(b, &t, deps, FALSE);
}

uint32_t
sim_builder_shadow(SimBuilder *b, uint32_t node, uint32_t proc, SimSlice slice,
                   const SimWork *work, const char *what, uint32_t onto, SimSlice onto_slice)
{
    const MdlNode *n = sim_builder_node(b, node), *o = sim_builder_node(b, onto);
    g_assert(proc < b->info.n_procs);
    g_assert(slice.tok0 < slice.tok1 && slice.tok1 <= n->tokens);
    g_assert(slice.row0 < slice.row1 && slice.row1 <= n->features);
    g_assert(onto_slice.tok0 < onto_slice.tok1 && onto_slice.tok1 <= o->tokens);
    g_assert(onto_slice.row0 < onto_slice.row1 && onto_slice.row1 <= o->features);
    GArray *deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    gather_deps(b, n, proc, &slice, deps);
    g_autofree char *base = task_name(n, &slice);
    g_autofree char *name = g_strdup_printf("%s.%s", base, what);
    SimTask t = {
        .kind = SIM_TASK_SHADOW, .phase = b->info.phase, .step = b->info.step,
        .proc = proc, .node = (int32_t) node, .slice = slice, .work = *work, .name = name,
    };
    return add_task_as(b, &t, deps, TRUE, onto, onto_slice);
}

void
sim_builder_after(SimBuilder *b, uint32_t id, uint32_t before)
{
    g_assert(before < id);
    sim_plan_add_dep(b->plan, id, before);
}

uint32_t
sim_builder_handoff(SimBuilder *b, uint32_t before, uint32_t to)
{
    const SimTask *d = sim_plan_task(b->plan, before);
    g_assert(to < b->info.n_procs && d->node >= 0);
    if (d->proc == to || b->drop_syncs) {
        return before;
    }
    GArray *w = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_array_append_val(w, before);
    uint32_t sync = sync_task(b, (uint32_t) d->node, d->proc, to, w);
    g_array_free(w, TRUE);
    return sync;
}

uint64_t
sim_builder_cost_ps(const SimBuilder *b, uint32_t node, uint32_t proc,
                    SimSlice slice, MdlPrecision prec)
{
    SimWork w;
    work_of(b, sim_builder_node(b, node), proc, &slice, prec, &w);
    return sim_cost_work_ps(b->cost, proc, &w);
}

uint64_t
sim_builder_work_cost_ps(const SimBuilder *b, uint32_t proc, const SimWork *work)
{
    return sim_cost_work_ps(b->cost, proc, work);
}

gboolean
sim_builder_npu_w4a16_decode(const SimBuilder *b)
{
    return b->cost ? sim_cost_npu_w4a16_decode(b->cost) : FALSE;
}

uint64_t
sim_builder_sync_cost_ps(const SimBuilder *b, uint32_t from, uint32_t to)
{
    /* Policies plan for the fast mechanism, as HeteroLLM designs its
     * partitions around its own fast sync; --sync driver then swaps the
     * mechanism under the same plan, which is HeteroLLM's ablation. */
    return sim_cost_sync_ps(b->cost, SIM_SYNC_FAST, from, to, 0);
}

uint64_t
sim_builder_sync_cost_run_ps(const SimBuilder *b, uint32_t from, uint32_t to, uint64_t bytes)
{
    return sim_cost_sync_ps(b->cost, b->info.sync, from, to, bytes);
}

gboolean
sim_builder_finish(SimBuilder *b, uint32_t **exit, uint32_t *n_exit, GError **error)
{
    /* every node covered exactly once */
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        const MdlNode *n = &b->nodes[i];
        GArray *prod = b->produced[i];
        uint64_t area = 0;
        for (guint j = 0; j < prod->len; j++) {
            if (g_array_index(prod, Produced, j).timing_only) {
                continue;
            }
            const SimSlice *s = &g_array_index(prod, Produced, j).slice;
            area += (uint64_t) (s->tok1 - s->tok0) * (s->row1 - s->row0);
            for (guint k = j + 1; k < prod->len; k++) {
                if (g_array_index(prod, Produced, k).timing_only) {
                    continue;
                }
                const SimSlice *o = &g_array_index(prod, Produced, k).slice;
                if (overlap(s->tok0, s->tok1, o->tok0, o->tok1) &&
                    overlap(s->row0, s->row1, o->row0, o->row1)) {
                    g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN,
                                "%s: tasks %u and %u write overlapping slices", n->name,
                                g_array_index(prod, Produced, j).task,
                                g_array_index(prod, Produced, k).task);
                    return FALSE;
                }
            }
        }
        if (area != (uint64_t) n->tokens * n->features) {
            g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN,
                        "%s: slices cover %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                        " output elements (a hole)", n->name, area,
                        (uint64_t) n->tokens * n->features);
            return FALSE;
        }
    }

    /* prepare tasks cost what the NPU tensors of their shape weigh */
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, b->prepare);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        SimTask *prep = sim_plan_task(b->plan, GPOINTER_TO_UINT(value) - 1);
        uint64_t bytes = 0, flops = 0;
        for (uint32_t id = GPOINTER_TO_UINT(value); id < sim_plan_len(b->plan); id++) {
            const SimTask *t = sim_plan_task(b->plan, id);
            uint32_t shape = t->slice.pad_tokens ? t->slice.pad_tokens
                                                 : t->slice.tok1 - t->slice.tok0;
            if (t->kind == SIM_TASK_KERNEL && t->proc == b->info.proc_npu &&
                t->work.op == MDL_OP_MATMUL && shape == GPOINTER_TO_UINT(key)) {
                /* activations in and out, FP16: what the graph handles */
                bytes += t->work.m * (t->work.k + t->work.n) * 2;
                flops += t->work.flops;
            }
        }
        prep->work.read_bytes = bytes;
        prep->work.flops = flops;
    }

    /* the phase ends with the writers of the last node, and with every
     * other task of it that nothing in it waits for (a policy may leave a
     * dead-end slice, e.g. the last layer's FFN of tokens the prefill LM
     * head does not read, to run late): an engine starts the next phase
     * when the whole phase graph has run, not when its output is ready */
    g_assert(b->n_nodes > 0);
    GArray *last = b->produced[b->n_nodes - 1];
    uint32_t n_tasks = sim_plan_len(b->plan) - b->first_id;
    g_autofree gboolean *waited = g_new0(gboolean, MAX(1, n_tasks));
    for (uint32_t id = b->first_id; id < sim_plan_len(b->plan); id++) {
        const SimTask *t = sim_plan_task(b->plan, id);
        for (uint32_t d = 0; d < t->n_deps; d++) {
            if (t->deps[d] >= b->first_id) {
                waited[t->deps[d] - b->first_id] = TRUE;
            }
        }
    }
    GArray *ex = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (guint j = 0; j < last->len; j++) {
        uint32_t id = g_array_index(last, Produced, j).task;
        waited[id - b->first_id] = TRUE;     /* listed once, first */
        g_array_append_val(ex, id);
    }
    for (uint32_t i = 0; i < n_tasks; i++) {
        if (!waited[i]) {
            uint32_t id = b->first_id + i;
            g_array_append_val(ex, id);
        }
    }
    *n_exit = ex->len;
    *exit = (uint32_t *) g_array_free(ex, FALSE);
    return TRUE;
}

void
sim_builder_note(SimBuilder *b, uint32_t task, const char *why)
{
    sim_plan_task(b->plan, task)->why = g_string_chunk_insert_const(b->plan->names, why);
}
