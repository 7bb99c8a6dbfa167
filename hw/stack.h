/*
 * stack.h - a software stack profile: what one inference engine's kernel
 * libraries and runtimes achieve on each kind of processor.
 *
 * The SoC config (hw/soc.h) says what the silicon is: clocks, arrays, TCM,
 * peak rates, the DRAM, each initiator's bandwidth cap.  A stack says what
 * an engine gets out of it, as shares of the hardware's numbers so that
 * one profile serves every SoC: PPL's OpenCL matmul plateaus at ~1 TFLOPS
 * of the Adreno 750's 2.8 (HeteroLLM §1), Transformer-Lite's at 1.6
 * (Transformer-Lite §3.2); its kernels' bandwidth against the SoC's
 * per-initiator cap (measured with PPL: 43.3 GB/s; Transformer-Lite's
 * GEMVs imply ~58 (Transformer-Lite §4), bounded by the DRAM ceiling); the
 * fixed cost of each kernel launch, graph execute or enqueue call; what
 * dequantising each weight format costs; what the vendor NPU runtime
 * supports.  One SoC serves every system; a policy names the stack it runs
 * on (SimPolicy.stack), `--stack` replaces it ("same phone, better
 * kernels?").  Profiles live in configs/stacks/NAME.json, loaded with the
 * same HsParam tables as SoC configs (every number may carry its source):
 *
 *   { "name": "heterollm", "description": "...",
 *     "cpu": { ... }, "gpu": { ... }, "npu": { ... } }
 *
 * hw/ only reads the numbers; which stack a run uses is sim/run.c's call.
 */
#ifndef HW_STACK_H
#define HW_STACK_H

#include <glib.h>
#include <cjson/cJSON.h>

#include "sim/util/json.h"
#include "sim/util/param.h"

#include "hw/dev.h"
#include "hw/op.h"

/* Weight bytes a library dequantises per second on one processor, per
 * weight format (HwWfmt); 0: free — fused into the load, no time beyond
 * reading the bytes. */
typedef struct HwStackDequant {
    double gbps[HW_WFMT_COUNT];
} HwStackDequant;

typedef struct HwStackCpu {
    double simd_efficiency;      /* share of the cores' SIMD peak its matmuls reach */
    double float_efficiency;     /* ... its other kernels (attention, norms,
                                  * element-wise ops); 0: as simd_efficiency
                                  * (hw_stack_cpu_efficiency) */
    double dram_scale;           /* its kernels' bandwidth / the SoC's cap */
    double call_us;              /* fixed cost of one operator call (thread
                                  * wake-up and barrier across the cores) */
    double submit_us;            /* host time of one accelerator enqueue call */
    gboolean fp32_float;         /* float (non-INT8) kernels compute in FP32 */
    gboolean attention_full_scores; /* prefill attention: all m x n scores */
    uint32_t attention_ubatch;   /* ... of query blocks this long, each against
                                  * the keys cached to its end (0: one block) */
    gboolean pins_clock;         /* its runtime holds the cores at their top
                                  * operating point (worker threads spin) */
    double serial_cycles_per_elem; /* core cycles per element of its scalar,
                                  * single-thread loops (an op's serial_elems) */
    HwStackDequant dequant;
} HwStackCpu;

/* A GPU's architecture (the SoC's gpu "arch"): one kernel library reaches
 * different shares of different architectures' peaks (Transformer-Lite
 * §3.2: the same OpenCL kernels run slightly slower on the Mali-G720 than
 * on the Adreno 750, whose spec peak is lower), so a stack may give its
 * matmul efficiency per architecture. */
typedef enum {
    HW_GPU_ARCH_UNSPECIFIED,     /* the stack's matmul_efficiency */
    HW_GPU_ARCH_ADRENO7XX,       /* Qualcomm Adreno 7xx (8 Gen 2 / 8 Gen 3) */
    HW_GPU_ARCH_MALI_VALHALL5,   /* Arm Mali 5th-gen (Immortalis/Mali-G720) */
    HW_GPU_ARCH_COUNT
} HwGpuArch;

extern const char *const hw_gpu_arch_name[];   /* HW_GPU_ARCH_COUNT entries */

/* An NPU's architecture (the SoC's npu "arch"): a vendor's NPU runtime
 * (Qualcomm's QNN, the Hexagon SDK) exists for its own NPUs only, so a
 * stack measured on one says which (its npu "measured_arch"). */
typedef enum {
    HW_NPU_ARCH_UNSPECIFIED,
    HW_NPU_ARCH_HEXAGON,         /* Qualcomm Hexagon NPU (HTP: HMX + HVX) */
    HW_NPU_ARCH_MEDIATEK_APU,    /* MediaTek APU (Dimensity) */
    HW_NPU_ARCH_COUNT
} HwNpuArch;

extern const char *const hw_npu_arch_name[];   /* HW_NPU_ARCH_COUNT entries */

