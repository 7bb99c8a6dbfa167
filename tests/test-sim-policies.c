/*
 * test-sim-policies.c - the mechanisms of the seed systems' policies
 * (mllm-NPU §3, Transformer-Lite, NPU-TTS), each checked where it shows: mllm-npu's shadow
 * outliers (timing-only CPU tasks in the layers nearest input and output,
 * waited on by the matmul's readers; values closer to the reference than
 * plain W8A8), its out-of-order subgraphs (faster than in order on the
 * same chunks), its chunk-shared graph (no preparation in the plan, where
 * the naive variant prepares the prompt's own); npu-tts's batched decode
 * (batch 32 costs the NPU's matmuls what batch 1 does); transformer-lite
 * (GPU only, E0M4 weights); hetero-tensor's sequence cuts at tok_align.
 */
#include "sim/run.h"
#include "sim/util/error.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static char *
data_dir(const char *sub)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, sub, NULL);
}

typedef struct Case {
    HwSoc *soc;
    SimPlan *plan;
    SimExecResult x;
    SimRunReport r;
} Case;

static void
run_case(const char *soc_name, const char *model, const char *policy,
         const SimWorkload *w, Case *c)
{
    g_autofree char *configs = data_dir("configs");
    g_autofree char *models = data_dir("models");
    g_autoptr(GError) error = NULL;
    memset(c, 0, sizeof(*c));
    c->soc = hw_soc_load(soc_name, configs, &error);
    g_assert_no_error(error);
    g_autoptr(MdlSpec) spec = mdl_spec_load(model, models, &error);
    g_assert_no_error(error);
    const SimPolicy *p = sim_policy_find(policy);
    g_assert_nonnull(p);
    g_assert_true(sim_run(c->soc, spec, p, w, NULL, &c->r, &c->x, &c->plan, &error));
    g_assert_no_error(error);
}

static void
case_clear(Case *c)
{
    sim_plan_free(c->plan);
    sim_exec_result_clear(&c->x);
    sim_run_report_clear(&c->r);
    hw_soc_free(c->soc);
}

static void
timing_workload(SimWorkload *w, uint32_t prompt, uint32_t decode, uint32_t batch)
{
    sim_workload_init(w);
    w->prompt = prompt;
    w->decode = decode;
    w->batch = batch;
    w->check_layers = -1;
}

static uint32_t
proc_of(const HwSoc *soc, HwKind kind)
{
    return hw_soc_find_kind(soc, kind)->index;
}

/* Shadow tasks: on the CPU, only in the 15 % of layers nearest the input
 * and the output (Qwen1.5-1.8B: 24 layers -> 4: 0, 1, 22, 23), one per
 * FFN-down kernel of those layers (the one linear mllm's code shadows),
 * whose kernels run W8A8_SHADOW (every other linear W8A8), and every
 * reader of such a matmul waits on its shadow task.  Each copies its
 * FP32 input and its outputs and scans every element on one thread, as
 * mllm's CPULinearINT8Shadow does. */
