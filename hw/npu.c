/*
 * npu.c - a weight-stationary systolic NPU (Hexagon HMX-like), tile by tile.
 *
 * A matmul [m, k] x [k, n] keeps the right operand stationary: it is cut
 * into ceil(k/rows) x ceil(n/cols) tiles; each tile is shifted into an
 * array and the m rows of the left operand stream through it, one row per
 * cycle, plus the pipeline fill/drain (SCALE-Sim v2's weight-stationary
 * count).  `arrays` units work on different tiles at once.
 *
 * Beyond the array (NPU-TTS §3): HMX reads its stationary operand from the
 * TCM in its own tile order (32x32 FP16 tiles, pairs of reduction rows
 * interleaved), while the DMA brings operands in row-major order.  The
 * vector unit (HVX) rebuilds every stationary tile in that order with
 * shuffles, once per tile (a tile stays in the TCM for its pass), at
 * relayout_gbps of tile bytes; the streamed rows enter in row order and
 * need none.  HVX, HMX and the DMA work side by side (double-buffered),
 * so a matmul takes the longest of the three, the HVX's share being the
 * re-layout plus any dequantisation of the streamed operand.  From this:
 *
 *  - stage performance: every dimension the tiles cut is padded to whole
 *    tiles (the array's count, the re-layout and the DMA's bytes alike),
 *    so latency is flat inside a tile and steps at tile boundaries;
 *  - order sensitivity: with a big weight on the right and few rows
 *    streamed ([K,4096] x [4096,14336], small K) the HVX re-lays 57344
 *    tiles that each serve only K rows, and the array waits for it; with
 *    the weight on the left ([14336,4096] x [4096,K]) the few tiles of
 *    the small operand are re-laid once and serve 14336 rows, and the DMA
 *    of the weight sets the time (HeteroLLM §3.2 measures ~6x; the rates
 *    give ~3x at K = 32: hetero-sim probe --what npu-order);
 *  - passes (hw_npu_schedule): the stationary operand is held over its
 *    whole depth in whole column tiles, as many as stationary_kib holds,
 *    and an FP16/INT8 streamed operand comes in again for every such pass.
 *    A quantised one feeding the FP16 datapath (W4A16, Q8_0: the matrix
 *    unit has no mixed mode) is dequantised by the vector unit for one
 *    32-column fold at a time (SCALE-Sim's weight-stationary loop, column
 *    folds outermost), at the stack's dequant rate, so per FLOP it costs
 *    the same whatever the model's widths: ~3x the GPU for QKV, O and
 *    gate/up on every shipped model (hetero-sim probe --what npu-shape);
 *  - shape sensitivity: a quantised streamed weight with more columns than
 *    rows (k > m: FFN-down after HeteroLLM's transposition), as wide as
 *    the stack's kernels say (npu.deep_min_rows), whose X^T is not held
 *    whole runs depth-blocked (deep_rows): X^T is fetched
 *    and re-laid once per block of weight rows, which leaves FFN-down at
 *    the GPU's speed (HeteroLLM §3.2: 0.5-1.5x), again whatever the widths;
 *  - DMA: what comes in, as many times as it comes in, plus the output;
 *  - per-group matmuls on a runtime that has none (QNN, mllm-NPU §2.3):
 *    one sub-matmul per group, whose partial products the vector unit
 *    adds up (hw_npu_group_partial_ps).
 *
 * Datapath rates: FP16 MACs (FP16, and W4A16 / Q8_0 once dequantised),
 * INT8 MACs (W8A8), and INT8 activations against INT4 weights (W4A8) at
 * int4_macs_per_pe_cycle: the INT8 rate where the array unpacks the
 * weights to INT8 (the shipped configs' assumption), more for an array
 * with native INT4 MACs (--set npu.int4_macs_per_pe_cycle=4 asks "what if").
 *
 * Non-matmul ops run on the vector unit.  Static graphs: the runtime
 * refuses shapes that were not prepared; preparing costs the stack's fixed
 * part per graph plus a part per MiB of activations (HeteroLLM §3.2 online
 * prepare with QNN: 408.4 ms at 135 tokens, 2050 ms at 1000 for
 * Llama-3-8B, ~4 graphs), and, where the stack says so, a part per
 * weight its matmuls hold (QNN's graph optimisation as mllm-NPU §2.2
 * measures it: seconds, growing with the model).
 */