typedef struct HwStackGpu {
    double matmul_efficiency;    /* FP16 plateau of its large matmuls / the GPU's peak */
    double arch_matmul_efficiency[HW_GPU_ARCH_COUNT]; /* the same on one
                                  * architecture; 0: matmul_efficiency */
    double dram_scale;           /* its kernels' bandwidth / the SoC's cap */
    double launch_busy_us;       /* kernel submission into a queue that runs */
    double launch_idle_us;       /* extra when the queue had run empty */
    gboolean pins_clock;         /* its runtime asks for the top clock (OpenCL perf hint) */
    int measured_arch;           /* HwGpuArch: its figures come from a GPU of this
                                  * architecture (unspecified: no claim) */
    HwStackDequant dequant;
    HwStackDequant arch_dequant[HW_GPU_ARCH_COUNT]; /* the same on one
                                  * architecture; < 0: dequant's */
} HwStackGpu;

typedef struct HwStackNpu {
    double matmul_efficiency;    /* share of the array's cycle count its graphs reach */
    double launch_us;            /* one graph execute call */
    double dram_scale;           /* its graphs' bandwidth / the SoC's cap */
    uint32_t graphs_per_model;   /* static graphs a model is split into */
    double prepare_base_ms;      /* graph preparation: fixed part per graph */
    double prepare_ms_per_mib;   /* graph preparation: per MiB of activations */
    double prepare_ms_per_mparam; /* graph optimisation: per million weights */
    double group_partial_gbps;   /* per-group matmul emulation: partial sums / s */
    gboolean w4a16_decode;       /* runs W4A16 matmuls in decode */
    uint32_t deep_min_tokens;    /* depth-blocked schedule only from this many tokens */
    uint32_t deep_min_rows;      /* ... and from this many weight rows (outputs) */
    gboolean attention_matrix_unit; /* QK^T and PV on the matrix unit, the
                                  * softmax on the vector unit (FlashAttention) */
    double softmax_vector_flops; /* ... the softmax's vector-unit work a score */
    gboolean pins_clock;         /* its runtime pins the clock (QNN burst power config) */
    int measured_arch;           /* HwNpuArch: its figures come from an NPU of this
                                  * architecture (unspecified: no claim) */
    HwStackDequant dequant;      /* vector unit (HVX): weight -> FP16 tiles */
} HwStackNpu;

typedef struct HwStack {
    char *name;
    char *description;
    char *path;                  /* file it was loaded from */
    char **bases;                /* its bases' files, nearest first (NULL: none) */
    HwStackCpu cpu;
    HwStackGpu gpu;
    HwStackNpu npu;
    GHashTable *sources;         /* JSON path -> source note */
} HwStack;

/* @name_or_path: a shipped name (looked up as @stacks_dir/NAME.json) or a
 * path to a JSON file.  (transfer full) */
HwStack *hw_stack_load(const char *name_or_path, const char *stacks_dir, GError **error);
/* hw_stack_load with @edit (may be NULL) applied to the parsed JSON
 * before it is read (--set stack.KEY=VALUE). */
HwStack *hw_stack_load_edit(const char *name_or_path, const char *stacks_dir,
                            HsJsonEditFn edit, void *opaque, GError **error);
HwStack *hw_stack_from_json(const cJSON *root, const char *what, GError **error);
void hw_stack_free(HwStack *stack);               /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwStack, hw_stack_free)

/* Names of the stacks shipped in @stacks_dir, sorted.  (transfer full) */
GStrv hw_stack_list(const char *stacks_dir, GError **error);

/* The stack's GPU matmul efficiency on a GPU of architecture @arch: its
 * entry for @arch, else its matmul_efficiency. */
double hw_stack_gpu_efficiency(const HwStack *stack, HwGpuArch arch);

/* Weight bytes of format @wfmt the stack's GPU kernels dequantise per
 * second on a GPU of architecture @arch (0: fused into the load): its
 * entry for @arch, else its dequant rate. */
double hw_stack_gpu_dequant_gbps(const HwStack *stack, HwGpuArch arch, HwWfmt wfmt);

/* The share of the CPU cores' SIMD peak the stack's kernel for @op
 * reaches: simd_efficiency for a matmul, float_efficiency (if set) for the
 * rest. */
double hw_stack_cpu_efficiency(const HwStack *stack, const HwOp *op);
/* ... and the name of the key it read ("simd_efficiency" or
 * "float_efficiency"), for explanations. */
const char *hw_stack_cpu_efficiency_key(const HwStack *stack, const HwOp *op);

/* The architecture @stack's figures for processors of @kind were
 * measured on (its measured_arch), or NULL if it makes no claim. */
const char *hw_stack_measured_arch(const HwStack *stack, HwKind kind);

/* Whether the stack's runtime holds processors of @kind at their top
 * operating point while it runs (its "pins_clock" key for that kind). */
gboolean hw_stack_pins_clock(const HwStack *stack, HwKind kind);

/* `stack show` (text with units and sources, or JSON) and `stack describe`. */
void hw_stack_dump_text(const HwStack *stack, GString *out);
cJSON *hw_stack_to_json(const HwStack *stack);    /* (transfer full) */
void hw_stack_describe(GString *out);

/* Every section of a stack profile with its table: cpu, cpu.dequant, gpu,
 * gpu.dequant, npu, npu.dequant.  (transfer none) */
const HsParamSection *hw_stack_sections(void);

#endif /* HW_STACK_H */
