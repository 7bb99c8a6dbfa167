/*
 * test-sim-baselines.c - baselines are software stacks: a paper's
 * "llama.cpp" or "MNN-CPU" is the cpu-only policy on that engine's stack,
 * named by the paper's points file; llama.cpp's 2024 attention (every
 * query-key score, FP32, the score tensor materialised) makes its share of
 * a prefill grow with the prompt; a GPU kernel library's efficiency belongs
 * to a GPU architecture (Transformer-Lite §3.2: the same kernels slightly
 * slower on the Mali-G720 than on the Adreno 750, whose spec peak is lower).
 */
#include "hw/stack.h"
#include "sim/cli/points.h"
#include "sim/run.h"
#include "sim/util/error.h"

#include <math.h>
#include <string.h>

static char *
data_dir(const char *sub)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, sub, NULL);
}

/* One timing-only run of @policy on @stack (NULL: the policy's). */
static SimRunReport
run(const char *soc_name, const char *model, const char *policy, const char *stack,
    uint32_t prompt, uint32_t decode)
{
    g_autofree char *configs = data_dir("configs");
    g_autofree char *models = data_dir("models");
    g_autoptr(GError) error = NULL;
    HwSoc *soc = hw_soc_load(soc_name, configs, &error);
    g_assert_no_error(error);
    g_autoptr(MdlSpec) spec = mdl_spec_load(model, models, &error);
    g_assert_no_error(error);
    const SimPolicy *p = sim_policy_find(policy);
    g_assert_nonnull(p);
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = prompt;
    w.decode = decode;
    w.batch = 1;
    w.check_layers = -1;
    w.stack = stack;
    SimRunReport r;
    g_assert_true(sim_run(soc, spec, p, &w, NULL, &r, NULL, NULL, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(r.stack, ==, stack ? stack : p->stack);
    hw_soc_free(soc);
    return r;
}

static double
prefill_tps(const char *soc, const char *model, const char *policy, const char *stack,
            uint32_t prompt)
{
    SimRunReport r = run(soc, model, policy, stack, prompt, 0);
    double v = r.prefill.tokens_per_s;
    sim_run_report_clear(&r);
    return v;
}

static const HsPoint *
point(const HsPoints *ps, const char *id)
{
    for (guint i = 0; i < ps->n; i++) {
        if (strcmp(ps->points[i].id, id) == 0) {
            return &ps->points[i];
        }
    }
    g_assert_not_reached();
}

/* Each paper's points run its baselines on the stack it measured them on:
 * mllm-NPU's llama.cpp (the §5.5 ablation's reference) and MNN-CPU (§5.2's
 * 7.3x) are two stacks of one policy; HeteroLLM's llama.cpp a third. */
static void
test_points_stacks(void)
{
    g_autofree char *mllm_path = data_dir("configs/points/mllm-npu.json");
    g_autofree char *hllm_path = data_dir("configs/points/heterollm.json");
    g_autoptr(GError) error = NULL;
    g_autoptr(HsPoints) mllm = hs_points_load(mllm_path, &error);
    g_assert_no_error(error);
    g_autoptr(HsPoints) hllm = hs_points_load(hllm_path, &error);
    g_assert_no_error(error);
    static const char *const naive[] = {
        "naive-vs-cpu-qwen1.5-1.8b", "naive-vs-cpu-gemma-2b", "naive-vs-cpu-llama-2-7b",
    };
    for (guint i = 0; i < G_N_ELEMENTS(naive); i++) {
        const HsPoint *p = point(mllm, naive[i]);
        g_assert_cmpstr(p->policy, ==, "cpu-only");
        g_assert_cmpstr(p->stack, ==, "llama-cpp-mllm");
        g_assert_null(p->base.stack);                  /* the policy's own (mllm) */
    }
    const HsPoint *vs_cpu = point(mllm, "vs-cpu-1024");
    g_assert_cmpstr(vs_cpu->base.policy, ==, "cpu-only");
    g_assert_cmpstr(vs_cpu->base.stack, ==, "mnn-cpu");
    g_assert_null(vs_cpu->stack);
    g_assert_nonnull(cJSON_GetObjectItemCaseSensitive(hllm->stacks, "cpu-only"));
    g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(hllm->stacks, "cpu-only")->valuestring,
                    ==, "llama-cpp-heterollm");
    /* HeteroLLM's two GPU baselines: gpu-only, each on its own build's stack */
    g_assert_cmpstr(point(hllm, "prefill-layer-vs-mnn-opencl-256")->base.stack, ==,
                    "mnn-opencl-heterollm");
    g_assert_cmpstr(point(hllm, "prefill-layer-vs-mlc-256")->base.stack, ==, "mlc-heterollm");
    g_assert_null(point(hllm, "prefill-layer-vs-gpu-256")->base.stack);     /* PPL: heterollm */

    /* from memory: the file's entry serves either side; a side's own wins */
    const char *text =
        "{\"stacks\":{\"cpu-only\":\"a\",\"gpu-only\":\"g\"},\"points\":["
        "{\"id\":\"x\",\"paper\":\"P\",\"soc\":\"s\",\"model\":\"m\","
        "\"metric\":\"prefill_speedup\",\"policy\":\"hetero-layer\",\"sync\":\"fast\","
        "\"baseline\":{\"policy\":\"cpu-only\",\"sync\":\"fast\"},"
        "\"workload\":{\"prompt\":1,\"decode\":0,\"batch\":1},\"published\":1,"
        "\"tolerance_pct\":0},"
        "{\"id\":\"y\",\"paper\":\"P\",\"soc\":\"s\",\"model\":\"m\","
        "\"metric\":\"prefill_speedup\",\"policy\":\"cpu-only\",\"stack\":\"b\","
        "\"sync\":\"fast\",\"baseline\":{\"policy\":\"gpu-only\",\"stack\":\"c\","
        "\"sync\":\"fast\"},\"workload\":{\"prompt\":1,\"decode\":0,\"batch\":1},"
        "\"published\":1,\"tolerance_pct\":0}]}";
    g_autoptr(HsPoints) ps = hs_points_parse(text, strlen(text), "p.json", &error);
    g_assert_no_error(error);
    g_assert_null(ps->points[0].stack);
    g_assert_cmpstr(ps->points[0].base.stack, ==, "a");
    g_assert_cmpstr(ps->points[1].stack, ==, "b");
    g_assert_cmpstr(ps->points[1].base.stack, ==, "c");

    const char *bad = "{\"stacks\":{\"cpu-only\":3},\"points\":["
                      "{\"id\":\"x\",\"paper\":\"P\",\"soc\":\"s\",\"model\":\"m\","
                      "\"metric\":\"prefill_tokens_per_s\",\"policy\":\"p\",\"sync\":\"fast\","
                      "\"workload\":{\"prompt\":1,\"decode\":0,\"batch\":1},"
                      "\"published\":1,\"tolerance_pct\":0}]}";
    g_autoptr(HsPoints) q = hs_points_parse(bad, strlen(bad), "p.json", &error);
    g_assert_null(q);
    g_assert_cmpstr(error->message, ==,
                    "p.json: $.stacks.cpu-only: expected the name of a stack (got 3)");
}

/* llama.cpp's prefill attention (2024) scores every query of a 512-token
 * block (n_ubatch) against every key cached to the block's end, in FP32;
 * MNN-LLM's (its exported eager attention, and MNN 2.9's fused one)
 * scores the whole prompt as one block, the future masked, in FP16.  On
 * Qwen1.5-1.8B both engines' tokens/s fall with the prompt (attention
 * grows as n^2, the linears as n), llama.cpp's by about a sixth from 128
 * to 2048 and by more than MNN's (FP32 costs twice FP16 a score, more than
 * MNN's whole square adds).  The score tensors' four passes show up as
 * DRAM traffic.  And against a public measurement:
 * llama-bench on a Radxa Dragon Q8B (a Snapdragon 8cx Gen 3, SC8280XP:
 * 4 Cortex-X1C + 4 Cortex-A78C, as the same board's sbc-bench report,
 * ThomasKaiser/sbc-bench's 'Radxa Dragon Q8B', and Radxa's documentation
 * say; CPU, 8 threads, Llama-3.2-3B Q4_K_M; geerlingguy/ai-benchmarks'
 * 'Benchmark Radxa Dragon Q8B', 22 September 2026) gives pp4096 / pp512 = 56.83 / 72.31 = 0.786.  Not a phone SoC:
 * what is compared is the ratio, which the model gives the same on every
 * phone config (0.829 on sd8gen2 and sd8gen3: it is llama.cpp's graph,
 * the attention's share growing with the prompt, more than the cores);
 * within 10 % (a 2026 build on all eight cores against the 2024 graph on
 * four; without the blocks it read 0.708, with FP16 causal attention
 * 0.903). */
static void
test_cpu_attention(void)
{
    static const uint32_t prompts[] = { 128, 512, 1024, 2048 };
    double ll[G_N_ELEMENTS(prompts)], mnn[G_N_ELEMENTS(prompts)];
    for (guint i = 0; i < G_N_ELEMENTS(prompts); i++) {
        ll[i] = prefill_tps("sd8gen3", "qwen1.5-1.8b", "cpu-only", "llama-cpp-mllm",
                            prompts[i]);
        mnn[i] = prefill_tps("sd8gen3", "qwen1.5-1.8b", "cpu-only", "mnn-cpu", prompts[i]);
        g_test_message("prompt %u: llama-cpp-mllm %.2f, mnn-cpu %.2f tokens/s", prompts[i],
                       ll[i], mnn[i]);
        if (i > 0) {
            g_assert_cmpfloat(ll[i], <, ll[i - 1]);
            g_assert_cmpfloat(mnn[i], <, mnn[i - 1]);
        }
    }
    double drop = ll[3] / ll[0];
    g_assert_cmpfloat(drop, >, 0.75);
    g_assert_cmpfloat(drop, <, 0.9);
    g_assert_cmpfloat(drop, <, mnn[3] / mnn[0]);
    double pp512 = prefill_tps("sd8gen2", "llama-3.2-3b", "cpu-only", "llama-cpp", 512);
    double pp4096 = prefill_tps("sd8gen2", "llama-3.2-3b", "cpu-only", "llama-cpp", 4096);
    g_test_message("llama-3.2-3b on sd8gen2: pp4096 / pp512 = %.3f (0.786 measured)",
                   pp4096 / pp512);
    g_assert_cmpfloat(fabs(pp4096 / pp512 / 0.786 - 1), <=, 0.10);
    g_assert_cmpfloat(mnn[3] / mnn[0], <, 0.9);
    /* at 128 tokens attention is a few % either way: the two differ by
     * their linears' rates (MNN's measured, llama.cpp's derived) */
    const double rates = 0.5 / 0.753;
    g_assert_cmpfloat(fabs(ll[0] / mnn[0] / rates - 1), <, 0.05);

    SimRunReport a = run("sd8gen3", "qwen1.5-1.8b", "cpu-only", "llama-cpp-mllm", 1024, 0);
    SimRunReport b = run("sd8gen3", "qwen1.5-1.8b", "cpu-only", "mnn-cpu", 1024, 0);
    /* 24 layers x 16 heads, four passes: llama.cpp's (512 x 512 + 512 x
     * 1024) FP32 scores (two blocks of 512 queries) against MNN's 1024 x
     * 1024 FP16 ones: 4.5 GiB against 3 GiB */
    /* GB/s x ms = 1e6 bytes */
    double extra = 1e6 * (a.prefill.dram_gbps * a.prefill.time_ms -
                          b.prefill.dram_gbps * b.prefill.time_ms);
    const double ll_scores = 24.0 * 16 * (512.0 * 512 + 512.0 * 1024);
    const double mnn_scores = 24.0 * 16 * 1024.0 * 1024;
    const double want = 4 * (ll_scores * 4 - mnn_scores * 2);
    g_test_message("score traffic, llama.cpp over MNN: %.3g bytes (%.3g counted)", extra, want);
    g_assert_cmpfloat(extra, >, 0.9 * want);
    g_assert_cmpfloat(extra, <, 1.1 * want);
    sim_run_report_clear(&a);
    sim_run_report_clear(&b);
}

/* MNN's CPU rate (configs/stacks/mnn-cpu.json) is derived from one row of
 * mnn-llm's public speed table (Qwen-1.8B int4 prefill, 100.21 tokens/s
 * on the Snapdragon 8 Gen 1's four big cores, short chat prompts, scaled
 * x 1.19 for the 8 Gen 3's cores); the same table's Llama-2-7B int4 row,
 * not used, is a prediction: 17.98 tokens/s x 1.19 = 21.4 on the 8 Gen 3,
 * the model within 10 % at a 32-token prompt. */
static void
test_mnn_public(void)
{
    const double qwen = prefill_tps("sd8gen3", "qwen1.5-1.8b", "cpu-only", "mnn-cpu", 32);
    const double llama = prefill_tps("sd8gen3", "llama-2-7b", "cpu-only", "mnn-cpu", 32);
    g_test_message("mnn-cpu at 32 tokens: Qwen1.5-1.8B %.1f (100.21 x 1.19 = 119.2 derived "
                   "from), Llama-2-7B %.1f (17.98 x 1.19 = 21.4 predicted)", qwen, llama);
    g_assert_cmpfloat(fabs(qwen / (100.21 * 1.19) - 1), <=, 0.10);
    g_assert_cmpfloat(fabs(llama / (17.98 * 1.19) - 1), <=, 0.10);
}

/* Transformer-Lite §5 across prompt lengths (128, 1024, 2048) on the
 * 8 Gen 3: prefill "nearly flat" (within 15 % of its 128-token speed; the
 * paper's peak near 1024 the model does not show: docs/accuracy.md, each
 * paper's grid), and decode falling as the prompt grows, faster for
 * Llama-2-7B and Qwen1.5-4B: here because their 32 and 20 KV heads read a
 * cache that one (Gemma-2B) or two (ChatGLM2-6B) heads keep small, beside
 * the same weights every step; the paper's reason, a transposed KV layout,
 * adds to it and is not modelled. */
static void
test_tl_prompt_length(void)
{
    static const struct {
        const char *model;
        gboolean many_kv_heads;
    } models[] = { { "gemma-2b", FALSE }, { "chatglm2-6b", FALSE },
                   { "llama-2-7b", TRUE }, { "qwen1.5-4b", TRUE } };
    double fall_few = 0, fall_many = 1;
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
        SimRunReport a = run("sd8gen3", models[i].model, "transformer-lite", NULL, 128, 8);
        SimRunReport b = run("sd8gen3", models[i].model, "transformer-lite", NULL, 2048, 8);
        const double pre = b.prefill.tokens_per_s / a.prefill.tokens_per_s;
        const double dec = b.decode.tokens_per_s / a.decode.tokens_per_s;
        g_test_message("%s: prefill 2048 / 128 %.3f, decode %.3f", models[i].model, pre, dec);
        g_assert_cmpfloat(fabs(pre - 1), <=, 0.15);
        g_assert_cmpfloat(dec, <, 1);
        if (models[i].many_kv_heads) {
            fall_many = MIN(fall_many, 1 - dec);
        } else {
            fall_few = MAX(fall_few, 1 - dec);
        }
        sim_run_report_clear(&a);
        sim_run_report_clear(&b);
    }
    /* the MHA models' decode falls at least five times as far */
    g_assert_cmpfloat(fall_many, >, 5 * fall_few);
}