#include "hw/npu.h"
#include "hw/stack.h"
#include "sim/util/error.h"

#include <math.h>

static const HsParam hw_npu_params[] = {
    HW_DEV_COMMON_PARAMS(HwNpu),
    HS_PARAM_U32("tile_rows", HwNpu, tile_rows, 1, 1024, HS_REQUIRED,
                 "systolic array rows (PEs)"),
    HS_PARAM_U32("tile_cols", HwNpu, tile_cols, 1, 1024, HS_REQUIRED,
                 "systolic array columns (PEs)"),
    HS_PARAM_U32("arrays", HwNpu, arrays, 1, 1024, 1,
                 "matrix units working in parallel"),
    HS_PARAM_F64("freq_mhz", HwNpu, freq_mhz, 1, 10000, HS_REQUIRED, "NPU clock"),
    HS_PARAM_ENUM("arch", HwNpu, arch, int, hw_npu_arch_name, HW_NPU_ARCH_COUNT, 0,
                  "architecture (a stack's runtime and figures come from one; a run on "
                  "another says so; unspecified: none claimed)"),
    /* rates: 0 would make a matmul never end, so the ranges exclude it */
    HS_PARAM_F64_POS("fp16_macs_per_pe_cycle", HwNpu, fp16_macs_per_pe_cycle, 64, 1,
                     "FP16 MACs per PE per cycle"),
    HS_PARAM_F64_POS("int8_macs_per_pe_cycle", HwNpu, int8_macs_per_pe_cycle, 64, 2,
                     "INT8 MACs per PE per cycle"),
    HS_PARAM_F64_POS("int4_macs_per_pe_cycle", HwNpu, int4_macs_per_pe_cycle, 64, 2,
                     "MACs per PE per cycle of the INT8 datapath when the weights are INT4 "
                     "(W4A8): the INT8 rate where the array unpacks them to INT8, more where "
                     "it has native INT4 MACs (W4A16 dequantises to FP16: the FP16 rate)"),
    HS_PARAM_U32("fill_drain_cycles", HwNpu, fill_drain_cycles, 0, 100000, 62,
                 "pipeline fill + drain per weight tile (SCALE-Sim: rows + cols - 2), "
                 "after the tile_rows cycles that shift the tile in"),
    HS_PARAM_F64("sram_kib", HwNpu, sram_kib, 1, 1048576, HS_REQUIRED,
                 "on-chip TCM / SRAM, software managed; it bounds stationary_kib, "
                 "which is what the timing sees"),
    HS_PARAM_F64("stationary_kib", HwNpu, stationary_kib, 1, 1048576, HS_REQUIRED,
                 "TCM a matmul's stationary operand may occupy (the rest: "
                 "stream buffers, outputs)"),
    HS_PARAM_U32("deep_rows", HwNpu, deep_rows, 0, 1048576, 0,
                 "depth-blocked schedule for a quantised streamed weight with more columns "
                 "than rows whose stationary operand is not held whole: weight rows whose "
                 "partial outputs are kept while the depth is walked (0: no such schedule)"),
    HS_PARAM_F64("dma_gbps", HwNpu, dma_gbps, 0.001, 10000, HS_REQUIRED,
                 "DDR -> TCM DMA bandwidth for large regular blocks"),
    HS_PARAM_F64("relayout_gbps", HwNpu, relayout_gbps, 0.001, 10000, HS_REQUIRED,
                 "vector unit (HVX) rebuilding a row-major stationary operand in the "
                 "matrix unit's tile order, in the TCM: tile bytes per second"),
    HS_PARAM_F64("vector_gflops", HwNpu, vector_gflops, 0.001, 100000, HS_REQUIRED,
                 "vector unit (HVX) throughput for non-matmul ops"),
    HS_PARAM_END
};

static double
dtype_bytes(HwDtype t)
{
    return t == HW_DTYPE_FP16 ? 2.0 : t == HW_DTYPE_INT8 ? 1.0 : 0.5;
}

