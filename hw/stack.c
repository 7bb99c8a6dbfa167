/*
 * stack.c - software stack profiles (see stack.h).
 */
#include "hw/stack.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/param.h"

#include <string.h>

#define DQ(T, fmt, key)                                                       \
    HS_PARAM_F64(key, T, dequant.gbps[HW_WFMT_##fmt], 0, 10000, 0,          \
                 "weight bytes of this format dequantised per second (0: fused, free)")

#define DEQUANT_PARAMS(T)                                                     \
    DQ(T, W4A16, "w4a16_gbps"), DQ(T, W8A16, "w8a16_gbps"),                  \
    DQ(T, W8A8, "w8a8_gbps"), DQ(T, W4A8, "w4a8_gbps"),                      \
    DQ(T, W8A8_SHADOW, "w8a8_shadow_gbps"), DQ(T, FP4A16, "fp4a16_gbps"),    \
    DQ(T, Q4_0, "q4_0_gbps"), DQ(T, Q8_0, "q8_0_gbps"), HS_PARAM_END

static const HsParam cpu_params[] = {
    HS_PARAM_F64("simd_efficiency", HwStackCpu, simd_efficiency, 0.001, 1, HS_REQUIRED,
                 "share of the cores' SIMD peak its matmul kernels reach"),
    HS_PARAM_F64("float_efficiency", HwStackCpu, float_efficiency, 0, 1, 0,
                 "share of the cores' SIMD peak its other kernels reach (attention, "
                 "norms, element-wise ops); 0: simd_efficiency"),
    HS_PARAM_F64("dram_scale", HwStackCpu, dram_scale, 0.01, 4, 1,
                 "bandwidth its kernels reach alone, as a multiple of the SoC's "
                 "dram_cap_gbps (bounded by the DRAM ceiling)"),
    HS_PARAM_F64("call_us", HwStackCpu, call_us, 0, 100000, 0,
                 "fixed cost of one operator call on the cores (wake-up, barrier)"),
    HS_PARAM_F64("submit_us", HwStackCpu, submit_us, 0, 10000, HS_REQUIRED,
                 "host CPU time of one accelerator enqueue / graph-execute call"),
    HS_PARAM_BOOL("fp32_float", HwStackCpu, fp32_float, 0,
                  "its float kernels (attention, norms, activations) compute in FP32 "
                  "(the SoC's fp32_flops_per_cycle), not FP16"),
    HS_PARAM_BOOL("attention_full_scores", HwStackCpu, attention_full_scores, 0,
                  "its prefill attention computes every query-key score of the "
                  "block and masks the future in the softmax (no causal skipping)"),
    HS_PARAM_U32("attention_ubatch", HwStackCpu, attention_ubatch, 0, 1u << 20, 0,
                 "with attention_full_scores: a prompt's queries are scored in blocks of "
                 "this many tokens, each against the keys cached up to its end "
                 "(llama.cpp's n_ubatch); 0: the whole prompt as one block"),
    HS_PARAM_BOOL("pins_clock", HwStackCpu, pins_clock, 0,
                  "its worker threads spin between operators, so the compute cores' "
                  "governor sees them busy and holds the top operating point (false: "
                  "the SoC's cpu governor samples them)"),
    HS_PARAM_F64("serial_cycles_per_elem", HwStackCpu, serial_cycles_per_elem, 0, 1000, 0,
                 "core cycles per element of its scalar loops that run on one thread "
                 "(mllm's shadow-outlier scan); 0: it has none"),
    HS_PARAM_END
};
static const HsParam cpu_dequant[] = { DEQUANT_PARAMS(HwStackCpu) };

static const HsParam gpu_params[] = {
    HS_PARAM_F64("matmul_efficiency", HwStackGpu, matmul_efficiency, 0.001, 1, HS_REQUIRED,
                 "FP16 throughput its large matmul kernels plateau at, as a share of "
                 "the GPU's peak_fp16_tflops"),
    HS_PARAM_F64("dram_scale", HwStackGpu, dram_scale, 0.01, 4, 1,
                 "bandwidth its kernels reach alone, as a multiple of the SoC's "
                 "dram_cap_gbps (bounded by the DRAM ceiling)"),
    HS_PARAM_F64("launch_busy_us", HwStackGpu, launch_busy_us, 0, 100000, HS_REQUIRED,
                 "kernel submission into a non-empty queue"),
    HS_PARAM_F64("launch_idle_us", HwStackGpu, launch_idle_us, 0, 100000, HS_REQUIRED,
                 "extra cost when the queue had run empty (restart after a blocking sync)"),
    HS_PARAM_BOOL("pins_clock", HwStackGpu, pins_clock, 0,
                  "it asks the driver for the GPU's top clock while it runs (e.g. "
                  "cl_qcom_perf_hint HIGH; false: the SoC's gpu governor samples it)"),
    HS_PARAM_ENUM("measured_arch", HwStackGpu, measured_arch, int, hw_gpu_arch_name,
                  HW_GPU_ARCH_COUNT, 0,
                  "the GPU architecture its figures were measured on; a run on a GPU of "
                  "another one, for which arch_matmul_efficiency has no entry, says its "
                  "figures are assumed to carry over (unspecified: no claim)"),
    HS_PARAM_END
};
static const HsParam gpu_dequant[] = { DEQUANT_PARAMS(HwStackGpu) };

const char *const hw_gpu_arch_name[] = { "unspecified", "adreno7xx", "mali-valhall5" };
G_STATIC_ASSERT(G_N_ELEMENTS(hw_gpu_arch_name) == HW_GPU_ARCH_COUNT);

const char *const hw_npu_arch_name[] = { "unspecified", "hexagon", "mediatek-apu" };
G_STATIC_ASSERT(G_N_ELEMENTS(hw_npu_arch_name) == HW_NPU_ARCH_COUNT);

#define ARCH_EFF(arch, key)                                                   \
    HS_PARAM_F64(key, HwStackGpu, arch_matmul_efficiency[HW_GPU_ARCH_##arch], 0, 1, 0, \
                 "matmul_efficiency on a GPU of this architecture (the SoC's gpu "   \
                 "arch); 0: matmul_efficiency")
static const HsParam gpu_arch_params[] = {
    ARCH_EFF(ADRENO7XX, "adreno7xx"), ARCH_EFF(MALI_VALHALL5, "mali-valhall5"),
    HS_PARAM_END
};

/* a format's rate on one architecture: the same keys as dequant, -1 (the
 * default) deferring to it */
#define ARCH_DQ_ONE(fmt, key)                                                 \
    HS_PARAM_F64(key, HwStackDequant, gbps[HW_WFMT_##fmt], -1, 10000, -1,   \
                 "this format's dequant rate on a GPU of this architecture "   \
                 "(0: fused, free; negative, as the default -1: the gpu.dequant rate)")
static const HsParam arch_dequant_one[] = {
    ARCH_DQ_ONE(W4A16, "w4a16_gbps"), ARCH_DQ_ONE(W8A16, "w8a16_gbps"),
    ARCH_DQ_ONE(W8A8, "w8a8_gbps"), ARCH_DQ_ONE(W4A8, "w4a8_gbps"),
    ARCH_DQ_ONE(W8A8_SHADOW, "w8a8_shadow_gbps"), ARCH_DQ_ONE(FP4A16, "fp4a16_gbps"),
    ARCH_DQ_ONE(Q4_0, "q4_0_gbps"), ARCH_DQ_ONE(Q8_0, "q8_0_gbps"), HS_PARAM_END
};
#define ARCH_DQ(arch, key)                                                    \
    HS_PARAM_OBJ(key, HwStackGpu, arch_dequant[HW_GPU_ARCH_##arch], HwStackDequant, \
                 arch_dequant_one, FALSE, "dequant rates on a GPU of this architecture")
static const HsParam gpu_arch_dequant_params[] = {
    ARCH_DQ(ADRENO7XX, "adreno7xx"), ARCH_DQ(MALI_VALHALL5, "mali-valhall5"), HS_PARAM_END
};

/* Has the stack an arch_dequant entry (>= 0) for any architecture? */
static gboolean
has_arch_dequant(const HwStackGpu *g)
{
    for (int a = 1; a < HW_GPU_ARCH_COUNT; a++) {
        for (int f = 0; f < HW_WFMT_COUNT; f++) {
            if (g->arch_dequant[a].gbps[f] >= 0 && f != HW_WFMT_FP16) {
                return TRUE;
            }
        }
    }
    return FALSE;
}

double
hw_stack_gpu_dequant_gbps(const HwStack *stack, HwGpuArch arch, HwWfmt wfmt)
{
    g_assert((int) arch >= 0 && arch < HW_GPU_ARCH_COUNT);
    g_assert((int) wfmt >= 0 && wfmt < HW_WFMT_COUNT);
    /* the unspecified architecture has no entries (its slot stays zeroed) */
    double v = arch != HW_GPU_ARCH_UNSPECIFIED && wfmt != HW_WFMT_FP16
               ? stack->gpu.arch_dequant[arch].gbps[wfmt] : -1;
    return v >= 0 ? v : stack->gpu.dequant.gbps[wfmt];
}

double
hw_stack_gpu_efficiency(const HwStack *stack, HwGpuArch arch)
{
    g_assert((int) arch >= 0 && arch < HW_GPU_ARCH_COUNT);
    double e = stack->gpu.arch_matmul_efficiency[arch];
    return e > 0 ? e : stack->gpu.matmul_efficiency;
}

/* Does @op run at the stack's float_efficiency (else simd_efficiency)? */
static gboolean
cpu_float_op(const HwStack *stack, const HwOp *op)
{
    return op->kind != HW_OP_MATMUL && stack->cpu.float_efficiency > 0;
}

double
hw_stack_cpu_efficiency(const HwStack *stack, const HwOp *op)
{
    return cpu_float_op(stack, op) ? stack->cpu.float_efficiency : stack->cpu.simd_efficiency;
}

const char *
hw_stack_cpu_efficiency_key(const HwStack *stack, const HwOp *op)
{
    return cpu_float_op(stack, op) ? "float_efficiency" : "simd_efficiency";
}

const char *
hw_stack_measured_arch(const HwStack *stack, HwKind kind)
{
    switch (kind) {
    case HW_KIND_GPU:
        return stack->gpu.measured_arch ? hw_gpu_arch_name[stack->gpu.measured_arch] : NULL;
    case HW_KIND_NPU:
        return stack->npu.measured_arch ? hw_npu_arch_name[stack->npu.measured_arch] : NULL;
    default:
        return NULL;     /* the CPU stacks make no claim */
    }
}

gboolean
hw_stack_pins_clock(const HwStack *stack, HwKind kind)
{
    switch (kind) {
    case HW_KIND_CPU:
        return stack->cpu.pins_clock;
    case HW_KIND_GPU:
        return stack->gpu.pins_clock;
    case HW_KIND_NPU:
        return stack->npu.pins_clock;
    default:
        g_assert_not_reached();
    }
}

static const HsParam npu_params[] = {
    HS_PARAM_F64("matmul_efficiency", HwStackNpu, matmul_efficiency, 0.001, 1, 1,
                 "share of the matrix units' own rate its matmul graphs reach (1: the "
                 "array's cycle count; lower: the runtime's scheduling, layout and "
                 "synchronisation between tiles)"),
    HS_PARAM_F64("launch_us", HwStackNpu, launch_us, 0, 100000, HS_REQUIRED,
                 "overhead of one graph execute call"),
    HS_PARAM_F64("dram_scale", HwStackNpu, dram_scale, 0.01, 4, 1,
                 "bandwidth its graphs reach alone, as a multiple of the SoC's "
                 "dram_cap_gbps (bounded by the DRAM ceiling)"),
    HS_PARAM_U32("graphs_per_model", HwStackNpu, graphs_per_model, 1, 1024, HS_REQUIRED,
                 "static graphs a model is split into (each prepared separately)"),
    HS_PARAM_F64("prepare_base_ms", HwStackNpu, prepare_base_ms, 0, 1e7, HS_REQUIRED,
                 "graph preparation: fixed part per graph"),
    HS_PARAM_F64("prepare_ms_per_mib", HwStackNpu, prepare_ms_per_mib, 0, 1e7, HS_REQUIRED,
                 "graph preparation: per MiB of the activations it handles"),
    HS_PARAM_F64("prepare_ms_per_mparam", HwStackNpu, prepare_ms_per_mparam, 0, 1e7, 0,
                 "graph optimisation: per million weights its matmuls hold"),
    HS_PARAM_F64("group_partial_gbps", HwStackNpu, group_partial_gbps, 0, 10000, 0,
                 "per-group (Q4_0 / Q8_0) matmuls emulated as one sub-matmul per group of "
                 "32 along the reduction, each INT32 partial product read back, scaled and "
                 "accumulated by the vector unit at this many bytes per second "
                 "(0: no emulation; the dequant rates apply)"),
    HS_PARAM_BOOL("w4a16_decode", HwStackNpu, w4a16_decode, 0,
                  "the runtime runs W4A16 matmuls in decode"),
    HS_PARAM_U32("deep_min_tokens", HwStackNpu, deep_min_tokens, 0, 1048576, 0,
                 "its kernels run the SoC's depth-blocked schedule (deep_rows) only from "
                 "this many tokens (columns of the stationary operand); below, they hold "
                 "the activations whole in the TCM (0: whenever the stationary operand is "
                 "not held whole in the SoC's stationary_kib)"),
    HS_PARAM_U32("deep_min_rows", HwStackNpu, deep_min_rows, 0, 1048576, 0,
                 "... and only for a weight with at least this many rows (outputs); a "
                 "narrower one runs the full-depth schedule (0: any)"),
    HS_PARAM_BOOL("attention_matrix_unit", HwStackNpu, attention_matrix_unit, 0,
                  "its attention multiplies QK^T and PV on the matrix unit in FP16 tiles "
                  "(FlashAttention) and runs only the softmax on the vector unit, the two "
                  "overlapping; false: the whole attention on the vector unit"),
    HS_PARAM_F64("softmax_vector_flops", HwStackNpu, softmax_vector_flops, 0, 100000, 5,
                 "with attention_matrix_unit: the vector-unit work of its softmax per "
                 "query-key score (the exponential, max, sum and scale), in flops at the "
                 "SoC's vector_gflops"),
    HS_PARAM_BOOL("pins_clock", HwStackNpu, pins_clock, 0,
                  "it pins the NPU's clock while it runs (e.g. QNN's burst power "
                  "config; false: the SoC's npu governor samples it)"),
    HS_PARAM_ENUM("measured_arch", HwStackNpu, measured_arch, int, hw_npu_arch_name,
                  HW_NPU_ARCH_COUNT, 0,
                  "the NPU architecture its figures were measured on (a vendor's NPU "
                  "runtime exists for its own NPUs only); a run on an NPU of another one "
                  "says its figures are assumed to carry over (unspecified: no claim)"),
    HS_PARAM_END
};
static const HsParam npu_dequant[] = { DEQUANT_PARAMS(HwStackNpu) };

typedef struct StackTop {
    char *name;
    char *description;
} StackTop;

static const HsParam top_params[] = {
    HS_PARAM_STR("name", StackTop, name, NULL, NULL, "short name of the stack"),
    HS_PARAM_STR("description", StackTop, description, "", NULL, "one line"),
    HS_PARAM_END
};

typedef struct Section {
    const char *key;             /* "cpu" */
    const char *title;           /* for show / describe */
    size_t offset;               /* into HwStack */
    const HsParam *params;
    const HsParam *dequant;
} Section;

static const Section sections[] = {
    { "cpu", "CPU kernels and the host's calls", offsetof(HwStack, cpu),
      cpu_params, cpu_dequant },
    { "gpu", "GPU kernels and queue", offsetof(HwStack, gpu), gpu_params, gpu_dequant },
    { "npu", "NPU runtime and graphs", offsetof(HwStack, npu), npu_params, npu_dequant },
};

static const HsParamSection param_sections[] = {
    { "cpu", cpu_params }, { "cpu.dequant", cpu_dequant },
    { "gpu", gpu_params }, { "gpu.dequant", gpu_dequant },
    { "npu", npu_params }, { "npu.dequant", npu_dequant },
    { "gpu.arch_matmul_efficiency", gpu_arch_params },
    { "gpu.arch_dequant.adreno7xx", arch_dequant_one },
    { "gpu.arch_dequant.mali-valhall5", arch_dequant_one },
    { NULL, NULL },
};
/* every section and its dequant table, the GPU's per-architecture
 * efficiencies and dequant rates, then the end */
G_STATIC_ASSERT(G_N_ELEMENTS(param_sections) == 2 * G_N_ELEMENTS(sections) + 2 +
                                                  HW_GPU_ARCH_COUNT - 1);

const HsParamSection *
hw_stack_sections(void)
{
    return param_sections;
}

static const char *const top_keys[] = { "cpu", "gpu", "npu", NULL };
static const char *const section_keys[] = { "dequant", "arch_matmul_efficiency",
                                            "arch_dequant", NULL };

void
hw_stack_free(HwStack *stack)
{
    if (stack == NULL) {
        return;
    }
    g_free(stack->name);
    g_free(stack->description);
    g_free(stack->path);
    g_strfreev(stack->bases);
    if (stack->sources) {
        g_hash_table_unref(stack->sources);
    }
    g_free(stack);
}

static gboolean
apply_section(const cJSON *root, const Section *sec, HwStack *st, GError **error)
{
    void *out = (char *) st + sec->offset;
    g_autofree char *path = hs_json_path_key("$", sec->key);
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, sec->key);
    if (obj == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "$: missing required key \"%s\"", sec->key);
        return FALSE;
    }
    if (!hs_param_apply(obj, path, sec->params, out, section_keys, st->sources, error)) {
        return FALSE;
    }
    /* per-architecture efficiencies and dequant rates: the GPU section only */
    static const struct {
        const char *key;
        const HsParam *table;
    } per_arch[] = { { "arch_matmul_efficiency", gpu_arch_params },
                     { "arch_dequant", gpu_arch_dequant_params } };
    for (size_t i = 0; i < G_N_ELEMENTS(per_arch); i++) {
        const cJSON *arch = cJSON_GetObjectItemCaseSensitive(obj, per_arch[i].key);
        g_autofree char *arch_path = hs_json_path_key(path, per_arch[i].key);
        if (sec->params == gpu_params) {
            if (arch == NULL) {
                hs_param_set_defaults(per_arch[i].table, out);
            } else if (!hs_param_apply(arch, arch_path, per_arch[i].table, out, NULL,
                                       st->sources, error)) {
                return FALSE;
            }
        } else if (arch != NULL) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: only the gpu section has per-architecture values", arch_path);
            return FALSE;
        }
    }
    const cJSON *dq = cJSON_GetObjectItemCaseSensitive(obj, "dequant");
    g_autofree char *dq_path = hs_json_path_key(path, "dequant");
    if (dq == NULL) {
        hs_param_set_defaults(sec->dequant, out);
        return TRUE;
    }
    return hs_param_apply(dq, dq_path, sec->dequant, out, NULL, st->sources, error);
}

HwStack *
hw_stack_from_json(const cJSON *root, const char *what, GError **error)
{
    g_autoptr(HwStack) st = g_new0(HwStack, 1);
    st->sources = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    StackTop top = { 0 };
    gboolean ok = hs_param_apply(root, "$", top_params, &top, top_keys, NULL, error);
    st->name = g_steal_pointer(&top.name);
    st->description = g_steal_pointer(&top.description);
    for (size_t i = 0; ok && i < G_N_ELEMENTS(sections); i++) {
        ok = apply_section(root, &sections[i], st, error);
    }
    if (!ok) {
        g_prefix_error(error, "%s: ", what);
        return NULL;
    }
    return g_steal_pointer(&st);
}

HwStack *
hw_stack_load(const char *name_or_path, const char *stacks_dir, GError **error)
{
    return hw_stack_load_edit(name_or_path, stacks_dir, NULL, NULL, error);
}

HwStack *
hw_stack_load_edit(const char *name_or_path, const char *stacks_dir, HsJsonEditFn edit,
                   void *opaque, GError **error)
{
    g_autofree char *path = NULL;
    g_auto(GStrv) bases = NULL;
    g_autoptr(cJSON) root = hs_json_load_based(name_or_path, stacks_dir, "stack", edit,
                                               opaque, &path, &bases, error);
    if (root == NULL) {
        return NULL;
    }
    HwStack *st = hw_stack_from_json(root, path, error);
    if (st) {
        st->path = g_steal_pointer(&path);
        st->bases = g_steal_pointer(&bases);
    }
    return st;
}

GStrv
hw_stack_list(const char *stacks_dir, GError **error)
{
    return hs_json_list_stems(stacks_dir, error);
}

void
hw_stack_dump_text(const HwStack *st, GString *out)
{
    g_string_append_printf(out, "stack %s%s%s\n", st->name,
                           st->description[0] ? ": " : "", st->description);
    if (st->path) {
        g_string_append_printf(out, "  from %s\n", st->path);
    }
    for (char **b = st->bases; b && *b; b++) {
        g_string_append_printf(out, "  on base %s\n", *b);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(sections); i++) {
        const Section *sec = &sections[i];
        const void *in = (const char *) st + sec->offset;
        g_autofree char *path = hs_json_path_key("$", sec->key);
        g_autofree char *dq_path = hs_json_path_key(path, "dequant");
        g_string_append_printf(out, "\n%s (%s)\n", sec->key, sec->title);
        hs_param_dump_text(sec->params, in, out, 2, st->sources, path);
        if (sec->params == gpu_params) {
            g_autofree char *ap = hs_json_path_key(path, "arch_matmul_efficiency");
            g_string_append(out, "  arch_matmul_efficiency\n");
            hs_param_dump_text(gpu_arch_params, in, out, 4, st->sources, ap);
            if (has_arch_dequant(&st->gpu)) {
                g_autofree char *dp = hs_json_path_key(path, "arch_dequant");
                g_string_append(out, "  arch_dequant\n");
                hs_param_dump_text(gpu_arch_dequant_params, in, out, 4, st->sources, dp);
            }
        }
        g_string_append(out, "  dequant\n");
        hs_param_dump_text(sec->dequant, in, out, 4, st->sources, dq_path);
    }
}

cJSON *
hw_stack_to_json(const HwStack *st)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", st->name);
    cJSON_AddStringToObject(root, "description", st->description);
    for (size_t i = 0; i < G_N_ELEMENTS(sections); i++) {
        const Section *sec = &sections[i];
        const void *in = (const char *) st + sec->offset;
        cJSON *o = cJSON_AddObjectToObject(root, sec->key);
        hs_param_dump_json(sec->params, in, o);
        if (sec->params == gpu_params) {
            hs_param_dump_json(gpu_arch_params, in,
                               cJSON_AddObjectToObject(o, "arch_matmul_efficiency"));
            /* only where given: the documents of stacks without it unchanged */
            if (has_arch_dequant(&st->gpu)) {
                hs_param_dump_json(gpu_arch_dequant_params, in,
                                   cJSON_AddObjectToObject(o, "arch_dequant"));
            }
        }
        hs_param_dump_json(sec->dequant, in, cJSON_AddObjectToObject(o, "dequant"));
    }
    return root;
}

