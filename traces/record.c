/*
 * record.c - see record.h.
 */
#include "traces/record.h"
#include "traces/workload-json.h"
#include "sim/util/escape.h"
#include "sim/util/param.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <math.h>
#include <string.h>

/* ---- writing ------------------------------------------------------------- */

static cJSON *
task_json(const SimTask *t, uint32_t id, const HwSoc *soc)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", id);
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "kind", sim_task_kind_name[t->kind]);
    cJSON_AddStringToObject(o, "phase", sim_phase_name[t->phase]);
    cJSON_AddNumberToObject(o, "step", t->step);
    cJSON_AddStringToObject(o, "proc", ((HwDev *) g_ptr_array_index(soc->devs, t->proc))->name);
    cJSON_AddNumberToObject(o, "node", t->node);
    if (t->kind == SIM_TASK_SYNC) {
        cJSON_AddStringToObject(o, "sync", sim_sync_name[t->sync]);
        cJSON_AddStringToObject(o, "from",
                                ((HwDev *) g_ptr_array_index(soc->devs, t->sync_from))->name);
        cJSON_AddStringToObject(o, "to",
                                ((HwDev *) g_ptr_array_index(soc->devs, t->sync_to))->name);
    } else {
        if (t->kind == SIM_TASK_KERNEL) {
            cJSON *tok = cJSON_AddArrayToObject(o, "tokens");
            cJSON_AddItemToArray(tok, cJSON_CreateNumber(t->slice.tok0));
            cJSON_AddItemToArray(tok, cJSON_CreateNumber(t->slice.tok1));
            cJSON *rows = cJSON_AddArrayToObject(o, "rows");
            cJSON_AddItemToArray(rows, cJSON_CreateNumber(t->slice.row0));
            cJSON_AddItemToArray(rows, cJSON_CreateNumber(t->slice.row1));
            cJSON_AddNumberToObject(o, "pad", t->slice.pad_tokens);
        }
        cJSON_AddStringToObject(o, "op", mdl_op_name[t->work.op]);
        cJSON_AddStringToObject(o, "prec", mdl_precision_name[t->work.prec]);
        cJSON_AddNumberToObject(o, "m", (double) t->work.m);
        cJSON_AddNumberToObject(o, "k", (double) t->work.k);
        cJSON_AddNumberToObject(o, "n", (double) t->work.n);
        cJSON_AddBoolToObject(o, "weight_lhs", t->work.weight_lhs);
        cJSON_AddNumberToObject(o, "flops", (double) t->work.flops);
        cJSON_AddNumberToObject(o, "read_bytes", (double) t->work.read_bytes);
        cJSON_AddNumberToObject(o, "write_bytes", (double) t->work.write_bytes);
        if (t->work.serial_elems > 0) {
            cJSON_AddNumberToObject(o, "serial_elems", (double) t->work.serial_elems);
        }
    }
    cJSON *deps = cJSON_AddArrayToObject(o, "deps");
    for (uint32_t d = 0; d < t->n_deps; d++) {
        cJSON_AddItemToArray(deps, cJSON_CreateNumber(t->deps[d]));
    }
    return o;
}

struct TrcRecordWriter {
    HsOutFile *f;
    const HwSoc *soc;
    uint32_t n;                  /* tasks written */
    GArray *npu_offline;         /* the plan's, as of the last phase */
};

TrcRecordWriter *
trc_record_open(const char *path, const HwSoc *soc, const MdlSpec *spec, const char *policy,
                const SimWorkload *w, GError **error)
{
    return trc_record_open_with(path, soc, spec, policy, w, NULL, error);
}

TrcRecordWriter *
trc_record_open_with(const char *path, const HwSoc *soc, const MdlSpec *spec,
                     const char *policy, const SimWorkload *w, const cJSON *provenance,
                     GError **error)
{
    g_autoptr(cJSON) head = cJSON_CreateObject();
    cJSON_AddNumberToObject(head, "hs_record_version", TRC_RECORD_VERSION);
    cJSON_AddStringToObject(head, "soc", soc->name);
    cJSON_AddStringToObject(head, "policy", policy);
    cJSON *model = cJSON_AddObjectToObject(head, "model");
    cJSON_AddStringToObject(model, "name", spec->name);
    cJSON_AddItemToObject(model, "config", mdl_spec_to_json(spec));
    cJSON_AddItemToObject(head, "workload", trc_workload_to_json(w));
    if (provenance) {
        /* who made it and how (the reader ignores it: older recordings
         * have none) */
        cJSON_AddItemToObject(head, "provenance", cJSON_Duplicate(provenance, TRUE));
    }
    cJSON *procs = cJSON_AddArrayToObject(head, "processors");
    for (guint i = 0; i < soc->devs->len; i++) {
        const HwDev *d = g_ptr_array_index(soc->devs, i);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", d->name);
        cJSON_AddStringToObject(p, "kind", hw_kind_name[d->cls->kind]);
        cJSON_AddItemToArray(procs, p);
    }

    HsOutFile *f = hs_outfile_open(path, error);
    if (f == NULL) {
        return NULL;
    }
    /* the head without its closing brace, then the tasks one per line as
     * they are planned, then the NPU shapes the plan prepared offline
     * (known once every phase is planned) */
    g_autofree char *h = hs_json_print(head, FALSE);
    h[strlen(h) - 1] = '\0';
    fprintf(hs_outfile_stream(f), "%s,\"tasks\":[", h);
    TrcRecordWriter *rw = g_new0(TrcRecordWriter, 1);
    rw->f = f;
    rw->soc = soc;
    rw->npu_offline = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    return rw;
}

gboolean
trc_record_add(void *opaque, const SimPlan *plan, uint32_t from, GError **error)
{
    TrcRecordWriter *rw = opaque;
    FILE *fp = hs_outfile_stream(rw->f);
    g_assert(from == rw->n);     /* every task once, in id order */
    for (uint32_t i = from; i < sim_plan_len(plan); i++) {
        g_autoptr(cJSON) t = task_json(sim_plan_task(plan, i), i, rw->soc);
        g_autofree char *s = hs_json_print(t, FALSE);
        fprintf(fp, "%s\n%s", rw->n++ ? "," : "", s);
    }
    g_array_set_size(rw->npu_offline, 0);
    g_array_append_vals(rw->npu_offline, plan->npu_offline->data, plan->npu_offline->len);
    return hs_outfile_ok(rw->f, error);     /* "FILE: cannot write: REASON" */
}