static void
test_mllm_shadow_plan(void)
{
    SimWorkload w;
    timing_workload(&w, 512, 0, 1);
    Case c;
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu", &w, &c);
    uint32_t cpu = proc_of(c.soc, HW_KIND_CPU), npu = proc_of(c.soc, HW_KIND_NPU);
    uint32_t shadows = 0, shadow_kernels = 0, plain = 0, npu_float = 0;
    g_autoptr(GHashTable) waited = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (uint32_t i = 0; i < sim_plan_len(c.plan); i++) {
        const SimTask *t = sim_plan_task(c.plan, i);
        for (uint32_t d = 0; d < t->n_deps; d++) {
            g_hash_table_add(waited, GUINT_TO_POINTER(t->deps[d]));
        }
        if (t->kind == SIM_TASK_SHADOW) {
            shadows++;
            g_assert_cmpuint(t->proc, ==, cpu);
            /* a few outlier channels: 0.2 % of the input's, at least 5 */
            g_assert_cmpuint(t->work.k, >=, 5);
            g_assert_cmpuint(t->work.k, <=, 15);
            int layer = atoi(t->name + 1);
            g_assert_true(layer <= 1 || layer >= 22);
            g_assert_nonnull(strstr(t->name, "ffn_down"));
            /* a chunk of 256 tokens: FFN-down's 5504 inputs and 2048 outputs */
            g_assert_cmpuint(t->work.m, ==, 256);
            g_assert_cmpuint(t->work.n, ==, 2048);
            g_assert_cmpuint(t->work.serial_elems, ==, 256 * (5504 + 2048));
            g_assert_cmpuint(t->work.read_bytes, >=, 4 * 256 * 5504 + 9 * 256 * 2048);
        } else if (t->kind == SIM_TASK_KERNEL && t->work.op != MDL_OP_MATMUL) {
            /* mllm's QNN graph after the attention also runs the residual
             * adds, the FFN norm and SiLU x up; the CPU keeps the input
             * norm, RoPE and the attention */
            gboolean part2 = t->work.op == MDL_OP_ADD || t->work.op == MDL_OP_ACT ||
                             strstr(t->name, "ffn_norm") != NULL;
            g_assert_cmpuint(t->proc, ==, part2 ? npu : cpu);
            npu_float += part2;
        } else if (t->kind == SIM_TASK_KERNEL && t->proc == npu) {
            int layer = atoi(t->name + 1);
            if (t->work.prec == MDL_PREC_W8A8_SHADOW) {
                shadow_kernels++;
                g_assert_true(layer <= 1 || layer >= 22);
                g_assert_nonnull(strstr(t->name, "ffn_down"));
            } else {
                g_assert_cmpint(t->work.prec, ==, MDL_PREC_W8A8);
                plain++;
            }
        }
    }
    /* 4 layers x FFN-down x 2 chunks */
    g_assert_cmpuint(shadows, ==, 4 * 1 * 2);
    g_assert_cmpuint(shadow_kernels, ==, shadows);
    g_assert_cmpuint(plain, ==, (24 * 7 - 4) * 2);
    /* 24 layers x (2 adds, ffn_norm, act) x 2 chunks */
    g_assert_cmpuint(npu_float, ==, 24 * 4 * 2);
    for (uint32_t i = 0; i < sim_plan_len(c.plan); i++) {
        if (sim_plan_task(c.plan, i)->kind == SIM_TASK_SHADOW) {
            g_assert_true(g_hash_table_contains(waited, GUINT_TO_POINTER(i)));
        }
    }
    /* and shadow execution costs CPU time: without it (W8A8 everywhere)
     * the CPU works less; in every layer, more.  (The prefill's time need
     * not follow: extra CPU units change the greedy out-of-order choices,
     * and the paper's greedy rule is a heuristic, not an optimum.) */
    Case none, all;
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu/no-shadow", &w, &none);
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu/no-prune", &w, &all);
    g_assert_cmpfloat(none.r.busy_ms[cpu], <, c.r.busy_ms[cpu]);
    g_assert_cmpfloat(c.r.busy_ms[cpu], <, all.r.busy_ms[cpu]);
    case_clear(&c);
    case_clear(&none);
    case_clear(&all);
}

/*
 * Qwen1.5-1.8B (models/qwen1.5-1.8b.json) reduced to run its values in a
 * second: 2 layers, hidden 512, 4 heads of 128, FFN 1376, vocab 1024.
 * Hidden 512 is wide enough for the synthetic outlier channels
 * (engine/weights.h: none below 250 channels; the tiny model has none),
 * which shadow execution is about.
 */