void
hw_stack_describe(GString *out)
{
    g_string_append(out, "A stack profile: what one inference engine's kernel libraries and "
                         "runtimes achieve on\neach processor of a SoC (the SoC config says "
                         "what the silicon is).\n"
                         "Top level: name (string, required), description (string), cpu, gpu, "
                         "npu (all required)\n"
                         "Any number may be written as {\"value\": N, \"source\": \"where it "
                         "comes from\"}.\n"
                         "base (optional): a stack name or JSON file (relative to this one) to "
                         "start from; this file's keys\nare written over it (objects key by key; "
                         "a number or a {value, source} pair whole), so a\nstack gives only what "
                         "differs and every required key may come from its base.\n");
    for (size_t i = 0; i < G_N_ELEMENTS(sections); i++) {
        g_string_append_printf(out, "\n$.%s (%s)\n", sections[i].key, sections[i].title);
        hs_param_describe(sections[i].params, out);
        if (sections[i].params == gpu_params) {
            g_string_append(out, "\n$.gpu.arch_matmul_efficiency (optional; per GPU "
                                 "architecture, the SoC's gpu arch)\n");
            hs_param_describe(gpu_arch_params, out);
            g_string_append(out, "\n$.gpu.arch_dequant (optional; per GPU architecture, "
                                 "the SoC's gpu arch: an object of dequant's keys)\n");
            hs_param_describe(gpu_arch_dequant_params, out);
        }
        g_string_append_printf(out, "\n$.%s.dequant (optional; matmul weights of each "
                                    "format, on this processor)\n", sections[i].key);
        hs_param_describe(sections[i].dequant, out);
    }
}