gboolean
trc_record_close(TrcRecordWriter *rw, GError **error)
{
    FILE *fp = hs_outfile_stream(rw->f);
    fputs("\n],\"npu_offline\":[", fp);
    for (guint i = 0; i < rw->npu_offline->len; i++) {
        fprintf(fp, "%s%u", i ? "," : "", g_array_index(rw->npu_offline, uint32_t, i));
    }
    fputs("]}\n", fp);
    HsOutFile *f = rw->f;
    g_array_unref(rw->npu_offline);
    g_free(rw);
    return hs_outfile_commit(f, error);
}

void
trc_record_abort(TrcRecordWriter *rw)
{
    if (rw == NULL) {
        return;
    }
    hs_outfile_abort(rw->f);
    g_array_unref(rw->npu_offline);
    g_free(rw);
}

gboolean
trc_record_write(const char *path, const HwSoc *soc, const MdlSpec *spec,
                 const char *policy, const SimWorkload *w, const SimPlan *plan,
                 GError **error)
{
    return trc_record_write_with(path, soc, spec, policy, w, plan, NULL, error);
}

gboolean
trc_record_write_with(const char *path, const HwSoc *soc, const MdlSpec *spec,
                      const char *policy, const SimWorkload *w, const SimPlan *plan,
                      const cJSON *provenance, GError **error)
{
    TrcRecordWriter *rw = trc_record_open_with(path, soc, spec, policy, w, provenance, error);
    if (rw == NULL) {
        return FALSE;
    }
    if (!trc_record_add(rw, plan, plan->base, error)) {
        trc_record_abort(rw);
        return FALSE;
    }
    return trc_record_close(rw, error);
}

/* ---- reading ------------------------------------------------------------- */

void
trc_recording_free(TrcRecording *r)
{
    if (r == NULL) {
        return;
    }
    g_free(r->soc);
    g_free(r->policy);
    mdl_spec_free(r->spec);
    g_strfreev(r->proc_names);
    g_free(r->proc_kinds);
    sim_plan_free(r->plan);
    cJSON_Delete(r->config);
    g_free(r);
}

static gboolean G_GNUC_PRINTF(4, 5)
bad(GError **error, const cJSON *got, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *want = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *desc = hs_json_describe(got);
    g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_VALUE,
                "%s: expected %s (got %s)", path, want, desc);
    return FALSE;
}

static const cJSON *
member(const cJSON *obj, const char *path, const char *key, GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL) {
        g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_VALUE,
                    "%s: missing key \"%s\"", path, key);
    }
    return v;
}

static const char *
get_str(const cJSON *obj, const char *path, const char *key, GError **error)
{
    const cJSON *v = member(obj, path, key, error);
    if (v == NULL) {
        return NULL;
    }
    if (!cJSON_IsString(v)) {
        g_autofree char *p = hs_json_path_key(path, key);
        bad(error, v, p, "a string");
        return NULL;
    }
    return v->valuestring;
}

/* [a, b] with lo <= a < b <= hi. */
static gboolean
get_range(const cJSON *obj, const char *path, const char *key, uint32_t hi, uint32_t *a,
          uint32_t *b, GError **error)
{
    const cJSON *v = member(obj, path, key, error);
    if (v == NULL) {
        return FALSE;
    }
    g_autofree char *p = hs_json_path_key(path, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 ||
        !cJSON_IsNumber(cJSON_GetArrayItem(v, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(v, 1))) {
        return bad(error, v, p, "a pair [start, end]");
    }
    double x = cJSON_GetArrayItem(v, 0)->valuedouble, y = cJSON_GetArrayItem(v, 1)->valuedouble;
    if (x != floor(x) || y != floor(y) || x < 0 || y > hi || x >= y) {
        g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_VALUE,
                    "%s: expected a pair of integers 0 <= start < end <= %u (got [%.15g, %.15g])",
                    p, hi, x, y);
        return FALSE;
    }
    *a = (uint32_t) x;
    *b = (uint32_t) y;
    return TRUE;
}

/* The processor named @name (the value of @key in @obj) as its index. */
static gboolean
find_proc(const TrcRecording *r, const cJSON *obj, const char *path, const char *key,
          const char *name, uint32_t *out, GError **error)
{
    for (uint32_t i = 0; i < r->n_procs; i++) {
        if (strcmp(r->proc_names[i], name) == 0) {
            *out = i;
            return TRUE;
        }
    }
    g_autofree char *p = hs_json_path_key(path, key);
    g_autoptr(GString) list = g_string_new(NULL);
    for (uint32_t i = 0; i < r->n_procs; i++) {
        g_autofree char *e = hs_escape(r->proc_names[i]);
        g_string_append_printf(list, "%s%s", i ? ", " : "", e);
    }
    return bad(error, cJSON_GetObjectItemCaseSensitive(obj, key), p,
               "a processor of $.processors (%s)", list->str);
}

/* A table's error (HS_CONFIG_ERROR) as the recording's. */
static gboolean
trace_error(GError **error)
{
    if (error && *error) {
        (*error)->domain = HS_TRACE_ERROR;
        (*error)->code = HS_TRACE_ERROR_BAD_VALUE;
    }
    return FALSE;
}

static gboolean
read_workload(TrcRecording *r, const cJSON *root, GError **error)
{
    const cJSON *w = member(root, "$", "workload", error);
    if (w == NULL) {
        return FALSE;
    }
    sim_workload_init(&r->workload);
    return trc_workload_from_json(w, "$.workload", &r->workload, error) || trace_error(error);
}

/*
 * A task as task_json() writes it, read by one table per kind (the keys a
 * kind has differ); what a table cannot say is checked after it in
 * read_task(): the id is the task's index, the step one of the workload's,
 * the node one of its phase's graph, the processors $.processors'.
 */
typedef struct TaskKeys {
    SimTask t;
    uint32_t id;
    char *name, *proc, *from, *to;
} TaskKeys;