/* Transformer-Lite's kernels on the Dimensity 9300's Mali-G720 (4.0
 * TFLOPS by HeteroLLM Table 1) run Gemma-2B's prefill slightly slower than
 * on the 8 Gen 3's Adreno 750 (2.8 by the same table), as §3.2 observed;
 * the other Adreno-measured GPU libraries (PPL) take the same 0.9x of
 * their Adreno TFLOPS there; a stack without a Mali entry keeps its one
 * share on both. */
static void
test_gpu_arch(void)
{
    double adreno = prefill_tps("sd8gen3", "gemma-2b", "transformer-lite", NULL, 128);
    double mali = prefill_tps("dimensity9300", "gemma-2b", "transformer-lite", NULL, 128);
    g_test_message("gemma-2b prefill 128: sd8gen3 %.1f, dimensity9300 %.1f tokens/s",
                   adreno, mali);
    g_assert_cmpfloat(mali / adreno, >=, 0.85);
    g_assert_cmpfloat(mali / adreno, <, 1.0);

    g_autofree char *stacks = data_dir("configs/stacks");
    g_autoptr(GError) error = NULL;
    g_autoptr(HwStack) tl = hw_stack_load("transformer-lite", stacks, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(hw_stack_gpu_efficiency(tl, HW_GPU_ARCH_ADRENO7XX), ==,
                      tl->gpu.matmul_efficiency);
    g_assert_cmpfloat(hw_stack_gpu_efficiency(tl, HW_GPU_ARCH_MALI_VALHALL5), <,
                      0.7 * tl->gpu.matmul_efficiency);
    /* every GPU library measured on the Adreno only: its Mali entry is
     * its Adreno share x 2.8 x 0.9 / 4.0 (a config value, so each is checked) */
    static const char *const adreno_only[] = { "heterollm", "npu-tts", "mlc-gpu",
                                               "mnn-opencl-heterollm", "mlc-heterollm" };
    for (size_t i = 0; i < G_N_ELEMENTS(adreno_only); i++) {
        g_autoptr(HwStack) s = hw_stack_load(adreno_only[i], stacks, &error);
        g_assert_no_error(error);
        double share = hw_stack_gpu_efficiency(s, HW_GPU_ARCH_ADRENO7XX);
        double want = share * 2.8 * 0.9 / 4.0;
        g_test_message("%s: adreno %.4f, mali %.4f (formula %.4f)", adreno_only[i], share,
                       hw_stack_gpu_efficiency(s, HW_GPU_ARCH_MALI_VALHALL5), want);
        g_assert_cmpfloat(fabs(hw_stack_gpu_efficiency(s, HW_GPU_ARCH_MALI_VALHALL5) / want - 1),
                          <, 0.01);
    }
    double ppl_adreno = prefill_tps("sd8gen3", "llama-3-8b", "gpu-only", "heterollm", 256);
    double ppl_mali = prefill_tps("dimensity9300", "llama-3-8b", "gpu-only", "heterollm", 256);
    g_test_message("llama-3-8b gpu-only prefill 256 on PPL: sd8gen3 %.1f, dimensity9300 %.1f",
                   ppl_adreno, ppl_mali);
    g_assert_cmpfloat(ppl_mali / ppl_adreno, >=, 0.85);
    g_assert_cmpfloat(ppl_mali / ppl_adreno, <, 1.0);
    /* a stack without per-architecture entries: its one share everywhere */
    g_autoptr(cJSON) plain = hw_stack_to_json(tl);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(plain, "gpu"),
                                            "arch_matmul_efficiency");
    g_autoptr(HwStack) one = hw_stack_from_json(plain, "one.json", &error);
    g_assert_no_error(error);
    for (int a = 0; a < HW_GPU_ARCH_COUNT; a++) {
        g_assert_cmpfloat(hw_stack_gpu_efficiency(one, (HwGpuArch) a), ==,
                          one->gpu.matmul_efficiency);
    }
    /* the per-architecture block belongs to the GPU section */
    g_autoptr(cJSON) j = hw_stack_to_json(tl);
    cJSON *npu = cJSON_GetObjectItemCaseSensitive(j, "npu");
    cJSON_AddItemToObject(npu, "arch_matmul_efficiency", cJSON_CreateObject());
    g_autoptr(HwStack) bad = hw_stack_from_json(j, "s.json", &error);
    g_assert_null(bad);
    g_assert_cmpstr(error->message, ==, "s.json: $.npu.arch_matmul_efficiency: only the "
                                        "gpu section has per-architecture values");
}