static const char qwen_mini_json[] =
    "{\"architectures\": [\"Qwen2ForCausalLM\"], \"model_type\": \"qwen2\","
    " \"attention_bias\": true, \"hidden_act\": \"silu\", \"hidden_size\": 512,"
    " \"intermediate_size\": 1376, \"max_position_embeddings\": 2048,"
    " \"num_attention_heads\": 4, \"num_hidden_layers\": 2, \"num_key_value_heads\": 4,"
    " \"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0,"
    " \"tie_word_embeddings\": false, \"vocab_size\": 1024}";

/* Shadow outliers change values, and the static (offline) scale makes the
 * chunk cut change none.  Whether the logits come closer to the FP
 * reference is left to the engine's test of the rule
 * (/engine/quant-formats/int8-shadow): the synthetic weights put their
 * outlier channels in the norm gains, which FFN-down (the one linear mllm
 * shadows) does not read, so here shadowing it moves the error either way
 * with the seed (closer on 5 of 8 seeds, 4 of 8 with another generator of
 * the same distribution). */
static void
test_mllm_shadow_values(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("qwen-mini-XXXXXX.json", &path, &error);
    g_assert_no_error(error);
    close(fd);
    g_assert_true(g_file_set_contents(path, qwen_mini_json, -1, &error));

    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = 40;
    w.decode = 1;
    w.opts.chunk_tokens = 16;        /* three chunks, the last padded */
    w.check_layers = 0;
    Case s, n, whole;
    run_case("tiny", path, "mllm-npu", &w, &s);
    run_case("tiny", path, "mllm-npu/no-shadow", &w, &n);
    w.opts.chunk_tokens = 64;        /* one chunk */
    run_case("tiny", path, "mllm-npu", &w, &whole);
    g_unlink(path);
    g_assert_true(s.r.check.match && n.r.check.match);    /* each its own arithmetic */
    g_assert_true(n.r.check.precision_changed);
    g_assert_cmpfloat(n.r.check.precision_err, >, 0);
    g_assert_cmpfloat(s.r.check.precision_err, >, 0);
    /* FFN-down's outlier channels computed in float: other values */
    g_assert_cmpfloat(fabs(s.r.check.precision_err - n.r.check.precision_err), >,
                      1e-3 * n.r.check.precision_err);
    /* the static (offline-calibrated) scale: the cut changes no bit */
    g_assert_cmpfloat(s.r.check.precision_err, ==, whole.r.check.precision_err);
    case_clear(&s);
    case_clear(&n);
    case_clear(&whole);
}

static uint32_t
n_kernels(const SimPlan *plan)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        n += sim_plan_task(plan, i)->kind == SIM_TASK_KERNEL;
    }
    return n;
}

/* The task named @name (e.g. "L1.wk[tokens 0:256]"): its index. */
static uint32_t
task_named(const SimPlan *plan, const char *name)
{
    for (uint32_t k = 0; k < sim_plan_len(plan); k++) {
        const char *n = sim_plan_task(plan, k)->name;
        if (n != NULL && strcmp(n, name) == 0) {
            return k;
        }
    }
    g_error("no task %s", name);
}

/* The greedy out-of-order schedule beats program order on the same
 * chunks, and the NPU runs the same kernels either way.  Both schedule
 * subgraphs (runs of one chunk's operators on one processor, mllm-NPU
 * §3.4's unit), each of which returns whole; a hand-off covers what its
 * reader reads, not a later chunk written before. */