static gboolean
hw_npu_realize(HwDev *dev, GError **error)
{
    HwNpu *npu = (HwNpu *) dev;
    if (npu->stationary_kib > npu->sram_kib) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "stationary_kib: expected at most sram_kib (%g) (got %g)",
                    npu->sram_kib, npu->stationary_kib);
        return FALSE;
    }
    return TRUE;
}

/* A runtime without per-group matmuls (QNN, mllm-NPU §2.3) emulates one
 * as a sub-matmul per group of 32 along the reduction: the array does
 * the same MACs, but every group leaves an INT32 partial product of the
 * whole output that the vector unit reads back, scales by the group's
 * scale and adds up, after the array made it.  Per FLOP that costs
 * 4 bytes / (2 x 32 MACs), whatever the shape: a fixed ratio to the
 * per-tensor matmul, as §2.3 measures (8.1-10.7x). */
static double
hw_npu_group_partial_ps(const HwStackNpu *sn, const HwOp *op)
{
    if (sn->group_partial_gbps <= 0 ||
        (op->wfmt != HW_WFMT_Q8_0 && op->wfmt != HW_WFMT_Q4_0)) {
        return 0;
    }
    double groups = ceil((double) op->k / 32.0);
    double bytes = groups * (double) op->m * (double) op->n * 4.0;
    return bytes * 1000.0 / sn->group_partial_gbps;
}

/* A quantised streamed operand (W4A16, Q8_0...) feeding the FP16 datapath,
 * which the vector unit dequantises: the matrix unit has no mixed mode. */
static gboolean
hw_npu_dequantises(const HwStackNpu *sn, const HwOp *op)
{
    return (op->a_dtype == HW_DTYPE_INT4 || op->a_dtype == HW_DTYPE_INT8) &&
           op->compute == HW_DTYPE_FP16 && sn->dequant.gbps[op->wfmt] > 0;
}

/* The vector unit's re-layout of @tiles stationary tiles into the
 * matrix unit's order, at relayout_gbps of tile bytes (FP16 tiles 2 bytes
 * an element, INT8 tiles 1). */
static double
hw_npu_relayout_ps(const HwNpu *npu, const HwOp *op, double tiles)
{
    double tile_bytes = (double) (npu->tile_rows * npu->tile_cols) *
                        (op->compute == HW_DTYPE_INT8 ? 1.0 : 2.0);
    return tiles * tile_bytes * 1000.0 / npu->relayout_gbps;
}

/*
 * How the runtime walks a matmul [m, k] x [k, n] through the TCM, in
 * whole tiles (HeteroLLM §3.2: every dimension is padded to the tile, so
 * the operands the DMA moves are the padded ones).
 *
 * Full depth (the usual schedule): the stationary operand is held in
 * blocks of whole column tiles over its whole (padded) depth, as many as
 * stationary_kib holds; every block is a pass, and an FP16/INT8 streamed
 * operand comes in again for every pass; a quantised one that the vector
 * unit dequantises comes in (and is dequantised) again for every column
 * fold.
 *
 * Depth-blocked (deep_rows > 0): a streamed operand with more columns than
 * rows (k > m: HeteroLLM §3.2's FFN-down class after its transposition)
 * whose stationary operand is not held whole -- several passes, or not
 * even one column tile over the full depth in stationary_kib (at 32
 * tokens: Llama-3-8B's FFN-down has 896 KiB of X^T for 360) -- is run the
 * other way round: the runtime keeps the partial outputs of deep_rows
 * streamed rows while it walks the depth, so the streamed operand comes in
 * once, but the stationary operand comes in again, and is re-laid again by
 * the vector unit, for every block of deep_rows rows.  The public HMX
 * kernels of llama.cpp's Hexagon backend switch schedule on the same shape
 * test (a weight deeper than it has output rows: "e.g. prefill FFN Down"),
 * there only from 128 tokens (holding shorter activations whole in the
 * TCM) and for more than 1024 outputs (a narrow weight, such as GQA's K
 * and V projections, runs full depth): a stack says which of these its
 * kernels do (npu.deep_min_tokens, npu.deep_min_rows).  Its cost per FLOP
 * depends on deep_rows alone, not on the model's widths.
 */
