/*
 * test-hw-models.c - the device models against the facts they must
 * reproduce (HeteroLLM §3, NPU-TTS §3), with explicit tolerances: DRAM bandwidth
 * alone and shared, NPU stage, order and shape sensitivity, graph preparation cost, sync
 * costs, GPU linear performance, cost-query purity.
 */
#include "hw/cpu.h"
#include "hw/gpu.h"
#include "hw/npu.h"
#include "hw/runtime.h"
#include "hw/stack.h"
#include "hw/sync.h"
#include "sim/cost.h"
#include "sim/run.h"
#include "sim/util/json.h"

#include <math.h>
#include <stdlib.h>

static HwSoc *
sd8gen3(void)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    g_autofree char *dir = g_build_filename(root ? root : HS_SOURCE_ROOT, "configs", NULL);
    g_autoptr(GError) error = NULL;
    HwSoc *soc = hw_soc_load("sd8gen3", dir, &error);
    g_assert_no_error(error);
    return soc;
}

/* HeteroLLM's stack: the one the sd8gen3 figures were measured with */
static const HwStack *
ppl_qnn(const HwSoc *soc)
{
    g_autoptr(GError) error = NULL;
    const HwStack *st = hw_soc_stack(soc, "heterollm", &error);
    g_assert_no_error(error);
    return st;
}

static HwOp
matmul(uint64_t m, uint64_t k, uint64_t n, HwDtype a, HwDtype b)
{
    double ab = a == HW_DTYPE_FP16 ? 2 : a == HW_DTYPE_INT8 ? 1 : 0.5;
    double bb = b == HW_DTYPE_FP16 ? 2 : b == HW_DTYPE_INT8 ? 1 : 0.5;
    return (HwOp) { .kind = HW_OP_MATMUL, .m = m, .k = k, .n = n, .a_dtype = a,
                    .b_dtype = b, .compute = HW_DTYPE_FP16, .flops = 2 * m * k * n,
                    .read_bytes = (uint64_t) (m * k * ab + k * n * bb),
                    .write_bytes = m * n * 2 };
}

typedef struct Count {
    uint32_t left;
} Count;

static void
done(void *opaque)
{
    ((Count *) opaque)->left--;
}

/* Streams 64 MiB of INT4 weights on each processor in @kinds at once. */
static double
stream_gbps(const HwSoc *soc, const HwKind *kinds, int n)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, ppl_qnn(soc), k);
    Count c = { 0 };
    uint64_t bytes = 0;
    hw_runtime_npu_prepared(rt, 32);
    for (int i = 0; i < n; i++) {
        const HwDev *d = hw_soc_find_kind(soc, kinds[i]);
        HwOp op = matmul(1, 8192, 16384, HW_DTYPE_FP16, HW_DTYPE_INT4);
        if (kinds[i] == HW_KIND_NPU) {
            /* W4A8 on the INT8 datapath: the NPU's decode path (no W4A16) */
            op = matmul(16384, 8192, 32, HW_DTYPE_INT4, HW_DTYPE_INT8);
            op.compute = HW_DTYPE_INT8;
        }
        HwCost cost;
        hw_dev_estimate(d, ppl_qnn(soc), &op, &cost);
        bytes += cost.dram_bytes;
        HwSubmit s = { .dev = d->index, .op = op, .npu_tokens = 32, .on_done = done,
                       .opaque = &c, .presubmitted = TRUE };
        c.left++;
        g_assert_true(hw_runtime_submit(rt, &s, NULL));
    }
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert_cmpuint(c.left, ==, 0);
    return (double) bytes / ((double) sim_kernel_now(k) / 1000.0);
}

/* HeteroLLM §3.3/§5.3: one processor 40-45 GB/s, GPU+NPU 57-62 GB/s. */
static void
test_membw(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    double gpu = stream_gbps(soc, (HwKind[]) { HW_KIND_GPU }, 1);
    double npu = stream_gbps(soc, (HwKind[]) { HW_KIND_NPU }, 1);
    double both = stream_gbps(soc, (HwKind[]) { HW_KIND_GPU, HW_KIND_NPU }, 2);
    g_assert_cmpfloat(gpu, >=, 40);
    g_assert_cmpfloat(gpu, <=, 45);
    g_assert_cmpfloat(npu, >=, 40);
    g_assert_cmpfloat(npu, <=, 45);
    g_assert_cmpfloat(both, >=, 57);
    g_assert_cmpfloat(both, <=, 62);
    g_assert_cmpfloat(both, <=, soc->mem.peak_gbps);
}