static void
test_mllm_out_of_order(void)
{
    SimWorkload w;
    timing_workload(&w, 1024, 0, 1);
    Case o, i;
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu", &w, &o);
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu/in-order", &w, &i);
    g_assert_cmpuint(n_kernels(o.plan), ==, n_kernels(i.plan));   /* only the order differs */
    /* measured 1891 vs 2740 ms */
    g_assert_cmpfloat(o.r.prefill.time_ms, <, 0.85 * i.r.prefill.time_ms);
    /* the QKV graph returns whole: RoPE of Q waits for the V projection */
    for (int k = 0; k < 2; k++) {
        const Case *c = k ? &i : &o;
        uint32_t rope = task_named(c->plan, "L0.rope_q[tokens 0:256]");
        uint32_t wv = task_named(c->plan, "L0.wv[tokens 0:256]");
        g_assert_cmpuint(c->x.times[rope].start_ps, >=, c->x.times[wv].end_ps);
    }
    /* explain says which subgraph a task belongs to and what placed it */
    const SimTask *wo = sim_plan_task(o.plan, task_named(o.plan, "L1.wo[tokens 256:512]"));
    g_assert_nonnull(wo->why);
    g_assert_nonnull(strstr(wo->why, "subgraph 7 of chunk 1 (L1.wo .. L1.ffn_add), "
                                     "in the order the greedy rule"));
    /* an NPU linear's hand-off waits only on writers of its own tokens */
    uint32_t handoffs = 0;
    for (uint32_t k = 0; k < sim_plan_len(o.plan); k++) {
        const SimTask *t = sim_plan_task(o.plan, k);
        if (t->kind != SIM_TASK_KERNEL || t->work.op != MDL_OP_MATMUL ||
            t->proc != proc_of(o.soc, HW_KIND_NPU)) {
            continue;
        }
        for (uint32_t d = 0; d < t->n_deps; d++) {
            const SimTask *s = sim_plan_task(o.plan, t->deps[d]);
            if (s->kind != SIM_TASK_SYNC) {
                continue;
            }
            handoffs++;
            for (uint32_t e = 0; e < s->n_deps; e++) {
                const SimTask *wr = sim_plan_task(o.plan, s->deps[e]);
                g_assert_cmpuint(wr->slice.tok0, <, t->slice.tok1);
                g_assert_cmpuint(t->slice.tok0, <, wr->slice.tok1);
            }
        }
    }
    g_assert_cmpuint(handoffs, >=, 24 * 2 * 4);   /* QKV and o-proj, per layer and chunk */
    /* in order, each processor runs chunk 0's work before chunk 1's */
    uint32_t npu = proc_of(i.soc, HW_KIND_NPU);
    SimTime last_chunk0 = 0, first_chunk1 = G_MAXUINT64;
    for (uint32_t k = 0; k < sim_plan_len(i.plan); k++) {
        const SimTask *t = sim_plan_task(i.plan, k);
        if (t->kind != SIM_TASK_KERNEL || t->proc != npu) {
            continue;
        }
        if (t->slice.tok0 == 0) {
            last_chunk0 = MAX(last_chunk0, i.x.times[k].end_ps);
        } else if (t->slice.tok0 == 256) {
            first_chunk1 = MIN(first_chunk1, i.x.times[k].start_ps);
        }
    }
    g_assert_cmpuint(last_chunk0, <=, first_chunk1);
    case_clear(&o);
    case_clear(&i);
}

/* mllm's public executor: two chunks in lockstep, the second five
 * subgraphs behind the first, a barrier after each step; the NPU runs
 * the same kernels as in order, and the overlap shortens the prefill.
 * Chunk 0's subgraphs: 0 CPU (embed, L0 norm), 1 NPU (L0 QKV), 2 CPU (L0
 * RoPE, attention), 3 NPU (L0 o-proj .. FFN residual add), 4 CPU (L0's
 * shadow linear, L1 norm), 5 NPU (L1 QKV), 6 CPU (L1 RoPE, attention). */