static void
task_keys_clear(TaskKeys *k)
{
    g_free(k->name);
    g_free(k->proc);
    g_free(k->from);
    g_free(k->to);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(TaskKeys, task_keys_clear)

/* the kind alone first: it says which table reads the rest */
static const HsParam task_kind_params[] = {
    HS_PARAM_ENUM("kind", TaskKeys, t.kind, SimTaskKind, sim_task_kind_name,
                  SIM_TASK_KIND_COUNT, HS_REQUIRED, "what the task does"),
    HS_PARAM_END
};

/* bounds: a step of the longest decode, node indices, sizes below 2^30
 * (m, k, n) and 10^18 (counts): far above any model's, below overflow */
#define TASK_HEAD                                                                       \
    HS_PARAM_U32("id", TaskKeys, id, 0, UINT32_MAX, HS_REQUIRED, "its index in $.tasks"), \
    HS_PARAM_STR("name", TaskKeys, name, NULL, NULL, "label"),                          \
    HS_PARAM_ENUM("kind", TaskKeys, t.kind, SimTaskKind, sim_task_kind_name,           \
                  SIM_TASK_KIND_COUNT, HS_REQUIRED, "what the task does"),             \
    HS_PARAM_ENUM("phase", TaskKeys, t.phase, SimPhase, sim_phase_name, SIM_PHASE_COUNT, \
                  HS_REQUIRED, "prefill or decode"),                                   \
    HS_PARAM_U32("step", TaskKeys, t.step, 0, UINT32_MAX, HS_REQUIRED, "decode step"),  \
    HS_PARAM_STR("proc", TaskKeys, proc, NULL, NULL, "processor it runs on"),           \
    HS_PARAM_I32("node", TaskKeys, t.node, -1, INT32_MAX, HS_REQUIRED,                  \
                 "graph node of its phase (-1: none)")
#define TASK_WORK                                                                       \
    HS_PARAM_ENUM("op", TaskKeys, t.work.op, MdlOp, mdl_op_name, MDL_OP_COUNT,          \
                  HS_REQUIRED, "operator"),                                            \
    HS_PARAM_ENUM("prec", TaskKeys, t.work.prec, MdlPrecision, mdl_precision_name,      \
                  MDL_PREC_COUNT, HS_REQUIRED, "storage precision"),                   \
    HS_PARAM_U64("m", TaskKeys, t.work.m, 0, 1 << 30, HS_REQUIRED, "GEMM m"),            \
    HS_PARAM_U64("k", TaskKeys, t.work.k, 0, 1 << 30, HS_REQUIRED, "GEMM k"),            \
    HS_PARAM_U64("n", TaskKeys, t.work.n, 0, 1 << 30, HS_REQUIRED, "GEMM n"),            \
    HS_PARAM_BOOL("weight_lhs", TaskKeys, t.work.weight_lhs, HS_REQUIRED,               \
                  "weights on the left"),                                              \
    HS_PARAM_U64("flops", TaskKeys, t.work.flops, 0, 1e18, HS_REQUIRED, "work"),         \
    HS_PARAM_U64("read_bytes", TaskKeys, t.work.read_bytes, 0, 1e18, HS_REQUIRED,        \
                 "DRAM reads"),                                                        \
    HS_PARAM_U64("write_bytes", TaskKeys, t.work.write_bytes, 0, 1e18, HS_REQUIRED,      \
                 "DRAM writes"),                                                       \
    HS_PARAM_U64("serial_elems", TaskKeys, t.work.serial_elems, 0, 1e18, 0,             \
                 "elements one thread scans in scalar code (shadow tasks; 0: none)")

static const HsParam task_kernel_params[] = {
    TASK_HEAD,
    HS_PARAM_U32("pad", TaskKeys, t.slice.pad_tokens, 0, 65536, HS_REQUIRED,
                 "computed as this many tokens (0: no padding)"),
    TASK_WORK,
    HS_PARAM_END
};
static const HsParam task_sync_params[] = {
    TASK_HEAD,
    HS_PARAM_ENUM("sync", TaskKeys, t.sync, SimSyncMech, sim_sync_name, SIM_SYNC_COUNT,
                  HS_REQUIRED, "mechanism"),
    HS_PARAM_STR("from", TaskKeys, from, NULL, NULL, "producer processor"),
    HS_PARAM_STR("to", TaskKeys, to, NULL, NULL, "consumer processor"),
    HS_PARAM_END
};
static const HsParam task_work_params[] = {   /* prepare, shadow */
    TASK_HEAD,
    TASK_WORK,
    HS_PARAM_END
};

static const HsParam *const task_params[] = {
    [SIM_TASK_KERNEL] = task_kernel_params,
    [SIM_TASK_SYNC] = task_sync_params,
    [SIM_TASK_PREPARE] = task_work_params,
    [SIM_TASK_SHADOW] = task_work_params,
};
G_STATIC_ASSERT(G_N_ELEMENTS(task_params) == SIM_TASK_KIND_COUNT);

/* the keys read here, not by the tables: pairs and a list of any length */
static const char *const task_kernel_keys[] = { "tokens", "rows", "deps", NULL };
static const char *const task_other_keys[] = { "deps", NULL };

/*
 * The phase graphs a recording's tasks refer to: the prefill's, and one
 * decode graph whose positions are moved to the step asked for (the steps
 * differ in their context alone, as sim/run.c's decode template: a
 * recording of 65536 steps holds one graph, not 65536).
 */
typedef struct Graphs {
    MdlGraph *prefill, *decode;
    uint32_t *pos0;              /* the decode graph's nodes' at step 0 */
    uint32_t step;               /* the step its positions are at now */
} Graphs;

static void
graphs_init(Graphs *gs, const MdlSpec *spec, const SimWorkload *w)
{
    *gs = (Graphs) { mdl_graph_new_prefill(spec, w->prompt, 0), NULL, NULL, 0 };
    if (w->decode > 0) {
        gs->decode = mdl_graph_new_decode(spec, w->prompt, w->batch);
        gs->pos0 = g_new(uint32_t, gs->decode->n_nodes);
        for (uint32_t i = 0; i < gs->decode->n_nodes; i++) {
            gs->pos0[i] = gs->decode->nodes[i].pos0;
        }
    }
}

static void
graphs_clear(Graphs *gs)
{
    mdl_graph_free(gs->prefill);
    mdl_graph_free(gs->decode);
    g_free(gs->pos0);
}

/* The graph of @phase (decode: of @step, as mdl_graph_new_decode(spec,
 * prompt + step, batch) builds it). */
static const MdlGraph *
graphs_get(Graphs *gs, SimPhase phase, uint32_t step)
{
    if (phase == SIM_PHASE_PREFILL) {
        return gs->prefill;
    }
    if (step != gs->step) {
        for (uint32_t i = 0; i < gs->decode->n_nodes; i++) {
            gs->decode->nodes[i].pos0 = gs->pos0[i] + step;
        }
        gs->decode->pos0 = gs->pos0[0] + step;
        gs->step = step;
    }
    return gs->decode;
}

/* @x as written: the shortest decimal text that reads back as the same
 * double (1.0000001, not %g's 1). */
static char *
number_text(double x)
{
    if (!isfinite(x)) {
        return g_strdup(isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int prec = 1; prec < 17; prec++) {
        char fmt[8];
        g_snprintf(fmt, sizeof(fmt), "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof(buf), fmt, x);
        if (g_ascii_strtod(buf, NULL) == x) {
            return g_strdup(buf);
        }
    }
    return g_strdup(g_ascii_formatd(buf, sizeof(buf), "%.17g", x));
}

/* The recorded @key of task @t differs from @want, what the model's graph
 * says it is (@why). */
static gboolean G_GNUC_PRINTF(7, 8)
check_derived(const cJSON *t, const char *path, const char *key, uint64_t got, uint64_t want,
              GError **error, const char *why, ...)
{
    if (got == want) {
        return TRUE;
    }
    va_list ap;
    va_start(ap, why);
    g_autofree char *because = g_strdup_vprintf(why, ap);
    va_end(ap);
    g_autofree char *p = hs_json_path_key(path, key);
    return bad(error, cJSON_GetObjectItemCaseSensitive(t, key), p,
               "%" G_GUINT64_FORMAT ", %s", want, because);
}

/*
 * A kernel's work as its node and slice make it (sim/builder.c work_of:
 * mdl_node_work at its precision): the recorded m, k, n and costs are what
 * the timing model reads, so a recording may not say otherwise (a k of 0
 * divided by zero in the NPU's tiling; an m of 10^9 timed a kernel of a
 * billion tokens).
 */
static gboolean
check_kernel_work(const cJSON *t, const char *path, const MdlNode *node, int32_t id,
                  const SimTask *task, GError **error)
{
    const SimSlice *s = &task->slice;
    const SimWork *w = &task->work;
    MdlWork mw;
    mdl_node_work(node, s->tok0, s->tok1, s->row0, s->row1, s->pad_tokens, w->prec, &mw);
    gboolean attn = node->op == MDL_OP_ATTENTION, mm = node->op == MDL_OP_MATMUL;
    uint32_t toks = s->tok1 - s->tok0;
    const char *nm = node->name;
    gboolean ok =
        (s->pad_tokens && !attn
         ? check_derived(t, path, "m", w->m, mw.m, error,
                         "the slice's %u tokens padded to its pad", toks)
         : check_derived(t, path, "m", w->m, mw.m, error, "the slice's %u tokens", toks)) &&
        (mm ? check_derived(t, path, "k", w->k, mw.k, error,
                            "the input features of node %d (%s)", id, nm)
         : attn ? check_derived(t, path, "k", w->k, mw.k, error,
                                "the head size of node %d (%s)", id, nm)
         : check_derived(t, path, "k", w->k, mw.k, error,
                         "as node %d (%s) is elementwise", id, nm)) &&
        (attn ? check_derived(t, path, "n", w->n, mw.n, error,
                              "the K/V positions the slice of node %d (%s) reads", id, nm)
         : check_derived(t, path, "n", w->n, mw.n, error, "the slice's %u rows",
                         s->row1 - s->row0)) &&
        check_derived(t, path, "flops", w->flops, mw.flops, error,
                      "what the slice of node %d (%s) computes at %s", id, nm,
                      mdl_precision_name[w->prec]) &&
        check_derived(t, path, "read_bytes", w->read_bytes, mw.read_bytes, error,
                      "what the slice of node %d (%s) reads at %s", id, nm,
                      mdl_precision_name[w->prec]) &&
        check_derived(t, path, "write_bytes", w->write_bytes, mw.write_bytes, error,
                      "what the slice of node %d (%s) writes at %s", id, nm,
                      mdl_precision_name[w->prec]) &&
        check_derived(t, path, "serial_elems", w->serial_elems, 0, error,
                      "as a kernel runs no scalar scan");
    if (ok && w->weight_lhs && !mm) {
        g_autofree char *p = hs_json_path_key(path, "weight_lhs");
        return bad(error, cJSON_GetObjectItemCaseSensitive(t, "weight_lhs"), p,
                   "false, as node %d (%s) is no matmul", id, nm);
    }
    return ok;
}

/*
 * A shadow task (mllm-NPU's outlier matmul beside a matmul node, on
 * another processor: sim/policies/mllm-npu.c shadow_work) records no
 * slice, so its work is bounded by its node's: at most the node's tokens,
 * input features and rows, and the costs of a product of that shape that
 * also copies its FP32 input and its output four ways and scans both.
 */
static gboolean
check_shadow_work(const cJSON *t, const char *path, const MdlNode *node, int32_t id,
                  const SimWork *w, GError **error)
{
    if (w->op != MDL_OP_MATMUL) {
        g_autofree char *p = hs_json_path_key(path, "op");
        return bad(error, cJSON_GetObjectItemCaseSensitive(t, "op"), p,
                   "\"matmul\" (a shadow task computes a matmul's outlier channels)");
    }
    const struct {
        const char *key;
        uint64_t got, max;
    } dims[] = {
        { "m", w->m, node->tokens }, { "k", w->k, node->k }, { "n", w->n, node->features },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(dims); i++) {
        if (dims[i].got < 1 || dims[i].got > dims[i].max) {
            g_autofree char *p = hs_json_path_key(path, dims[i].key);
            return bad(error, cJSON_GetObjectItemCaseSensitive(t, dims[i].key), p,
                       "an integer in [1, %" G_GUINT64_FORMAT "], within node %d (%s)",
                       dims[i].max, id, node->name);
        }
    }
    /* below 2^30 each (the node's): the products fit in 64 bits */
    const uint64_t m = w->m, k = w->k, n = w->n, in = node->k;
    const struct {
        const char *key;
        uint64_t got, max;
    } costs[] = {
        { "flops", w->flops, 2 * m * k * n + m * in + m * n },
        { "read_bytes", w->read_bytes, 4 * m * in + 9 * m * n + 2 * k * n },
        { "write_bytes", w->write_bytes, 4 * m * in + 9 * m * n },
        { "serial_elems", w->serial_elems, m * (in + n) },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(costs); i++) {
        if (costs[i].got > costs[i].max) {
            g_autofree char *p = hs_json_path_key(path, costs[i].key);
            return bad(error, cJSON_GetObjectItemCaseSensitive(t, costs[i].key), p,
                       "at most %" G_GUINT64_FORMAT ", what a [%" G_GUINT64_FORMAT " x %"
                       G_GUINT64_FORMAT "] x [%" G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT
                       "] product beside node %d (%s) costs", costs[i].max, m, k, k, n, id,
                       node->name);
        }
    }
    return TRUE;
}

static gboolean
read_task(TrcRecording *r, const cJSON *t, uint32_t id, uint32_t n_tasks,
          Graphs *graphs, GError **error)
{
    g_autofree char *path = hs_json_path_index("$.tasks", (int) id);
    g_auto(TaskKeys) k = { 0 };
    if (!hs_param_apply_open(t, path, task_kind_params, &k, error)) {
        return trace_error(error);
    }
    gboolean kernel = k.t.kind == SIM_TASK_KERNEL;
    if (!hs_param_apply(t, path, task_params[k.t.kind], &k,
                        kernel ? task_kernel_keys : task_other_keys, NULL, error)) {
        return trace_error(error);
    }
    SimTask task = k.t;
    if (k.id != id) {
        g_autofree char *p = hs_json_path_key(path, "id");
        return bad(error, cJSON_GetObjectItem(t, "id"), p, "%u", id);
    }
    if (task.phase == SIM_PHASE_DECODE && r->workload.decode == 0) {
        return bad(error, cJSON_GetObjectItem(t, "phase"), path,
                   "a prefill task (the workload has no decode steps)");
    }
    uint32_t max_step = task.phase == SIM_PHASE_PREFILL ? 0 : r->workload.decode - 1;
    if (task.step > max_step) {
        g_autofree char *p = hs_json_path_key(path, "step");
        if (max_step == 0) {
            return bad(error, cJSON_GetObjectItem(t, "step"), p, "0");
        }
        return bad(error, cJSON_GetObjectItem(t, "step"), p, "an integer in [0, %u]", max_step);
    }
    if (!find_proc(r, t, path, "proc", k.proc, &task.proc, error)) {
        return FALSE;
    }
    const MdlGraph *g = graphs_get(graphs, task.phase, task.step);
    /* a prepare task belongs to no node (-1); others to one of the phase's */
    int64_t lo = task.kind == SIM_TASK_PREPARE ? -1 : 0;
    int64_t hi = task.kind == SIM_TASK_PREPARE ? -1 : (int64_t) g->n_nodes - 1;
    if (task.node < lo || task.node > hi) {
        g_autofree char *p = hs_json_path_key(path, "node");
        return bad(error, cJSON_GetObjectItem(t, "node"), p,
                   "an integer in [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", lo, hi);
    }
    if (task.kind == SIM_TASK_SYNC) {
        if (!find_proc(r, t, path, "from", k.from, &task.sync_from, error) ||
            !find_proc(r, t, path, "to", k.to, &task.sync_to, error)) {
            return FALSE;
        }
        if (task.sync_from == task.sync_to) {
            g_autofree char *p = hs_json_path_key(path, "to");
            return bad(error, cJSON_GetObjectItemCaseSensitive(t, "to"), p,
                       "a processor other than \"from\" (a sync hands data between two)");
        }
    } else if (task.kind == SIM_TASK_PREPARE) {
        /* the NPU's graph of a shape, prepared at request (sim/builder.c
         * sim_builder_prepare): m is the shape, its costs are summed from
         * the NPU's matmuls of that shape once every task is read */
        if (r->proc_kinds[task.proc] != HW_KIND_NPU) {
            g_autofree char *p = hs_json_path_key(path, "proc");
            return bad(error, cJSON_GetObjectItemCaseSensitive(t, "proc"), p,
                       "an NPU of $.processors (a prepare task builds an NPU graph)");
        }
        const struct {
            const char *key;
            uint64_t got;
        } zero[] = { { "k", task.work.k }, { "n", task.work.n },
                     { "write_bytes", task.work.write_bytes } };
        if (task.work.m < 1 || task.work.m > 65536) {
            g_autofree char *p = hs_json_path_key(path, "m");
            return bad(error, cJSON_GetObjectItemCaseSensitive(t, "m"), p,
                       "an integer in [1, 65536], the token count of the graph prepared");
        }
        for (size_t i = 0; i < G_N_ELEMENTS(zero); i++) {
            if (zero[i].got != 0) {
                g_autofree char *p = hs_json_path_key(path, zero[i].key);
                return bad(error, cJSON_GetObjectItemCaseSensitive(t, zero[i].key), p,
                           "0 for a prepare task");
            }
        }
        if (task.work.op != MDL_OP_MATMUL) {
            g_autofree char *p = hs_json_path_key(path, "op");
            return bad(error, cJSON_GetObjectItemCaseSensitive(t, "op"), p,
                       "\"matmul\" for a prepare task");
        }
    } else {
        const MdlNode *node = task.node >= 0 ? &g->nodes[task.node] : NULL;
        if (kernel) {
            if (!get_range(t, path, "tokens", node->tokens, &task.slice.tok0,
                           &task.slice.tok1, error) ||
                !get_range(t, path, "rows", node->features, &task.slice.row0,
                           &task.slice.row1, error)) {
                return FALSE;
            }
            uint32_t pad = task.slice.pad_tokens;
            if (pad && pad < task.slice.tok1 - task.slice.tok0) {
                g_autofree char *p = hs_json_path_key(path, "pad");
                return bad(error, cJSON_GetObjectItem(t, "pad"), p,
                           "0 or at least the slice's %u tokens",
                           task.slice.tok1 - task.slice.tok0);
            }
        }
        if (node && node->op != task.work.op) {
            g_autofree char *p = hs_json_path_key(path, "op");
            return bad(error, cJSON_GetObjectItem(t, "op"), p, "\"%s\", the op of node %d (%s)",
                       mdl_op_name[node->op], task.node, node->name);
        }
        if (kernel && !check_kernel_work(t, path, node, task.node, &task, error)) {
            return FALSE;
        }
        if (task.kind == SIM_TASK_SHADOW &&
            !check_shadow_work(t, path, node, task.node, &task.work, error)) {
            return FALSE;
        }
    }
    const cJSON *deps = member(t, path, "deps", error);
    if (deps == NULL) {
        return FALSE;
    }
    g_autofree char *dpath = hs_json_path_key(path, "deps");
    if (!cJSON_IsArray(deps)) {
        return bad(error, deps, dpath, "an array of task ids");
    }
    int nd = cJSON_GetArraySize(deps);
    if ((uint32_t) nd > n_tasks) {
        g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_VALUE,
                    "%s: expected at most %u dependencies (got %d)", dpath, n_tasks, nd);
        return FALSE;
    }
    g_autofree uint32_t *ids = g_new(uint32_t, MAX(1, nd));
    int i = 0;
    const cJSON *d = NULL;
    cJSON_ArrayForEach(d, deps) {
        g_autofree char *ip = hs_json_path_index(dpath, i);
        if (!cJSON_IsNumber(d) || d->valuedouble != floor(d->valuedouble) ||
            d->valuedouble < 0 || d->valuedouble >= n_tasks || d->valuedouble == id) {
            return bad(error, d, ip, "a task id in [0, %u) other than %u", n_tasks, id);
        }
        ids[i++] = (uint32_t) d->valuedouble;
    }
    task.n_deps = (uint32_t) nd;
    task.deps = ids;
    task.name = k.name;
    sim_plan_add(r->plan, &task);
    return TRUE;
}

/* Every node of every phase written exactly once by its kernel slices. */
static gboolean
check_coverage(const TrcRecording *r, Graphs *graphs, GError **error)
{
    /* the kernels of each phase (prefill, then each decode step), in id
     * order: one pass over the tasks, not one per phase */
    uint32_t n_phases = 1 + r->workload.decode;
    g_autofree uint32_t *count = g_new0(uint32_t, n_phases + 1);
    uint32_t n = sim_plan_len(r->plan);
    for (uint32_t id = 0; id < n; id++) {
        const SimTask *t = sim_plan_task(r->plan, id);
        if (t->kind == SIM_TASK_KERNEL) {
            count[(t->phase == SIM_PHASE_PREFILL ? 0 : 1 + t->step) + 1]++;
        }
    }
    for (uint32_t p = 0; p < n_phases; p++) {
        count[p + 1] += count[p];
    }
    g_autofree uint32_t *ids = g_new(uint32_t, MAX(1, count[n_phases]));
    g_autofree uint32_t *fill = g_memdup2(count, sizeof(uint32_t) * (n_phases + 1));
    for (uint32_t id = 0; id < n; id++) {
        const SimTask *t = sim_plan_task(r->plan, id);
        if (t->kind == SIM_TASK_KERNEL) {
            ids[fill[t->phase == SIM_PHASE_PREFILL ? 0 : 1 + t->step]++] = id;
        }
    }
    for (uint32_t p = 0; p < n_phases; p++) {
        const MdlGraph *g = graphs_get(graphs, p == 0 ? SIM_PHASE_PREFILL : SIM_PHASE_DECODE,
                                       p == 0 ? 0 : p - 1);
        g_autofree uint64_t *area = g_new0(uint64_t, g->n_nodes);
        g_autoptr(GPtrArray) by_node = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            g_ptr_array_add(by_node, g_array_new(FALSE, FALSE, sizeof(uint32_t)));
        }
        for (uint32_t x = count[p]; x < count[p + 1]; x++) {
            uint32_t id = ids[x];
            const SimTask *t = sim_plan_task(r->plan, id);
            GArray *mine = g_ptr_array_index(by_node, t->node);
            for (guint j = 0; j < mine->len; j++) {
                const SimTask *o = sim_plan_task(r->plan, g_array_index(mine, uint32_t, j));
                if (t->slice.tok0 < o->slice.tok1 && o->slice.tok0 < t->slice.tok1 &&
                    t->slice.row0 < o->slice.row1 && o->slice.row0 < t->slice.row1) {
                    g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN,
                                "$.tasks[%u]: slice overlaps task %u's (both write node %d, %s)",
                                id, g_array_index(mine, uint32_t, j), t->node,
                                g->nodes[t->node].name);
                    return FALSE;
                }
            }
            g_array_append_val(mine, id);
            area[t->node] += (uint64_t) (t->slice.tok1 - t->slice.tok0) *
                             (t->slice.row1 - t->slice.row0);
        }
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            uint64_t want = (uint64_t) g->nodes[i].tokens * g->nodes[i].features;
            if (area[i] != want) {
                g_autofree char *phase = p == 0 ? g_strdup("prefill")
                                                : g_strdup_printf("decode step %u", p - 1);
                g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN,
                            "$.tasks: node %u (%s) of %s: slices cover %" G_GUINT64_FORMAT
                            " of its %" G_GUINT64_FORMAT " output elements (a hole)", i,
                            g->nodes[i].name, phase, area[i], want);
                return FALSE;
            }
        }
    }
    return TRUE;
}

