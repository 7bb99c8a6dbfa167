/*
 * test-hw-bounds.c - every numeric config key at the ends of its range.
 *
 * Simulated time is uint64_t ps below a horizon (clock.h); the device
 * models compute durations in doubles.  A value inside a key's documented
 * range — a MAC rate of 1e-300, a dequantisation rate of 1e-12 GB/s, a
 * CPU at 1 MHz — may make a time that no SimTime holds.  The property:
 * whatever value a key takes inside its range, a request either runs with
 * finite, positive times or is refused with a one-line GError; never an
 * assertion abort, never undefined behaviour (this test also runs under
 * ASan/UBSan).  Values just outside the range are refused when loaded.
 *
 * The keys are not listed here: the SoC's sections (hw_soc_sections),
 * every processor class's table and the stack profile's sections
 * (hw_stack_sections) are walked as data, so a key added to any table is
 * covered.  Each key is set through the path --set takes (HsOverrides, the
 * loaders' edit hooks) to min, its inner neighbour, max's inner neighbour
 * and max (an open min: its first number above), and to the numbers just
 * outside; each inside value then runs the tiny model (prompt 40, decode
 * 2, timing only) on the tiny SoC under every built-in policy, and asks
 * the cost models what the probes ask (matmuls of every precision,
 * attention, element-wise ops, graph preparation, the sync hand-offs, one
 * DRAM stream per processor at once).
 */
#include "hw/runtime.h"
#include "hw/soc.h"
#include "hw/stack.h"
#include "hw/sync.h"
#include "sim/run.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/override.h"
#include "sim/util/param.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

static char *
data_dir(const char *sub)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, sub, NULL);
}

static MdlSpec *tiny_model;

/* ---- the checked conversion and the kernel's horizon ------------------- */

static void
test_conversion(void)
{
    SimTime t;
    g_assert_true(sim_time_from_ps_checked(0.4, &t));
    g_assert_cmpuint(t, ==, 0);
    g_assert_true(sim_time_from_ps_checked(2.5, &t));
    g_assert_cmpuint(t, ==, 3);
    g_assert_true(sim_time_from_ps_checked(1e15, &t));
    g_assert_cmpuint(t, ==, 1000000000000000ull);
    /* the horizon itself is out: it is what a longer time saturates to */
    g_assert_false(sim_time_from_ps_checked((double) SIM_TIME_HORIZON_PS, &t));
    g_assert_cmpuint(t, ==, SIM_TIME_HORIZON_PS);
    g_assert_false(sim_time_from_ps_checked(3e33, &t));
    g_assert_cmpuint(t, ==, SIM_TIME_HORIZON_PS);
    g_assert_false(sim_time_from_ps_checked(INFINITY, &t));
    g_assert_cmpuint(t, ==, SIM_TIME_HORIZON_PS);
    g_assert_false(sim_time_from_ps_checked(NAN, &t));
    g_assert_cmpuint(t, ==, SIM_TIME_HORIZON_PS);
    g_assert_false(sim_time_from_ps_checked(-1, &t));
    g_assert_cmpuint(t, ==, 0);
    /* the saturating forms never wrap */
    g_assert_cmpuint(sim_time_from_us(1e300), ==, SIM_TIME_HORIZON_PS);
    g_assert_cmpuint(sim_time_from_s(-3), ==, 0);
    g_assert_cmpuint(sim_time_from_us(25), ==, 25000000);
    SimClock c;
    sim_clock_init(&c, 1000);
    g_assert_cmpuint(sim_clock_cycles_to_ps(&c, 3), ==, 3000);
    g_assert_cmpuint(sim_clock_cycles_to_ps(&c, UINT64_MAX / 10), ==, SIM_TIME_HORIZON_PS);
}

static void
count_event(SimKernel *k, void *opaque)
{
    (*(int *) opaque)++;
}

