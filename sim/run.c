/*
 * run.c - see run.h.
 */
#include "sim/run.h"
#include "hw/energy.h"
#include "hw/stack.h"
#include "sim/cost.h"
#include "sim/util/error.h"
#include "sim/util/mem.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void
sim_workload_init(SimWorkload *w)
{
    *w = (SimWorkload) { .prompt = 256, .decode = 32, .batch = 1, .sync = SIM_SYNC_FAST,
                         .check_layers = -1, .seed = 1 };
    sim_policy_options_init(&w->opts);
    w->render = (SimRender) { .fps = 0, .frame_ms = 8, .frame_mb = 48,
                              .llm_priority = HW_PRIO_NORMAL };
}

gboolean
sim_functional_parse(const char *text, int32_t *check_layers)
{
    if (strcmp(text, "off") == 0) {
        *check_layers = -1;
        return TRUE;
    }
    if (strcmp(text, "full") == 0) {
        *check_layers = 0;
        return TRUE;
    }
    char *end = NULL;
    long n = g_str_has_prefix(text, "layers=") ? strtol(text + 7, &end, 10) : 0;
    if (end == NULL || end == text + 7 || *end != '\0' || n < 1 || n > 1000) {
        return FALSE;
    }
    *check_layers = (int32_t) n;
    return TRUE;
}

void
sim_run_report_clear(SimRunReport *r)
{
    g_clear_pointer(&r->busy_ms, g_free);
    g_clear_pointer(&r->util, g_free);
    g_clear_pointer(&r->hot_split, g_free);
    g_clear_pointer(&r->caveats, g_free);
}

/* report->caveats: what each processor that ran says of @stack's figures */
static void
run_caveats(const HwSoc *soc, const HwStack *stack, SimRunReport *report)
{
    GString *out = g_string_new(NULL);
    for (uint32_t p = 0; p < report->n_procs; p++) {
        if (report->busy_ms[p] > 0) {
            hw_dev_caveat(g_ptr_array_index(soc->devs, p), stack, out);
        }
    }
    gboolean none = out->len == 0;
    report->caveats = g_string_free(out, none);      /* NULL when freed whole */
}

static gboolean
plan_phase(SimPlan *plan, const HwSoc *soc, const SimCostModel *cost,
           const MdlGraph *g, const SimPolicy *policy, const SimWorkload *w,
           SimPhase phase, uint32_t step, uint32_t **entry, uint32_t *n_entry,
           GError **error)
{
    SimPhaseInfo info = {
        .phase = phase, .step = step, .tokens = g->tokens, .context = g->pos0,
        .sync = w->sync, .n_procs = soc->devs->len, .opts = &w->opts,
        .proc_cpu = hw_soc_find_kind(soc, HW_KIND_CPU)->index,
        .proc_control = soc->control_cpu,
        .proc_gpu = hw_soc_find_kind(soc, HW_KIND_GPU)->index,
        .proc_npu = hw_soc_find_kind(soc, HW_KIND_NPU)->index,
    };
    g_autoptr(SimBuilder) b = sim_builder_new(plan, g, &info, cost, *entry, *n_entry);
    if (!policy->plan_phase(b, error)) {
        g_prefix_error(error, "policy %s, %s: ", policy->name, sim_phase_name[phase]);
        return FALSE;
    }
    g_free(*entry);
    if (!sim_builder_finish(b, entry, n_entry, error)) {
        g_prefix_error(error, "policy %s, %s: ", policy->name, sim_phase_name[phase]);
        return FALSE;
    }
    return TRUE;
}

/* The stack a run uses: the workload's (--stack), else the policy's, else
 * the default. */
static const HwStack *
run_stack(const HwSoc *soc, const char *policy_stack, const SimWorkload *w, GError **error)
{
    const char *name = w->stack ? w->stack : policy_stack ? policy_stack : SIM_DEFAULT_STACK;
    return hw_soc_stack(soc, name, error);
}

