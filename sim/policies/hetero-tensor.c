/*
 * hetero-tensor.c - HeteroLLM's tensor-level policy (HeteroLLM §4.1).
 *
 * Every matmul is split between GPU and NPU by a solver that asks the
 * SoC's own timing models what each candidate would cost (the profiler)
 * and keeps the fastest:
 *
 *   T = min( T_gpu(all),
 *            T_npu(all, padded) + T_sync,
 *            max(T_gpu(part), T_npu(other part)) + T_sync )
 *
 * over these partitions, aligned to 256 rows and 32 tokens (row_align,
 * tok_align: every cut of the sequence, between the NPU's pieces or
 * before the rest, falls on a multiple of tok_align, HeteroLLM §4.1):
 *   row cutting        NPU rows [0, r), GPU rows [r, N), both write one output
 *   sequence cutting   NPU the largest prepared shape <= S, GPU the rest
 *                      (300 = 256 on NPU + 44 on GPU)
 *   multi-sequence     NPU several prepared shapes in a row, GPU the rest
 *                      (600 = 512 + 32 on NPU, 56 on GPU); the shapes are
 *                      the largest that fit, one after another, and every
 *                      number of them is a candidate, so a prompt longer
 *                      than the largest shape can go all to the NPU
 *                      (4096 = 4 x 1024) or share with the GPU
 *   hybrid             NPU rows [0, r) padded to the next prepared shape,
 *                      GPU rows [r, N) at the real length
 *
 * Prefill is NPU-dominant, decode GPU-dominant (row cutting, to draw on
 * both processors' DRAM bandwidth).  In prefill, the GPU shares a matmul
 * only "in these two cases" (HeteroLLM §4.1.1): short sequences, where
 * stage performance leaves the NPU about as fast as the GPU, and FFN-down,
 * whose shape gives the NPU only 0.5-1.5x the GPU's speed (§3.2).  Here
 * they are: a sequence no longer than the shortest prepared shape (32: one
 * tile of the NPU's columns, where its time stays flat whatever the
 * tokens); FFN-down's shape class, a weight with more columns than rows
 * (K > N: §3.2's "more columns than rows" after transposition), whatever
 * the NPU's speed on it, so that a SoC where it reaches 1.51x does not
 * lose the cut it gets at 1.49x; and any matmul on which the NPU is at
 * most prefill_cut_max_npu_speedup (1.5, the top of §3.2's FFN-down range)
 * times as fast as the GPU.  Every other prefill matmul stays whole on the
 * NPU and the GPU keeps "only a small portion" of prefill (§5.5: free for
 * a game's rendering).  Sequence and hybrid cuts serve lengths that are
 * misaligned (not a multiple of the shortest prepared shape, HeteroLLM's
 * 300 and 600): a length the prepared shapes cover exactly (768 = 512 +
 * 256, 2048 = 2 x 1024) runs them on the NPU one after another and gives
 * the GPU no piece.  Operators other than matmuls run on the GPU.  The NPU
 * runs its share with weights permuted for its order sensitivity (the
 * builder marks NPU matmuls as W . X^T).
 */
#include "sim/policies/common.h"

/* HeteroLLM §4.1.1 / §3.2, see above */
#define PREFILL_CUT_MAX_NPU_SPEEDUP 1.5

typedef struct Part {
    uint32_t proc;
    SimSlice slice;
    MdlPrecision prec;
} Part;

/* At most 32 pieces of the largest shape (a 32768-token prompt, the CLI's
 * limit, over 1024), the smaller ones of the rest, and a GPU part. */
#define MAX_PARTS 48

typedef struct Candidate {
    uint64_t time_ps;
    uint32_t n;
    Part parts[MAX_PARTS];
} Candidate;

static void
consider(Candidate *best, const Candidate *c)
{
    if (c->n > 0 && c->time_ps < best->time_ps) {
        *best = *c;
    }
}

static uint64_t
part_cost(SimBuilder *b, uint32_t node, const Part *p)
{
    return sim_builder_cost_ps(b, node, p->proc, p->slice, p->prec);
}