static void
test_kernel_horizon(void)
{
    /* just below the horizon runs */
    {
        g_autoptr(SimKernel) k = sim_kernel_new();
        int ran = 0;
        sim_kernel_schedule(k, SIM_TIME_HORIZON_PS - 1, SIM_PRIO_NORMAL, count_event, &ran);
        g_autoptr(GError) error = NULL;
        g_assert_true(sim_kernel_run_all(k, &error));
        g_assert_no_error(error);
        g_assert_cmpint(ran, ==, 1);
        g_assert_cmpuint(sim_kernel_now(k), ==, SIM_TIME_HORIZON_PS - 1);
    }
    /* now + delay past the horizon (or past UINT64_MAX) fails the run */
    static const SimTime delays[] = { SIM_TIME_HORIZON_PS, SIM_TIME_MAX, SIM_TIME_MAX - 5 };
    for (guint i = 0; i < G_N_ELEMENTS(delays); i++) {
        g_autoptr(SimKernel) k = sim_kernel_new();
        int ran = 0;
        sim_kernel_schedule(k, 1000000, SIM_PRIO_NORMAL, count_event, &ran);
        sim_kernel_run_until(k, 500000);
        SimEventId id = sim_kernel_schedule(k, delays[i], SIM_PRIO_NORMAL, count_event, &ran);
        g_assert_nonnull(sim_kernel_error(k));
        /* the id stays valid for its owner */
        g_assert_true(sim_kernel_is_pending(k, id));
        g_autoptr(GError) error = NULL;
        g_assert_false(sim_kernel_run_all(k, &error));
        g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON);
        g_assert_cmpint(ran, ==, 0);
        if (i == 0) {
            g_assert_cmpstr(error->message, ==,
                            "at t=5e-07 s an event was scheduled 1e+06 s later, beyond the "
                            "1e+06 s horizon of simulated time");
        }
        /* a failed run stays stopped */
        g_assert_cmpuint(sim_kernel_run_until(k, SIM_TIME_MAX), ==, 0);
        g_assert_true(sim_kernel_move(k, id, SIM_TIME_HORIZON_PS + 7));
        g_assert_true(sim_kernel_cancel(k, id));
    }
    /* moving an event past the horizon, too; the first error wins */
    {
        g_autoptr(SimKernel) k = sim_kernel_new();
        int ran = 0;
        SimEventId id = sim_kernel_schedule(k, 10, SIM_PRIO_NORMAL, count_event, &ran);
        g_assert_true(sim_kernel_move(k, id, SIM_TIME_MAX));
        sim_kernel_fail(k, g_error_new(HS_SIM_ERROR, HS_SIM_ERROR_UNSUPPORTED, "later"));
        g_autoptr(GError) error = NULL;
        g_assert_false(sim_kernel_run_all(k, &error));
        g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON);
        g_assert_cmpint(ran, ==, 0);
    }
}

/* ---- loading with --set ---------------------------------------------------- */

/* --set stack.KEY=VALUE on every stack the run loads, as the CLI does
 * (sim/cli/config.c): applied, checked, and an error names the option */
static gboolean
stack_edit(cJSON *root, void *ovr, GError **error)
{
    if (!hs_overrides_apply(ovr, "stack", root, error)) {
        return FALSE;
    }
    g_autoptr(HwStack) st = hw_stack_from_json(root, "stack", error);
    if (st == NULL) {
        hs_overrides_explain(ovr, "stack", error);
        return FALSE;
    }
    return TRUE;
}

/* @soc_name with "--set" @args (NULL-terminated) applied, or NULL. */
static HwSoc *
load_soc_set(const char *soc_name, const char *const *args, HsOverrides **ovr_out,
             GError **error)
{
    g_autofree char *configs = data_dir("configs");
    g_autoptr(HsOverrides) ovr = hs_overrides_new(args, error);
    if (ovr == NULL) {
        return NULL;
    }
    HwSoc *soc = hw_soc_load_edit(soc_name, configs,
                                  hs_overrides_count(ovr, "soc") ? hs_overrides_apply_soc : NULL,
                                  ovr, error);
    if (soc == NULL) {
        hs_overrides_explain(ovr, "soc", error);
        return NULL;
    }
    if (hs_overrides_count(ovr, "stack") > 0) {
        soc->stack_edit = stack_edit;
        soc->stack_edit_opaque = ovr;
    }
    *ovr_out = g_steal_pointer(&ovr);      /* lives as long as the SoC uses it */
    return soc;
}

/* A refusal is one line of a known domain. */
static void
assert_refusal(const GError *e, const char *what)
{
    if (e == NULL) {
        g_error("%s: refused without an error", what);
    }
    if (strchr(e->message, '\n') != NULL || e->message[0] == '\0') {
        g_error("%s: not a one-line message: \"%s\"", what, e->message);
    }
    if (e->domain != HS_SIM_ERROR && e->domain != HS_CONFIG_ERROR &&
        e->domain != HS_USAGE_ERROR) {
        g_error("%s: unexpected error domain %s: %s", what, g_quark_to_string(e->domain),
                e->message);
    }
}

/* ---- the cost queries the probes make --------------------------------- */

static HwOp
gemm(uint64_t m, uint64_t k, uint64_t n, HwDtype a, HwDtype b, HwDtype compute, HwWfmt w)
{
    double ab = a == HW_DTYPE_FP16 ? 2 : a == HW_DTYPE_INT8 ? 1 : 0.5;
    double bb = b == HW_DTYPE_FP16 ? 2 : b == HW_DTYPE_INT8 ? 1 : 0.5;
    return (HwOp) {
        .kind = HW_OP_MATMUL, .m = m, .k = k, .n = n, .a_dtype = a, .b_dtype = b,
        .compute = compute, .wfmt = w, .flops = 2 * m * k * n,
        .weight_bytes = (uint64_t) (b == HW_DTYPE_FP16 && a != HW_DTYPE_FP16 ? m * k * ab
                                                                             : k * n * bb),
        .read_bytes = (uint64_t) (m * k * ab + k * n * bb), .write_bytes = m * n * 2,
    };
}