SimPlan *
sim_run_plan(const HwSoc *soc, const MdlSpec *spec, const SimPolicy *policy,
             const SimWorkload *w, GPtrArray **graphs, GError **error)
{
    const HwStack *stack = run_stack(soc, policy->stack, w, error);
    if (stack == NULL) {
        return NULL;
    }
    g_autoptr(SimPlan) plan = sim_plan_new();
    g_autoptr(GPtrArray) gs = g_ptr_array_new_with_free_func((GDestroyNotify) mdl_graph_free);
    g_autoptr(SimCostModel) cost = sim_cost_new(soc, stack);
    if (w->render.fps > 0 && w->render.llm_priority < HW_PRIO_NORMAL) {
        /* A game's frames go first, so prefill is planned with the GPU
         * time they leave: its long matmuls lose throughput in proportion.
         * Decode is not: there a frame delays the step's GPU-only ops
         * (norms, attention) whatever the split, and moving matmul rows to
         * the slower NPU only adds to that. */
        double duty = w->render.fps * w->render.frame_ms / 1000.0;
        sim_cost_share_gpu(cost, CLAMP(1.0 - duty, 0.05, 1.0));
    }
    g_autofree uint32_t *entry = NULL;
    uint32_t n_entry = 0;

    g_assert(w->prompt > 0 && w->batch > 0);
    MdlGraph *pre = mdl_graph_new_prefill(spec, w->prompt, 0);
    g_ptr_array_add(gs, pre);
    if (!plan_phase(plan, soc, cost, pre, policy, w, SIM_PHASE_PREFILL, 0, &entry,
                    &n_entry, error)) {
        return NULL;
    }
    sim_cost_share_gpu(cost, 1.0);
    for (uint32_t s = 0; s < w->decode; s++) {
        MdlGraph *dec = mdl_graph_new_decode(spec, w->prompt + s, w->batch);
        g_ptr_array_add(gs, dec);
        if (!plan_phase(plan, soc, cost, dec, policy, w, SIM_PHASE_DECODE, s, &entry,
                        &n_entry, error)) {
            return NULL;
        }
    }
    if (graphs) {
        *graphs = g_steal_pointer(&gs);
    }
    return g_steal_pointer(&plan);
}

/* Time inside [a, b) that @proc's kernels spent preempted (off the GPU
 * for a game's frame, its context save and restore): the game's time, not
 * the LLM's, though it lies inside those kernels' intervals. */
static SimTime
preempted_inside(const SimExecResult *r, uint32_t proc, SimTime a, SimTime b)
{
    SimTime in = 0;
    for (guint i = 0; r->preemptions && i < r->preemptions->len; i++) {
        const SimPreemption *p = &g_array_index(r->preemptions, SimPreemption, i);
        SimTime lo = MAX(a, p->off_ps), hi = MIN(b, p->back_ps);
        if (hi > lo && p->proc == proc) {
            in += hi - lo;
        }
    }
    return in;
}

/*
 * Time @proc was busy inside [t0, t1) (one of the measured phases): the
 * union of its tasks' intervals (sync tasks count for the CPU that runs
 * them, and so do the host's kernel submissions), measured as the run
 * went, less the time its kernels spent preempted.
 */
static SimTime
busy_in(const SimExecResult *r, const SimTime *busy, uint32_t proc, SimTime t0, SimTime t1)
{
    /* a preemption lies inside its kernel's interval, so inside the union */
    return busy[proc] - preempted_inside(r, proc, t0, t1);
}

static void
phase_energy(const HwSoc *soc, const SimExecResult *r, const SimTime *busy_ps,
             const SimTime *point_ps, SimTime t0, SimTime t1, SimPhaseStats *ps)
{
    double secs = sim_time_to_s(t1 - t0);
    g_autofree double *busy = g_new0(double, soc->devs->len);
    /* busy time per operating point (DVFS): each at its own power */
    g_autofree double *at = g_new0(double, (size_t) soc->devs->len * HW_DVFS_MAX_POINTS);
    for (uint32_t p = 0; p < r->n_procs && p < soc->devs->len; p++) {
        busy[p] = sim_time_to_s(busy_in(r, busy_ps, p, t0, t1));
        for (uint32_t k = 0; k < HW_DVFS_MAX_POINTS; k++) {
            size_t i = (size_t) p * HW_DVFS_MAX_POINTS + k;
            at[i] = sim_time_to_s(point_ps[i]);
        }
    }
    double j = hw_energy_j(soc, secs, busy, at, ps->dram_gbps * 1e9 * secs);
    ps->energy_j = j;
    ps->avg_w = secs > 0 ? j / secs : 0;
}