static void
test_mllm_pairs(void)
{
    SimWorkload w;
    timing_workload(&w, 512, 0, 1);
    Case q, i;
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu/pairs", &w, &q);
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu/in-order", &w, &i);
    g_assert_cmpuint(n_kernels(q.plan), ==, n_kernels(i.plan));
    /* measured 774 vs 1101 ms; no overlap at all would be 1101 */
    g_assert_cmpfloat(q.r.prefill.time_ms, <, 0.8 * i.r.prefill.time_ms);
    const SimTaskTime *t = q.x.times;
    /* step 6: chunk 1's L0 QKV (its subgraph 1) on the NPU once chunk 0's
     * L1 QKV (subgraph 5, step 5) has run, while chunk 0's L1 attention
     * (subgraph 6) runs on the CPU */
    uint32_t b_wq = task_named(q.plan, "L0.wq[tokens 256:512]");
    uint32_t a_wv = task_named(q.plan, "L1.wv[tokens 0:256]");
    uint32_t a_attn = task_named(q.plan, "L1.attn[tokens 0:256]");
    g_assert_cmpuint(t[b_wq].start_ps, >=, t[a_wv].end_ps);
    g_assert_cmpuint(t[b_wq].start_ps, <, t[a_attn].end_ps);
    g_assert_cmpuint(t[a_attn].start_ps, <, t[b_wq].end_ps);
    /* step 7: chunk 0's L1 o-proj after chunk 1's whole L0 QKV */
    uint32_t a_wo = task_named(q.plan, "L1.wo[tokens 0:256]");
    uint32_t b_wv = task_named(q.plan, "L0.wv[tokens 256:512]");
    g_assert_cmpuint(t[a_wo].start_ps, >=, t[b_wv].end_ps);
    /* a subgraph returns as a whole: chunk 1's RoPE of Q (step 7) waits
     * for its V projection (step 6), which it does not read */
    uint32_t b_rope = task_named(q.plan, "L0.rope_q[tokens 256:512]");
    g_assert_cmpuint(t[b_rope].start_ps, >=, t[b_wv].end_ps);
    case_clear(&q);
    case_clear(&i);
}

/* Chunk-shared graphs: one graph prepared offline serves every chunk (no
 * preparation in the plan); the naive variant prepares the prompt's own
 * graph at request time and pays for it. */
static void
test_mllm_chunk_share(void)
{
    SimWorkload w;
    timing_workload(&w, 512, 0, 1);
    Case s, n;
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu/per-group", &w, &s);
    run_case("sd8gen3", "qwen1.5-1.8b", "mllm-npu/naive", &w, &n);
    g_assert_cmpfloat(s.r.prefill.prepare_ms, ==, 0);
    g_assert_cmpuint(s.plan->npu_offline->len, ==, 1);
    g_assert_cmpuint(g_array_index(s.plan->npu_offline, uint32_t, 0), ==, 256);
    g_assert_cmpfloat(n.r.prefill.prepare_ms, >, 100);
    g_assert_cmpfloat(s.r.prefill.time_ms, <, n.r.prefill.time_ms);
    case_clear(&s);
    case_clear(&n);
}

/* NPU kernel time of one decode step's matmuls (step 0). */
static double
npu_matmul_ms(const Case *c)
{
    uint32_t npu = proc_of(c->soc, HW_KIND_NPU);
    double ms = 0;
    for (uint32_t i = 0; i < sim_plan_len(c->plan); i++) {
        const SimTask *t = sim_plan_task(c->plan, i);
        if (t->kind == SIM_TASK_KERNEL && t->phase == SIM_PHASE_DECODE && t->step == 0 &&
            t->proc == npu && t->work.op == MDL_OP_MATMUL) {
            ms += sim_time_to_ms(c->x.times[i].end_ps - c->x.times[i].start_ps);
        }
    }
    return ms;
}

/* Batched decode on 32-row tiles: batch 32 costs the NPU's matmuls about
 * what batch 1 does (the batch is padded to the tile), the LM head stays
 * on the CPU, weights are Q4_0 with FFN-down Q8_0. */