/* What probe's curves and a run ask the cost models: the matmuls of each
 * precision in both orders, attention, element-wise ops, a graph
 * preparation. */
static GArray *
probe_ops(void)
{
    GArray *ops = g_array_new(FALSE, FALSE, sizeof(HwOp));
    const HwOp list[] = {
        gemm(256, 4096, 4096, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_WFMT_W4A16),
        gemm(4096, 4096, 256, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_WFMT_W4A16),
        gemm(1024, 1024, 129, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_WFMT_FP16),
        gemm(32, 4096, 14336, HW_DTYPE_INT8, HW_DTYPE_INT8, HW_DTYPE_INT8, HW_WFMT_W8A8),
        gemm(16384, 8192, 32, HW_DTYPE_INT4, HW_DTYPE_INT8, HW_DTYPE_INT8, HW_WFMT_W4A8),
        gemm(4096, 4096, 64, HW_DTYPE_INT8, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_WFMT_Q8_0),
        gemm(4096, 4096, 64, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_WFMT_Q4_0),
        gemm(1, 8192, 16384, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_WFMT_FP4A16),
        gemm(1, 4096, 4096, HW_DTYPE_FP16, HW_DTYPE_INT8, HW_DTYPE_INT8, HW_WFMT_W8A8_SHADOW),
        { .kind = HW_OP_ATTENTION, .m = 256, .k = 128, .n = 512, .flops = 4 * 256 * 128 * 512,
          .read_bytes = 1 << 20, .write_bytes = 1 << 16 },
        { .kind = HW_OP_ELEMWISE, .m = 256, .n = 4096, .flops = 5 * 256 * 4096,
          .read_bytes = 2 * 256 * 4096, .write_bytes = 2 * 256 * 4096 },
        { .kind = HW_OP_PREPARE, .m = 256, .read_bytes = 64u << 20,
          .flops = 2ull * 256 * 1000000000ull },
    };
    g_array_append_vals(ops, list, G_N_ELEMENTS(list));
    return ops;
}

static GArray *the_ops;

/* Every op on every processor with @stack: in range, or refused. */
static void
check_estimates(const HwSoc *soc, const HwStack *stack, const char *what)
{
    for (guint d = 0; d < soc->devs->len; d++) {
        const HwDev *dev = g_ptr_array_index(soc->devs, d);
        for (guint i = 0; i < the_ops->len; i++) {
            const HwOp *op = &g_array_index(the_ops, HwOp, i);
            HwCost c;
            hw_dev_estimate(dev, stack, op, &c);
            g_autoptr(GError) error = NULL;
            if (hw_cost_check(dev, &c, &error)) {
                g_assert_cmpuint(c.alone_ps, >, 0);
                g_assert_cmpuint(c.alone_ps, <, SIM_TIME_HORIZON_PS);
                g_assert_cmpuint(c.compute_ps, <, SIM_TIME_HORIZON_PS);
                g_assert_cmpuint(c.overhead_ps, <, SIM_TIME_HORIZON_PS);
            } else {
                assert_refusal(error, what);
                g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON);
                g_assert_nonnull(strstr(error->message, "$.processors["));
            }
        }
        for (int m = 0; m < 2; m++) {
            SimTime t = hw_sync_handoff_ps(soc, stack, m ? HW_SYNC_FAST : HW_SYNC_DRIVER, d,
                                           0);
            g_assert_cmpuint(t, <, SIM_TIME_HORIZON_PS);
        }
    }
}

typedef struct Stream {
    SimKernel *k;
    SimTime end_ps;
} Stream;

static void
stream_done(void *opaque)
{
    Stream *s = opaque;
    s->end_ps = sim_kernel_now(s->k);
}

/* One memory-bound op on every processor at once through the runtime and
 * the shared DRAM (the membw probe's situation): all end at finite,
 * positive times, or a cost or a transfer beyond the horizon refuses. */