static double
frames_per_s(const SimExecResult *r, SimTime t0, SimTime t1)
{
    uint32_t n = 0;
    for (guint i = 0; i < r->frames->len; i++) {
        SimTime e = g_array_index(r->frames, SimFrame, i).end_ps;
        n += e > t0 && e <= t1;
    }
    return t1 > t0 ? n / sim_time_to_s(t1 - t0) : 0;
}

static void
render_measure(const SimExecResult *r, const SimWorkload *w, SimTime prefill_end,
               SimTime decode_end, SimRunReport *rep)
{
    const double period_ps = 1e12 / w->render.fps;
    uint32_t on_time = 0;
    double worst = 0;
    for (guint i = 0; i < r->frames->len; i++) {
        const SimFrame *f = &g_array_index(r->frames, SimFrame, i);
        on_time += (double) (f->end_ps - f->vsync_ps) <= period_ps;
        worst = MAX(worst, (double) (f->end_ps - f->vsync_ps));
    }
    rep->render_fps_prefill = frames_per_s(r, 0, prefill_end);
    rep->render_fps_decode = decode_end > prefill_end
                             ? frames_per_s(r, prefill_end, decode_end) : 0;
    rep->render_on_time_pct = r->vsyncs ? 100.0 * on_time / r->vsyncs : 0;
    rep->render_worst_ms = worst / 1e9;
}

void
sim_run_measure(const HwSoc *soc, const SimExecResult *r, const SimWorkload *w,
                SimRunReport *rep)
{
    const SimMeasured *m = &r->m;
    SimTime prefill_end = m->prefill_end_ps, decode_end = m->decode_end_ps;
    rep->workload = *w;
    rep->prefill.time_ms = sim_time_to_ms(prefill_end);
    rep->prefill.tokens_per_s = prefill_end ? w->prompt / sim_time_to_s(prefill_end) : 0;
    rep->prefill.dram_gbps = m->dram_prefill_gbps;
    rep->prefill.prepare_ms = m->prepare_prefill_ms;
    rep->decode.prepare_ms = m->prepare_decode_ms;
    phase_energy(soc, r, m->busy_prefill_ps, m->point_prefill_ps, 0, prefill_end,
                 &rep->prefill);
    rep->ttft_ms = rep->prefill.time_ms;
    if (w->decode > 0 && decode_end > prefill_end) {
        SimTime d = decode_end - prefill_end;
        rep->decode.time_ms = sim_time_to_ms(d);
        rep->decode.tokens_per_s = (double) w->decode * w->batch / sim_time_to_s(d);
        rep->decode.dram_gbps = m->dram_decode_gbps;
        phase_energy(soc, r, m->busy_decode_ps, m->point_decode_ps, prefill_end, decode_end,
                     &rep->decode);
        rep->tpot_ms = rep->decode.time_ms / w->decode;
    }
    rep->peak_gbps = m->peak_gbps;
    rep->n_procs = r->n_procs;
    rep->busy_ms = g_new0(double, r->n_procs);
    rep->util = g_new0(double, r->n_procs);
    for (uint32_t p = 0; p < r->n_procs; p++) {
        SimTime busy = busy_in(r, m->busy_all_ps, p, 0, r->end_ps);
        rep->busy_ms[p] = sim_time_to_ms(busy);
        rep->util[p] = r->end_ps ? (double) busy / (double) r->end_ps : 0;
    }
    rep->tasks = r->n_tasks;
    rep->events = r->events;
    if (w->render.fps > 0 && r->frames) {
        render_measure(r, w, prefill_end, decode_end, rep);
    }
    g_strlcpy(rep->hot_op, m->hot_op, sizeof(rep->hot_op));
    rep->hot_time_share = m->hot_time_share;
    rep->hot_split = g_memdup2(m->hot_split, sizeof(double) * MAX(1, r->n_procs));
}