/* Stage performance: flat inside a 32-wide tile, a step at each boundary. */
static void
test_npu_stage(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    uint64_t prev = 0;
    for (uint64_t n = 1; n <= 128; n++) {
        HwOp op = matmul(1024, 1024, n, HW_DTYPE_FP16, HW_DTYPE_FP16);
        HwCost c;
        hw_dev_estimate(npu, ppl_qnn(soc), &op, &c);
        /* compute cycles only: DRAM bytes still grow with n */
        if (n > 1 && (n - 1) % 32 != 0) {
            g_assert_cmpuint(c.compute_cycles, ==, prev);
        } else if (n > 1) {
            g_assert_cmpuint(c.compute_cycles, >, prev);
        }
        prev = c.compute_cycles;
    }
}

/* HeteroLLM §3.2: online prepare for Llama-3-8B prefill costs 408.4 ms at
 * 135 tokens and 2050 ms at 1000; through the online-prepare policy's
 * plan, within 15 %. */
static double
prepare_ms(const HwSoc *soc, const MdlSpec *spec, uint32_t prompt)
{
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = prompt;
    w.decode = 0;
    g_autoptr(GError) error = NULL;
    g_autoptr(SimPlan) plan = sim_run_plan(soc, spec, sim_policy_find("online-prepare"), &w,
                                           NULL, &error);
    g_assert_no_error(error);
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    double ms = 0;
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (t->kind == SIM_TASK_PREPARE && t->work.m == prompt) {
            HwOp op;
            HwCost c;
            sim_work_to_hw_op(&t->work, t->kind, &op);
            hw_dev_estimate(npu, ppl_qnn(soc), &op, &c);
            ms += c.alone_ps / 1e9;
        }
    }
    return ms;
}