static void
check_streams(const HwSoc *soc, const HwStack *stack, const char *what)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, stack, k);
    hw_runtime_npu_prepared(rt, 32);
    g_autofree Stream *st = g_new0(Stream, soc->devs->len);
    g_autoptr(GError) error = NULL;
    for (guint d = 0; d < soc->devs->len; d++) {
        const HwDev *dev = g_ptr_array_index(soc->devs, d);
        st[d].k = k;
        HwSubmit s = {
            .dev = d, .npu_tokens = 32, .presubmitted = TRUE, .on_done = stream_done,
            .opaque = &st[d],
            .op = dev->cls->kind == HW_KIND_NPU
                  ? gemm(16384, 8192, 32, HW_DTYPE_INT4, HW_DTYPE_INT8, HW_DTYPE_INT8,
                         HW_WFMT_W4A8)
                  : gemm(1, 8192, 16384, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16,
                         HW_WFMT_W4A16),
        };
        if (!hw_runtime_submit(rt, &s, &error)) {
            assert_refusal(error, what);
            g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON);
            return;
        }
    }
    if (!sim_kernel_run_all(k, &error)) {
        assert_refusal(error, what);
        g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON);
        return;
    }
    for (guint d = 0; d < soc->devs->len; d++) {
        g_assert_cmpuint(st[d].end_ps, >, 0);
        g_assert_cmpuint(st[d].end_ps, <, SIM_TIME_HORIZON_PS);
    }
}

/* ---- the property ------------------------------------------------------- */

typedef struct Key {
    char *set;                   /* "npu.fp16_macs_per_pe_cycle" as --set names it */
    const HsParam *p;
    gboolean stack;              /* a stack profile's key */
} Key;

typedef struct Tally {
    uint64_t ran, refused, rejected;
} Tally;

static Tally total;

/* The values to try: inside (4) and just outside (2) the range. */
static void
key_values(const HsParam *p, double in[4], double out[2])
{
    if (p->type == HS_PARAM_T_F64) {
        double lo = p->min_open ? nextafter(p->min, INFINITY) : p->min;
        in[0] = lo;
        in[1] = nextafter(lo, INFINITY);
        in[2] = nextafter(p->max, -INFINITY);
        in[3] = p->max;
        out[0] = nextafter(lo, -INFINITY);        /* min itself when open */
        out[1] = nextafter(p->max, INFINITY);
    } else {
        in[0] = p->min;
        in[1] = p->min + 1;
        in[2] = p->max - 1;
        in[3] = p->max;
        out[0] = p->min - 1;
        out[1] = p->max + 1;
    }
}

/* @key = @v on the tiny SoC: every policy's request and the probes'
 * queries must run within the horizon or be refused in one line. */
static void
try_inside(const Key *key, double v, Tally *t)
{
    g_autofree char *arg = g_strdup_printf("%s=%.17g", key->set, v);
    const char *args[] = { arg, NULL };
    g_autoptr(HsOverrides) ovr = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = load_soc_set("tiny", args, &ovr, &error);
    if (soc == NULL) {
        /* inside its own range, a key can still break a check across
         * keys (ceiling_gbps above peak_gbps): the message names --set */
        assert_refusal(error, arg);
        g_assert_true(g_str_has_prefix(error->message, "with --set ") ||
                      g_str_has_prefix(error->message, "--set "));
        g_assert_nonnull(strstr(error->message, "expected"));
        t->rejected++;
        return;
    }
    gboolean exercised = FALSE;
    for (const SimPolicy *const *pol = sim_policy_list(); *pol; pol++) {
        SimWorkload w;
        sim_workload_init(&w);
        w.prompt = 40;
        w.decode = 2;
        w.check_layers = -1;
        SimRunReport r = { 0 };
        g_autoptr(GError) e = NULL;
        g_autofree char *what = g_strdup_printf("%s, policy %s", arg, (*pol)->name);
        if (sim_run(soc, tiny_model, *pol, &w, NULL, &r, NULL, NULL, &e)) {
            g_assert_no_error(e);
            const double ms[] = { r.prefill.time_ms, r.decode.time_ms, r.ttft_ms };
            for (guint i = 0; i < G_N_ELEMENTS(ms); i++) {
                if (!(isfinite(ms[i]) && ms[i] > 0 && ms[i] < SIM_TIME_HORIZON_S * 1e3)) {
                    g_error("%s: a time of %g ms", what, ms[i]);
                }
            }
            g_assert_true(isfinite(r.prefill.tokens_per_s) && r.prefill.tokens_per_s > 0);
            g_assert_true(isfinite(r.decode.tokens_per_s) && r.decode.tokens_per_s > 0);
            g_assert_true(isfinite(r.prefill.energy_j) && r.prefill.energy_j >= 0);
            g_assert_true(isfinite(r.decode.energy_j) && r.decode.energy_j >= 0);
            t->ran++;
            exercised = TRUE;
        } else {
            /* (a stack key applies to every stack: --set makes a table
             * the stack's file leaves out) */
            assert_refusal(e, what);
            if (!g_error_matches(e, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION)) {
                exercised = TRUE;
            }
            t->refused++;
        }
        sim_run_report_clear(&r);
    }
    if (!key->stack) {
        g_assert_true(exercised);
    }
    /* the probes' queries, on every stack this value applies to */
    g_autofree char *stacks_dir = data_dir("configs/stacks");
    g_autoptr(GError) le = NULL;
    g_auto(GStrv) stacks = hw_stack_list(stacks_dir, &le);
    g_assert_no_error(le);
    for (guint i = 0; stacks[i]; i++) {
        g_autoptr(GError) e = NULL;
        const HwStack *st = hw_soc_stack(soc, stacks[i], &e);
        if (st == NULL) {
            assert_refusal(e, arg);
            continue;
        }
        check_estimates(soc, st, arg);
        check_streams(soc, st, arg);
        exercised = TRUE;
        if (!key->stack) {
            break;                   /* the SoC's keys: one stack is enough */
        }
    }
    g_assert_true(exercised);
}