/* One [1, k] x [k, n] GEMV of 4-bit weights in format @f alone on the
 * GPU of @soc_name under @stack_name, in us. */
static double
gemv_us(const char *soc_name, const char *stack_name, HwWfmt f, uint64_t k, uint64_t n)
{
    g_autofree char *configs = data_dir("configs");
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load(soc_name, configs, &error);
    g_assert_no_error(error);
    const HwStack *st = hw_soc_stack(soc, stack_name, &error);
    g_assert_no_error(error);
    HwOp op = { .kind = HW_OP_MATMUL, .m = 1, .k = k, .n = n, .a_dtype = HW_DTYPE_FP16,
                .b_dtype = HW_DTYPE_INT4, .compute = HW_DTYPE_FP16, .flops = 2 * k * n,
                .wfmt = f, .weight_bytes = k * n / 2, .read_bytes = k * n / 2 + 2 * k,
                .write_bytes = 2 * n };
    HwCost c;
    hw_dev_estimate(hw_soc_find_kind(soc, HW_KIND_GPU), st, &op, &c);
    return c.alone_ps / 1e6;
}

/* Transformer-Lite §4: its INT4 and FP4 GEMVs take the same time on the
 * 8 Gen 3, while on the Dimensity 9300's Mali-G720 FP4 is 1.33-1.56x
 * faster (INT4's integer-to-half conversion is not hidden under the load
 * there): the stack's INT4 rate on that architecture (arch_dequant) is
 * calibrated to the range's middle, so each of the paper's three shapes
 * must land inside it; a stack without an entry for an architecture keeps
 * its one dequant rate there. */
