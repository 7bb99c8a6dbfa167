/*
 * plan.c - see plan.h.
 */
#include "sim/plan.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"

#include <stdarg.h>
#include <string.h>

const char *const sim_task_kind_name[] = {
    "kernel", "sync", "prepare", "shadow",
};
G_STATIC_ASSERT(G_N_ELEMENTS(sim_task_kind_name) == SIM_TASK_KIND_COUNT);
const char *const sim_sync_name[] = { "driver", "fast" };
G_STATIC_ASSERT(G_N_ELEMENTS(sim_sync_name) == SIM_SYNC_COUNT);
const char *const sim_phase_name[] = { "prefill", "decode" };
G_STATIC_ASSERT(G_N_ELEMENTS(sim_phase_name) == SIM_PHASE_COUNT);

/* Deps of tasks up to last_id, in one allocation. */
typedef struct DepBlock {
    uint32_t last_id;
    uint32_t used, cap;
    uint32_t data[];
} DepBlock;

#define DEP_BLOCK_IDS 16384      /* 64 KiB a block: a malloc per ~5000 tasks */

static uint32_t *
deps_alloc(SimPlan *plan, uint32_t id, uint32_t n)
{
    GPtrArray *blocks = plan->dep_blocks;
    DepBlock *b = blocks->len ? g_ptr_array_index(blocks, blocks->len - 1) : NULL;
    if (b == NULL || b->cap - b->used < n) {
        uint32_t cap = MAX(DEP_BLOCK_IDS, n);
        b = g_malloc(sizeof(DepBlock) + sizeof(uint32_t) * cap);
        *b = (DepBlock) { id, 0, cap };
        g_ptr_array_add(blocks, b);
    }
    b->last_id = MAX(b->last_id, id);
    uint32_t *d = &b->data[b->used];
    b->used += n;
    return d;
}

SimPlan *
sim_plan_new(void)
{
    SimPlan *plan = g_new0(SimPlan, 1);
    plan->tasks = g_array_new(FALSE, TRUE, sizeof(SimTask));
    plan->npu_offline = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    plan->names = g_string_chunk_new(4096);
    plan->dep_blocks = g_ptr_array_new_with_free_func(g_free);
    return plan;
}

void
sim_plan_free(SimPlan *plan)
{
    if (plan == NULL) {
        return;
    }
    g_array_unref(plan->tasks);
    g_array_unref(plan->npu_offline);
    g_string_chunk_free(plan->names);
    g_ptr_array_unref(plan->dep_blocks);
    g_free(plan);
}

uint32_t
sim_plan_add_named(SimPlan *plan, const SimTask *t)
{
    uint32_t id = sim_plan_len(plan);
    SimTask copy = *t;
    copy.deps = NULL;
    if (t->n_deps) {
        copy.deps = deps_alloc(plan, id, t->n_deps);
        memcpy(copy.deps, t->deps, sizeof(uint32_t) * t->n_deps);
    }
    g_array_append_val(plan->tasks, copy);
    return id;
}

uint32_t
sim_plan_add_block(SimPlan *plan, const SimTask *src, uint32_t n)
{
    uint32_t id0 = sim_plan_len(plan);
    if (n == 0) {
        return id0;
    }
    uint64_t n_deps = 0;
    for (uint32_t i = 0; i < n; i++) {
        n_deps += src[i].n_deps;
    }
    g_assert(n_deps < UINT32_MAX);
    /* one place for them all, forgotten with the last of the tasks */
    uint32_t *d = n_deps ? deps_alloc(plan, id0 + n - 1, (uint32_t) n_deps) : NULL;
    g_array_append_vals(plan->tasks, src, n);
    SimTask *t = &g_array_index(plan->tasks, SimTask, id0 - plan->base);
    for (uint32_t i = 0; i < n; i++) {
        t[i].deps = t[i].n_deps ? d : NULL;
        d += t[i].n_deps;
    }
    return id0;
}