static void
test_tts_batch(void)
{
    SimWorkload w1, w32;
    timing_workload(&w1, 64, 1, 1);
    timing_workload(&w32, 64, 1, 32);
    Case a, b;
    run_case("sd8gen3", "qwen2.5-1.5b", "npu-tts", &w1, &a);
    run_case("sd8gen3", "qwen2.5-1.5b", "npu-tts", &w32, &b);
    double ma = npu_matmul_ms(&a), mb = npu_matmul_ms(&b);
    g_assert_cmpfloat(ma, >, 1);
    g_assert_cmpfloat(mb, <, 1.1 * ma);
    uint32_t cpu = proc_of(a.soc, HW_KIND_CPU), npu = proc_of(a.soc, HW_KIND_NPU);
    for (uint32_t i = 0; i < sim_plan_len(b.plan); i++) {
        const SimTask *t = sim_plan_task(b.plan, i);
        if (t->kind != SIM_TASK_KERNEL || t->phase != SIM_PHASE_DECODE ||
            t->work.op != MDL_OP_MATMUL) {
            continue;
        }
        if (strstr(t->name, "lm_head")) {
            g_assert_cmpuint(t->proc, ==, cpu);
        } else {
            g_assert_cmpuint(t->proc, ==, npu);
            g_assert_cmpuint(t->slice.pad_tokens == 0 ? t->slice.tok1 : t->slice.pad_tokens,
                             ==, 32);
            g_assert_cmpint(t->work.prec, ==, strstr(t->name, "ffn_down") ? MDL_PREC_Q8_0
                                                                           : MDL_PREC_Q4_0);
        }
    }
    /* per sequence, batch 32 decodes many times faster */
    g_assert_cmpfloat(b.r.decode.tokens_per_s, >, 4 * a.r.decode.tokens_per_s);
    case_clear(&a);
    case_clear(&b);
}

/* Transformer-Lite: every task on the GPU, the blocks' matmul weights E0M4
 * FP4, the LM head FP16 and, in prefill, computed for every prompt token. */
static void
test_transformer_lite(void)
{
    SimWorkload w;
    timing_workload(&w, 128, 2, 1);
    Case c;
    run_case("sd8gen3", "gemma-2b", "transformer-lite", &w, &c);
    uint32_t gpu = proc_of(c.soc, HW_KIND_GPU), heads = 0;
    for (uint32_t i = 0; i < sim_plan_len(c.plan); i++) {
        const SimTask *t = sim_plan_task(c.plan, i);
        g_assert_cmpint(t->kind, ==, SIM_TASK_KERNEL);
        g_assert_cmpuint(t->proc, ==, gpu);
        if (t->work.op != MDL_OP_MATMUL) {
            continue;
        }
        gboolean head = strstr(t->name, "lm_head") != NULL;
        g_assert_cmpint(t->work.prec, ==, head ? MDL_PREC_FP16 : MDL_PREC_FP4A16);
        if (head) {
            /* the exported forward's logits: all 128 rows in prefill */
            g_assert_cmpuint(t->work.m, ==, t->phase == SIM_PHASE_PREFILL ? 128 : 1);
            heads++;
        }
    }
    g_assert_cmpuint(heads, ==, 3);             /* prefill + 2 decode steps */
    g_assert_cmpstr(sim_policy_find("transformer-lite")->stack, ==, "transformer-lite");
    g_assert_cmpstr(sim_policy_find("mllm-npu")->stack, ==, "mllm");
    g_assert_cmpstr(sim_policy_find("npu-tts")->stack, ==, "npu-tts");
    case_clear(&c);
}

/* hetero-tensor cuts the sequence between the NPU's prepared pieces and
 * the GPU only at multiples of tok_align (HeteroLLM §4.1: 32).  The tiny
 * model at 96 tokens on classroom: with 32, 64 tokens on the NPU and 32
 * on the GPU; with 48, 64 is no cut point and no matmul is cut by tokens
 * (the solver keeps whole-sequence candidates: row cuts, padding). */