/*
 * A prepare task's costs: what the NPU graph of its shape handles, the
 * FP16 activations in and out of every later NPU matmul of that shape in
 * its phase, and their operations (sim/builder.c, at the phase's end).
 */
static gboolean
check_prepare_costs(const TrcRecording *r, const cJSON *tasks, GError **error)
{
    uint32_t n = sim_plan_len(r->plan);
    for (uint32_t i = 0; i < n; i++) {
        const SimTask *p = sim_plan_task(r->plan, i);
        if (p->kind != SIM_TASK_PREPARE) {
            continue;
        }
        uint64_t bytes = 0, flops = 0;
        for (uint32_t j = i + 1; j < n; j++) {
            const SimTask *t = sim_plan_task(r->plan, j);
            if (t->phase != p->phase || t->step != p->step) {
                break;
            }
            uint32_t shape = t->slice.pad_tokens ? t->slice.pad_tokens
                                                 : t->slice.tok1 - t->slice.tok0;
            if (t->kind == SIM_TASK_KERNEL && t->proc == p->proc &&
                t->work.op == MDL_OP_MATMUL && shape == p->work.m) {
                bytes += t->work.m * (t->work.k + t->work.n) * 2;
                flops += t->work.flops;
            }
        }
        g_autofree char *path = hs_json_path_index("$.tasks", (int) i);
        const cJSON *t = cJSON_GetArrayItem(tasks, (int) i);
        if (!check_derived(t, path, "read_bytes", p->work.read_bytes, bytes, error,
                           "the activations of the later %" G_GUINT64_FORMAT "-token NPU "
                           "matmuls of its phase", p->work.m) ||
            !check_derived(t, path, "flops", p->work.flops, flops, error,
                           "the operations of the later %" G_GUINT64_FORMAT "-token NPU "
                           "matmuls of its phase", p->work.m)) {
            return FALSE;
        }
    }
    return TRUE;
}

