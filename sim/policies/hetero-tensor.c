/*
 * hetero-tensor.c - HeteroLLM's tensor-level policy (FACTS.md §3).
 *
 * Every matmul is split between GPU and NPU by a solver that asks the
 * SoC's own timing models what each candidate would cost (the profiler)
 * and keeps the fastest:
 *
 *   T = min( T_gpu(all),
 *            T_npu(all, padded) + T_sync,
 *            max(T_gpu(part), T_npu(other part)) + T_sync )
 *
 * over these partitions, aligned to 256 rows and 32 tokens:
 *   row cutting        NPU rows [0, r), GPU rows [r, N), both write one output
 *   sequence cutting   NPU the largest prepared shape <= S, GPU the rest
 *                      (300 = 256 on NPU + 44 on GPU)
 *   multi-sequence     NPU two prepared shapes in a row, GPU the rest
 *                      (600 = 512 + 32 on NPU, 56 on GPU)
 *   hybrid             NPU rows [0, r) padded to the next prepared shape,
 *                      GPU rows [r, N) at the real length
 *
 * Prefill is NPU-dominant, decode GPU-dominant (row cutting, to draw on
 * both processors' DRAM bandwidth).  Operators other than matmuls run on
 * the GPU.  The NPU runs its share with weights permuted for its order
 * sensitivity (the builder marks NPU matmuls as W . X^T).
 */
#include "sim/policies/common.h"

typedef struct Part {
    uint32_t proc;
    SimSlice slice;
    MdlPrecision prec;
} Part;

typedef struct Candidate {
    uint64_t time_ps;
    uint32_t n;
    Part parts[4];
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

/* GPU and NPU parts run in parallel; NPU parts in a row add up. */
static uint64_t
candidate_cost(SimBuilder *b, uint32_t node, Candidate *c)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    uint64_t gpu = 0, npu = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        uint64_t t = part_cost(b, node, &c->parts[i]);
        if (c->parts[i].proc == info->proc_npu) {
            npu += t;
        } else {
            gpu += t;
        }
    }
    uint64_t sync = npu ? sim_builder_sync_cost_ps(b, info->proc_npu, info->proc_gpu) : 0;
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

static gboolean
tensor_matmul(SimBuilder *b, uint32_t node, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    const MdlNode *n = sim_builder_node(b, node);
    const uint32_t gpu = info->proc_gpu, npu = info->proc_npu;
    const MdlPrecision np = policy_npu_prec(b);
    const uint32_t S = n->tokens, N = n->features;
    const uint32_t align = info->opts->row_align;
    const SimSlice full = sim_builder_full(b, node);
    const gboolean decode = info->phase == SIM_PHASE_DECODE;
    /* decode: the batch padded to the smallest NPU shape (one tile of rows) */
    const uint32_t npu_pad = decode ? MAX(info->opts->min_npu_shape, S) : 0;
    Candidate best = { UINT64_MAX, 0, { { 0 } } };
    Candidate c;

    /* all on the GPU */
    c = (Candidate) { 0, 1, { part(gpu, full, MDL_PREC_W4A16) } };
    c.time_ps = candidate_cost(b, node, &c);
    consider(&best, &c);

    uint32_t S_npu = decode ? npu_pad : sim_builder_std_shape(b, S);
    if (S_npu != 0) {
        /* all on the NPU, padded */
        SimSlice s = full;
        s.pad_tokens = S_npu == S ? 0 : S_npu;
        c = (Candidate) { 0, 1, { part(npu, s, np) } };
        c.time_ps = candidate_cost(b, node, &c);
        consider(&best, &c);

        /* row cutting (decode) / hybrid (prefill, padded NPU share) */
        for (uint32_t r = align; r < N; r += align) {
            SimSlice sn = s, sg = full;
            sn.row1 = r;
            sg.row0 = r;
            c = (Candidate) { 0, 2, { part(npu, sn, np), part(gpu, sg, MDL_PREC_W4A16) } };
            c.time_ps = candidate_cost(b, node, &c);
            consider(&best, &c);
        }
    }
    if (!decode) {
        /* sequence cutting: a prepared shape on the NPU, the rest on the GPU */
        uint32_t p1 = std_floor(b, S);
        if (p1 > 0 && p1 < S) {
            SimSlice sn = full, sg = full;
            sn.tok1 = p1;
            sg.tok0 = p1;
            c = (Candidate) { 0, 2, { part(npu, sn, np), part(gpu, sg, MDL_PREC_W4A16) } };
            c.time_ps = candidate_cost(b, node, &c);
            consider(&best, &c);

            /* multi-sequence: a second prepared shape on the NPU, in a row */
            uint32_t p2 = std_floor(b, S - p1);
            if (p2 > 0) {
                SimSlice sn2 = full, sg2 = full;
                sn2.tok0 = p1;
                sn2.tok1 = p1 + p2;
                sg2.tok0 = p1 + p2;
                c = (Candidate) { 0, 2, { part(npu, sn, np), part(npu, sn2, np) } };
                if (p1 + p2 < S) {
                    c.parts[c.n++] = part(gpu, sg2, MDL_PREC_W4A16);
                }
                c.time_ps = candidate_cost(b, node, &c);
                consider(&best, &c);
            }
            /* the remainder padded onto the NPU instead (pipe-like) */
            SimSlice rest = sg;
            rest.pad_tokens = pad_for(b, S - p1);
            if (rest.pad_tokens || S - p1 == sim_builder_std_shape(b, S - p1)) {
                c = (Candidate) { 0, 2, { part(npu, sn, np), part(npu, rest, np) } };
                c.time_ps = candidate_cost(b, node, &c);
                consider(&best, &c);
            }
        }
    }

    for (uint32_t i = 0; i < best.n; i++) {
        if (sim_builder_kernel(b, node, best.parts[i].proc, best.parts[i].slice,
                               best.parts[i].prec, error) == UINT32_MAX) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
tensor_plan(SimBuilder *b, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    const SimPolicyOptions *o = info->opts;
    for (uint32_t s = o->min_npu_shape; s <= o->max_npu_shape; s *= 2) {
        sim_builder_npu_offline(b, s);
    }
    return policy_prefill(b, tensor_matmul, info->proc_gpu, error);
}

const SimPolicy sim_policy_hetero_tensor = {
    SIM_POLICY_ABI, "hetero-tensor",
    "HeteroLLM tensor level: row/sequence/multi-sequence/hybrid GPU+NPU cuts by a solver",
    tensor_plan,
};