static void
test_graph_prepare(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const char *root = g_getenv("HS_SOURCE_ROOT");
    g_autofree char *dir = g_build_filename(root ? root : HS_SOURCE_ROOT, "models", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(MdlSpec) spec = mdl_spec_load("llama-3-8b", dir, &error);
    g_assert_no_error(error);
    double a = prepare_ms(soc, spec, 135), b = prepare_ms(soc, spec, 1000);
    g_assert_cmpfloat(fabs(a / 408.4 - 1), <, 0.15);
    g_assert_cmpfloat(fabs(b / 2050 - 1), <, 0.15);
}

/* HeteroLLM §3.1, §4.2: the conventional hand-off costs the ~400 us copy
 * and more; the fast one a few us. */
static void
test_sync_costs(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    double drv = sim_time_to_us(hw_sync_cost_ps(soc, HW_SYNC_DRIVER, 0, TRUE));
    double fast = sim_time_to_us(hw_sync_cost_ps(soc, HW_SYNC_FAST, 0, TRUE));
    g_assert_cmpfloat(drv, >=, 400);
    g_assert_cmpfloat(drv, <=, 600);
    g_assert_cmpfloat(fast, >=, 1);
    g_assert_cmpfloat(fast, <=, 10);
    /* the one rule for the hand-off back to a drained GPU queue: the
     * sync plus its restart (50-100 us, HeteroLLM §3.1) */
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    double restart = sim_time_to_us(hw_dev_restart_ps(gpu, ppl_qnn(soc)));
    g_assert_cmpfloat(restart, >=, 50);
    g_assert_cmpfloat(restart, <=, 100);
    g_assert_cmpfloat(sim_time_to_us(hw_sync_handoff_ps(soc, ppl_qnn(soc), HW_SYNC_DRIVER,
                                                        gpu->index, 0)), ==, drv + restart);
    g_assert_cmpfloat(sim_time_to_us(hw_sync_handoff_ps(soc, ppl_qnn(soc), HW_SYNC_FAST,
                                                        gpu->index, 0)), ==, fast);
}

/* "Linear performance": GPU FLOPS grow ~linearly with tokens while
 * memory-bound, then plateau near the achieved rate (~1 TFLOPS). */
static void
test_gpu_linear(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    double tf[12];
    int i = 0;
    for (uint64_t s = 1; s <= 2048; s *= 2, i++) {
        HwOp op = matmul(s, 4096, 4096, HW_DTYPE_FP16, HW_DTYPE_INT4);
        HwCost c;
        hw_dev_estimate(gpu, ppl_qnn(soc), &op, &c);
        tf[i] = (double) op.flops / (double) c.alone_ps;
    }
    g_assert_cmpfloat(tf[1] / tf[0], >, 1.8);       /* 1 -> 2 tokens: ~2x */
    g_assert_cmpfloat(tf[2] / tf[1], >, 1.8);
    g_assert_cmpfloat(fabs(tf[11] - 1.0), <, 0.1);   /* 2048 tokens: plateau */
    g_assert_cmpfloat(fabs(tf[11] / tf[10] - 1), <, 0.05);
}

/* Order sensitivity (HeteroLLM §3.2 measures ~6x) from the mechanism
 * beyond the array (NPU-TTS §3): [K,4096]x[4096,14336] makes the HVX
 * re-lay 128 x 448 stationary tiles into HMX's order, which then sets its
 * time; [14336,4096]x[4096,K] re-lays 128 x K/32 and is set by the DMA of
 * the 14336-row operand.  The ratio at K = 32 follows from the two rates;
 * over NPU-TTS's 9.65-19.04x range of the conventional layout's cost
 * (relayout_gbps 21.8-10.5) it stays within 1.9-4.1x, below HeteroLLM's
 * ~6x (README, "How accurate is it?"), and it falls towards 1 at large K,
 * where both orders need several passes. */
static double
npu_order_ratio(const HwDev *npu, const HwStack *st, uint64_t k, HwCost *cb, HwCost *cg)
{
    HwOp bad = matmul(k, 4096, 14336, HW_DTYPE_FP16, HW_DTYPE_FP16);
    HwOp good = matmul(14336, 4096, k, HW_DTYPE_FP16, HW_DTYPE_FP16);
    hw_dev_estimate(npu, st, &bad, cb);
    hw_dev_estimate(npu, st, &good, cg);
    return (double) cb->alone_ps / (double) cg->alone_ps;
}

static void
test_npu_order(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    HwNpu *n = (HwNpu *) npu;
    const HwStack *st = ppl_qnn(soc);
    HwCost cb, cg;
    double r32 = npu_order_ratio(npu, st, 32, &cb, &cg);
    /* the wrong order: 57344 FP16 tiles of 2 KiB through the HVX */
    g_assert_cmpuint(cb.weight_loads, ==, 128 * 448);
    double relayout_ps = 128.0 * 448 * 2048 * 1000 / n->relayout_gbps;
    g_assert_cmpfloat(fabs((double) cb.compute_ps - relayout_ps), <, 1e-6 * relayout_ps);
    /* the right order: 4 tiles per array, the DMA of the weight sets it */
    g_assert_cmpuint(cg.weight_loads, ==, 128);
    double dma_ps = (double) cg.dram_bytes * 1000 / n->dma_gbps;
    g_assert_cmpfloat(fabs((double) cg.compute_ps - dma_ps), <, 1e-6 * dma_ps);
    g_assert_cmpfloat(r32, >=, 2.5);
    g_assert_cmpfloat(r32, <=, 3.5);
    double last = npu_order_ratio(npu, st, 2048, &cb, &cg);
    g_assert_cmpfloat(last, <, r32 / 2);

    /* NPU-TTS's range: the slower the re-layout, the larger the ratio */
    const double saved = n->relayout_gbps;
    n->relayout_gbps = 21.8;
    double lo = npu_order_ratio(npu, st, 32, &cb, &cg);
    n->relayout_gbps = 10.5;
    double hi = npu_order_ratio(npu, st, 32, &cb, &cg);
    n->relayout_gbps = saved;
    g_assert_cmpfloat(lo, >=, 1.9);
    g_assert_cmpfloat(lo, <, r32);
    g_assert_cmpfloat(r32, <, hi);
    g_assert_cmpfloat(hi, <=, 4.1);
}

typedef struct Order {
    char seen[8];
    int n;
} Order;

typedef struct Tag {
    Order *o;
    char c;
} Tag;

static void
started(void *opaque)
{
    Tag *t = opaque;
    t->o->seen[t->o->n++] = t->c;
}

static void
ignore(void *opaque)
{
}

typedef struct Ends {
    SimKernel *k;
    SimTime start_ps[2], end_ps[2];
} Ends;

static Ends *ends_of;

static void
mark_start(void *opaque)
{
    int i = GPOINTER_TO_INT(opaque);
    ends_of->start_ps[i] = sim_kernel_now(ends_of->k);
}

static void
mark_end(void *opaque)
{
    int i = GPOINTER_TO_INT(opaque);
    ends_of->end_ps[i] = sim_kernel_now(ends_of->k);
}

/* GPU queue priorities (Transformer-Lite, HeteroLLM §5.5): when the GPU
 * frees up, a normal-priority frame overtakes queued low-priority LLM
 * kernels; at equal priority the queue stays in order.  (Here without
 * preemption: see gpu-preemption.) */
static void
test_gpu_priority(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    g_autoptr(SimKernel) k = sim_kernel_new();
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    ((HwGpu *) gpu)->preempt_us = 0;        /* a GPU that does not preempt */
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, ppl_qnn(soc), k);
    Order o = { { 0 }, 0 };
    Tag tags[4] = { { &o, 'A' }, { &o, 'B' }, { &o, 'C' }, { &o, 'F' } };
    HwOp kern = { .kind = HW_OP_ELEMWISE, .flops = 1000000000 };     /* ~1 ms */
    HwOp frame = { .kind = HW_OP_RENDER, .busy_ps = 8000000000 };    /* 8 ms */
    for (int i = 0; i < 3; i++) {
        HwSubmit s = { .dev = gpu->index, .op = kern, .priority = HW_PRIO_LOW,
                       .presubmitted = i > 0, .on_start = started, .on_done = ignore,
                       .opaque = &tags[i] };
        g_assert_true(hw_runtime_submit(rt, &s, NULL));
    }
    HwSubmit f = { .dev = gpu->index, .op = frame, .priority = HW_PRIO_NORMAL, .foreign = TRUE,
                   .on_start = started, .on_done = ignore, .opaque = &tags[3] };
    g_assert_true(hw_runtime_submit(rt, &f, NULL));
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert_cmpstr(o.seen, ==, "AFBC");
    /* a frame is GPU work only */
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    f.dev = npu->index;
    g_autoptr(GError) error = NULL;
    g_assert_false(hw_runtime_submit(rt, &f, &error));
    g_assert_cmpstr(error->message, ==, "npu: cannot run a render frame (GPU only)");
}