/*
 * GPU and NPU parts run in parallel; NPU parts in a row add up.  HeteroLLM
 * plans for its own fast sync: one hand-off back to the GPU, whatever the
 * mechanism the plan then runs with (its driver-sync ablation swaps the
 * mechanism under the same plan).  hetero-tensor/sync-aware plans for the
 * run's mechanism instead: the NPU's input handed over from the GPU and
 * its output handed back, each with its bytes.
 */
static uint64_t
candidate_cost(SimBuilder *b, uint32_t node, Candidate *c, gboolean sync_aware)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    const MdlNode *n = sim_builder_node(b, node);
    uint64_t gpu = 0, npu = 0, out_bytes = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const Part *p = &c->parts[i];
        uint64_t t = part_cost(b, node, p);
        if (p->proc != info->proc_npu) {
            gpu += t;
            continue;
        }
        npu += t;
        if (sync_aware) {
            MdlWork w;
            mdl_node_work(n, p->slice.tok0, p->slice.tok1, p->slice.row0, p->slice.row1,
                          p->slice.pad_tokens, p->prec, &w);
            out_bytes += w.write_bytes;
        }
    }
    uint64_t sync = 0;
    if (npu && !sync_aware) {
        sync = sim_builder_sync_cost_ps(b, info->proc_npu, info->proc_gpu);
    } else if (npu) {
        uint64_t in_bytes = (uint64_t) ((double) n->tokens * n->k *
                                        mdl_prec_act_bytes(MDL_PREC_W4A16) + 0.5);
        sync = sim_builder_sync_cost_run_ps(b, info->proc_gpu, info->proc_npu, in_bytes) +
               sim_builder_sync_cost_run_ps(b, info->proc_npu, info->proc_gpu, out_bytes);
    }
    return MAX(gpu, npu) + sync;
}

static Part
part(uint32_t proc, SimSlice s, MdlPrecision prec)
{
    return (Part) { proc, s, prec };
}

static uint32_t
pad_for(SimBuilder *b, uint32_t tokens)
{
    uint32_t shape = sim_builder_std_shape(b, tokens);
    return shape == tokens ? 0 : shape;
}

/* Largest standard shape <= @tokens, or 0. */
static uint32_t
std_floor(SimBuilder *b, uint32_t tokens)
{
    const SimPolicyOptions *o = sim_builder_info(b)->opts;
    uint32_t best = 0;
    for (uint32_t s = o->min_npu_shape; s <= o->max_npu_shape && s <= tokens; s *= 2) {
        best = s;
    }
    return best;
}

/*
 * Why the GPU may take a share of prefill matmul @node (HeteroLLM §4.1.1,
 * see above), or NULL if it may not; with the whole matmul's time on each
 * processor (on the NPU padded to @S_npu, or in one piece past the largest
 * prepared shape).
 */
static const char *
prefill_share_reason(SimBuilder *b, uint32_t node, uint32_t S_npu, uint64_t *t_gpu_ps,
                     uint64_t *t_npu_ps)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    const MdlNode *n = sim_builder_node(b, node);
    const SimSlice full = sim_builder_full(b, node);
    SimSlice s = full;
    s.pad_tokens = S_npu == n->tokens ? 0 : S_npu;
    *t_gpu_ps = sim_builder_cost_ps(b, node, info->proc_gpu, full, MDL_PREC_W4A16);
    *t_npu_ps = sim_builder_cost_ps(b, node, info->proc_npu, s, policy_npu_prec(b));
    if (n->tokens <= info->opts->min_npu_shape) {
        return "a short sequence (the shortest prepared shape): rows may be cut "
               "(HeteroLLM §4.1.1)";
    }
    if (n->k > n->features) {
        return "FFN-down's shape class (more columns than rows): it may be cut "
               "(HeteroLLM §4.1.1, §3.2)";
    }
    if ((double) *t_gpu_ps <= PREFILL_CUT_MAX_NPU_SPEEDUP * (double) *t_npu_ps) {
        return "the NPU at most 1.5x the GPU: it may be cut (HeteroLLM §4.1.1)";
    }
    return NULL;
}