static void
test_gpu_arch_dequant(void)
{
    static const uint64_t shapes[][2] = { { 4096, 4096 }, { 4096, 11008 }, { 11008, 4096 } };
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
        uint64_t k = shapes[i][0], n = shapes[i][1];
        double mali = gemv_us("dimensity9300", "transformer-lite", HW_WFMT_W4A16, k, n) /
                      gemv_us("dimensity9300", "transformer-lite", HW_WFMT_FP4A16, k, n);
        double adreno = gemv_us("sd8gen3", "transformer-lite", HW_WFMT_W4A16, k, n) /
                        gemv_us("sd8gen3", "transformer-lite", HW_WFMT_FP4A16, k, n);
        g_test_message("K %" G_GUINT64_FORMAT ", N %" G_GUINT64_FORMAT
                       ": INT4 / FP4 time %.3f on the Mali, %.3f on the Adreno", k, n, mali,
                       adreno);
        g_assert_cmpfloat(mali, >=, 1.33);
        g_assert_cmpfloat(mali, <=, 1.56);
        g_assert_cmpfloat(adreno, ==, 1.0);
    }
    /* hetero-sim's other stacks give no architecture its own rate */
    g_autofree char *stacks = data_dir("configs/stacks");
    g_autoptr(GError) error = NULL;
    g_autoptr(HwStack) ppl = hw_stack_load("heterollm", stacks, &error);
    g_assert_no_error(error);
    for (int a = 0; a < HW_GPU_ARCH_COUNT; a++) {
        for (int f = 0; f < HW_WFMT_COUNT; f++) {
            g_assert_cmpfloat(hw_stack_gpu_dequant_gbps(ppl, (HwGpuArch) a, (HwWfmt) f), ==,
                              ppl->gpu.dequant.gbps[f]);
        }
    }
    g_autoptr(HwStack) tl = hw_stack_load("transformer-lite", stacks, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(hw_stack_gpu_dequant_gbps(tl, HW_GPU_ARCH_MALI_VALHALL5, HW_WFMT_W4A16),
                      >, 0);
    g_assert_cmpfloat(hw_stack_gpu_dequant_gbps(tl, HW_GPU_ARCH_MALI_VALHALL5, HW_WFMT_FP4A16),
                      ==, 0);
    g_assert_cmpfloat(hw_stack_gpu_dequant_gbps(tl, HW_GPU_ARCH_UNSPECIFIED, HW_WFMT_W4A16),
                      ==, 0);
    /* an unknown architecture is named, with the known ones */
    g_autoptr(cJSON) j = hw_stack_to_json(tl);
    cJSON *ad = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "gpu"),
                                                 "arch_dequant");
    g_assert_nonnull(ad);
    cJSON_AddItemToObject(ad, "mali", cJSON_CreateObject());
    g_autoptr(HwStack) bad = hw_stack_from_json(j, "s.json", &error);
    g_assert_null(bad);
    g_assert_cmpstr(error->message, ==, "s.json: $.gpu.arch_dequant: unknown key \"mali\" "
                                        "(known keys: adreno7xx, mali-valhall5)");
}