static void
test_tensor_tok_align(void)
{
    static const uint32_t aligns[] = { 32, 48 };
    for (size_t a = 0; a < G_N_ELEMENTS(aligns); a++) {
        SimWorkload w;
        timing_workload(&w, 96, 0, 1);
        w.opts.tok_align = aligns[a];
        Case c;
        run_case("classroom", "tiny", "hetero-tensor", &w, &c);
        uint32_t cuts = 0;
        for (uint32_t i = 0; i < sim_plan_len(c.plan); i++) {
            const SimTask *t = sim_plan_task(c.plan, i);
            if (t->kind != SIM_TASK_KERNEL || t->phase != SIM_PHASE_PREFILL ||
                t->work.op != MDL_OP_MATMUL || strstr(t->name, "lm_head")) {
                continue;
            }
            if (t->slice.tok0 != 0) {
                g_assert_cmpuint(t->slice.tok0 % aligns[a], ==, 0);
                cuts++;
            }
            g_assert_true(t->slice.tok1 == 96 || t->slice.tok1 % aligns[a] == 0);
        }
        if (aligns[a] == 32) {
            g_assert_cmpuint(cuts, >, 0);
        } else {
            g_assert_cmpuint(cuts, ==, 0);
        }
        case_clear(&c);
    }
}

/* HeteroLLM §4.1.1: in prefill the GPU shares a matmul only in two cases,
 * short sequences and FFN-down (here: a sequence no longer than the
 * shortest prepared shape, FFN-down's shape class K > N, or any matmul the
 * NPU runs at most 1.5x as fast as the GPU); every other prefill matmul
 * stays whole on the NPU, so the GPU does "only a small portion" of
 * prefill (§5.5).  Sequence cuts serve misaligned lengths only: a length
 * the prepared shapes cover (768 = 512 + 256, 2048 = 2 x 1024) gives the
 * GPU no piece of any other matmul.  On two SoCs, at prepared and covered
 * lengths, on models of three widths: the GPU's share of the matmul FLOPs
 * is small, every GPU matmul kernel carries a reason the rule allows, and
 * FFN-down is shared even where the NPU runs it just over 1.5x the GPU
 * (the Dimensity 9300 at 1024 tokens, 1.50x: until the rule followed
 * FFN-down's shape it was cut at 512 tokens and not at 1024, and prefill
 * at 1024 tokens ran slower than at 2048). */
static void
test_tensor_prefill_gpu_share(void)
{
    static const char *const models[] = { "llama-3-8b", "internlm2-1.8b", "qwen1.5-1.8b" };
    static const struct {
        const char *soc;
        uint32_t prompt;
    } runs[] = { { "sd8gen3", 1024 }, { "sd8gen3", 2048 }, { "dimensity9300", 768 },
                 { "dimensity9300", 1024 } };
    static const char *const allowed[] = { "at most 1.5x the GPU", "FFN-down's shape class",
                                           "a short sequence", "a misaligned length" };
    for (size_t r = 0; r < G_N_ELEMENTS(runs); r++) {
        for (size_t m = 0; m < G_N_ELEMENTS(models); m++) {
            SimWorkload w;
            timing_workload(&w, runs[r].prompt, 0, 1);
            Case c;
            run_case(runs[r].soc, models[m], "hetero-tensor", &w, &c);
            uint32_t gpu = proc_of(c.soc, HW_KIND_GPU);
            double gpu_flops = 0, all_flops = 0;
            uint32_t whole_on_npu = 0, ffn_down_on_gpu = 0;
            for (uint32_t i = 0; i < sim_plan_len(c.plan); i++) {
                const SimTask *t = sim_plan_task(c.plan, i);
                if (t->kind != SIM_TASK_KERNEL || t->phase != SIM_PHASE_PREFILL ||
                    t->work.op != MDL_OP_MATMUL) {
                    continue;
                }
                g_assert_nonnull(t->why);
                all_flops += (double) t->work.flops;
                if (t->proc == gpu) {
                    gpu_flops += (double) t->work.flops;
                    gboolean ok = FALSE;
                    for (size_t k = 0; k < G_N_ELEMENTS(allowed); k++) {
                        ok = ok || strstr(t->why, allowed[k]) != NULL;
                    }
                    if (!ok) {
                        g_test_message("%s on the GPU: %s", t->name, t->why);
                    }
                    g_assert_true(ok);
                    ffn_down_on_gpu += strstr(t->name, "ffn_down") != NULL;
                }
                if (strstr(t->why, "no GPU share")) {
                    g_assert_cmpuint(t->proc, !=, gpu);
                    g_assert_cmpuint(t->slice.row0, ==, 0);
                    whole_on_npu++;
                }
            }
            g_test_message("%s at %u on %s: GPU share of prefill matmul FLOPs %.3f", models[m],
                           runs[r].prompt, runs[r].soc, gpu_flops / all_flops);
            g_assert_cmpfloat(gpu_flops / all_flops, <, 0.15);
            g_assert_cmpuint(whole_on_npu, >, 0);
            g_assert_cmpuint(ffn_down_on_gpu, >, 0);
            case_clear(&c);
        }
    }
}