/* @key = @v just outside its range: refused, naming the option. */
static void
try_outside(const Key *key, double v, Tally *t)
{
    g_autofree char *arg = g_strdup_printf("%s=%.17g", key->set, v);
    const char *args[] = { arg, NULL };
    g_autoptr(HsOverrides) ovr = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = load_soc_set("tiny", args, &ovr, &error);
    if (soc != NULL) {
        g_assert_true(key->stack);
        /* a stack is read when a policy first asks for it */
        const SimPolicy *pol = sim_policy_find("gpu-only");
        SimWorkload w;
        sim_workload_init(&w);
        w.prompt = 40;
        w.decode = 2;
        w.check_layers = -1;
        SimRunReport r = { 0 };
        gboolean ok = FALSE;
        /* every stack, so the one whose section exists says why */
        g_autofree char *stacks_dir = data_dir("configs/stacks");
        g_auto(GStrv) stacks = hw_stack_list(stacks_dir, NULL);
        for (guint i = 0; stacks[i] && !ok; i++) {
            g_clear_error(&error);
            w.stack = stacks[i];
            g_assert_false(sim_run(soc, tiny_model, pol, &w, NULL, &r, NULL, NULL, &error));
            sim_run_report_clear(&r);
            ok = strstr(error->message, "expected") != NULL;
        }
        g_assert_true(ok);
    }
    assert_refusal(error, arg);
    g_assert_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION);
    g_autofree char *prefix = g_strdup_printf("--set %s: ", arg);
    if (!g_str_has_prefix(error->message, prefix) || !strstr(error->message, "expected")) {
        g_error("%s: refused with \"%s\"", arg, error->message);
    }
    t->rejected++;
}

/* A rate (higher is faster): its unit says so. */
static gboolean
is_rate(const char *name)
{
    static const char *const suffixes[] = { "_gbps", "_tflops", "_gflops", "_per_cycle",
                                            "_per_pe_cycle", "freq_mhz", "_efficiency",
                                            "dram_scale" };
    for (guint i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        if (g_str_has_suffix(name, suffixes[i])) {
            return TRUE;
        }
    }
    return FALSE;
}

/* The SoC and a stack with @key = @v, for estimates (NULL if refused). */
static HwSoc *
soc_with(const Key *key, double v, HsOverrides **ovr, const HwStack **stack)
{
    g_autofree char *arg = g_strdup_printf("%s=%.17g", key->set, v);
    const char *args[] = { arg, NULL };
    g_autoptr(HwSoc) soc = load_soc_set("tiny", args, ovr, NULL);
    if (soc == NULL) {
        return NULL;
    }
    g_autofree char *stacks_dir = data_dir("configs/stacks");
    g_auto(GStrv) stacks = hw_stack_list(stacks_dir, NULL);
    for (guint i = 0; stacks[i]; i++) {
        *stack = hw_soc_stack(soc, stacks[i], NULL);
        if (*stack) {
            return g_steal_pointer(&soc);
        }
    }
    return NULL;
}

/* A rate at @slow (below @fast) makes no op faster than at @fast, unless
 * it is refused: what a cast that wrapped a huge time to 0 broke. */
static void
check_rate_direction(const Key *key, double slow, double fast)
{
    g_autoptr(HsOverrides) os = NULL, of = NULL;
    const HwStack *ss = NULL, *sf = NULL;
    g_autoptr(HwSoc) a = soc_with(key, slow, &os, &ss);
    g_autoptr(HwSoc) b = soc_with(key, fast, &of, &sf);
    if (a == NULL || b == NULL) {
        return;                      /* refused: checked by try_inside */
    }
    for (guint d = 0; d < a->devs->len; d++) {
        for (guint i = 0; i < the_ops->len; i++) {
            const HwOp *op = &g_array_index(the_ops, HwOp, i);
            HwCost cs, cf;
            hw_dev_estimate(g_ptr_array_index(a->devs, d), ss, op, &cs);
            hw_dev_estimate(g_ptr_array_index(b->devs, d), sf, op, &cf);
            if (cs.beyond != NULL) {
                continue;
            }
            g_assert_null(cf.beyond);
            if (cs.alone_ps < cf.alone_ps || cs.compute_ps < cf.compute_ps) {
                g_error("%s: op %u on processor %u takes %" G_GUINT64_FORMAT " ps (compute %"
                        G_GUINT64_FORMAT ") at %g, less than %" G_GUINT64_FORMAT " ps (compute %"
                        G_GUINT64_FORMAT ") at %g", key->set, i, d, cs.alone_ps, cs.compute_ps,
                        slow, cf.alone_ps, cf.compute_ps, fast);
            }
        }
    }
}