void
sim_run_engine_config(const MdlSpec *s, uint64_t seed, EngConfig *cfg)
{
    /* the tensor names of a model directory, by the family's modelling code */
    EngLayout layout = strcmp(s->model_type, "phi") == 0 ? ENG_LAYOUT_PHI
                       : strcmp(s->model_type, "internlm2") == 0 ? ENG_LAYOUT_INTERNLM2
                       : strcmp(s->model_type, "chatglm") == 0 ? ENG_LAYOUT_CHATGLM
                       : ENG_LAYOUT_LLAMA;
    *cfg = (EngConfig) {
        .hidden = s->hidden_size, .intermediate = s->intermediate_size,
        .layers = s->num_hidden_layers, .heads = s->num_attention_heads,
        .kv_heads = s->num_key_value_heads, .head_dim = s->head_dim,
        .vocab = s->vocab_size, .rope_theta = s->rope_theta, .rms_eps = s->rms_norm_eps,
        .tie_embeddings = s->tie_word_embeddings,
        .act = s->act == MDL_ACT_GELU_TANH ? ENG_ACT_GELU_TANH
               : s->act == MDL_ACT_GELU ? ENG_ACT_GELU : ENG_ACT_SILU,
        .attention_bias = s->attention_bias, .o_bias = s->o_bias, .mlp_bias = s->mlp_bias,
        .head_bias = s->head_bias,
        .embed_scale = s->embed_scale, .norm_plus_one = s->norm_plus_one,
        .norm = s->layer_norm ? ENG_NORM_LAYER : ENG_NORM_RMS,
        .ungated_mlp = !s->gated_mlp, .parallel_block = s->parallel_block,
        .rotary_dim = mdl_spec_rotary_dim(s), .rope_interleaved = s->rope_interleaved,
        .sliding_window = s->sliding_window, .layout = layout, .seed = seed,
    };
}

char *
sim_workload_weights(const SimWorkload *w)
{
    return w->weights_dir ? g_strdup(w->weights_dir)
                          : g_strdup_printf("synthetic seed %" G_GUINT64_FORMAT, w->seed);
}

SimChecker *
sim_run_checker_new(const MdlSpec *spec, const SimWorkload *w, GError **error)
{
    if (w->check_layers < 0) {
        return NULL;
    }
    /* the graphs of a workload do not depend on the policy; the decode
     * steps after the first are made by the checker as it reaches them */
    g_autoptr(GPtrArray) gs = g_ptr_array_new_with_free_func((GDestroyNotify) mdl_graph_free);
    g_ptr_array_add(gs, mdl_graph_new_prefill(spec, w->prompt, 0));
    for (uint32_t s = 0; s < w->decode; s++) {
        g_ptr_array_add(gs, s == 0 ? mdl_graph_new_decode(spec, w->prompt, w->batch) : NULL);
    }
    EngConfig cfg;
    sim_run_engine_config(spec, w->seed, &cfg);
    g_autofree char *gap = mdl_spec_functional_gap(spec, (uint64_t) w->prompt + w->decode);
    if (gap) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE, "%s: %s",
                    spec->path ? spec->path : spec->name, gap);
        return NULL;
    }
    if (!eng_config_check(&cfg, error)) {
        g_prefix_error(error, "%s: ", spec->path ? spec->path : spec->name);
        return NULL;
    }
    uint64_t need = sim_checker_bytes(&cfg, gs, (uint32_t) w->check_layers, w->batch);
    /* layers the check computes: only they are read from a directory */
    uint32_t layers = w->check_layers == 0 ? cfg.layers
                                           : MIN((uint32_t) w->check_layers, cfg.layers);
    if (w->weights_dir) {
        /* a loaded model keeps its FP32 embedding table, and its head in
         * W4A16 even when only layers are checked */
        need += sizeof(float) * (uint64_t) cfg.vocab * cfg.hidden
                + (uint64_t) cfg.vocab * ((cfg.hidden + ENG_W4_GROUP - 1) / ENG_W4_GROUP)
                  * (64 + 2);
    }
    g_autofree char *mode = w->check_layers == 0
                                ? g_strdup("full")
                                : g_strdup_printf("layers=%d", w->check_layers);
    g_autofree char *what = g_strdup_printf(
        "--functional %s: checking the values of %s at prompt %u, decode %u x batch %u",
        mode, spec->name, w->prompt, w->decode, w->batch);
    if (!hs_mem_fits(need, what, "check fewer layers (--functional layers=N), a shorter "
                     "request, or none (--functional off)", error)) {
        return NULL;
    }
    EngModel *model;
    if (w->weights_dir) {
        model = eng_model_load_layers(&cfg, w->weights_dir, layers, error);
        if (model == NULL) {
            return NULL;
        }
    } else {
        model = eng_model_new(&cfg);
    }
    return sim_checker_new(model, gs, (uint32_t) w->check_layers, w->batch, w->progress,
                           w->progress_opaque);
}