/* With preemption (sd8gen3: preempt_us), a frame arriving in the middle of
 * a low-priority kernel starts after one context save, and the kernel
 * finishes the work it had left after the frame and a restore: its end
 * moves by exactly frame + save + restore, and its start (when its values
 * were computed) does not move. */
static void
test_gpu_preemption(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, ppl_qnn(soc), k);
    const HwGpu *gpu = (const HwGpu *) hw_soc_find_kind(soc, HW_KIND_GPU);
    g_assert_cmpuint(hw_dev_preempt_ps(&gpu->parent), >, 0);
    Ends e = { k, { 0 }, { 0 } };
    ends_of = &e;
    /* a compute-bound LLM kernel of 10 ms, no DRAM traffic */
    HwOp kern = { .kind = HW_OP_ELEMWISE, .flops = 10000000000 };
    HwSubmit s = { .dev = gpu->parent.index, .op = kern, .priority = HW_PRIO_LOW,
                   .on_start = mark_start, .on_done = mark_end, .opaque = GINT_TO_POINTER(0) };
    g_assert_true(hw_runtime_submit(rt, &s, NULL));
    sim_kernel_run_until(k, sim_time_from_us(3000));
    g_assert_cmpuint(e.start_ps[0], >, 0);
    g_assert_cmpuint(e.end_ps[0], ==, 0);
    SimTime alone_end = e.start_ps[0] + sim_time_from_us(10000);
    HwSubmit f = { .dev = gpu->parent.index, .priority = HW_PRIO_NORMAL, .foreign = TRUE,
                   .on_start = mark_start, .on_done = mark_end, .opaque = GINT_TO_POINTER(1) };
    f.op = (HwOp) { .kind = HW_OP_RENDER, .busy_ps = sim_time_from_us(8000) };
    SimTime t_frame = sim_kernel_now(k);
    g_assert_true(hw_runtime_submit(rt, &f, NULL));
    sim_kernel_run_until(k, SIM_TIME_MAX);
    SimTime save = hw_dev_preempt_ps(&gpu->parent);
    SimTime launch = sim_time_from_us(ppl_qnn(soc)->gpu.launch_busy_us);
    g_assert_cmpuint(e.start_ps[1], ==, t_frame + launch + save);
    g_assert_cmpuint(e.end_ps[1], ==, e.start_ps[1] + sim_time_from_us(8000));
    g_assert_cmpuint(e.end_ps[0], ==, alone_end + (e.end_ps[1] - t_frame) + save);
    g_assert_cmpuint(hw_runtime_busy_ps(rt, gpu->parent.index), ==,
                     sim_time_from_us(10000 + 8000));
}

/* Same phone, other kernels: one SoC, two stacks.  Transformer-Lite's
 * matmuls plateau at 1.6 TFLOPS where PPL's reach 1.0 (HeteroLLM §1, Transformer-Lite §3.2), its
 * GEMVs draw ~56 GB/s where PPL's draw 43.3 (HeteroLLM §5.3 against Transformer-Lite §4's kernel times); every shipped
 * stack loads; a bad key is one line naming the file and JSON path. */