static void
test_section(gconstpointer data)
{
    const GPtrArray *keys = data;
    Tally t = { 0 };
    for (guint i = 0; i < keys->len; i++) {
        const Key *key = g_ptr_array_index(keys, i);
        double in[4], out[2];
        key_values(key->p, in, out);
        for (int j = 0; j < 4; j++) {
            try_inside(key, in[j], &t);
        }
        for (int j = 0; j < 2; j++) {
            try_outside(key, out[j], &t);
        }
        if (is_rate(key->p->name)) {
            /* from just above min (min may be a sentinel: a dequant rate
             * of 0 is free) to max in geometric steps, so that some give
             * times beyond 2^64 ps that are still finite */
            double lo = log(in[1]), hi = log(in[3]), last = in[3];
            for (int j = 15; j >= 0; j--) {
                double v = j == 0 ? in[1] : exp(lo + (hi - lo) * j / 16.0);
                check_rate_direction(key, v, last);
                last = v;
            }
        }
    }
    g_test_message("%" G_GUINT64_FORMAT " runs, %" G_GUINT64_FORMAT " refused, %"
                   G_GUINT64_FORMAT " values rejected", t.ran, t.refused, t.rejected);
    total.ran += t.ran;
    total.refused += t.refused;
    g_assert_cmpuint(t.ran, >, 0);
}

static void
key_free(gpointer p)
{
    Key *k = p;
    g_free(k->set);
    g_free(k);
}

/* One test per section: its numeric keys. */
static void
add_section(GPtrArray *all, const char *prefix, const HsParam *params, gboolean stack)
{
    GPtrArray *keys = g_ptr_array_new_with_free_func(key_free);
    for (const HsParam *p = params; p->name; p++) {
        if (!hs_param_is_number(p)) {
            continue;
        }
        Key *k = g_new0(Key, 1);
        k->set = g_strdup_printf("%s.%s", prefix, p->name);
        k->p = p;
        k->stack = stack;
        g_ptr_array_add(keys, k);
    }
    if (keys->len == 0) {
        g_ptr_array_unref(keys);
        return;
    }
    g_ptr_array_add(all, keys);
    g_autofree char *path = g_strdup_printf("/hw/bounds/keys/%s", prefix);
    g_test_add_data_func(path, keys, test_section);
}

/* ---- the cases the issue found ------------------------------------------ */

static HwSoc *
load_plain(const char *name)
{
    g_autofree char *configs = data_dir("configs");
    g_autoptr(GError) error = NULL;
    HwSoc *soc = hw_soc_load(name, configs, &error);
    g_assert_no_error(error);
    return soc;
}

/* A slower NPU datapath takes longer, down to the rate where the matmul
 * passes the horizon and is refused (with unchecked casts, a rate of 0
 * ran faster than 1). */
static void
test_npu_rate_monotonic(void)
{
    g_autoptr(HwSoc) soc = load_plain("tiny");
    g_autoptr(GError) error = NULL;
    const HwStack *st = hw_soc_stack(soc, "heterollm", &error);
    g_assert_no_error(error);
    HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    double *macs = NULL;
    for (const HsParam *p = npu->cls->params; p->name; p++) {
        if (strcmp(p->name, "fp16_macs_per_pe_cycle") == 0) {
            macs = (double *) ((char *) npu + p->offset);
        }
    }
    g_assert_nonnull(macs);
    HwOp op = gemm(4096, 4096, 256, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16,
                   HW_WFMT_FP16);
    static const double rates[] = { 64, 1, 0.5, 1e-3, 1e-6, 1e-9, 1e-300, 5e-324 };
    uint64_t last = 0;
    for (guint i = 0; i < G_N_ELEMENTS(rates); i++) {
        *macs = rates[i];
        HwCost c;
        hw_dev_estimate(npu, st, &op, &c);
        g_clear_error(&error);
        if (hw_cost_check(npu, &c, &error)) {
            g_assert_cmpuint(c.compute_ps, >, last);
            last = c.compute_ps;
            g_assert_cmpfloat(rates[i], >=, 1e-6);
        } else {
            g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON);
            g_assert_cmpfloat(rates[i], <=, 1e-9);
            g_assert_cmpuint(c.compute_ps, ==, SIM_TIME_HORIZON_PS);
        }
    }
}