/* The checker a run builds when it is given none, with progress around the
 * reference's computation.  (transfer full) */
static SimChecker *
own_checker(const MdlSpec *spec, const SimWorkload *w, GError **error)
{
    if (w->progress) {
        w->progress(w->progress_opaque, "computing the reference", 0, 1);
    }
    SimChecker *c = sim_run_checker_new(spec, w, error);
    if (w->progress) {
        w->progress(w->progress_opaque, "computing the reference", 1, 1);
    }
    return c;
}

/* Progress through the workload's callback: wraps the values hooks,
 * counts finished tasks, reports each new percent. */
typedef struct Progress {
    const SimValuesOps *inner;
    void *inner_opaque;
    const SimWorkload *w;
    const char *policy;
    uint32_t done, n;
    int pct;
} Progress;

static void
progress_start(void *opaque, uint32_t id, const SimTask *t)
{
    Progress *p = opaque;
    if (p->inner && p->inner->task_start) {
        p->inner->task_start(p->inner_opaque, id, t);
    }
}

static void
progress_end(void *opaque, uint32_t id, const SimTask *t)
{
    Progress *p = opaque;
    if (p->inner && p->inner->task_end) {
        p->inner->task_end(p->inner_opaque, id, t);
    }
    int pct = (int) (100.0 * ++p->done / p->n);
    if (pct != p->pct) {
        p->pct = pct;
        p->w->progress(p->w->progress_opaque, p->policy, p->done, p->n);
    }
}

static const SimValuesOps progress_ops = { progress_start, progress_end };

/*
 * The unpartitioned reference went non-finite (finite weights whose
 * products overflow FP32): every run's values then differ from it, which
 * is the model's fault, not the policy's (was: "policy P computed wrong
 * values ... inf of nan", exit 3).
 */
static gboolean
reference_finite(SimRunReport *report, const SimWorkload *w, GError **error)
{
    if (!report->check.ref_nonfinite) {
        return TRUE;
    }
    g_autofree char *weights = sim_workload_weights(w);
    g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                "%s: the unpartitioned reference's values are not finite from node %s on "
                "(finite weights whose products overflow: the model's values, not a policy's)",
                weights, report->check.ref_nonfinite_at);
    sim_run_report_clear(report);
    return FALSE;
}