typedef struct NpuSched {
    uint64_t tiles;              /* stationary tiles, k_tiles x n_tiles */
    uint64_t passes;             /* full depth: column blocks of the stationary operand */
    uint64_t cols_per_pass;      /* full depth: stationary columns per pass (whole tiles) */
    gboolean deep;               /* the depth-blocked schedule */
    uint64_t row_blocks;         /* blocks of streamed rows (1 unless deep) */
    uint64_t rows_per_block;     /* streamed rows per block */
    double a_bytes, b_bytes;     /* streamed, stationary operand (padded) */
    double out_bytes;            /* the output, its columns padded to whole tiles */
    uint64_t a_reads, b_reads;   /* times each comes in through the DMA */
} NpuSched;

static void
hw_npu_schedule(const HwNpu *npu, const HwStackNpu *sn, const HwOp *op, gboolean dequant,
                NpuSched *sc)
{
    const uint64_t k_tiles = (op->k + npu->tile_rows - 1) / npu->tile_rows;
    const uint64_t n_tiles = (op->n + npu->tile_cols - 1) / npu->tile_cols;
    const double k_pad = (double) (k_tiles * npu->tile_rows);
    const double n_pad = (double) (n_tiles * npu->tile_cols);
    *sc = (NpuSched) { .tiles = k_tiles * n_tiles, .row_blocks = 1, .rows_per_block = op->m,
                       .a_reads = 1, .b_reads = 1 };
    sc->a_bytes = (double) op->m * k_pad * dtype_bytes(op->a_dtype);
    sc->b_bytes = k_pad * n_pad * dtype_bytes(op->b_dtype);
    sc->out_bytes = op->n > 0 ? (double) op->write_bytes * n_pad / (double) op->n
                              : (double) op->write_bytes;
    double col_tile_bytes = k_pad * (double) npu->tile_cols * dtype_bytes(op->b_dtype);
    uint64_t tiles_per_pass = hw_count(floor(npu->stationary_kib * 1024.0 / col_tile_bytes));
    uint64_t per_pass = MAX(1, tiles_per_pass);
    sc->passes = (n_tiles + per_pass - 1) / per_pass;
    sc->cols_per_pass = MIN(n_tiles, per_pass) * npu->tile_cols;
    /* depth-blocked when the stationary operand is not held whole: several
     * passes, or not even one column tile over the full depth fits (one
     * "pass" would then hold more than the TCM gives it) -- as far as the
     * stack's kernels switch to it: from deep_min_tokens tokens (shorter
     * activations held whole in the TCM) and deep_min_rows weight rows
     * (narrower outputs, e.g. GQA's K and V projections, run full depth) */
    sc->deep = dequant && npu->deep_rows > 0 && op->k > op->m && tiles_per_pass < n_tiles &&
               op->n >= sn->deep_min_tokens && op->m >= sn->deep_min_rows;
    if (sc->deep) {
        sc->rows_per_block = MIN(op->m, npu->deep_rows);
        sc->row_blocks = (op->m + npu->deep_rows - 1) / npu->deep_rows;
        sc->b_reads = sc->row_blocks;
    } else if (dequant) {
        /* a quantised streamed operand is turned into FP16 for one column
         * fold at a time: every fold streams it whole (SCALE-Sim's
         * weight-stationary loop, column folds outermost; HMX works
         * through one 32-column stationary tile over the whole depth at a
         * time), and its FP16 copy, 4x (INT4) or 2x (INT8) its size, is not
         * kept for the next fold */
        sc->a_reads = n_tiles;
    } else {
        sc->a_reads = sc->passes;
    }
}

/*
 * An attention the stack runs as FlashAttention (npu.attention_matrix_unit,
 * NPU-TTS): QK^T and PV on the matrix unit in FP16 tiles, each head's
 * queries padded to whole tiles of tile_rows (a decode step of batch 1
 * fills one row of 32), at the array's FP16 rate times the stack's
 * npu.matmul_efficiency; the softmax on the vector unit, the stack's
 * npu.softmax_vector_flops a score at vector_gflops.  The units work side
 * by side on successive key blocks, so the slower sets the time.
 */