/* MLC-LLM as the 2024 papers ran it: the stack's matmul efficiency is
 * fitted to Transformer-Lite §5's MLC prefill (Gemma-2B, 25 tokens/s at
 * 128); its decode of Llama-2-7B lands within 30 % of the 10 tokens/s TVM
 * published for MLC on 8 Gen 3 before its Adreno GEMV schedule (a
 * prediction, 7.5); the same stack puts mllm-NPU well over ten times
 * faster at 1024 (the paper: 32.5-43.6x; mllm-npu's own 1024 speed is a
 * known miss). */
static void
test_mlc(void)
{
    SimRunReport r = run("sd8gen3", "gemma-2b", "gpu-only", "mlc-gpu", 128, 0);
    g_assert_cmpfloat(fabs(r.prefill.tokens_per_s / 25 - 1), <, 0.15);
    sim_run_report_clear(&r);
    r = run("sd8gen3", "llama-2-7b", "gpu-only", "mlc-gpu", 128, 8);
    g_test_message("mlc-gpu llama-2-7b decode: %.2f tokens/s", r.decode.tokens_per_s);
    g_assert_cmpfloat(fabs(r.decode.tokens_per_s / 10 - 1), <, 0.3);
    sim_run_report_clear(&r);
    double npu = prefill_tps("sd8gen3", "qwen1.5-1.8b", "mllm-npu", NULL, 1024);
    double mlc = prefill_tps("sd8gen3", "qwen1.5-1.8b", "gpu-only", "mlc-gpu", 1024);
    g_test_message("mllm-npu over mlc-gpu at 1024: %.1fx", npu / mlc);
    g_assert_cmpfloat(npu / mlc, >, 10);
}