gboolean
sim_run_execute(const HwSoc *soc, const MdlSpec *spec, const char *policy,
                const SimPlan *plan, const SimWorkload *w, SimChecker *checker,
                SimRunReport *report, SimExecResult *exec, GError **error)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const SimPolicy *named = sim_policy_find(policy);
    const HwStack *stack = run_stack(soc, named ? named->stack : NULL, w, error);
    if (stack == NULL) {
        return FALSE;
    }
    g_autoptr(SimChecker) own = NULL;
    g_autoptr(SimValues) values = NULL;
    if (w->check_layers >= 0) {
        if (checker == NULL && !(checker = own = own_checker(spec, w, error))) {
            return FALSE;
        }
        values = sim_values_new(checker, plan);
    }
    SimExecResult r = { 0 };
    const SimValuesOps *ops = values ? &sim_values_ops : NULL;
    void *opaque = values;
    Progress prog = { ops, opaque, w, policy, 0, MAX(1, sim_plan_len(plan)), -1 };
    if (w->progress) {
        ops = &progress_ops;
        opaque = &prog;
    }
    gboolean ok = sim_exec_run_full((SimPlan *) plan, NULL, soc, stack, &w->render, ops, opaque,
                                    w->observer, w->observer_opaque, &r, error);
    if (!ok) {
        g_prefix_error(error, "policy %s: ", policy);
        return FALSE;
    }
    *report = (SimRunReport) { .soc = soc->name, .model = spec->name, .policy = policy,
                               .stack = stack->name };
    sim_run_measure(soc, &r, w, report);
    run_caveats(soc, stack, report);
    if (values) {
        sim_values_check(values, &report->check);
        if (!reference_finite(report, w, error)) {
            sim_exec_result_clear(&r);
            return FALSE;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    report->wall_s = (double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec);
    if (exec) {
        *exec = r;
    } else {
        sim_exec_result_clear(&r);
    }
    return TRUE;
}

/* The phases of a request planned one at a time (a streamed run). */
typedef struct Phases {
    const HwSoc *soc;
    const MdlSpec *spec;
    const SimPolicy *policy;
    const SimWorkload *w;
    SimCostModel *cost;
    uint32_t next;               /* 0: prefill, 1 + s: decode step s */
    uint32_t *entry, n_entry;
    /* decode step 1 as planned, re-used for every later step (see
     * decode_from_template); NULL: plan every step with the policy */
    SimPlan *tmpl;
    uint32_t *tmpl_entry, n_tmpl_entry;
    uint32_t *tmpl_exit, n_tmpl_exit;
    uint32_t *tmpl_order;        /* its topological order, ids from 0 (NULL:
                                  * not known) */
    uint32_t tmpl_first;         /* the last phase made from it starts here
                                  * (UINT32_MAX: the last was not) */
    MdlGraph *graph;             /* decode step 1's graph, moved on to each step */
    uint32_t *pos0;              /* its nodes' positions at step 1 */
    SimValues *values;           /* the values check, told each phase's tasks
                                  * (NULL: none) */
} Phases;

/* A built-in policy's decode plan does not depend on the step or on the
 * context: it places matmuls by their cost (the same at every context)
 * and every other op by a fixed rule.  A plug-in's may. */
static gboolean
policy_builtin(const SimPolicy *policy)
{
    for (const SimPolicy *const *p = sim_policy_list(); *p; p++) {
        if (*p == policy) {
            return TRUE;
        }
    }
    return FALSE;
}

static int
find_u32(const uint32_t *a, uint32_t n, uint32_t v)
{
    for (uint32_t i = 0; i < n; i++) {
        if (a[i] == v) {
            return (int) i;
        }
    }
    return -1;
}

/* Keep decode step 1 (tasks from @first on, planned after @entry) as the
 * template of later steps, if every dep outside it is an entry task. */
static void
keep_template(Phases *ph, const SimPlan *plan, uint32_t first, const uint32_t *entry,
              uint32_t n_entry)
{
    g_autoptr(SimPlan) t = sim_plan_new();
    t->base = first;
    for (uint32_t i = first; i < sim_plan_len(plan); i++) {
        const SimTask *task = sim_plan_task(plan, i);
        for (uint32_t d = 0; d < task->n_deps; d++) {
            if (task->deps[d] < first && find_u32(entry, n_entry, task->deps[d]) < 0) {
                return;
            }
        }
        /* its name stays the plan's own (decode_from_template) */
        sim_plan_task(t, sim_plan_add(t, task))->name = task->name;
    }
    /* step 1 passed the executor's checks: its order, checked, is the
     * order of every copy (the same ids moved) */
    uint32_t *order = sim_plan_topo_order_from(t, t->base, NULL);
    if (order) {
        for (uint32_t i = 0; i < t->tasks->len; i++) {
            order[i] -= t->base;
        }
    }
    ph->tmpl_order = order;
    ph->tmpl = g_steal_pointer(&t);
    ph->tmpl_entry = g_memdup2(entry, sizeof(uint32_t) * MAX(1, n_entry));
    ph->n_tmpl_entry = n_entry;
    ph->tmpl_exit = g_memdup2(ph->entry, sizeof(uint32_t) * MAX(1, ph->n_entry));
    ph->n_tmpl_exit = ph->n_entry;
}

/* @task's work (a kernel of @node) at @node's position now. */
static void
work_at(const MdlNode *node, SimTask *task)
{
    MdlWork mw;
    const SimSlice *sl = &task->slice;
    mdl_node_work(node, sl->tok0, sl->tok1, sl->row0, sl->row1, sl->pad_tokens,
                  task->work.prec, &mw);
    task->work.m = mw.m;
    task->work.k = mw.k;
    task->work.n = mw.n;
    task->work.flops = mw.flops;
    task->work.read_bytes = mw.read_bytes;
    task->work.write_bytes = mw.write_bytes;
}

/* Decode step @s as the template with ids moved, entry deps on this
 * step's entry, and each kernel's work at this step's context (attention
 * reads a longer KV cache: the only cost that changes). */
static void
decode_from_template(Phases *ph, SimPlan *plan, uint32_t s)
{
    SimPlan *t = ph->tmpl;
    /* a decode graph differs from step to step only by its position */
    MdlGraph *g = ph->graph;
    if (g == NULL) {
        g = ph->graph = mdl_graph_new_decode(ph->spec, ph->w->prompt + 1, ph->w->batch);
        ph->pos0 = g_new(uint32_t, g->n_nodes);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            ph->pos0[i] = g->nodes[i].pos0;
        }
        /* of a kernel's work only attention's depends on the position
         * (the KV cache it reads): every other one is the same at every
         * step, computed here once as each step would */
        for (uint32_t i = t->base; i < sim_plan_len(t); i++) {
            SimTask *task = sim_plan_task(t, i);
            if (task->kind == SIM_TASK_KERNEL &&
                g->nodes[task->node].op != MDL_OP_ATTENTION) {
                work_at(&g->nodes[task->node], task);
            }
        }
    }
    g->pos0 = ph->w->prompt + s;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        g->nodes[i].pos0 = ph->pos0[i] + s - 1;
    }
    uint32_t n = t->tasks->len;
    const SimTask *from = (const SimTask *) t->tasks->data;
    uint32_t first = sim_plan_add_block(plan, from, n);
    SimTask *to = sim_plan_task(plan, first);
    for (uint32_t i = 0; i < n; i++) {
        SimTask *task = &to[i];
        for (uint32_t k = 0; k < task->n_deps; k++) {
            uint32_t dep = from[i].deps[k];
            task->deps[k] = dep >= t->base
                            ? dep - t->base + first
                            : ph->entry[find_u32(ph->tmpl_entry, ph->n_tmpl_entry, dep)];
        }
        task->step = s;
        if (task->kind == SIM_TASK_KERNEL && g->nodes[task->node].op == MDL_OP_ATTENTION) {
            work_at(&g->nodes[task->node], task);
        }
    }
    for (uint32_t i = 0; i < ph->n_tmpl_exit; i++) {
        ph->entry[i] = ph->tmpl_exit[i] - t->base + first;
    }
    ph->tmpl_first = first;
}

