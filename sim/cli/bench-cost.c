/*
 * bench-cost.c - how many NPU matmul cost queries per second: what the
 * tensor-partition solver calls thousands of times per plan (target: at
 * least 1 M/s).  Pure estimates: no allocation, no event kernel.
 */
#include "hw/soc.h"
#include "sim/cli/bench.h"
#include "sim/run.h"
#include "sim/util/json.h"

#include <stdio.h>

static gboolean
run(gboolean quick, HsFormat format, GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autoptr(HwSoc) soc = hw_soc_load("sd8gen3", dir, error);
    if (soc == NULL) {
        return FALSE;
    }
    const HwStack *stack = hw_soc_stack(soc, SIM_DEFAULT_STACK, error);
    if (stack == NULL) {
        return FALSE;
    }
    const HwDev *npu = hw_soc_find_kind(soc, HW_KIND_NPU);
    const uint64_t n = quick ? 200000 : 5000000;
    uint64_t sink = 0;
    double t0 = hs_bench_now_s();
    for (uint64_t i = 0; i < n; i++) {
        /* shapes vary like the solver's row cuts do */
        HwOp op = { .kind = HW_OP_MATMUL, .m = 256 + (i % 56) * 256, .k = 4096,
                    .n = 32 + (i % 32) * 32, .a_dtype = HW_DTYPE_INT4,
                    .b_dtype = HW_DTYPE_FP16, .compute = HW_DTYPE_FP16 };
        op.flops = 2 * op.m * op.k * op.n;
        op.read_bytes = op.m * op.k / 2 + op.k * op.n * 2;
        op.write_bytes = op.m * op.n * 2;
        HwCost c;
        hw_dev_estimate(npu, stack, &op, &c);
        sink += c.alone_ps;
    }
    double dt = hs_bench_now_s() - t0;
    double rate = (double) n / dt;
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "cost");
        cJSON_AddNumberToObject(root, "queries", (double) n);
        cJSON_AddNumberToObject(root, "queries_per_s", rate);
        g_autofree char *s = hs_json_print(root, FALSE);
        printf("%s\n", s);
    } else {
        printf("NPU matmul cost queries: %" G_GUINT64_FORMAT " in %.3f s = %.2f M/s "
               "(target >= 1 M/s; checksum %" G_GUINT64_FORMAT ")\n", n, dt, rate / 1e6,
               sink % 1000);
    }
    return TRUE;
}

const HsBench hs_bench_cost = {
    "cost", "NPU matmul cost queries per second (target >= 1M/s)", run,
};