uint32_t
sim_plan_add(SimPlan *plan, const SimTask *t)
{
    SimTask named = *t;
    named.name = g_string_chunk_insert_const(plan->names, t->name ? t->name : "");
    named.why = t->why ? g_string_chunk_insert_const(plan->names, t->why) : NULL;
    return sim_plan_add_named(plan, &named);
}

void
sim_plan_forget(SimPlan *plan, uint32_t id)
{
    g_assert(id >= plan->base && id <= sim_plan_len(plan));
    g_array_remove_range(plan->tasks, 0, id - plan->base);
    plan->base = id;
    guint n = 0;
    while (n < plan->dep_blocks->len &&
           ((DepBlock *) g_ptr_array_index(plan->dep_blocks, n))->last_id < id) {
        n++;
    }
    g_ptr_array_remove_range(plan->dep_blocks, 0, n);
}

void
sim_plan_npu_offline(SimPlan *plan, uint32_t tokens)
{
    for (guint i = 0; i < plan->npu_offline->len; i++) {
        if (g_array_index(plan->npu_offline, uint32_t, i) == tokens) {
            return;
        }
    }
    g_array_append_val(plan->npu_offline, tokens);
}

void
sim_plan_add_dep(SimPlan *plan, uint32_t id, uint32_t dep)
{
    SimTask *t = sim_plan_task(plan, id);
    for (uint32_t i = 0; i < t->n_deps; i++) {
        if (t->deps[i] == dep) {
            return;
        }
    }
    /* the old place stays until its block goes */
    uint32_t *d = deps_alloc(plan, id, t->n_deps + 1);
    if (t->n_deps) {
        memcpy(d, t->deps, sizeof(uint32_t) * t->n_deps);
    }
    d[t->n_deps++] = dep;
    t->deps = d;
}

/* "task I (NAME): " and the message: a recording's task name escaped
 * (it is input text: raw bytes and newlines stay out of the one line) */
G_GNUC_PRINTF(4, 5) static void
bad_task(GError **error, const SimPlan *plan, uint32_t i, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *name = hs_escape(sim_plan_task(plan, i)->name);
    g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN, "task %u (%s): %s", i, name,
                msg);
}

uint32_t *
sim_plan_topo_order_from(const SimPlan *plan, uint32_t from, GError **error)
{
    /* local index i is task from + i */
    uint32_t n = sim_plan_len(plan) - from;
    /* every dep below its task (every plan the builder makes): id order */
    gboolean lower = TRUE;
    for (uint32_t i = 0; i < n && lower; i++) {
        const SimTask *t = sim_plan_task(plan, from + i);
        for (uint32_t d = 0; d < t->n_deps; d++) {
            lower = lower && t->deps[d] < from + i;
        }
    }
    if (lower) {
        uint32_t *order = g_new(uint32_t, n ? n : 1);
        for (uint32_t i = 0; i < n; i++) {
            order[i] = from + i;
        }
        return order;
    }
    g_autofree uint32_t *indeg = g_new0(uint32_t, n);
    g_autofree uint32_t *first = g_new0(uint32_t, n + 1);   /* CSR of users */
    g_autofree uint32_t *users = NULL;
    uint32_t edges = 0;

    for (uint32_t i = 0; i < n; i++) {
        const SimTask *t = sim_plan_task(plan, from + i);
        for (uint32_t d = 0; d < t->n_deps; d++) {
            if (t->deps[d] >= from) {
                indeg[i]++;
                first[t->deps[d] - from + 1]++;
                edges++;
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        first[i + 1] += first[i];
    }
    users = g_new(uint32_t, edges ? edges : 1);
    g_autofree uint32_t *fill = g_memdup2(first, sizeof(uint32_t) * (n + 1));
    for (uint32_t i = 0; i < n; i++) {
        const SimTask *t = sim_plan_task(plan, from + i);
        for (uint32_t d = 0; d < t->n_deps; d++) {
            if (t->deps[d] >= from) {
                users[fill[t->deps[d] - from]++] = i;
            }
        }
    }

    /* Kahn, always taking the smallest ready id (a binary min-heap): a
     * plan whose deps point to lower ids — every plan the builder makes —
     * comes out in id order, the order its host program runs in. */
    uint32_t *order = g_new(uint32_t, n ? n : 1);
    g_autofree uint32_t *heap = g_new(uint32_t, n ? n : 1);
    uint32_t hn = 0, tail = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (indeg[i] == 0) {
            heap[hn++] = i;              /* increasing: already a heap */
        }
    }
    while (hn > 0) {
        uint32_t v = heap[0];
        heap[0] = heap[--hn];
        for (uint32_t c = 0; 2 * c + 1 < hn;) {          /* sift down */
            uint32_t m = 2 * c + 1;
            if (m + 1 < hn && heap[m + 1] < heap[m]) {
                m++;
            }
            if (heap[c] <= heap[m]) {
                break;
            }
            uint32_t tmp = heap[c];
            heap[c] = heap[m];
            heap[m] = tmp;
            c = m;
        }
        order[tail++] = from + v;
        for (uint32_t e = first[v]; e < first[v + 1]; e++) {
            if (--indeg[users[e]] == 0) {
                uint32_t c = hn++;                          /* sift up */
                heap[c] = users[e];
                while (c > 0 && heap[(c - 1) / 2] > heap[c]) {
                    uint32_t p = (c - 1) / 2, tmp = heap[p];
                    heap[p] = heap[c];
                    heap[c] = tmp;
                    c = p;
                }
            }
        }
    }
    if (tail < n) {
        uint32_t stuck = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (indeg[i] > 0) {
                stuck = i;
                break;
            }
        }
        bad_task(error, plan, from + stuck, "dependency cycle (%u tasks can never start)",
                 n - tail);
        g_free(order);
        return NULL;
    }
    return order;
}