/* SimPlanSource.order: a step made from the template is ordered as it. */
static gboolean
phases_order(void *opaque, uint32_t from, uint32_t n, uint32_t *order)
{
    Phases *ph = opaque;
    if (ph->tmpl_order == NULL || from != ph->tmpl_first || n != ph->tmpl->tasks->len) {
        return FALSE;
    }
    for (uint32_t i = 0; i < n; i++) {
        order[i] = ph->tmpl_order[i] + from;
    }
    return TRUE;
}

static gboolean
phases_next(void *opaque, SimPlan *plan, gboolean *more, GError **error)
{
    Phases *ph = opaque;
    const SimWorkload *w = ph->w;
    uint32_t from = sim_plan_len(plan);
    gboolean ok;
    ph->tmpl_first = UINT32_MAX;
    if (ph->next == 0) {
        g_autoptr(MdlGraph) pre = mdl_graph_new_prefill(ph->spec, w->prompt, 0);
        ok = plan_phase(plan, ph->soc, ph->cost, pre, ph->policy, w, SIM_PHASE_PREFILL, 0,
                        &ph->entry, &ph->n_entry, error);
        sim_cost_share_gpu(ph->cost, 1.0);
    } else {
        uint32_t s = ph->next - 1;
        if (ph->tmpl && ph->n_entry == ph->n_tmpl_exit) {
            decode_from_template(ph, plan, s);
            ok = TRUE;
        } else {
            uint32_t first = sim_plan_len(plan), n_entry = ph->n_entry;
            g_autofree uint32_t *entry = g_memdup2(ph->entry, sizeof(uint32_t) * MAX(1, n_entry));
            g_autoptr(MdlGraph) dec = mdl_graph_new_decode(ph->spec, w->prompt + s, w->batch);
            ok = plan_phase(plan, ph->soc, ph->cost, dec, ph->policy, w, SIM_PHASE_DECODE, s,
                            &ph->entry, &ph->n_entry, error);
            if (ok && s == 1 && policy_builtin(ph->policy) && !g_getenv("HS_NO_STEP_TEMPLATE")) {
                keep_template(ph, plan, first, entry, n_entry);
            }
        }
    }
    if (ok && w->planned) {
        ok = w->planned(w->planned_opaque, plan, from, error);
    }
    if (ok && ph->values) {
        sim_values_add(ph->values, plan, from);
    }
    ph->next++;
    *more = ph->next <= w->decode;
    /* a checked phase takes long enough to show each */
    if (w->progress && (!*more || ph->values || ph->next % 64 == 0)) {
        /* a phase is planned when the one before starts */
        w->progress(w->progress_opaque, ph->policy->name, ph->next - 1, w->decode + 1);
    }
    return ok;
}