static gboolean
tensor_matmul(SimBuilder *b, uint32_t node, gboolean sync_aware, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    const MdlNode *n = sim_builder_node(b, node);
    const uint32_t gpu = info->proc_gpu, npu = info->proc_npu;
    const MdlPrecision np = policy_npu_prec(b);
    const uint32_t S = n->tokens, N = n->features;
    const uint32_t align = info->opts->row_align;
    const SimSlice full = sim_builder_full(b, node);
    const gboolean decode = info->phase == SIM_PHASE_DECODE;
    /* decode: the batch padded to the prepared NPU shape that holds it
     * (one tile of rows up to 32 sequences; 0 if none does) */
    const uint32_t npu_pad = decode ? sim_builder_std_shape(b, MAX(info->opts->min_npu_shape, S))
                                    : 0;
    Candidate best = { UINT64_MAX, 0, { { 0 } } };
    Candidate c;

    /* all on the GPU */
    c = (Candidate) { 0, 1, { part(gpu, full, MDL_PREC_W4A16) } };
    c.time_ps = candidate_cost(b, node, &c, sync_aware);
    consider(&best, &c);

    uint32_t S_npu = decode ? npu_pad : sim_builder_std_shape(b, S);
    /* prefill: may the GPU take a share (HeteroLLM §4.1.1, above)? */
    const gboolean misaligned = S % info->opts->min_npu_shape != 0;
    uint64_t t_gpu_all = 0, t_npu_all = 0;
    const char *share_why = decode ? NULL
                                   : prefill_share_reason(b, node, S_npu, &t_gpu_all, &t_npu_all);
    /* may the GPU take rows or tokens of this matmul? */
    const gboolean gpu_shares = decode || misaligned || share_why != NULL;
    if (S_npu != 0) {
        /* all on the NPU, padded */
        SimSlice s = full;
        s.pad_tokens = S_npu == S ? 0 : S_npu;
        c = (Candidate) { 0, 1, { part(npu, s, np) } };
        c.time_ps = candidate_cost(b, node, &c, sync_aware);
        consider(&best, &c);

        /* row cutting (decode) / hybrid (prefill, padded NPU share) */
        for (uint32_t r = align; gpu_shares && r < N; r += align) {
            SimSlice sn = s, sg = full;
            sn.row1 = r;
            sg.row0 = r;
            c = (Candidate) { 0, 2, { part(npu, sn, np), part(gpu, sg, MDL_PREC_W4A16) } };
            c.time_ps = candidate_cost(b, node, &c, sync_aware);
            consider(&best, &c);
        }
    }
    if (!decode) {
        /* sequence and multi-sequence cutting: the first k pieces of S in
         * the largest prepared shapes that fit run on the NPU in a row; the
         * rest runs on the GPU, or padded onto the NPU (pipe-like) */
        Candidate npu_k = { 0, 0, { { 0 } } };
        uint32_t t0 = 0;
        for (uint32_t p = std_floor(b, S); p > 0 && npu_k.n + 2 <= MAX_PARTS;
             p = std_floor(b, S - t0)) {
            SimSlice sn = full;
            sn.tok0 = t0;
            sn.tok1 = t0 + p;
            npu_k.parts[npu_k.n++] = part(npu, sn, np);
            t0 += p;
            if (t0 == S) {
                break;                   /* all on the NPU, no padding */
            }
            if (t0 % info->opts->tok_align != 0) {
                break;                   /* no cut here or after: not aligned */
            }
            SimSlice rest = full;
            rest.tok0 = t0;
            if (gpu_shares) {
                c = npu_k;
                c.parts[c.n++] = part(gpu, rest, MDL_PREC_W4A16);
                c.time_ps = candidate_cost(b, node, &c, sync_aware);
                consider(&best, &c);
            }
            rest.pad_tokens = pad_for(b, S - t0);
            if (rest.pad_tokens) {
                c = npu_k;
                c.parts[c.n++] = part(npu, rest, np);
                c.time_ps = candidate_cost(b, node, &c, sync_aware);
                consider(&best, &c);
            }
        }
        if (t0 == S && npu_k.n > 1) {
            npu_k.time_ps = candidate_cost(b, node, &npu_k, sync_aware);
            consider(&best, &npu_k);
        }
    }

    g_autofree char *why = NULL;
    if (!decode) {
        why = g_strdup_printf("hetero-tensor solver: all on the GPU %.1f us, all on the NPU "
                              "%.1f us (%.2fx); %s; chose %u part(s) taking %.1f us",
                              t_gpu_all / 1e6, t_npu_all / 1e6,
                              (double) t_gpu_all / (double) MAX(t_npu_all, 1),
                              misaligned ? "a misaligned length: sequence, hybrid and padded "
                                           "cuts considered"
                              : share_why ? share_why
                                          : "the NPU over 1.5x the GPU: no GPU share in "
                                            "prefill, the GPU kept free (HeteroLLM §4.1.1, §5.5)",
                              best.n, best.time_ps / 1e6);
    }
    if (sync_aware && S_npu != 0) {
        /* what a cut's hand-offs cost at the run's mechanism */
        Candidate all_npu = { 0, 1, { part(npu, full, np) } };
        all_npu.parts[0].slice.pad_tokens = S_npu == S ? 0 : S_npu;
        uint64_t handoffs = candidate_cost(b, node, &all_npu, TRUE) -
                            part_cost(b, node, &all_npu.parts[0]);
        g_autofree char *head = why ? g_steal_pointer(&why)
                                : g_strdup_printf("hetero-tensor/sync-aware solver: chose %u "
                                                  "part(s) taking %.1f us", best.n,
                                                  best.time_ps / 1e6);
        why = g_strdup_printf("%s; hand-offs priced at the run's %s sync: %.1f us for the "
                              "whole matmul's input and output", head,
                              sim_sync_name[info->sync], handoffs / 1e6);
    }
    for (uint32_t i = 0; i < best.n; i++) {
        uint32_t id = sim_builder_kernel(b, node, best.parts[i].proc, best.parts[i].slice,
                                         best.parts[i].prec, error);
        if (id == UINT32_MAX) {
            return FALSE;
        }
        if (why) {
            sim_builder_note(b, id, why);
        }
    }
    return TRUE;
}