static void
test_stacks(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    g_autoptr(GError) error = NULL;
    const HwStack *tl = hw_soc_stack(soc, "transformer-lite", &error);
    g_assert_no_error(error);
    HwOp big = matmul(2048, 4096, 4096, HW_DTYPE_FP16, HW_DTYPE_INT4);
    HwOp gemv = matmul(1, 4096, 11008, HW_DTYPE_FP16, HW_DTYPE_INT4);
    HwCost a, b;
    hw_dev_estimate(gpu, ppl_qnn(soc), &big, &a);
    hw_dev_estimate(gpu, tl, &big, &b);
    g_assert_cmpfloat(fabs((double) big.flops / (double) a.compute_ps - 1.0), <, 0.01);
    g_assert_cmpfloat(fabs((double) big.flops / (double) b.compute_ps - 1.6), <, 0.01);
    hw_dev_estimate(gpu, ppl_qnn(soc), &gemv, &a);
    hw_dev_estimate(gpu, tl, &gemv, &b);
    g_assert_cmpfloat(fabs((double) a.dram_bytes / (double) (a.alone_ps - a.overhead_ps) * 1000 -
                           43.3), <, 0.5);
    g_assert_cmpfloat(fabs((double) b.dram_bytes / (double) (b.alone_ps - b.overhead_ps) * 1000 -
                           56.0), <, 0.5);
    /* mllm-NPU's QNN optimises a graph for a time that grows with its
     * weights (§2.2: Gemma-2B 0.36 + 11.54 s); HeteroLLM's does not */
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    const HwStack *mllm = hw_soc_stack(soc, "mllm", &error);
    g_assert_no_error(error);
    HwOp prep = { .kind = HW_OP_PREPARE, .m = 512, .flops = 2 * 512 * 1982000000ull };
    hw_dev_estimate(npu, mllm, &prep, &a);
    g_assert_cmpfloat(fabs(a.alone_ps / 1e9 - (360 + 11540)), <, 5);
    prep.flops *= 2;
    hw_dev_estimate(npu, mllm, &prep, &b);
    g_assert_cmpfloat(fabs((b.alone_ps - a.alone_ps) / 1e9 - 11540), <, 5);
    hw_dev_estimate(npu, ppl_qnn(soc), &prep, &b);
    g_assert_cmpfloat(fabs(b.alone_ps / 1e9 - 4 * 38.05), <, 1e-3);

    static const char *const names[] = { "heterollm", "llama-cpp", "mllm", "transformer-lite",
                                         "npu-tts" };
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        const HwStack *st = hw_soc_stack(soc, names[i], &error);
        g_assert_no_error(error);
        g_assert_cmpstr(st->name, ==, names[i]);
    }
    g_assert_null(hw_soc_stack(soc, "ppl", &error));
    g_assert_true(g_str_has_prefix(error->message, "unknown stack \"ppl\" (known: heterollm, "));
    g_clear_error(&error);
    g_autoptr(cJSON) bad = cJSON_Parse("{\"name\": \"x\", \"cpu\": {\"simd_efficiency\": 1, "
                                       "\"submit_us\": 5}, \"gpu\": {\"matmul_efficiency\": 2, "
                                       "\"launch_busy_us\": 1, \"launch_idle_us\": 1}, "
                                       "\"npu\": {}}");
    g_assert_null(hw_stack_from_json(bad, "x.json", &error));
    g_assert_cmpstr(error->message, ==,
                    "x.json: $.gpu.matmul_efficiency: expected a number in [0.001, 1] (got 2)");
}

/* A CPU stack's float kernels (attention, norms, element-wise) run at its
 * float_efficiency, its matmuls at simd_efficiency; float_efficiency 0
 * (or absent) is simd_efficiency for both. */
static void
test_cpu_float_efficiency(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    g_autoptr(GError) error = NULL;
    g_autoptr(cJSON) j = cJSON_Parse("{\"name\": \"x\", \"cpu\": {\"simd_efficiency\": 0.5, "
                                     "\"float_efficiency\": 0.25, \"submit_us\": 5}, "
                                     "\"gpu\": {\"matmul_efficiency\": 0.5, "
                                     "\"launch_busy_us\": 1, \"launch_idle_us\": 1}, "
                                     "\"npu\": {\"launch_us\": 1, \"graphs_per_model\": 1, "
                                     "\"prepare_base_ms\": 0, \"prepare_ms_per_mib\": 0}}");
    g_autoptr(HwStack) split = hw_stack_from_json(j, "x.json", &error);
    g_assert_no_error(error);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "cpu"), "float_efficiency");
    g_autoptr(HwStack) one = hw_stack_from_json(j, "x.json", &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(one->cpu.float_efficiency, ==, 0);

    const HwDev *cpu = hw_soc_find_kind(soc, HW_KIND_CPU);
    HwOp att = { .kind = HW_OP_ATTENTION, .m = 256, .k = 128, .n = 512,
                 .compute = HW_DTYPE_FP16, .flops = 1000000000ull };
    HwOp norm = { .kind = HW_OP_ELEMWISE, .m = 256, .n = 4096, .compute = HW_DTYPE_FP16,
                  .flops = 5000000ull };
    HwOp mm = matmul(256, 4096, 4096, HW_DTYPE_FP16, HW_DTYPE_INT4);
    const HwOp *ops[] = { &att, &norm, &mm };
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
        HwCost a, b;
        hw_dev_estimate(cpu, split, ops[i], &a);
        hw_dev_estimate(cpu, one, ops[i], &b);
        double r = (double) a.compute_ps / (double) b.compute_ps;
        g_assert_cmpfloat(fabs(r - (ops[i]->kind == HW_OP_MATMUL ? 1.0 : 2.0)), <, 1e-6);
    }
    g_assert_cmpfloat(hw_stack_cpu_efficiency(one, &att), ==, 0.5);
    g_assert_cmpfloat(hw_stack_cpu_efficiency(split, &att), ==, 0.25);
    g_assert_cmpfloat(hw_stack_cpu_efficiency(split, &mm), ==, 0.5);
}