/*
 * The workload against its model, as `run` checks its options
 * (sim/cli/run-opts.c hs_cli_check_fits), but as the recording's keys:
 * the recording, not a command-line option, is wrong.
 */
static gboolean
workload_fits(const TrcRecording *r, const cJSON *root, GError **error)
{
    const SimWorkload *w = &r->workload;
    const MdlSpec *s = r->spec;
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(root, "workload");
    if ((uint64_t) w->prompt + w->decode > s->max_position_embeddings) {
        g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_VALUE,
                    "$.workload: expected prompt + decode at most the model's context, "
                    "$.model.config max_position_embeddings %u (got %u + %u)",
                    s->max_position_embeddings, w->prompt, w->decode);
        return FALSE;
    }
    if (w->check_layers > 0 && (uint32_t) w->check_layers > s->num_hidden_layers) {
        return bad(error, cJSON_GetObjectItemCaseSensitive(wl, "functional"),
                   "$.workload.functional", "off, full or layers=N with N at most the "
                   "model's %u layers", s->num_hidden_layers);
    }
    return TRUE;
}

/* $.processors[i], as the writer writes each: the SoC's names, in order */
typedef struct ProcKeys {
    char *name;
    HwKind kind;
} ProcKeys;

static const HsParam proc_params[] = {
    HS_PARAM_STR("name", ProcKeys, name, NULL, NULL, "the SoC's name for it"),
    HS_PARAM_ENUM("kind", ProcKeys, kind, HwKind, hw_kind_name, HW_KIND_COUNT, HS_REQUIRED,
                  "cpu, gpu or npu"),
    HS_PARAM_END
};

