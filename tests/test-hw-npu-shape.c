/*
 * test-hw-npu-shape.c - the NPU's matmul efficiency follows the shape in
 * tiles and passes, whatever the model: every shipped model's FFN-down
 * inside HeteroLLM §3.2's 0.5-1.5x of the GPU, its other matmuls at a
 * common advantage; stage steps at tile boundaries; the breakdown's times
 * agree with its cycles.  The cost queries are those of
 * `hetero-sim probe --what npu-shape / npu-stage / npu-gemm`.
 */
#include "hw/npu.h"
#include "hw/soc.h"
#include "hw/stack.h"
#include "models/spec.h"

#include <math.h>
#include <string.h>

static const char *
source_root(void)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return root ? root : HS_SOURCE_ROOT;
}

static HwSoc *
sd8gen3(void)
{
    g_autofree char *dir = g_build_filename(source_root(), "configs", NULL);
    g_autoptr(GError) error = NULL;
    HwSoc *soc = hw_soc_load("sd8gen3", dir, &error);
    g_assert_no_error(error);
    return soc;
}

static const HwStack *
heterollm(const HwSoc *soc)
{
    g_autoptr(GError) error = NULL;
    const HwStack *st = hw_soc_stack(soc, "heterollm", &error);
    g_assert_no_error(error);
    return st;
}

/* as probe's gemm(): @a the left (streamed) operand, @b the right
 * (stationary) one */
static HwOp
gemm(uint64_t m, uint64_t k, uint64_t n, HwDtype a, HwDtype b)
{
    double ab = a == HW_DTYPE_FP16 ? 2 : a == HW_DTYPE_INT8 ? 1 : 0.5;
    double bb = b == HW_DTYPE_FP16 ? 2 : b == HW_DTYPE_INT8 ? 1 : 0.5;
    HwDtype w = a == HW_DTYPE_FP16 ? b : a;
    return (HwOp) { .kind = HW_OP_MATMUL, .m = m, .k = k, .n = n, .a_dtype = a, .b_dtype = b,
                    .compute = HW_DTYPE_FP16, .flops = 2 * m * k * n,
                    .wfmt = w == HW_DTYPE_INT4 ? HW_WFMT_W4A16 : HW_WFMT_FP16,
                    .weight_bytes = (uint64_t) (w == a ? m * k * ab : k * n * bb),
                    .read_bytes = (uint64_t) (m * k * ab + k * n * bb),
                    .write_bytes = m * n * 2 };
}

/* NPU speed over GPU speed of the W4A16 matmul [out, in] at @seq tokens:
 * W . X^T on the NPU, X . W^T on the GPU (probe --what npu-shape) */
static double
npu_over_gpu(const HwSoc *soc, uint64_t out, uint64_t in, uint64_t seq, HwCost *cn)
{
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    HwOp on_npu = gemm(out, in, seq, HW_DTYPE_INT4, HW_DTYPE_FP16);
    HwOp on_gpu = gemm(seq, in, out, HW_DTYPE_FP16, HW_DTYPE_INT4);
    HwCost cg;
    hw_dev_estimate(npu, heterollm(soc), &on_npu, cn);
    hw_dev_estimate(gpu, heterollm(soc), &on_gpu, &cg);
    return (double) cg.alone_ps / (double) cn->alone_ps;
}

/* Every shipped model at 256 and 1024 tokens: FFN-down (its weight deeper
 * than it has rows) within 0.5-1.5x of the GPU (HeteroLLM §3.2), run
 * depth-blocked; QKV and gate/up a common advantage, the same within 25 %
 * from the 1.5B to the 14B models, not a function of the model's width.
 * The tiny test model is in the FFN-down check; its other matmuls are too
 * small for any advantage (the launch sets their time). */