uint32_t *
sim_plan_topo_order(const SimPlan *plan, GError **error)
{
    return sim_plan_topo_order_from(plan, plan->base, error);
}

gboolean
sim_plan_check(const SimPlan *plan, uint32_t n_procs, GError **error)
{
    return sim_plan_check_from(plan, plan->base, n_procs, error);
}

gboolean
sim_plan_check_from(const SimPlan *plan, uint32_t from, uint32_t n_procs, GError **error)
{
    g_autofree uint32_t *order = sim_plan_checked_order_from(plan, from, n_procs, error);
    return order != NULL;
}

uint32_t *
sim_plan_checked_order_from(const SimPlan *plan, uint32_t from, uint32_t n_procs,
                            GError **error)
{
    uint32_t n = sim_plan_len(plan);

    for (uint32_t i = from; i < n; i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->proc >= n_procs) {
            bad_task(error, plan, i, "proc: expected a processor index below %u (got %u)",
                     n_procs, t->proc);
            return NULL;
        }
        if (t->kind == SIM_TASK_SYNC &&
            (t->sync_from >= n_procs || t->sync_to >= n_procs)) {
            bad_task(error, plan, i, "sync: processor index out of range");
            return NULL;
        }
        if (t->kind == SIM_TASK_KERNEL &&
            (t->slice.tok0 >= t->slice.tok1 || t->slice.row0 >= t->slice.row1 ||
             (t->slice.pad_tokens && t->slice.pad_tokens < t->slice.tok1 - t->slice.tok0))) {
            bad_task(error, plan, i,
                     "slice: expected tok0 < tok1, row0 < row1 and pad_tokens 0 or >= "
                     "tok1 - tok0 (got tokens [%u, %u), rows [%u, %u), pad %u)",
                     t->slice.tok0, t->slice.tok1, t->slice.row0, t->slice.row1,
                     t->slice.pad_tokens);
            return NULL;
        }
        for (uint32_t d = 0; d < t->n_deps; d++) {
            if (t->deps[d] >= n || t->deps[d] == i) {
                bad_task(error, plan, i,
                         "deps[%u]: expected a task id below %u other than the task "
                         "itself (got %u)", d, n, t->deps[d]);
                return NULL;
            }
        }
    }
    return sim_plan_topo_order_from(plan, from, error);
}