static gboolean
matmul_fast(SimBuilder *b, uint32_t node, GError **error)
{
    return tensor_matmul(b, node, FALSE, error);
}

static gboolean
matmul_sync_aware(SimBuilder *b, uint32_t node, GError **error)
{
    return tensor_matmul(b, node, TRUE, error);
}

static gboolean
plan_with(SimBuilder *b, PolicyMatmulFn matmul, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    const SimPolicyOptions *o = info->opts;
    for (uint32_t s = o->min_npu_shape; s <= o->max_npu_shape; s *= 2) {
        sim_builder_npu_offline(b, s);
    }
    return policy_prefill(b, matmul, info->proc_gpu, error);
}

static gboolean
tensor_plan(SimBuilder *b, GError **error)
{
    return plan_with(b, matmul_fast, error);
}

static gboolean
tensor_plan_sync_aware(SimBuilder *b, GError **error)
{
    return plan_with(b, matmul_sync_aware, error);
}

const SimPolicy sim_policy_hetero_tensor = {
    SIM_POLICY_ABI, "hetero-tensor",
    "HeteroLLM tensor level: row/sequence/multi-sequence/hybrid GPU+NPU cuts by a solver",
    tensor_plan, "heterollm",
};

const SimPolicy sim_policy_hetero_tensor_sync_aware = {
    SIM_POLICY_ABI, "hetero-tensor/sync-aware",
    "hetero-tensor whose solver plans for the run's sync mechanism (driver or fast), "
    "both hand-offs of a cut with their bytes",
    tensor_plan_sync_aware, "heterollm",
};