static void
every_model_on(const HwSoc *soc)
{
    g_autofree char *dir = g_build_filename(source_root(), "models", NULL);
    g_autoptr(GError) error = NULL;
    g_auto(GStrv) names = mdl_spec_list(dir, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(g_strv_length(names), >=, 10);
    double lo = INFINITY, hi = 0;
    for (char **name = names; *name; name++) {
        g_autoptr(MdlSpec) s = mdl_spec_load(*name, dir, &error);
        g_assert_no_error(error);
        uint64_t h = s->hidden_size, f = s->intermediate_size;
        uint64_t qkv = (uint64_t) (s->num_attention_heads + 2 * s->num_key_value_heads) *
                       s->head_dim;
        for (uint64_t seq = 256; seq <= 1024; seq *= 4) {
            HwCost c;
            double down = npu_over_gpu(soc, h, f, seq, &c);
            g_test_message("%s: %s at %" G_GUINT64_FORMAT ": FFN-down %.2fx", soc->name, *name,
                           seq, down);
            /* the range is HeteroLLM's measurement on the 8 Gen 3; elsewhere
             * the ratio follows that SoC's GPU (the 8 Gen 2's Adreno 740,
             * 25 % slower, puts it at ~1.75x) and the mechanism is checked */
            if (strcmp(soc->name, "sd8gen3") == 0) {
                g_assert_cmpfloat(down, >=, 0.5);
                g_assert_cmpfloat(down, <=, 1.5);
            }
            if (h < 1024) {
                continue;
            }
            /* the mechanism: X^T fetched again per block of weight rows */
            g_assert_cmpuint(c.passes, ==, (h + 95) / 96);
            double x[2] = { npu_over_gpu(soc, qkv, h, seq, &c),
                            npu_over_gpu(soc, 2 * f, h, seq, &c) };
            for (int i = 0; i < 2; i++) {
                g_assert_cmpfloat(x[i], >, 2 * down);
                lo = MIN(lo, x[i]);
                hi = MAX(hi, x[i]);
            }
        }
    }
    g_test_message("%s: QKV and gate/up: %.2f-%.2fx the GPU", soc->name, lo, hi);
    g_assert_cmpfloat(lo, >=, 2.5);
    /* on the 8 Gen 3; the Dimensity 9300's assumed 4 MiB of TCM
     * (stationary_kib 160) leaves fewer rows per pass and a little more
     * spread between widths (1.25); so does the 8 Elite, whose matrix
     * unit is 1.5x the V75's while the vector unit that dequantises the
     * weights is not: a matmul the vector unit bounds on the 8 Gen 3
     * gains ~4 % on the NPU, one the array partly bounds ~10 %, against
     * the GPU's 40 % everywhere (QKV 3.41x the GPU on Qwen2.5-1.5B, 4.27x
     * on Qwen1.5-14B: 1.25) */
    g_assert_cmpfloat(hi / lo, <, strcmp(soc->name, "dimensity9300") == 0 ||
                                          strcmp(soc->name, "sd8elite") == 0
                                      ? 1.3
                                      : 1.25);
}

/* ... on every shipped SoC with an NPU and a GPU: a second SoC's NPU runs
 * the same runtime's schedules (depth-blocked FFN-down, a common advantage
 * elsewhere) on its own arrays and TCM */
static void
test_every_model(void)
{
    g_autofree char *dir = g_build_filename(source_root(), "configs", NULL);
    g_autoptr(GError) error = NULL;
    g_auto(GStrv) socs = hw_soc_list(dir, &error);
    g_assert_no_error(error);
    guint checked = 0;
    for (char **name = socs; *name; name++) {
        g_autoptr(HwSoc) soc = hw_soc_load(*name, dir, &error);
        g_assert_no_error(error);
        /* tiny and classroom: teaching SoCs without a TCM of a phone's size */
        if (hw_soc_find_kind(soc, HW_KIND_NPU) && hw_soc_find_kind(soc, HW_KIND_GPU) &&
            strcmp(*name, "tiny") != 0 && strcmp(*name, "classroom") != 0) {
            every_model_on(soc);
            checked++;
        }
    }
    g_assert_cmpuint(checked, >=, 4);   /* sd8gen3, sd8gen2, dimensity9300, sd8elite */
}

/* The depth-blocked schedule is a shape class, not a constant: the same
 * FLOPs turned around (gate's [14336 x 4096] weight against down's
 * [4096 x 14336]) run the full-depth schedule, and without deep_rows
 * FFN-down would be as fast as the rest. */
static void
test_depth_blocked(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    HwNpu *npu = (HwNpu *) hw_soc_find_kind(soc, HW_KIND_NPU);
    HwCost c;
    double down = npu_over_gpu(soc, 4096, 14336, 256, &c);
    g_assert_cmpuint(c.passes, ==, 4096 / 96 + 1);        /* row blocks */
    g_assert_cmpuint(c.weight_loads, ==, 448 * 8 * (4096 / 96 + 1));
    double gate = npu_over_gpu(soc, 14336, 4096, 256, &c);
    g_assert_cmpuint(c.passes, ==, 256 / 32);             /* column folds */
    g_assert_cmpfloat(gate, >, 2 * down);
    const uint32_t saved = npu->deep_rows;
    npu->deep_rows = 0;
    double full = npu_over_gpu(soc, 4096, 14336, 256, &c);
    npu->deep_rows = saved;
    g_assert_cmpuint(c.passes, ==, 256 / 32);
    g_assert_cmpfloat(fabs(full / gate - 1), <, 0.1);
    /* more rows per block: fewer re-layouts, faster */
    npu->deep_rows = 192;
    double wide = npu_over_gpu(soc, 4096, 14336, 256, &c);
    npu->deep_rows = saved;
    g_assert_cmpfloat(wide, >, 1.5 * down);

    /* the class has more than 1024 outputs (npu.deep_min_rows 1025): GQA's
     * K projection, [1024 x 4096], is deeper than wide but runs full depth
     * at the fused QKV's advantage; counted in, it would be FFN-down's */
    g_assert_cmpuint(heterollm(soc)->npu.deep_min_rows, ==, 1025);
    double k = npu_over_gpu(soc, 1024, 4096, 256, &c);
    g_assert_cmpuint(c.passes, ==, 256 / 32);
    g_assert_cmpfloat(k, >, 2 * down);
    HwStack *st = (HwStack *) heterollm(soc);
    st->npu.deep_min_rows = 0;
    double k_deep = npu_over_gpu(soc, 1024, 4096, 256, &c);
    st->npu.deep_min_rows = 1025;
    g_assert_cmpuint(c.passes, ==, 1024 / 96 + 1);
    g_assert_cmpfloat(k_deep, <, 1.5);
}

/* Held whole or not: at 32 tokens Llama-3-8B's FFN-down has 896 KiB of
 * X^T (14336 x 32 FP16) for the 360 KiB the TCM gives its stationary
 * operand, so it runs depth-blocked as at 256, within HeteroLLM §3.2's
 * 0.5-1.5x; where the whole X^T fits it runs the full-depth schedule; and
 * a stack whose kernels hold short activations whole in the TCM
 * (npu-tts, npu.deep_min_tokens 128) depth-blocks from 128 tokens only. */
static void
test_held_whole(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    HwNpu *npu = (HwNpu *) hw_soc_find_kind(soc, HW_KIND_NPU);
    g_assert_cmpfloat(npu->stationary_kib, <, 14336.0 * 32 * 2 / 1024);
    HwCost c;
    double down = npu_over_gpu(soc, 4096, 14336, 32, &c);
    g_test_message("Llama-3-8B FFN-down at 32 tokens: %.2fx the GPU", down);
    g_assert_cmpuint(c.passes, ==, 4096 / 96 + 1);        /* row blocks */
    g_assert_cmpfloat(down, >=, 0.5);
    g_assert_cmpfloat(down, <=, 1.5);
    const double saved = npu->stationary_kib;
    npu->stationary_kib = 1024;
    double whole = npu_over_gpu(soc, 4096, 14336, 32, &c);
    npu->stationary_kib = saved;
    g_assert_cmpuint(c.passes, ==, 1);
    g_assert_cmpfloat(whole, >, 2 * down);

    g_autoptr(GError) error = NULL;
    const HwStack *tts = hw_soc_stack(soc, "npu-tts", &error);
    g_assert_no_error(error);
    g_assert_cmpuint(tts->npu.deep_min_tokens, ==, 128);
    const HwDev *dev = hw_soc_find_kind(soc, HW_KIND_NPU);
    const uint64_t seqs[] = { 32, 127, 128, 256 };
    for (int i = 0; i < 4; i++) {
        HwOp op = gemm(4096, 14336, seqs[i], HW_DTYPE_INT4, HW_DTYPE_FP16);
        hw_dev_estimate(dev, tts, &op, &c);
        /* full depth: the quantised weight streamed once per column fold */
        uint64_t want = seqs[i] >= 128 ? 4096 / 96 + 1 : (seqs[i] + 31) / 32;
        g_assert_cmpuint(c.passes, ==, want);
    }
}

/* An attention op as models/graph.c gives it: @heads heads of @hd, @m
 * queries, the last seeing @n keys (causal), flops heads x scores x (4 hd
 * + 5) */
static HwOp
attention(uint64_t heads, uint64_t hd, uint64_t m, uint64_t n, gboolean shared_keys)
{
    /* decode of a batch against one shared context: every query sees n */
    uint64_t scores = shared_keys ? m * n : (2 * n - m + 1) * m / 2;
    return (HwOp) { .kind = HW_OP_ATTENTION, .m = m, .k = hd, .n = n,
                    .flops = heads * scores * (4 * hd + 5), .compute = HW_DTYPE_FP16,
                    .read_bytes = m * heads * hd * 2 + 2 * 2 * hd * n * 2,
                    .write_bytes = m * heads * hd * 2 };
}

/* NPU-TTS's attention: QK^T and PV on the matrix unit in FP16 tiles, the
 * softmax on the vector unit.  A 2048-token prefill costs a fraction of
 * the whole attention on the vector unit (the heterollm stack's); a
 * decode step's queries are padded to the 32-row tile, so batch 32 costs
 * the matrix unit what batch 1 does, and the softmax's exponentials,
 * which grow with the batch, come to set the time (NPU-TTS: they dominate
 * as batch and context grow). */
static void
test_attention_matrix_unit(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    g_autoptr(GError) error = NULL;
    const HwStack *tts = hw_soc_stack(soc, "npu-tts", &error);
    g_assert_no_error(error);
    g_assert_true(tts->npu.attention_matrix_unit);
    g_assert_false(heterollm(soc)->npu.attention_matrix_unit);
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    const double vec_gflops = 132.0;               /* sd8gen3's vector_gflops */

    HwOp pre = attention(12, 128, 2048, 2048, FALSE);
    HwCost on_matrix, on_vector;
    hw_dev_estimate(npu, tts, &pre, &on_matrix);
    hw_dev_estimate(npu, heterollm(soc), &pre, &on_vector);
    g_assert_cmpfloat((double) on_matrix.compute_ps, <, on_vector.compute_ps / 4.0);
    /* the softmax sets it: scores x softmax_vector_flops at vector_gflops */
    double scores = 12.0 * 2048 * 2049 / 2;
    g_assert_cmpfloat(fabs((double) on_matrix.compute_ps -
                           scores * tts->npu.softmax_vector_flops / vec_gflops * 1e3),
                      <, 1e3);

    HwCost b1, b32;
    HwOp d1 = attention(12, 128, 1, 2048, TRUE), d32 = attention(12, 128, 32, 2048, TRUE);
    hw_dev_estimate(npu, tts, &d1, &b1);
    hw_dev_estimate(npu, tts, &d32, &b32);
    /* batch 1: the matrix unit's tile work for 32 query rows, one of them
     * real: 12 heads x 2048 keys x 4 x 128 flops x 32, at 8 arrays of 32 x
     * 32 FP16 MACs at 732 MHz (sd8gen3) */
    double tile_ps = 12.0 * 2048 * 4 * 128 * 32 / (2.0 * 8 * 32 * 32 * 732e6) * 1e12;
    g_assert_cmpfloat(fabs((double) b1.compute_ps - tile_ps), <, 1e3);
    /* batch 32: the softmax of 32 x the scores is slower than the matrix
     * unit's (unchanged) tile work, and a fraction of the whole attention
     * on the vector unit */
    double soft32 = 12.0 * 32 * 2048 * tts->npu.softmax_vector_flops / vec_gflops * 1e3;
    g_assert_cmpfloat(fabs((double) b32.compute_ps - soft32), <, 1e3);
    g_assert_cmpfloat((double) b32.compute_ps, >, (double) b1.compute_ps);
    HwCost v32;
    hw_dev_estimate(npu, heterollm(soc), &d32, &v32);
    g_assert_cmpfloat((double) b32.compute_ps, <, v32.compute_ps / 4.0);
}

/* Stage performance (HeteroLLM §3.2): every dimension padded to the
 * 32-wide tile, so the time is flat for token counts inside one tile and
 * jumps at 32k + 1 (probe --what npu-stage: W4A16 [4096, 4096] . X^T). */
static void
test_stage_steps(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    uint64_t prev = 0;
    for (uint64_t n = 1; n <= 256; n++) {
        HwOp op = gemm(4096, 4096, n, HW_DTYPE_INT4, HW_DTYPE_FP16);
        HwCost c;
        hw_dev_estimate(npu, heterollm(soc), &op, &c);
        if (n == 1 || (n - 1) % 32 != 0) {
            if (n > 1) {
                g_assert_cmpuint(c.compute_ps, ==, prev);    /* flat inside a tile */
            }
        } else {
            /* a new column fold: the whole weight streamed once more */
            g_assert_cmpfloat((double) c.compute_ps, >, 1.1 * (double) prev);
        }
        prev = c.compute_ps;
    }
}

/* probe --what npu-gemm --m 1024 --k 1024 --n 32 vs 33, FP16: the array's
 * cycles double (8 -> 16... column tiles), but the DMA of the 2 MiB
 * streamed operand sets the time; compute_us is `cycles` at the NPU clock
 * either way, and the 33rd column costs a whole padded tile of X^T and of
 * the output through the DMA, no more, no less. */
static void
test_gemm_breakdown(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const HwDev *dev = hw_soc_find_kind(soc, HW_KIND_NPU);
    const HwNpu *npu = (const HwNpu *) dev;
    HwCost c[3];
    const uint64_t ns[3] = { 1, 32, 33 };
    for (int i = 0; i < 3; i++) {
        HwOp op = gemm(1024, 1024, ns[i], HW_DTYPE_FP16, HW_DTYPE_FP16);
        hw_dev_estimate(dev, heterollm(soc), &op, &c[i]);
        double period_ps = 1e6 / npu->freq_mhz;
        g_assert_cmpfloat(fabs((double) c[i].cycles * period_ps - (double) c[i].compute_ps), <=,
                          period_ps);
    }
    g_assert_cmpuint(c[2].compute_cycles, ==, 2 * c[1].compute_cycles);
    g_assert_cmpuint(c[0].compute_ps, ==, c[1].compute_ps);
    g_assert_cmpuint(c[0].dram_bytes, ==, c[1].dram_bytes);
    /* one more tile column: X^T's 1024 x 32 and the output's 1024 x 32 */
    g_assert_cmpuint(c[2].dram_bytes - c[1].dram_bytes, ==, 2 * 1024 * 32 * 2);
    double dma_ps = 2.0 * 1024 * 32 * 2 * 1000 / npu->dma_gbps;
    g_assert_cmpfloat(fabs((double) (c[2].compute_ps - c[1].compute_ps) - dma_ps), <, 2);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hw/npu-shape/every-model", test_every_model);
    g_test_add_func("/hw/npu-shape/depth-blocked", test_depth_blocked);
    g_test_add_func("/hw/npu-shape/held-whole", test_held_whole);
    g_test_add_func("/hw/npu-shape/stage-steps", test_stage_steps);
    g_test_add_func("/hw/npu-shape/attention-matrix-unit", test_attention_matrix_unit);
    g_test_add_func("/hw/npu-shape/gemm-breakdown", test_gemm_breakdown);
    return g_test_run();
}