static TrcRecording *
record_from_json(const cJSON *root, const char *path, GError **error)
{
    g_autoptr(TrcRecording) r = g_new0(TrcRecording, 1);
    r->plan = sim_plan_new();
    uint64_t ver;
    gboolean ok = TRUE;
    if (!cJSON_IsObject(root)) {
        ok = bad(error, root, "$", "an object");
    }
    const cJSON *v = ok ? member(root, "$", "hs_record_version", error) : NULL;
    ok = ok && v != NULL;
    if (ok && (!cJSON_IsNumber(v) || v->valuedouble != TRC_RECORD_VERSION)) {
        /* a number as written: 1.0000001 is not 1 */
        g_autofree char *got = cJSON_IsNumber(v) ? number_text(v->valuedouble)
                                                 : hs_json_describe(v);
        g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_VERSION,
                    "$.hs_record_version: expected %d, the version this hetero-sim "
                    "reads (got %s)", TRC_RECORD_VERSION, got);
        ok = FALSE;
    }
    (void) ver;
    const char *soc = ok ? get_str(root, "$", "soc", error) : NULL;
    const char *policy = soc ? get_str(root, "$", "policy", error) : NULL;
    ok = ok && policy != NULL;
    if (ok) {
        r->soc = g_strdup(soc);
        r->policy = g_strdup(policy);
        ok = read_workload(r, root, error);
    }
    const cJSON *model = ok ? member(root, "$", "model", error) : NULL;
    if (ok && model) {
        const char *mname = get_str(model, "$.model", "name", error);
        const cJSON *cfg = mname ? member(model, "$.model", "config", error) : NULL;
        if (cfg) {
            r->spec = mdl_spec_from_json(cfg, mname, error);
            if (r->spec == NULL) {
                /* "$..." of the config object -> "$.model.config..." */
                GError *e = *error;
                g_autofree char *m = g_strdup_printf("$.model.config%s", e->message + 1);
                g_free(e->message);
                e->message = g_steal_pointer(&m);
                e->domain = HS_TRACE_ERROR;
                e->code = HS_TRACE_ERROR_BAD_VALUE;
            }
        }
        ok = r->spec != NULL;
    } else {
        ok = FALSE;
    }
    ok = ok && workload_fits(r, root, error);
    /* the configuration the run had, kept for its reader (replay) */
    const cJSON *prov = ok ? cJSON_GetObjectItemCaseSensitive(root, "provenance") : NULL;
    const cJSON *pc = cJSON_IsObject(prov) ? cJSON_GetObjectItemCaseSensitive(prov, "config")
                                           : NULL;
    if (cJSON_IsObject(pc)) {
        r->config = cJSON_Duplicate(pc, TRUE);
    }
    const cJSON *procs = ok ? member(root, "$", "processors", error) : NULL;
    if (ok && procs) {
        if (!cJSON_IsArray(procs) || cJSON_GetArraySize(procs) == 0 ||
            cJSON_GetArraySize(procs) > 64) {
            ok = bad(error, procs, "$.processors", "an array of 1 to 64 processors");
        } else {
            r->n_procs = (uint32_t) cJSON_GetArraySize(procs);
            r->proc_names = g_new0(char *, r->n_procs + 1);
            r->proc_kinds = g_new0(HwKind, r->n_procs);
            for (uint32_t i = 0; i < r->n_procs && ok; i++) {
                g_autofree char *pp = hs_json_path_index("$.processors", (int) i);
                ProcKeys pk = { 0 };
                ok = hs_param_apply(cJSON_GetArrayItem(procs, (int) i), pp, proc_params, &pk,
                                    NULL, NULL, error) || trace_error(error);
                r->proc_names[i] = pk.name;     /* NULL on error: the list ends there */
                r->proc_kinds[i] = pk.kind;
                /* tasks name their processor: two of one name would be one */
                for (uint32_t j = 0; ok && j < i; j++) {
                    if (strcmp(r->proc_names[j], pk.name) == 0) {
                        g_autofree char *np = hs_json_path_key(pp, "name");
                        ok = bad(error, cJSON_GetObjectItemCaseSensitive(
                                            cJSON_GetArrayItem(procs, (int) i), "name"),
                                 np, "a name no other processor has ($.processors[%u] has it)",
                                 j);
                    }
                }
            }
        }
    } else {
        ok = FALSE;
    }
    const cJSON *off = ok ? member(root, "$", "npu_offline", error) : NULL;
    if (ok && off) {
        if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) > 64) {
            ok = bad(error, off, "$.npu_offline", "an array of at most 64 token counts");
        }
        int i = 0;
        const cJSON *s = NULL;
        cJSON_ArrayForEach(s, off) {
            if (!ok) {
                break;
            }
            g_autofree char *sp = hs_json_path_index("$.npu_offline", i++);
            if (!cJSON_IsNumber(s) || s->valuedouble != floor(s->valuedouble) ||
                s->valuedouble < 1 || s->valuedouble > 65536) {
                ok = bad(error, s, sp, "an integer in [1, 65536]");
            } else {
                sim_plan_npu_offline(r->plan, (uint32_t) s->valuedouble);
            }
        }
    } else {
        ok = FALSE;
    }
    const cJSON *tasks = ok ? member(root, "$", "tasks", error) : NULL;
    if (ok && tasks && !cJSON_IsArray(tasks)) {
        ok = bad(error, tasks, "$.tasks", "an array of tasks");
    }
    ok = ok && tasks;
    if (ok) {
        /* the phase graphs the tasks refer to */
        Graphs graphs;
        graphs_init(&graphs, r->spec, &r->workload);
        uint32_t n = (uint32_t) cJSON_GetArraySize(tasks), id = 0;
        const cJSON *t = NULL;
        cJSON_ArrayForEach(t, tasks) {
            if (!read_task(r, t, id++, n, &graphs, error)) {
                ok = FALSE;
                break;
            }
        }
        if (ok && n == 0) {
            g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN,
                        "$.tasks: expected at least one task (got an empty array)");
            ok = FALSE;
        }
        ok = ok && check_coverage(r, &graphs, error) && check_prepare_costs(r, tasks, error);
        graphs_clear(&graphs);
        if (ok && !sim_plan_check(r->plan, r->n_procs, error)) {
            g_prefix_error(error, "$.tasks: ");
            ok = FALSE;
        }
    }
    if (!ok) {
        g_prefix_error(error, "%s: ", path);
        return NULL;
    }
    return g_steal_pointer(&r);
}