typedef struct NpuAttention {
    double scores;           /* heads x query-key scores */
    double pad;              /* padded query rows / query rows */
    double matrix_ps, vector_ps;
} NpuAttention;

static void
hw_npu_attention(const HwNpu *npu, const HwStackNpu *sn, const HwOp *op, NpuAttention *a)
{
    const double rows = (double) MAX(op->m, 1);
    const double tr = npu->tile_rows;
    a->scores = hw_op_attention_scores(op);
    a->pad = ceil(rows / tr) * tr / rows;
    /* flops per ps: 2 per MAC, every PE of every array each cycle */
    const double array_rate = 2.0 * npu->arrays * npu->tile_rows * npu->tile_cols *
                              npu->fp16_macs_per_pe_cycle * npu->freq_mhz * 1e-6 *
                              sn->matmul_efficiency;
    a->matrix_ps = a->scores * 4.0 * (double) op->k * a->pad / array_rate;
    /* GFLOPS == flops per ns */
    a->vector_ps = a->scores * sn->softmax_vector_flops / npu->vector_gflops * 1e3;
}

static void
hw_npu_estimate(const HwDev *dev, const HwStack *stack, const HwOp *op, HwCost *c)
{
    const HwNpu *npu = (const HwNpu *) dev;
    const HwStackNpu *sn = &stack->npu;
    const double period_ps = 1e6 / npu->freq_mhz;

    c->overhead_ps = hw_cost_ps(c, floor(sn->launch_us * 1e6),
                                "graph execute (the stack's npu.launch_us)");
    if (op->kind == HW_OP_PREPARE) {
        /* read_bytes: activations the graph handles */
        double mib = (double) op->read_bytes / (1024.0 * 1024.0);
        double ms = sn->graphs_per_model * sn->prepare_base_ms +
                    mib * sn->prepare_ms_per_mib;
        if (sn->prepare_ms_per_mparam > 0 && op->m > 0) {
            /* flops: the graph's matmuls at m tokens, 2 per weight per token */
            double mparams = (double) op->flops / (2.0 * (double) op->m) / 1e6;
            ms += mparams * sn->prepare_ms_per_mparam;
        }
        c->overhead_ps = 0;
        c->compute_ps = hw_cost_ps(c, floor(ms * 1e9),
                                   "graph preparation time (the stack's npu.prepare_base_ms, "
                                   "npu.prepare_ms_per_mib, npu.prepare_ms_per_mparam)");
        return;
    }
    if (op->kind == HW_OP_ATTENTION && sn->attention_matrix_unit) {
        NpuAttention a;
        hw_npu_attention(npu, sn, op, &a);
        c->compute_ps = hw_cost_ps(c, MAX(a.matrix_ps, a.vector_ps),
                                   "attention time (the matrix unit's FP16 rate and the "
                                   "vector unit's softmax: vector_gflops, the stack's "
                                   "npu.softmax_vector_flops)");
        c->dram_bytes = op->read_bytes + op->write_bytes;
        return;
    }
    if (op->kind != HW_OP_MATMUL) {
        /* GFLOPS == flops per ns */
        c->compute_ps = hw_cost_ps(c, floor((double) op->flops / npu->vector_gflops * 1e3),
                                   "vector-unit time (vector_gflops)");
        c->dram_bytes = op->read_bytes + op->write_bytes;
        return;
    }
    NpuSched sc;
    hw_npu_schedule(npu, sn, op, hw_npu_dequantises(sn, op), &sc);
    /* INT4 weights on the INT8 datapath (W4A8) at the array's INT4 rate */
    const gboolean int4 = op->compute == HW_DTYPE_INT8 &&
                          (op->a_dtype == HW_DTYPE_INT4 || op->b_dtype == HW_DTYPE_INT4);
    const double macs = int4 ? npu->int4_macs_per_pe_cycle
                        : op->compute == HW_DTYPE_INT8 ? npu->int8_macs_per_pe_cycle
                        : npu->fp16_macs_per_pe_cycle;
    /* each fold (SCALE-Sim's word for one stationary tile in one array):
     * the tile shifts into the array one row per cycle (tile_rows cycles),
     * the streamed rows pass through it (faster datapaths take several per
     * cycle), then the pipeline fills and drains (R + C - 2): SCALE-Sim
     * v2's weight-stationary count, folds x (M + 2R + C - 2) - 1.  The
     * depth-blocked schedule loads every tile once per block of rows. */
    const uint64_t rounds = (sc.tiles + npu->arrays - 1) / npu->arrays;
    /* in doubles: a slow datapath or a huge shape must not wrap a count */
    /* (no 0 x inf: a vanishing rate must give an infinite time, not NaN) */
    double full_blocks = (double) (sc.row_blocks - 1);
    double stream = ceil(((double) op->m - full_blocks * (double) sc.rows_per_block) / macs);
    if (sc.row_blocks > 1) {
        stream += full_blocks * ceil((double) sc.rows_per_block / macs);
    }
    double compute_cycles = (double) rounds *
                            ((double) sc.row_blocks *
                             ((double) npu->tile_rows + (double) npu->fill_drain_cycles) + stream);
    c->compute_cycles = hw_count(compute_cycles);
    /* what the runtime's graphs get out of the arrays (1: all of it) */
    double array_cycles = sn->matmul_efficiency == 1.0
                          ? compute_cycles
                          : floor(compute_cycles / sn->matmul_efficiency + 0.5);
    c->weight_loads = hw_count((double) sc.tiles * (double) sc.row_blocks);
    c->passes = sc.deep ? sc.row_blocks : sc.a_reads;
    double array_ps = array_cycles * period_ps;
    /* beyond the array: HVX re-lays every stationary tile it brings in
     * into HMX's tile order (NPU-TTS §3), alongside the array
     * (double-buffered) */
    double hvx_ps = hw_npu_relayout_ps(npu, op, (double) sc.tiles * (double) sc.row_blocks);
    c->dram_bytes = hw_cost_bytes(c, floor(sc.b_bytes * (double) sc.b_reads +
                                           sc.a_bytes * (double) sc.a_reads + sc.out_bytes));
    double dq = sn->dequant.gbps[op->wfmt];
    if (hw_npu_dequantises(sn, op)) {
        /* W4A16, Q8_0...: every time the streamed quantised weight comes in,
         * the vector unit reads it and dequantises it to FP16 for the array,
         * at the rate the stack's HVX code reaches for that format */
        hvx_ps += sc.a_bytes * (double) sc.a_reads * 1000.0 / dq;
    }
    /* the DMA engine is the third unit: how fast bytes arrive */
    double dma_ps = (double) c->dram_bytes * 1000.0 / npu->dma_gbps;
    double busy_ps = MAX(array_ps, MAX(hvx_ps, dma_ps));
    c->cycles = hw_count(busy_ps / period_ps + 0.5);
    /* both parts at most the horizon: the sum cannot wrap */
    c->compute_ps = hw_cost_ps(c, busy_ps,
                               busy_ps == array_ps
                               ? int4 ? "array time (freq_mhz, int4_macs_per_pe_cycle, the "
                                        "stack's npu.matmul_efficiency)"
                               : op->compute == HW_DTYPE_INT8
                                 ? "array time (freq_mhz, int8_macs_per_pe_cycle, the "
                                   "stack's npu.matmul_efficiency)"
                                 : "array time (freq_mhz, fp16_macs_per_pe_cycle, the "
                                   "stack's npu.matmul_efficiency)"
                               : busy_ps == hvx_ps
                               ? sc.deep ? "vector-unit time (relayout_gbps, deep_rows, the "
                                           "stack's npu.dequant rate of this weight format)"
                                 : "vector-unit time (relayout_gbps, the stack's npu.dequant "
                                   "rate of this weight format)"
                               : sc.deep ? "DMA time (dma_gbps, deep_rows)" : "DMA time (dma_gbps)") +
                    hw_cost_ps(c, hw_npu_group_partial_ps(sn, op),
                               "per-group partial sums (the stack's npu.group_partial_gbps)");
}