/* The message a user sees, word for word (the file's path aside). */
static void
test_message(void)
{
    const char *args[] = { "npu.fp16_macs_per_pe_cycle=1e-12", NULL };
    g_autoptr(HsOverrides) ovr = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = load_soc_set("tiny", args, &ovr, &error);
    g_assert_no_error(error);
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = 40;
    w.decode = 2;
    w.check_layers = -1;
    SimRunReport r = { 0 };
    g_assert_false(sim_run(soc, tiny_model, sim_policy_find("npu-only"), &w, NULL, &r, NULL,
                           NULL, &error));
    sim_run_report_clear(&r);
    g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON);
    g_autofree char *want = g_strdup_printf(
        "policy npu-only: task 3 (L0.wq[pad 64]): %s: $.processors[2] (npu): its array time "
        "(freq_mhz, fp16_macs_per_pe_cycle, the stack's npu.matmul_efficiency) with "
        "freq_mhz = 500, fp16_macs_per_pe_cycle = 1e-12, comes to 8.19e+06 s, beyond the "
        "1e+06 s horizon of simulated time", soc->path);
    g_assert_cmpstr(error->message, ==, want);
}

/* W4A8 (INT8 activations, INT4 weights) runs at int4_macs_per_pe_cycle;
 * W8A8 at the INT8 rate whatever the INT4 one. */
static void
test_npu_int4_rate(void)
{
    g_autoptr(HwSoc) soc = load_plain("tiny");
    g_autoptr(GError) error = NULL;
    const HwStack *st = hw_soc_stack(soc, "heterollm", &error);
    g_assert_no_error(error);
    HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    double *int4 = NULL;
    for (const HsParam *p = npu->cls->params; p->name; p++) {
        if (strcmp(p->name, "int4_macs_per_pe_cycle") == 0) {
            int4 = (double *) ((char *) npu + p->offset);
        }
    }
    g_assert_nonnull(int4);
    /* weight stationary (right), 4096 tokens streamed: array-bound */
    HwOp w4a8 = gemm(4096, 512, 512, HW_DTYPE_INT8, HW_DTYPE_INT4, HW_DTYPE_INT8, HW_WFMT_W4A8);
    HwOp w8a8 = gemm(4096, 512, 512, HW_DTYPE_INT8, HW_DTYPE_INT8, HW_DTYPE_INT8, HW_WFMT_W8A8);
    HwCost a2, a8, b2, b8;
    *int4 = 2;
    hw_dev_estimate(npu, st, &w4a8, &a2);
    hw_dev_estimate(npu, st, &w8a8, &b2);
    *int4 = 8;
    hw_dev_estimate(npu, st, &w4a8, &a8);
    hw_dev_estimate(npu, st, &w8a8, &b8);
    /* tiny: 8 x 8 PEs, 64 x 64 tiles in one array, each 8 + stream + 14
     * cycles: 4096 rows at 2 a cycle -> 2048, at 8 -> 512 */
    g_assert_cmpuint(a2.compute_cycles, ==, 64 * 64 * (8 + 2048 + 14));
    g_assert_cmpuint(a8.compute_cycles, ==, 64 * 64 * (8 + 512 + 14));
    g_assert_cmpuint(b2.compute_cycles, ==, b8.compute_cycles);
    g_assert_cmpuint(b2.compute_cycles, ==, a2.compute_cycles);
}

/* A huge GEMM's time is its time, or refused: never 0. */
static void
test_huge_gemm(void)
{
    g_autoptr(HwSoc) soc = load_plain("sd8gen3");
    g_autoptr(GError) error = NULL;
    const HwStack *st = hw_soc_stack(soc, "heterollm", &error);
    g_assert_no_error(error);
    HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    HwOp big = gemm(1000000, 1000000, 1000, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16,
                    HW_WFMT_FP16);
    HwCost c;
    hw_dev_estimate(npu, st, &big, &c);
    g_assert_true(hw_cost_check(npu, &c, &error));
    /* the DMA at 60 GB/s: the 2e12-byte streamed operand once per pass,
     * a pass being one 32-column tile of X^T (32 passes), X^T and the
     * output once: 6.4e13 bytes, 1066.7 s */
    g_assert_cmpfloat_with_epsilon(sim_time_to_s(c.compute_ps), 1066.7, 1.0);
    HwOp bigger = gemm(2000000, 2000000, 2000000, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16,
                       HW_WFMT_FP16);
    hw_dev_estimate(npu, st, &bigger, &c);
    g_assert_false(hw_cost_check(npu, &c, &error));
    g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_HORIZON);
}

/* The probe itself: npu-gemm of a huge GEMM prints its time, a GEMM
 * beyond 2^64 FLOPs or beyond the horizon is refused in one line. */