TrcRecording *
trc_record_read(const char *path, GError **error)
{
    g_autoptr(cJSON) root = hs_json_load_file(path, HS_TRACE_ERROR, error);
    if (root == NULL) {
        return NULL;
    }
    return record_from_json(root, path, error);
}

TrcRecording *
trc_record_parse(const char *text, gsize len, const char *what, GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse(text, len, what, HS_TRACE_ERROR, error);
    if (root == NULL) {
        return NULL;
    }
    return record_from_json(root, what, error);
}

SimPlan *
trc_record_plan_for(const TrcRecording *r, const HwSoc *soc, GError **error)
{
    g_autofree uint32_t *map = g_new(uint32_t, r->n_procs);
    /* on the SoC it was recorded on, every processor is one of it, by
     * name and kind (another SoC's are matched by kind: a what-if) */
    gboolean same_soc = strcmp(soc->name, r->soc) == 0;
    for (uint32_t i = 0; same_soc && i < r->n_procs; i++) {
        const HwDev *d = hw_soc_find_name(soc, r->proc_names[i]);
        if (d == NULL || d->cls->kind != r->proc_kinds[i]) {
            g_autoptr(GString) list = g_string_new(NULL);
            for (guint j = 0; j < soc->devs->len; j++) {
                const HwDev *o = g_ptr_array_index(soc->devs, j);
                g_string_append_printf(list, "%s%s (%s)", j ? ", " : "", o->name,
                                       hw_kind_name[o->cls->kind]);
            }
            g_autofree char *pname = hs_escape(r->proc_names[i]);
            g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN,
                        "$.processors[%u]: expected a processor of SoC %s, the one recorded on "
                        "(%s) (got \"%s\" (%s))", i, soc->name, list->str, pname,
                        hw_kind_name[r->proc_kinds[i]]);
            return NULL;
        }
    }
    for (uint32_t i = 0; i < r->n_procs; i++) {
        const HwDev *d = hw_soc_find_name(soc, r->proc_names[i]);
        if (d == NULL || d->cls->kind != r->proc_kinds[i]) {
            d = hw_soc_find_kind(soc, r->proc_kinds[i]);
        }
        if (d == NULL) {
            g_autofree char *pname = hs_escape(r->proc_names[i]);
            g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN,
                        "processor \"%s\" (%s) has no counterpart in SoC %s", pname,
                        hw_kind_name[r->proc_kinds[i]], soc->name);
            return NULL;
        }
        map[i] = d->index;
    }
    SimPlan *plan = sim_plan_new();
    for (uint32_t i = 0; i < sim_plan_len(r->plan); i++) {
        SimTask t = *sim_plan_task(r->plan, i);
        t.proc = map[t.proc];
        t.sync_from = map[t.sync_from];
        t.sync_to = map[t.sync_to];
        sim_plan_add(plan, &t);
    }
    g_array_append_vals(plan->npu_offline, r->plan->npu_offline->data, r->plan->npu_offline->len);
    return plan;
}

char *
trc_plan_unsynced(const SimPlan *plan, const HwSoc *soc)
{
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->kind != SIM_TASK_KERNEL || t->work.op == MDL_OP_EMBED) {
            continue;
        }
        for (uint32_t k = 0; k < t->n_deps; k++) {
            const SimTask *d = sim_plan_task(plan, t->deps[k]);
            if (d->kind == SIM_TASK_KERNEL && d->proc != t->proc) {
                const HwDev *a = g_ptr_array_index(soc->devs, d->proc);
                const HwDev *b = g_ptr_array_index(soc->devs, t->proc);
                return g_strdup_printf("task %u (%s on %s) takes the output of task %u (%s on "
                                       "%s) with no sync between them (a dropped sync?)", i,
                                       t->name, b->name, t->deps[k], d->name, a->name);
            }
        }
    }
    return NULL;
}