/* mllm's stack: per-group (Q8_0) matmuls emulated group by group cost a
 * fixed ratio to W8A8 whatever the shape, inside mllm-NPU §2.3's
 * 8.1-10.7x; its CPU attention runs in FP32 over every score. */
static void
test_mllm_stack(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    g_autoptr(GError) error = NULL;
    const HwStack *mllm = hw_soc_stack(soc, "mllm", &error);
    g_assert_no_error(error);
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    /* W . X^T at 512 tokens: Qwen1.5-1.8B FFN-up, Gemma-2B FFN-up,
     * Llama-2-7B FFN-down */
    static const uint64_t shapes[][2] = { { 5504, 2048 }, { 16384, 2048 }, { 4096, 11008 } };
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
        HwOp w8 = matmul(shapes[i][0], shapes[i][1], 512, HW_DTYPE_INT8, HW_DTYPE_INT8);
        w8.compute = HW_DTYPE_INT8;
        w8.wfmt = HW_WFMT_W8A8;
        HwOp q8 = matmul(shapes[i][0], shapes[i][1], 512, HW_DTYPE_INT8, HW_DTYPE_FP16);
        q8.wfmt = HW_WFMT_Q8_0;
        HwCost a, b;
        hw_dev_estimate(npu, mllm, &w8, &a);
        hw_dev_estimate(npu, mllm, &q8, &b);
        double r = (double) b.compute_ps / (double) a.compute_ps;
        lo = MIN(lo, r);
        hi = MAX(hi, r);
        /* HeteroLLM's stack has no emulation: the group format costs
         * only its dequantisation beside the array */
        hw_dev_estimate(npu, ppl_qnn(soc), &q8, &b);
        hw_dev_estimate(npu, ppl_qnn(soc), &w8, &a);
        g_assert_cmpfloat((double) b.compute_ps / (double) a.compute_ps, <, 4);
    }
    g_assert_cmpfloat(lo, >=, 8.1);
    g_assert_cmpfloat(hi, <=, 10.7);
    g_assert_cmpfloat(hi / lo, <, 1.1);

    /* mllm-NPU §2.2: INT8 matmuls run 4.5-5.8x faster on the NPU than on
     * the CPU, more so for larger ones (the stack's cpu.simd_efficiency is
     * derived from it): Qwen1.5-1.8B's O / QKV projection at 32 and 256
     * tokens and its FFN-up at 256 and 1024, each processor in its own
     * orientation (the NPU's W . X^T, the CPU's X . W), in order of size */
    const HwDev *cpu8 = hw_soc_find_kind(soc, HW_KIND_CPU);
    static const uint64_t lin[][3] = { { 2048, 2048, 32 }, { 2048, 2048, 256 },
                                       { 5504, 2048, 256 }, { 5504, 2048, 1024 } };
    double last = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(lin); i++) {
        HwOp on_npu = matmul(lin[i][0], lin[i][1], lin[i][2], HW_DTYPE_INT8, HW_DTYPE_INT8);
        HwOp on_cpu = matmul(lin[i][2], lin[i][1], lin[i][0], HW_DTYPE_INT8, HW_DTYPE_INT8);
        on_npu.compute = on_cpu.compute = HW_DTYPE_INT8;
        on_npu.wfmt = on_cpu.wfmt = HW_WFMT_W8A8;
        HwCost cn, cc;
        hw_dev_estimate(npu, mllm, &on_npu, &cn);
        hw_dev_estimate(cpu8, mllm, &on_cpu, &cc);
        double r = (double) cc.alone_ps / (double) cn.alone_ps;
        g_test_message("INT8 [%" G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT "] x %" G_GUINT64_FORMAT
                       " tokens: CPU / NPU time %.2f", lin[i][0], lin[i][1], lin[i][2], r);
        g_assert_cmpfloat(r, >=, 4.5);
        g_assert_cmpfloat(r, <=, 5.8);
        g_assert_cmpfloat(r, >, last);
        last = r;
    }

    /* a 256-query chunk over 512 keys: m x n scores either way (both
     * mask the future in the softmax), in FP16 for MNN's stack and in
     * FP32 for mllm's, each at its stack's SIMD share */
    const HwDev *cpu = hw_soc_find_kind(soc, HW_KIND_CPU);
    const HwStack *mnn = hw_soc_stack(soc, "mnn-cpu", &error);
    g_assert_no_error(error);
    HwOp att = { .kind = HW_OP_ATTENTION, .m = 256, .k = 128, .n = 512,
                 .compute = HW_DTYPE_FP16, .flops = 1000000000ull };
    HwCost c1, c2;
    hw_dev_estimate(cpu, mnn, &att, &c1);
    hw_dev_estimate(cpu, mllm, &att, &c2);
    const double share = hw_stack_cpu_efficiency(mnn, &att) /
                         hw_stack_cpu_efficiency(mllm, &att);
    g_assert_cmpfloat(fabs((double) c2.compute_ps / (double) c1.compute_ps - 2.0 * share), <,
                      1e-3);
    /* llama.cpp scores a prompt 512 queries at a time (n_ubatch), each
     * block against the keys cached to its end: 1024 queries over 1024
     * keys are 512 x 512 + 512 x 1024 scores, 0.75 of mllm's one block,
     * whose chunks are the policy's (a 256-query chunk is one block
     * either way) */
    const HwStack *ggml = hw_soc_stack(soc, "llama-cpp", &error);
    g_assert_no_error(error);
    HwCost c3;
    hw_dev_estimate(cpu, ggml, &att, &c3);
    g_assert_cmpuint(c3.compute_ps, ==, c2.compute_ps);
    HwOp whole = att;
    whole.m = 1024;
    whole.n = 1024;
    hw_dev_estimate(cpu, ggml, &whole, &c1);
    hw_dev_estimate(cpu, mllm, &whole, &c2);
    g_assert_cmpfloat(fabs((double) c1.compute_ps / (double) c2.compute_ps - 0.75), <, 1e-3);

    /* mllm's shadow linear scans its elements on one core: the op's
     * serial elements add elements x cycles / clock to its time, the
     * same whatever the cores' SIMD width; llama.cpp's stack has no such
     * loop (0 cycles) */
    HwOp scan = { .kind = HW_OP_MATMUL, .m = 256, .k = 11, .n = 2048,
                  .compute = HW_DTYPE_FP16, .wfmt = HW_WFMT_FP16, .flops = 2 * 256 * 11 * 2048 };
    HwCost s0, s1;
    hw_dev_estimate(cpu, mllm, &scan, &s0);
    scan.serial_elems = 256 * (5504 + 2048);
    hw_dev_estimate(cpu, mllm, &scan, &s1);
    double cycles = mllm->cpu.serial_cycles_per_elem, mhz = ((const HwCpu *) cpu)->freq_mhz;
    g_assert_cmpfloat(cycles, >, 0);
    g_assert_cmpfloat(fabs((double) (s1.compute_ps - s0.compute_ps) -
                           (double) scan.serial_elems * cycles / (mhz * 1e-6)), <, 2);
    /* its copies come first, on the same thread (CPULinearINT8Shadow::
     * execute copies, then loops): alone, the op takes the copies plus
     * the scan, not the longer of the two */
    HwOp copying = scan;
    copying.read_bytes = copying.write_bytes = 10u << 20;
    HwCost s2;
    hw_dev_estimate(cpu, mllm, &copying, &s2);
    double copy_ps = 2.0 * (10u << 20) * 1000.0 / hw_dev_dram_cap_gbps(cpu, mllm);
    g_assert_cmpfloat(fabs((double) (s2.alone_ps - s1.alone_ps) - copy_ps), <, 2);
    g_assert_cmpuint(s2.alone_ps, >, s1.alone_ps);
    HwOp plain = scan;
    plain.serial_elems = 0;
    hw_dev_estimate(cpu, ggml, &scan, &s1);
    hw_dev_estimate(cpu, ggml, &plain, &s0);
    g_assert_cmpuint(s1.compute_ps, ==, s0.compute_ps);

    /* and the runtime's cost memo tells the two apart: the same op
     * without, then with its scan, one after the other on the cores */
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, mllm, k);
    uint64_t elems[] = { 0, 256 * (5504 + 2048) }, took[2];
    for (int i = 0; i < 2; i++) {
        Count c = { 1 };
        SimTime t0 = sim_kernel_now(k);
        scan.serial_elems = elems[i];
        HwSubmit s = { .dev = cpu->index, .op = scan, .on_done = done, .opaque = &c };
        g_assert_true(hw_runtime_submit(rt, &s, NULL));
        sim_kernel_run_until(k, SIM_TIME_MAX);
        g_assert_cmpuint(c.left, ==, 0);
        took[i] = sim_kernel_now(k) - t0;
    }
    g_assert_cmpfloat((double) (took[1] - took[0]), >=,
                      0.99 * (double) elems[1] * cycles / (mhz * 1e-6));
}