static void
test_probe_cli(void)
{
    const char *bin = g_getenv("HS_BIN");
    if (bin == NULL) {
        g_test_skip("HS_BIN not set");
        return;
    }
    const char *ok[] = { bin, "probe", "--what", "npu-gemm", "--m", "1000000", "--k",
                         "1000000", "--n", "1000", "--format", "json", NULL };
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **) ok, NULL, 0, NULL, NULL, &out, &err, &status,
                               &error));
    g_assert_true(g_spawn_check_wait_status(status, &error));
    g_autoptr(cJSON) j = cJSON_Parse(out);
    g_assert_nonnull(j);
    g_autofree char *text = cJSON_PrintUnformatted(j);
    g_assert_nonnull(strstr(text, "compute_us"));
    /* the one row: compute_us 1.07e9 (32 passes, test_huge_gemm) */
    g_assert_nonnull(strstr(text, "1066734933"));
    struct { const char *m, *want; } bad[] = {
        { "2000000000", "probe npu-gemm: a [2000000000 x 2000000000] x [2000000000 x "
                              "2000000000] matmul is 1.6e+28 FLOPs, beyond the 2^64 an op counts" },
        { "2000000", "$.processors[2] (npu): its DMA time (dma_gbps) with dma_gbps = 60, "
                           "comes to 8.33e+06 s, beyond the 1e+06 s horizon of simulated time" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *argv[] = { bin, "probe", "--what", "npu-gemm", "--m", bad[i].m, "--k",
                               bad[i].m, "--n", bad[i].m, NULL };
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, 0, NULL, NULL, &out, &err,
                                   &status, NULL));
        g_assert_false(g_spawn_check_wait_status(status, NULL));
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), !=, 0);
        g_assert_cmpint(WEXITSTATUS(status), <, 128);
        /* one line: "hetero-sim: MESSAGE\n" */
        g_assert_true(g_str_has_prefix(err, "hetero-sim: "));
        g_assert_cmpint(strchr(err, '\n') - err, ==, (int) strlen(err) - 1);
        g_assert_nonnull(strstr(err, bad[i].want));
    }
}

/* The one document a --set names, read as hs_overrides_new reads it */
static void
test_override_target(void)
{
    static const struct { const char *arg, *doc, *want; } cases[] = {
        { "stack@mllm.cpu.float_efficiency=0.4", "stack", "mllm" },
        { "stack@mllm.cpu.float_efficiency=0.4", "soc", NULL },
        { "soc@sd8gen2.npu.arrays=6", "soc", "sd8gen2" },
        { "stack.cpu.call_us=5", "stack", NULL },          /* every stack */
        { "npu.arrays=6", "soc", NULL },                   /* the run's SoC */
        { "stack@.cpu.call_us=5", "stack", NULL },         /* not a valid --set */
        { "stack@mllm.cpu.call_us", "stack", NULL },       /* no value */
        { "stack@mllm=5", "stack", NULL },                 /* no key */
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got = hs_override_target(cases[i].arg, cases[i].doc);
        g_assert_cmpstr(got, ==, cases[i].want);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_autofree char *models = data_dir("models");
    g_autoptr(GError) error = NULL;
    tiny_model = mdl_spec_load("tiny", models, &error);
    g_assert_no_error(error);
    the_ops = probe_ops();

    g_test_add_func("/hw/bounds/conversion", test_conversion);
    g_test_add_func("/hw/bounds/kernel-horizon", test_kernel_horizon);
    g_test_add_func("/hw/bounds/npu-rate-monotonic", test_npu_rate_monotonic);
    g_test_add_func("/hw/bounds/npu-int4-rate", test_npu_int4_rate);
    g_test_add_func("/hw/bounds/message", test_message);
    g_test_add_func("/hw/bounds/huge-gemm", test_huge_gemm);
    g_test_add_func("/hw/bounds/probe-cli", test_probe_cli);
    g_test_add_func("/hw/bounds/override-target", test_override_target);

    /* every section of every config document, walked as data */
    g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func((GDestroyNotify) g_ptr_array_unref);
    g_autoptr(HwSoc) soc = load_plain("tiny");
    for (const HsParamSection *s = hw_soc_sections(); s->path; s++) {
        add_section(all, s->path, s->params, FALSE);
    }
    for (guint d = 0; d < soc->devs->len; d++) {
        const HwDev *dev = g_ptr_array_index(soc->devs, d);
        add_section(all, dev->name, dev->cls->params, FALSE);
    }
    for (const HsParamSection *s = hw_stack_sections(); s->path; s++) {
        g_autofree char *prefix = g_strdup_printf("stack.%s", s->path);
        add_section(all, prefix, s->params, TRUE);
    }
    int rc = g_test_run();
    g_array_unref(the_ops);
    mdl_spec_free(tiny_model);
    return rc;
}