/* sim_run without a plan or task times to give back: each phase is
 * planned when the one before starts and forgotten once it has ended (the
 * values check keeps what it needs of it until the phase is compared), so
 * memory stays flat in the number of decode steps. */
static gboolean
run_streamed(const HwSoc *soc, const MdlSpec *spec, const SimPolicy *policy,
             const SimWorkload *w, SimChecker *checker, SimRunReport *report,
             GError **error)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const HwStack *stack = run_stack(soc, policy->stack, w, error);
    if (stack == NULL) {
        return FALSE;
    }
    g_autoptr(SimChecker) own = NULL;
    g_autoptr(SimValues) values = NULL;
    g_autoptr(SimPlan) plan = sim_plan_new();
    if (w->check_layers >= 0) {
        if (checker == NULL && !(checker = own = own_checker(spec, w, error))) {
            return FALSE;
        }
        values = sim_values_new(checker, plan);
    }
    g_autoptr(SimCostModel) cost = sim_cost_new(soc, stack);
    if (w->render.fps > 0 && w->render.llm_priority < HW_PRIO_NORMAL) {
        /* as sim_run_plan: prefill planned with the GPU time frames leave */
        double duty = w->render.fps * w->render.frame_ms / 1000.0;
        sim_cost_share_gpu(cost, CLAMP(1.0 - duty, 0.05, 1.0));
    }
    g_assert(w->prompt > 0 && w->batch > 0);
    Phases ph = { .soc = soc, .spec = spec, .policy = policy, .w = w, .cost = cost,
                  .tmpl_first = UINT32_MAX, .values = values };
    SimPlanSource src = { phases_next, &ph, phases_order };
    SimExecResult r = { 0 };
    gboolean ok = sim_exec_run_full(plan, &src, soc, stack, &w->render,
                                    values ? &sim_values_ops : NULL, values,
                                    w->observer, w->observer_opaque, &r, error);
    if (w->progress) {
        w->progress(w->progress_opaque, policy->name, w->decode + 1, w->decode + 1);
    }
    g_free(ph.entry);
    sim_plan_free(ph.tmpl);
    mdl_graph_free(ph.graph);
    g_free(ph.pos0);
    g_free(ph.tmpl_entry);
    g_free(ph.tmpl_exit);
    g_free(ph.tmpl_order);
    if (!ok) {
        if (!g_str_has_prefix((*error)->message, "policy ")) {
            g_prefix_error(error, "policy %s: ", policy->name);
        }
        return FALSE;
    }
    *report = (SimRunReport) { .soc = soc->name, .model = spec->name, .policy = policy->name,
                               .stack = stack->name };
    sim_run_measure(soc, &r, w, report);
    run_caveats(soc, stack, report);
    if (values) {
        sim_values_check(values, &report->check);
    }
    sim_exec_result_clear(&r);
    if (values && !reference_finite(report, w, error)) {
        return FALSE;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    report->wall_s = (double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec);
    return TRUE;
}

gboolean
sim_run(const HwSoc *soc, const MdlSpec *spec, const SimPolicy *policy,
        const SimWorkload *w, SimChecker *checker, SimRunReport *report,
        SimExecResult *exec, SimPlan **plan_out, GError **error)
{
    if (exec == NULL && plan_out == NULL) {
        return run_streamed(soc, spec, policy, w, checker, report, error);
    }
    g_autoptr(SimPlan) plan = sim_run_plan(soc, spec, policy, w, NULL, error);
    if (plan == NULL || (w->planned && !w->planned(w->planned_opaque, plan, plan->base,
                                                   error))) {
        return FALSE;
    }
    /* a plug-in's stack: execute on the one it was planned on */
    SimWorkload on = *w;
    on.stack = w->stack ? w->stack : policy->stack;
    if (!sim_run_execute(soc, spec, policy->name, plan, &on, checker, report, exec, error)) {
        return FALSE;
    }
    if (plan_out) {
        *plan_out = g_steal_pointer(&plan);
    }
    return TRUE;
}