/* The array's own cycle count against SCALE-Sim v2's weight-stationary
 * model of the same 32x32 array: cycles = folds x (M + 2R + C - 2) - 1,
 * where a fold shifts one R x C weight tile in (R cycles), streams the M
 * rows and fills/drains (R + C - 2).  hw/npu.c counts the folds of each
 * array (arrays work side by side) and prices the HVX's re-layout of the
 * tiles beyond the array separately; the array's own count must agree
 * with SCALE-Sim's to the cycle (its - 1). */
static void
test_npu_scalesim(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    const HwNpu *n = (const HwNpu *) npu;
    const uint64_t R = n->tile_rows, C = n->tile_cols;
    static const uint64_t shapes[][3] = {
        { 256, 4096, 14336 }, { 14336, 4096, 256 }, { 32, 4096, 4096 }, { 1000, 33, 65 },
        { 1, 32, 32 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
        const uint64_t M = shapes[i][0], K = shapes[i][1], N = shapes[i][2];
        HwOp op = matmul(M, K, N, HW_DTYPE_FP16, HW_DTYPE_FP16);
        HwCost c;
        hw_dev_estimate(npu, ppl_qnn(soc), &op, &c);
        const uint64_t folds = ((K + R - 1) / R) * ((N + C - 1) / C);
        g_assert_cmpuint(c.weight_loads, ==, folds);
        /* per array: each runs its share of the folds one after another */
        const uint64_t per_array = (folds + n->arrays - 1) / n->arrays;
        const int64_t scalesim = (int64_t) (per_array * (M + 2 * R + C - 2)) - 1;
        g_assert_cmpint(llabs((int64_t) c.compute_cycles - scalesim), <=, 1);
    }
}

/* Shape sensitivity (HeteroLLM §3.2): after the transposition W . X^T,
 * FFN-down (reduction depth 14336) gets only 0.5-1.5x of the GPU's speed on
 * the NPU, while QKV (depth 4096) is several times faster; Llama-3-8B
 * shapes, W4A16, sequence 256 and 1024. */
static void
test_npu_shape(void)
{
    g_autoptr(HwSoc) soc = sd8gen3();
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    struct { uint64_t out, in; } qkv = { 6144, 4096 }, down = { 4096, 14336 };
    for (uint64_t seq = 256; seq <= 1024; seq *= 4) {
        double speed[2];
        uint64_t passes[2];
        for (int i = 0; i < 2; i++) {
            uint64_t out = i ? down.out : qkv.out, in = i ? down.in : qkv.in;
            HwOp on_npu = matmul(out, in, seq, HW_DTYPE_INT4, HW_DTYPE_FP16);
            HwOp on_gpu = matmul(seq, in, out, HW_DTYPE_FP16, HW_DTYPE_INT4);
            HwCost cn, cg;
            hw_dev_estimate(npu, ppl_qnn(soc), &on_npu, &cn);
            hw_dev_estimate(gpu, ppl_qnn(soc), &on_gpu, &cg);
            speed[i] = (double) cg.alone_ps / (double) cn.alone_ps;
            passes[i] = cn.passes;
        }
        g_assert_cmpfloat(speed[1], >=, 0.5);             /* down */
        g_assert_cmpfloat(speed[1], <=, 1.5);
        g_assert_cmpfloat(speed[0], >=, 2.5);             /* QKV: several times */
        g_assert_cmpuint(passes[1], >, passes[0]);        /* the mechanism */
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hw/models/membw", test_membw);
    g_test_add_func("/hw/models/npu-stage", test_npu_stage);
    g_test_add_func("/hw/models/npu-order", test_npu_order);
    g_test_add_func("/hw/models/npu-scalesim", test_npu_scalesim);
    g_test_add_func("/hw/models/stacks", test_stacks);
    g_test_add_func("/hw/models/mllm-stack", test_mllm_stack);
    g_test_add_func("/hw/models/cpu-float-efficiency", test_cpu_float_efficiency);
    g_test_add_func("/hw/models/npu-shape", test_npu_shape);
    g_test_add_func("/hw/models/gpu-priority", test_gpu_priority);
    g_test_add_func("/hw/models/gpu-preemption", test_gpu_preemption);
    g_test_add_func("/hw/models/graph-prepare", test_graph_prepare);
    g_test_add_func("/hw/models/sync-costs", test_sync_costs);
    g_test_add_func("/hw/models/gpu-linear", test_gpu_linear);
    return g_test_run();
}