static void
hw_npu_explain(const HwDev *dev, const HwStack *stack, const HwOp *op, const HwCost *c,
               GString *out)
{
    const HwNpu *npu = (const HwNpu *) dev;
    const HwStackNpu *sn = &stack->npu;
    if (op->kind == HW_OP_ATTENTION && sn->attention_matrix_unit) {
        NpuAttention a;
        hw_npu_attention(npu, sn, op, &a);
        char f[32];
        hw_flops_text(a.scores * 4.0 * (double) op->k, f);
        g_string_append_printf(out, "    QK^T and PV: %s on the matrix unit in FP16 tiles, "
                               "%" G_GUINT64_FORMAT " queries a head padded to %g x "
                               "(tile_rows %u), at the stack's %g of the arrays' rate "
                               "= %.2f us\n", f, op->m, a.pad, npu->tile_rows,
                               sn->matmul_efficiency, a.matrix_ps / 1e6);
        g_string_append_printf(out, "    softmax: %.4g scores x %g flops (the stack's "
                               "npu.softmax_vector_flops) on the vector unit at %g GFLOPS "
                               "= %.2f us\n", a.scores, sn->softmax_vector_flops,
                               npu->vector_gflops, a.vector_ps / 1e6);
        g_string_append_printf(out, "    the units overlap on successive key blocks: the "
                               "%s sets the time\n", a.vector_ps >= a.matrix_ps
                               ? "vector unit's softmax" : "matrix unit");
        return;
    }
    if (op->kind != HW_OP_MATMUL) {
        char f[32];
        hw_flops_text((double) op->flops, f);
        g_string_append_printf(out, "    compute: %s on the vector unit at %g GFLOPS = "
                               "%.2f us\n", f, npu->vector_gflops,
                               (double) c->compute_ps / 1e6);
        return;
    }
    NpuSched sc;
    hw_npu_schedule(npu, sn, op, hw_npu_dequantises(sn, op), &sc);
    uint64_t kt = (op->k + npu->tile_rows - 1) / npu->tile_rows;
    uint64_t nt = (op->n + npu->tile_cols - 1) / npu->tile_cols;
    uint64_t rounds = (sc.tiles + npu->arrays - 1) / npu->arrays;
    uint64_t array_cycles = rounds ? c->compute_cycles : 0;
    g_string_append_printf(out, "    tiles: the right operand [%" G_GUINT64_FORMAT " x %"
                           G_GUINT64_FORMAT "] is cut into %" G_GUINT64_FORMAT " x %"
                           G_GUINT64_FORMAT " = %" G_GUINT64_FORMAT " tiles of %u x %u (padded), "
                           "%u at a time (arrays) -> %" G_GUINT64_FORMAT " rounds\n", op->k, op->n,
                           kt, nt, sc.tiles, npu->tile_rows, npu->tile_cols, npu->arrays, rounds);
    if (sc.deep) {
        g_string_append_printf(out, "    depth-blocked: the left operand has more columns than "
                               "rows (%" G_GUINT64_FORMAT " > %" G_GUINT64_FORMAT ") and the right "
                               "one needs %" G_GUINT64_FORMAT " passes; its partial outputs are "
                               "kept for %" G_GUINT64_FORMAT " rows at a time while the depth is "
                               "walked: the right operand comes in and is re-laid %"
                               G_GUINT64_FORMAT " times, the left one once\n", op->k, op->m,
                               sc.passes, sc.rows_per_block, sc.row_blocks);
    }
    g_string_append_printf(out, "    each round: %u cycles to shift the tile in, %"
                           G_GUINT64_FORMAT " rows of the left operand streamed (%s datapath), "
                           "%u fill/drain cycles%s -> %" G_GUINT64_FORMAT " array cycles "
                           "(SCALE-Sim's weight-stationary count)\n", npu->tile_rows,
                           sc.rows_per_block,
                           op->compute != HW_DTYPE_INT8 ? "FP16"
                           : op->a_dtype == HW_DTYPE_INT4 || op->b_dtype == HW_DTYPE_INT4
                           ? "INT8 with INT4 weights: int4_macs_per_pe_cycle" : "INT8",
                           npu->fill_drain_cycles, sc.deep ? ", once per row block" : "",
                           array_cycles);
    if (sn->matmul_efficiency != 1.0) {
        g_string_append_printf(out, "    the stack's graphs reach %g of the arrays' count\n",
                               sn->matmul_efficiency);
    }
    double array_us = (sn->matmul_efficiency == 1.0
                       ? (double) array_cycles
                       : floor((double) array_cycles / sn->matmul_efficiency + 0.5))
                      / npu->freq_mhz;
    g_string_append_printf(out, "    array: %.2f us at %g MHz\n", array_us, npu->freq_mhz);
    double relayout_ps = hw_npu_relayout_ps(npu, op, (double) sc.tiles * (double) sc.row_blocks);
    g_string_append_printf(out, "    re-layout: the vector unit rebuilds the %" G_GUINT64_FORMAT
                           " stationary tiles%s in the matrix unit's tile order at %g GB/s = "
                           "%.2f us, alongside the array\n", c->weight_loads,
                           sc.deep ? " (each once per row block)" : "", npu->relayout_gbps,
                           relayout_ps / 1e6);
    if (!sc.deep && sc.a_reads != sc.passes) {
        g_string_append_printf(out, "    passes: %" G_GUINT64_FORMAT " (the quantised left operand "
                               "is streamed and dequantised again for every column fold of the "
                               "right one, %u columns: its FP16 copy is not kept)\n", sc.a_reads,
                               npu->tile_cols);
    } else if (!sc.deep) {
        g_string_append_printf(out, "    passes: %" G_GUINT64_FORMAT " (the stationary operand "
                               "gets %g KiB of TCM: %" G_GUINT64_FORMAT " of its %"
                               G_GUINT64_FORMAT " columns at a time, whole tiles over the full "
                               "depth; the streamed one comes in again every pass)\n",
                               sc.passes, npu->stationary_kib, sc.cols_per_pass, op->n);
    }
    double dq = sn->dequant.gbps[op->wfmt];
    double dq_bytes = sc.a_bytes * (double) sc.a_reads;
    if (hw_npu_dequantises(sn, op)) {
        g_string_append_printf(out, "    dequantisation: the vector unit turns %.2f MiB of "
                               "quantised weights (every time they come in) into FP16 at %g "
                               "GB/s = %.2f us, after its re-layout\n",
                               dq_bytes / (1024.0 * 1024.0), dq, dq_bytes / dq / 1e3);
    }
    g_string_append_printf(out, "    DMA: %.2f MiB (stationary %" G_GUINT64_FORMAT "x, streamed %"
                           G_GUINT64_FORMAT "x, output) at %g GB/s = %.2f us\n",
                           (double) c->dram_bytes / (1024.0 * 1024.0), sc.b_reads, sc.a_reads,
                           npu->dma_gbps, (double) c->dram_bytes / npu->dma_gbps / 1e3);
    double partial_ps = hw_npu_group_partial_ps(sn, op);
    if (partial_ps > 0) {
        g_string_append_printf(out, "    per-group emulation: %.0f sub-matmuls (one per group of 32 "
                               "along the reduction); their INT32 partials read back and added "
                               "by the vector unit at %g GB/s = %.2f us, after the array\n",
                               ceil((double) op->k / 32.0), sn->group_partial_gbps,
                               partial_ps / 1e6);
    }
    g_string_append_printf(out, "    compute time: the longest of array, vector unit and "
                           "DMA%s = %.2f us\n", partial_ps > 0 ? ", plus the partial sums" : "",
                           (double) c->compute_ps / 1e6);
}

static double
hw_npu_stack_dram_scale(const HwDev *dev, const HwStack *stack)
{
    return stack->npu.dram_scale;
}

static const char *
hw_npu_arch(const HwDev *dev, const HwStack *stack, gboolean *has_own)
{
    (void) stack;
    *has_own = FALSE;     /* a stack's NPU figures are not given per architecture */
    return hw_npu_arch_name[((const HwNpu *) dev)->arch];
}

const HwDevClass hw_npu_class = {
    .model = "npu-systolic",
    .kind = HW_KIND_NPU,
    .desc = "weight-stationary systolic NPU: tiles, TCM, static graphs",
    .instance_size = sizeof(HwNpu),
    .params = hw_npu_params,
    .realize = hw_npu_realize,
    .estimate = hw_npu_estimate,
    .stack_dram_scale = hw_npu_stack_dram_scale,
    .explain = hw_npu_explain,
    .arch = hw_npu_arch,
};