/* No cliff in hetero-tensor's prefill between prepared lengths: from 256
 * tokens on, each doubling of a prompt the prepared shapes cover costs
 * tokens/s (attention grows), never buys them back by more than 2 %, on
 * every shipped phone SoC and three model sizes.  A rule that turned on
 * and off with a speed ratio near its threshold failed this on the
 * Dimensity 9300 (Llama-3.2-3B: 635 / 622 / 479 / 494 tokens/s at 256 /
 * 512 / 1024 / 2048). */
static void
test_tensor_prefill_no_cliff(void)
{
    static const char *const socs[] = { "sd8gen3", "sd8gen2", "dimensity9300", "sd8elite" };
    static const char *const models[] = { "qwen2.5-1.5b", "llama-3.2-3b", "llama-3-8b" };
    for (size_t i = 0; i < G_N_ELEMENTS(socs); i++) {
        for (size_t m = 0; m < G_N_ELEMENTS(models); m++) {
            double prev = 0;
            for (uint32_t p = 256; p <= 2048; p *= 2) {
                SimWorkload w;
                timing_workload(&w, p, 0, 1);
                Case c;
                run_case(socs[i], models[m], "hetero-tensor", &w, &c);
                double tps = c.r.prefill.tokens_per_s;
                if (prev > 0 && tps > 1.02 * prev) {
                    g_test_message("%s %s: %.1f tokens/s at %u after %.1f at %u", socs[i],
                                   models[m], tps, p, prev, p / 2);
                }
                if (prev > 0) {
                    g_assert_cmpfloat(tps, <=, 1.02 * prev);
                }
                prev = tps;
                case_clear(&c);
            }
        }
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sim/policies/mllm-npu/shadow-plan", test_mllm_shadow_plan);
    g_test_add_func("/sim/policies/mllm-npu/shadow-values", test_mllm_shadow_values);
    g_test_add_func("/sim/policies/mllm-npu/out-of-order", test_mllm_out_of_order);
    g_test_add_func("/sim/policies/mllm-npu/pairs", test_mllm_pairs);
    g_test_add_func("/sim/policies/mllm-npu/chunk-share", test_mllm_chunk_share);
    g_test_add_func("/sim/policies/npu-tts/batch", test_tts_batch);
    g_test_add_func("/sim/policies/transformer-lite/gpu-fp4", test_transformer_lite);
    g_test_add_func("/sim/policies/hetero-tensor/tok-align", test_tensor_tok_align);
    g_test_add_func("/sim/policies/hetero-tensor/prefill-gpu-share", test_tensor_prefill_gpu_share);
    g_test_add_func("/sim/policies/hetero-tensor/prefill-no-cliff", test_tensor_prefill_no_cliff);
    return g_test_run();
}