/* The Snapdragon 8 Elite is the 8 Gen 3 scaled by the vendor's
 * generational figures (configs/sd8elite.json): a run moves as those say
 * and no further.  GPU-only prefill is compute-bound, so it gains the
 * GPU's 40 %; its decode is bound by the GPU's DRAM share, so it gains
 * the DRAM's 84.8 / 68.  The NPU's 45 % is in its matrix unit alone (12
 * tiles a cycle for 8, as sd8gen2 places its own): mllm-NPU's INT8
 * prefill, on the matrix unit, gains more than 20 % (with its CPU's
 * attention, on Oryon cores at twice the SIMD width, 1.66x); npu-only's
 * W4A16, bound by the vector unit's re-layout of the weights, barely
 * moves. */
static void
test_sd8elite(void)
{
    double gpf[2], dec[2], w4[2], i8[2];
    static const char *const socs[] = { "sd8gen3", "sd8elite" };
    for (int i = 0; i < 2; i++) {
        SimRunReport g = run(socs[i], "llama-3.2-3b", "gpu-only", NULL, 512, 8);
        gpf[i] = g.prefill.tokens_per_s;
        dec[i] = g.decode.tokens_per_s;
        w4[i] = prefill_tps(socs[i], "llama-3.2-3b", "npu-only", NULL, 512);
        i8[i] = prefill_tps(socs[i], "qwen1.5-1.8b", "mllm-npu", NULL, 512);
        sim_run_report_clear(&g);
    }
    g_test_message("8 Elite over 8 Gen 3: gpu-only prefill %.3f, decode %.3f; npu-only "
                   "prefill %.3f, mllm-npu %.3f", gpf[1] / gpf[0], dec[1] / dec[0],
                   w4[1] / w4[0], i8[1] / i8[0]);
    g_assert_cmpfloat(fabs(gpf[1] / gpf[0] / 1.4 - 1), <, 0.02);
    g_assert_cmpfloat(fabs(dec[1] / dec[0] / (84.8 / 68) - 1), <, 0.02);
    g_assert_cmpfloat(i8[1] / i8[0], >, 1.2);
    g_assert_cmpfloat(w4[1] / w4[0], >, 1.0);
    g_assert_cmpfloat(w4[1] / w4[0], <, 1.1);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sim/baselines/points-stacks", test_points_stacks);
    g_test_add_func("/sim/baselines/cpu-attention", test_cpu_attention);
    g_test_add_func("/sim/baselines/mnn-public", test_mnn_public);
    g_test_add_func("/sim/baselines/gpu-arch", test_gpu_arch);
    g_test_add_func("/sim/baselines/gpu-arch-dequant", test_gpu_arch_dequant);
    g_test_add_func("/sim/baselines/transformer-lite-prompt-length", test_tl_prompt_length);
    g_test_add_func("/sim/baselines/mlc", test_mlc);
    g_test_add_func("/sim/baselines/sd8elite", test_sd8elite);
    return g_test_run();
}
