/*
 * test-cli.c - the hetero-sim command line as a user meets it: exit
 * status (0 ok, 1 bad input, 2 usage), one "hetero-sim: " line on stderr
 * for errors, JSON on stdout that parses, nothing left behind on failure.
 */
#include "cli-run.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define hs(...) hs_in(NULL, __VA_ARGS__)

/* hetero-sim with OMP_NUM_THREADS and OpenBLAS's set to @threads. */
static Run *
hs_threads(const char *threads, const char *first, ...)
{
    g_auto(GStrv) envp = g_get_environ();
    envp = g_environ_setenv(envp, "OMP_NUM_THREADS", threads, TRUE);
    envp = g_environ_setenv(envp, "OPENBLAS_NUM_THREADS", threads, TRUE);
    va_list ap;
    va_start(ap, first);
    Run *r = hs_run_v(NULL, envp, first, ap);
    va_end(ap);
    return r;
}

/* Two JSON reports say the same, but for the host's wall time and the
 * command line that made each (provenance: output file names differ). */
static void
assert_same_report(const char *a, const char *b)
{
    g_autoptr(cJSON) ja = cJSON_Parse(a), jb = cJSON_Parse(b);
    g_assert_nonnull(ja);
    g_assert_nonnull(jb);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(ja, "provenance"), "command");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(jb, "provenance"), "command");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(ja, "sim"), "wall_s");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(jb, "sim"), "wall_s");
    g_autofree char *sa = cJSON_PrintUnformatted(ja), *sb = cJSON_PrintUnformatted(jb);
    g_assert_cmpstr(sa, ==, sb);
}

static void
test_version(void)
{
    g_autoptr(Run) r = hs("--version", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_true(g_str_has_prefix(r->out, "hetero-sim "));
}

static void
test_help(void)
{
    g_autoptr(Run) r = hs("--help", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_nonnull(strstr(r->out, "Usage: hetero-sim <command>"));
    g_assert_nonnull(strstr(r->out, "soc show"));

    g_autoptr(Run) s = hs("soc", "--help", NULL);
    g_assert_cmpint(s->status, ==, 0);
    g_assert_nonnull(strstr(s->out, "--format"));
    g_assert_cmpstr(s->err, ==, "");
}

static void
test_usage_errors(void)
{
    g_autoptr(Run) a = hs("frobnicate", NULL);
    g_assert_cmpint(a->status, ==, 2);
    assert_one_error_line(a, "unknown command \"frobnicate\" (see 'hetero-sim --help')");

    g_autoptr(Run) b = hs("soc", "show", "sd8gen3", "--format", "yaml", NULL);
    g_assert_cmpint(b->status, ==, 2);
    assert_one_error_line(b, "--format: expected one of text, json (got \"yaml\")");

    g_autoptr(Run) c = hs("soc", "show", "--bogus", NULL);
    g_assert_cmpint(c->status, ==, 2);
    assert_one_error_line(c, "soc: Unknown option --bogus (see 'hetero-sim soc --help')");

    g_autoptr(Run) d = hs("list", "gadgets", NULL);
    g_assert_cmpint(d->status, ==, 2);
    g_assert_true(g_str_has_prefix(d->err, "hetero-sim: list: expected one of "));

    g_autoptr(Run) e = hs("soc", "show", NULL);
    g_assert_cmpint(e->status, ==, 2);
    g_assert_cmpstr(e->out, ==, "");

    /* an empty list of policies (it crashed printing an empty table) */
    g_autoptr(Run) f = hs("compare", "--policies", "", "--soc", "tiny", "--model", "tiny",
                          "--functional", "off", NULL);
    g_assert_cmpint(f->status, ==, 2);
    assert_one_error_line(f, "--policies: expected one or more policy names, separated by "
                             "commas (got \"\")");
    g_assert_cmpstr(f->out, ==, "");
}

static void
test_bad_config(void)
{
    g_autofree char *path = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests",
                                             "data", "bad-configs", "empty.json", NULL);
    g_autoptr(Run) r = hs("soc", "show", path, NULL);
    g_assert_cmpint(r->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: empty file", path);
    assert_one_error_line(r, want);
    g_assert_cmpstr(r->out, ==, "");

    g_autoptr(Run) u = hs("soc", "show", "nosuchsoc", NULL);
    g_assert_cmpint(u->status, ==, 1);
    g_assert_true(g_str_has_prefix(u->err, "hetero-sim: unknown SoC \"nosuchsoc\" (known: "));
}

static void
test_soc_show(void)
{
    g_autoptr(Run) t = hs("soc", "show", "sd8gen3", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_assert_nonnull(strstr(t->out, "peak_gbps"));
    g_assert_nonnull(strstr(t->out, "68 GB/s"));
    g_assert_nonnull(strstr(t->out, "[HeteroLLM §3.3"));

    g_autoptr(Run) j = hs("soc", "show", "tiny", "--format", "json", NULL);
    g_assert_cmpint(j->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(j->out);
    g_assert_nonnull(root);
    g_assert_cmpstr(cJSON_GetObjectItem(root, "name")->valuestring, ==, "tiny");
    const cJSON *procs = cJSON_GetObjectItem(root, "processors");
    g_assert_cmpint(cJSON_GetArraySize(procs), >=, 3);
    const cJSON *mem = cJSON_GetObjectItem(root, "memory");
    g_assert_cmpfloat(cJSON_GetObjectItem(mem, "peak_gbps")->valuedouble, ==, 20);
}

/* Stack profiles: listed, shown with sources, described; --stack replaces
 * the policy's stack (same phone, Transformer-Lite's kernels: the GPU's
 * decode draws more bandwidth) and the report says which ran; a bad name
 * is one line, exit 1; replay re-times a recording on another stack. */
static void
test_stacks(void)
{
    g_autoptr(Run) l = hs("list", "stacks", NULL);
    g_assert_cmpint(l->status, ==, 0);
    g_assert_true(g_str_has_prefix(l->out, "heterollm "));
    static const char *const names[] = { "\nllama-cpp ", "\nmllm ", "\nnpu-tts ",
                                         "\ntransformer-lite " };
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        g_assert_nonnull(strstr(l->out, names[i]));
    }
    g_assert_null(strstr(l->out, "cannot load"));

    g_autoptr(Run) t = hs("stack", "show", "transformer-lite", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_assert_nonnull(strstr(t->out, "matmul_efficiency"));
    g_assert_nonnull(strstr(t->out, "[Transformer-Lite §3.2"));
    g_autoptr(Run) d = hs("stack", "describe", NULL);
    g_assert_cmpint(d->status, ==, 0);
    g_assert_nonnull(strstr(d->out, "$.npu.dequant"));
    g_assert_nonnull(strstr(d->out, "q4_0_gbps"));

    g_autoptr(Run) a = hs("run", "-P", "gpu-only", "-p", "64", "-d", "4", "--functional", "off",
                          "--format", "json", NULL);
    g_autoptr(Run) b = hs("run", "-P", "gpu-only", "-p", "64", "-d", "4", "--functional", "off",
                          "--stack", "transformer-lite", "--format", "json", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_assert_cmpint(b->status, ==, 0);
    g_autoptr(cJSON) ja = cJSON_Parse(a->out);
    g_autoptr(cJSON) jb = cJSON_Parse(b->out);
    g_assert_cmpstr(cJSON_GetObjectItem(ja, "stack")->valuestring, ==, "heterollm");
    g_assert_cmpstr(cJSON_GetObjectItem(jb, "stack")->valuestring, ==, "transformer-lite");
    double ga = cJSON_GetObjectItem(cJSON_GetObjectItem(ja, "dram"), "decode_avg_gbps")->valuedouble;
    double gb = cJSON_GetObjectItem(cJSON_GetObjectItem(jb, "dram"), "decode_avg_gbps")->valuedouble;
    g_assert_cmpfloat(fabs(ga / 43.3 - 1), <, 0.05);
    g_assert_cmpfloat(fabs(gb / 56.0 - 1), <, 0.05);

    g_autoptr(Run) c = hs("run", "-P", "cpu-only", "-p", "16", "-d", "1", "--functional", "off",
                          "--format", "json", NULL);
    g_autoptr(cJSON) jc = cJSON_Parse(c->out);
    g_assert_cmpstr(cJSON_GetObjectItem(jc, "stack")->valuestring, ==, "llama-cpp");

    g_autoptr(Run) e = hs("run", "--stack", "ppl", NULL);
    g_assert_cmpint(e->status, ==, 1);
    g_assert_cmpstr(e->out, ==, "");
    g_assert_true(g_str_has_prefix(e->err, "hetero-sim: unknown stack \"ppl\" (known: heterollm, "));
    g_assert_true(strchr(e->err, '\n') == e->err + strlen(e->err) - 1);     /* one line */

    g_autoptr(Run) s = hs("stack", "show", NULL);
    g_assert_cmpint(s->status, ==, 2);

    /* --set stack.KEY edits every stack the run loads, stack@NAME.KEY only
     * NAME: aimed at another stack it leaves the run as it was */
    double ta = cJSON_GetObjectItem(cJSON_GetObjectItem(ja, "prefill"), "tokens_per_s")->valuedouble;
    g_autoptr(Run) o1 = hs("run", "-P", "gpu-only", "-p", "64", "-d", "4", "--functional", "off",
                           "--format", "json", "--set",
                           "stack@transformer-lite.gpu.matmul_efficiency=0.1", NULL);
    g_autoptr(Run) o2 = hs("run", "-P", "gpu-only", "-p", "64", "-d", "4", "--functional", "off",
                           "--format", "json", "--set",
                           "stack@heterollm.gpu.matmul_efficiency=0.1", NULL);
    g_autoptr(Run) o3 = hs("run", "-P", "gpu-only", "-p", "64", "-d", "4", "--functional", "off",
                           "--format", "json", "--set", "stack.gpu.matmul_efficiency=0.1", NULL);
    g_assert_cmpint(o1->status + o2->status + o3->status, ==, 0);
    g_autoptr(cJSON) j1 = cJSON_Parse(o1->out);
    g_autoptr(cJSON) j2 = cJSON_Parse(o2->out);
    g_autoptr(cJSON) j3 = cJSON_Parse(o3->out);
    double t1 = cJSON_GetObjectItem(cJSON_GetObjectItem(j1, "prefill"), "tokens_per_s")->valuedouble;
    double t2 = cJSON_GetObjectItem(cJSON_GetObjectItem(j2, "prefill"), "tokens_per_s")->valuedouble;
    double t3 = cJSON_GetObjectItem(cJSON_GetObjectItem(j3, "prefill"), "tokens_per_s")->valuedouble;
    g_assert_cmpfloat(t1, ==, ta);
    g_assert_cmpfloat(t2, <, 0.5 * ta);         /* 0.1 of the peak, not 0.357 */
    g_assert_cmpfloat(t3, ==, t2);
    g_autoptr(Run) o4 = hs("run", "-P", "gpu-only", "--functional", "off", "--set",
                           "stack@ppl.gpu.matmul_efficiency=0.1", NULL);
    g_assert_cmpint(o4->status, ==, 2);
    g_assert_cmpstr(o4->err, ==, "hetero-sim: --set stack@ppl.gpu.matmul_efficiency=0.1: "
                    "no stack \"ppl\" (hetero-sim list stacks)\n");
    /* a stack's optional table its file leaves out (heterollm has no
     * gpu.dequant) is made by --set: a slow INT4 dequantisation slows the
     * GPU's prefill; a misspelt table is refused by name, in one line */
    g_autoptr(Run) o5 = hs("run", "-P", "gpu-only", "-p", "64", "-d", "4", "--functional", "off",
                           "--format", "json", "--set", "stack.gpu.dequant.w4a16_gbps=5", NULL);
    g_assert_cmpint(o5->status, ==, 0);
    g_autoptr(cJSON) j5 = cJSON_Parse(o5->out);
    double t5 = cJSON_GetObjectItem(cJSON_GetObjectItem(j5, "prefill"), "tokens_per_s")->valuedouble;
    g_assert_cmpfloat(t5, <, 0.9 * ta);
    g_autoptr(Run) sh5 = hs("stack", "show", "heterollm", "--set", "stack.gpu.dequant.w4a16_gbps=5",
                            NULL);
    g_assert_cmpint(sh5->status, ==, 0);
    g_assert_nonnull(strstr(sh5->out, "[--set stack.gpu.dequant.w4a16_gbps=5]"));
    g_autoptr(Run) o6 = hs("run", "-P", "gpu-only", "--functional", "off", "--set",
                           "stack.gpu.dequnt.w4a16_gbps=5", NULL);
    g_assert_cmpint(o6->status, ==, 2);
    g_assert_cmpstr(o6->out, ==, "");
    assert_one_error_line(o6, "--set stack.gpu.dequnt.w4a16_gbps=5: unknown key \"dequnt\" "
                              "(known keys: matmul_efficiency, dram_scale, launch_busy_us, "
                              "launch_idle_us, pins_clock, measured_arch, dequant, "
                              "arch_matmul_efficiency, arch_dequant)");
    g_autoptr(Run) o7 = hs("run", "-P", "gpu-only", "--functional", "off", "--set",
                           "stack.gpux.matmul_efficiency=0.5", NULL);
    g_assert_cmpint(o7->status, ==, 2);
    assert_one_error_line(o7, "--set stack.gpux.matmul_efficiency=0.5: no processor or section "
                              "\"gpux\" in the stack config (known: cpu, gpu, npu)");
    /* a path through a value is not made into a table */
    g_autoptr(Run) o8 = hs("run", "-P", "gpu-only", "--functional", "off", "--set",
                           "stack.gpu.matmul_efficiency.x=0.5", NULL);
    g_assert_cmpint(o8->status, ==, 2);
    assert_one_error_line(o8, "--set stack.gpu.matmul_efficiency.x=0.5: \"matmul_efficiency\" in "
                              "the stack config is a value, not a section");

    /* replay: the same plan on Transformer-Lite's kernels */
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *rec = g_build_filename(dir, "rec.json", NULL);
    g_autoptr(Run) r = hs("run", "-P", "gpu-only", "-p", "64", "-d", "4", "--functional", "off",
                          "--record", rec, NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(Run) p = hs("replay", rec, "--stack", "transformer-lite", "--format", "json", NULL);
    g_assert_cmpint(p->status, ==, 0);
    g_autoptr(cJSON) jp = cJSON_Parse(p->out);
    g_assert_cmpstr(cJSON_GetObjectItem(jp, "stack")->valuestring, ==, "transformer-lite");
    g_assert_cmpfloat(cJSON_GetObjectItem(cJSON_GetObjectItem(jp, "decode"), "tokens_per_s")->valuedouble,
                      ==, cJSON_GetObjectItem(cJSON_GetObjectItem(jb, "decode"), "tokens_per_s")->valuedouble);
    g_unlink(rec);
    g_rmdir(dir);
}

static void
test_default_run(void)
{
    g_autoptr(Run) r = hs_in(NULL, NULL, NULL);        /* no arguments at all */
    g_assert_cmpint(r->status, ==, 0);
    g_assert_cmpstr(r->err, ==, "");
    g_assert_cmpuint(strlen(r->out), >, 100);
}

static void
test_list_socs(void)
{
    g_autoptr(Run) r = hs("list", "socs", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_true(g_str_has_prefix(r->out, "classroom "));   /* sorted */
    g_assert_nonnull(strstr(r->out, "\ndimensity9300 "));
    g_assert_nonnull(strstr(r->out, "\nsd8gen3 "));
    g_assert_nonnull(strstr(r->out, "\ntiny "));
    g_assert_null(strstr(r->out, "cannot load"));
}

static void
test_bench_kernel_quick(void)
{
    g_autoptr(Run) r = hs("bench", "kernel", "--quick", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(r->out);
    g_assert_nonnull(root);
    const cJSON *rows = cJSON_GetObjectItem(root, "rows");
    g_assert_cmpint(cJSON_GetArraySize(rows), >, 0);
    const cJSON *row = NULL;
    cJSON_ArrayForEach(row, rows) {
        g_assert_cmpfloat(cJSON_GetObjectItem(row, "events_per_s")->valuedouble, >, 0);
        g_assert_cmpfloat(cJSON_GetObjectItem(row, "events")->valuedouble, >=, 200000);
    }
}

/* bench default runs the executable as a child and reports its time and
 * memory (the figures themselves are the benchmark's, not a test's) */
static void
test_bench_default_quick(void)
{
    g_autoptr(Run) r = hs("bench", "default", "--quick", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(r->out);
    g_assert_nonnull(root);
    g_assert_cmpint(cJSON_GetObjectItem(root, "runs")->valueint, ==, 1);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "wall_s_median")->valuedouble, >, 0);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "peak_rss_gib")->valuedouble, >, 0);
}

/* bench engine reports each path's W4A16 matvec from DRAM beside the same
 * kernel's speed on weights in L2 (one thread), so a reader can tell a
 * compute-bound kernel from a memory-bound one */
static void
test_bench_engine_quick(void)
{
    g_autoptr(Run) r = hs("bench", "engine", "--quick", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(r->out);
    g_assert_nonnull(root);
    const cJSON *paths = cJSON_GetObjectItem(root, "paths");
    g_assert_cmpint(cJSON_GetArraySize(paths), >=, 1);
    const cJSON *path = NULL;
    cJSON_ArrayForEach(path, paths) {
        g_assert_cmpfloat(cJSON_GetObjectItem(path, "w4a16_matvec_gbps")->valuedouble, >, 0);
        g_assert_cmpfloat(cJSON_GetObjectItem(path, "w4a16_matvec_in_l2_gbps_1_thread")
                          ->valuedouble, >, 0);
    }
}

/* bench sweep: timing-only points per second with 1 and 2 workers, and
 * the checked sweep's seconds, its workers' CPU counted (a worker is
 * reaped before the figure is taken: a CPU time of zero would say not) */
static void
test_bench_sweep_quick(void)
{
    g_autoptr(Run) r = hs("bench", "sweep", "--quick", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(r->out);
    g_assert_nonnull(root);
    g_assert_cmpint(cJSON_GetObjectItem(root, "points")->valueint, ==, 6);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "points_per_s_1_worker")->valuedouble, >, 0);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "points_per_s_2_workers")->valuedouble, >, 0);
    g_assert_cmpint(cJSON_GetObjectItem(root, "checked_points")->valueint, ==, 2);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "checked_wall_s")->valuedouble, >, 0);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "checked_cpu_s")->valuedouble, >, 0.05);
    g_assert_cmpint(cJSON_GetObjectItem(root, "grid_points")->valueint, ==, 2000);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "grid_plan_s")->valuedouble, >=, 0);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "point_resolve_ms")->valuedouble, >, 0);
}

/* bench sim gives each request's events per CPU second and its ratio to
 * the hold model's events per CPU second (the figure a loaded machine
 * does not skew), as it gives them per wall second. */
static void
test_bench_sim_quick(void)
{
    g_autoptr(Run) r = hs("bench", "sim", "--quick", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(r->out);
    g_assert_nonnull(root);
    double hold_cpu = cJSON_GetObjectItem(root, "hold_events_per_cpu_s")->valuedouble;
    g_assert_cmpfloat(hold_cpu, >, 0);
    const cJSON *rows = cJSON_GetObjectItem(root, "rows");
    g_assert_cmpint(cJSON_GetArraySize(rows), ==, 2);
    const cJSON *row = NULL;
    cJSON_ArrayForEach(row, rows) {
        double cpu_s = cJSON_GetObjectItem(row, "cpu_s")->valuedouble;
        double ev_cpu = cJSON_GetObjectItem(row, "events_per_cpu_s")->valuedouble;
        double ev_wall = cJSON_GetObjectItem(row, "events_per_s")->valuedouble;
        double wall_s = cJSON_GetObjectItem(row, "wall_s")->valuedouble;
        g_assert_cmpfloat(cpu_s, >, 0);
        /* the same events over each clock */
        g_assert_cmpfloat(fabs(ev_cpu * cpu_s - ev_wall * wall_s), <=, 1e-6 * ev_wall * wall_s);
        g_assert_cmpfloat(fabs(cJSON_GetObjectItem(row, "events_vs_hold_cpu")->valuedouble -
                               ev_cpu / hold_cpu), <=, 1e-12);
    }
}

static void
test_run_json_schema(void)
{
    g_autoptr(Run) r = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "40",
                          "--decode", "3", "--functional", "full", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    g_assert_nonnull(j);
    static const char *const keys[] = {
        "soc", "model", "policy", "stack", "sync", "prompt_tokens", "decode_tokens", "batch",
        "prefill", "decode", "ttft_ms", "dram", "energy", "devices", "functional", "sim",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        g_assert_nonnull(cJSON_GetObjectItem(j, keys[i]));
    }
    g_assert_cmpstr(cJSON_GetObjectItem(j, "policy")->valuestring, ==, "hetero-tensor");
    const cJSON *f = cJSON_GetObjectItem(j, "functional");
    g_assert_cmpstr(cJSON_GetObjectItem(f, "mode")->valuestring, ==, "full");
    g_assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "match")));
    const cJSON *dec = cJSON_GetObjectItem(j, "decode");
    g_assert_cmpfloat(cJSON_GetObjectItem(dec, "tokens_per_s")->valuedouble, >, 0);
    g_assert_nonnull(cJSON_GetObjectItem(dec, "tpot_ms"));
    const cJSON *gpu = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "devices"), "gpu");
    g_assert_cmpfloat(cJSON_GetObjectItem(gpu, "util")->valuedouble, >, 0);
}

/* Same inputs, 1 or 4 host threads: byte-identical results and traces
 * (one trace path for both runs: the command line is in the trace). */
static void
test_determinism_threads(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *t1 = g_build_filename(dir, "t.json", NULL);
    g_autofree char *ca = NULL, *cb = NULL;
    g_autoptr(Run) a = hs_threads("1", "run", "--soc", "tiny", "--model", "tiny",
                                  "--prompt", "70", "--decode", "4", "--batch", "2",
                                  "--functional", "full", "--format", "json",
                                  "--trace", t1, NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_assert_true(g_file_get_contents(t1, &ca, NULL, NULL));
    g_autoptr(Run) b = hs_threads("4", "run", "--soc", "tiny", "--model", "tiny",
                                  "--prompt", "70", "--decode", "4", "--batch", "2",
                                  "--functional", "full", "--format", "json",
                                  "--trace", t1, NULL);
    g_assert_cmpint(b->status, ==, 0);
    assert_same_report(a->out, b->out);
    g_assert_true(g_file_get_contents(t1, &cb, NULL, NULL));
    g_assert_cmpstr(ca, ==, cb);
    g_unlink(t1);
    g_rmdir(dir);
}

/* The slices ("name ts_ns dur_ns") of a trace file: of every process if
 * @label is NULL, else of the processes of the labelled run @label (a
 * compare's policy: processes named "LABEL gpu", "LABEL request" ..). */
static GPtrArray *
trace_slices(const char *path, const char *label)
{
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autoptr(cJSON) j = cJSON_Parse(text);
    g_assert_nonnull(j);
    g_autofree char *prefix = label ? g_strdup_printf("%s ", label) : NULL;
    g_autoptr(GHashTable) pids = g_hash_table_new(g_direct_hash, g_direct_equal);
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
        if (label && strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "process_name") == 0 &&
            g_str_has_prefix(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")
                             ->valuestring, prefix)) {
            g_hash_table_add(pids, GINT_TO_POINTER(cJSON_GetObjectItem(e, "pid")->valueint));
        }
    }
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X") != 0 ||
            (label && !g_hash_table_contains(pids, GINT_TO_POINTER(
                 cJSON_GetObjectItem(e, "pid")->valueint)))) {
            continue;
        }
        g_ptr_array_add(out, g_strdup_printf(
            "%s %.0f %.0f", cJSON_GetObjectItem(e, "name")->valuestring,
            cJSON_GetObjectItem(e, "ts")->valuedouble * 1000,
            cJSON_GetObjectItem(e, "dur")->valuedouble * 1000));
    }
    return out;
}

static int
cmp_str_ptr(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* a checked decode past step 4096 wrote past a heap buffer
 * (the checker's tables were keyed by a 32-bit `phase << 20 | node`, so
 * step 4096 collided with the prefill).  The checker now keeps its state
 * per phase; this runs the decode that crashed, on a one-layer tiny model
 * so it takes seconds (under ASan, CI would report the write). */
static void
test_decode_past_4096_checked(void)
{
    g_autoptr(Run) r = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "16",
                          "--decode", "4097", "--set", "model.max_position_embeddings=8192",
                          "--set", "model.num_hidden_layers=1", "--functional", "full",
                          "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    g_assert_nonnull(j);
    const cJSON *f = cJSON_GetObjectItem(j, "functional");
    g_assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "checked")));
    g_assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "match")));
    g_assert_cmpint(cJSON_GetObjectItem(j, "decode_tokens")->valueint, ==, 4097);
}

/* A run's recording replays whatever decode `run --decode` accepted: the
 * recording reader capped decode at 4096 while run took up to 65536, so a
 * longer run recorded a file its own replay refused.  Both read the
 * workload through one table now (traces/workload-json.c). */
static void
test_record_replay_long_decode(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", NULL);
    g_autofree char *rec = g_build_filename(dir, "rec.json", NULL);
    g_autoptr(Run) a = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "8",
                          "--decode", "4097", "--set", "model.max_position_embeddings=8192",
                          "--set", "model.num_hidden_layers=1", "--functional", "off",
                          "--format", "json", "--record", rec, NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_autoptr(Run) b = hs("replay", rec, "--format", "json", NULL);
    g_assert_cmpstr(b->err, ==, "");
    g_assert_cmpint(b->status, ==, 0);
    g_autoptr(cJSON) ja = cJSON_Parse(a->out), jb = cJSON_Parse(b->out);
    g_assert_cmpint(cJSON_GetObjectItem(jb, "decode_tokens")->valueint, ==, 4097);
    /* the same run but the host's wall time and the overrides (the
     * recording holds the model they made) */
    for (int i = 0; i < 2; i++) {
        cJSON *j = i ? jb : ja;
        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "sim"), "wall_s");
        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "config"), "overrides");
        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "provenance"), "command");
    }
    g_autofree char *sa = cJSON_PrintUnformatted(ja), *sb = cJSON_PrintUnformatted(jb);
    g_assert_cmpstr(sa, ==, sb);
    g_unlink(rec);
    g_rmdir(dir);
}

/* compare --trace: each policy's processes (named "POLICY gpu" ..), in
 * the --policies order, holding the slices its own run --trace has; read
 * as Perfetto does (tools/trace-check.py), every track nests and every
 * flow binds to its slice. */
static void
test_compare_trace(void)
{
    static const char *const pol[] = { "gpu-only", "hetero-tensor", "npu-only" };
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", NULL);
    g_autofree char *all = g_build_filename(dir, "all.json", NULL);
    g_autoptr(Run) c = hs("compare", "--soc", "classroom", "--model", "tiny", "--prompt", "96",
                          "--decode", "2", "--policies", "gpu-only,hetero-tensor,npu-only",
                          "--trace", all, NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(all, &text, NULL, NULL));
    g_autoptr(cJSON) j = cJSON_Parse(text);
    const cJSON *e = NULL;
    int procs = 0, run = 0, last_pid = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
        if (strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "process_name") == 0) {
            int pid = cJSON_GetObjectItem(e, "pid")->valueint;
            g_assert_cmpint(pid, ==, last_pid + 1);          /* in order, one run after another */
            last_pid = pid;
            const char *name = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")
                               ->valuestring;
            if (run < 2 && g_str_has_prefix(name, pol[run + 1])) {
                run++;
            }
            g_assert_true(g_str_has_prefix(name, pol[run]));
            g_assert_cmpint(name[strlen(pol[run])], ==, ' ');
            procs++;
        }
    }
    g_assert_cmpint(run, ==, 2);
    g_assert_cmpint(procs % 3, ==, 0);          /* as many processes per policy */
    for (int i = 0; i < 3; i++) {
        g_autofree char *one = g_build_filename(dir, "one.json", NULL);
        g_autoptr(Run) r = hs("run", "--soc", "classroom", "--model", "tiny", "--prompt", "96",
                              "--decode", "2", "--policy", pol[i], "--trace", one, NULL);
        g_assert_cmpint(r->status, ==, 0);
        g_autoptr(GPtrArray) want = trace_slices(one, NULL);
        g_autoptr(GPtrArray) got = trace_slices(all, pol[i]);
        g_ptr_array_sort(want, cmp_str_ptr);
        g_ptr_array_sort(got, cmp_str_ptr);
        g_assert_cmpuint(got->len, ==, want->len);
        g_assert_cmpuint(got->len, >, 10);
        for (guint k = 0; k < got->len; k++) {
            g_assert_cmpstr(got->pdata[k], ==, want->pdata[k]);
        }
        g_unlink(one);
    }
    g_autofree char *check = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tools",
                                              "trace-check.py", NULL);
    const char *argv[] = { "python3", check, all, NULL };
    g_autoptr(Run) tc = cli_spawn(NULL, (char *const *) argv, NULL);
    g_assert_cmpstr(tc->err, ==, "");
    g_assert_cmpint(tc->status, ==, 0);
    g_unlink(all);
    g_rmdir(dir);
}

static void
test_run_errors(void)
{
    g_autoptr(Run) a = hs("run", "--prompt", "0", NULL);
    g_assert_cmpint(a->status, ==, 2);
    assert_one_error_line(a, "--prompt: expected an integer in [1, 32768] (got 0)");

    /* an unknown name is bad input, whatever it names (exit 1) */
    g_autoptr(Run) b = hs("run", "--policy", "fastest", "--soc", "tiny", "--model", "tiny", NULL);
    g_assert_cmpint(b->status, ==, 1);
    g_assert_true(g_str_has_prefix(b->err, "hetero-sim: unknown policy \"fastest\" (known: "));

    g_autoptr(Run) c = hs("run", "--sync", "slow", NULL);
    g_assert_cmpint(c->status, ==, 2);
    assert_one_error_line(c, "--sync: expected driver or fast (got \"slow\")");

    g_autoptr(Run) d = hs("run", "--functional", "layers=0", NULL);
    g_assert_cmpint(d->status, ==, 2);
    assert_one_error_line(d, "--functional: expected off, full or layers=N with N in "
                             "[1, 1000] (got \"layers=0\")");

    /* an unwritable trace: exit 1, and nothing left behind */
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *missing = g_build_filename(dir, "no", "such", "dir", "t.json", NULL);
    g_autoptr(Run) e = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "8",
                          "--decode", "0", "--trace", missing, NULL);
    g_assert_cmpint(e->status, ==, 1);
    g_assert_true(g_str_has_prefix(e->err, "hetero-sim: "));
    g_assert_nonnull(strstr(e->err, "cannot create file"));
    g_assert_cmpstr(e->out, ==, "");
    g_autoptr(GDir) dh = g_dir_open(dir, 0, NULL);
    g_assert_null(g_dir_read_name(dh));
    g_rmdir(dir);

    g_autoptr(Run) f = hs("run", "--model", "nosuchmodel", NULL);
    g_assert_cmpint(f->status, ==, 1);
    g_assert_true(g_str_has_prefix(f->err, "hetero-sim: unknown model \"nosuchmodel\""));

    /* a check bigger than any machine's memory (~15 TB): refused before
     * anything is allocated, by run and compare alike */
    const char *huge = "hetero-sim: --functional full: checking the values of internlm2-1.8b "
                       "at prompt 31000, decode 1000 x batch 256 needs about ";
    g_autoptr(Run) g = hs("run", "--policy", "gpu-only", "--model", "internlm2-1.8b",
                          "--prompt", "31000", "--decode", "1000",
                          "--batch", "256", "--functional", "full", NULL);
    g_assert_cmpint(g->status, ==, 2);
    g_assert_true(g_str_has_prefix(g->err, huge));
    g_assert_nonnull(strstr(g->err, " GiB; check fewer layers (--functional layers=N)"));
    g_autoptr(Run) h = hs("compare", "--policies", "gpu-only,npu-only", "--prompt", "31000",
                          "--model", "internlm2-1.8b", "--decode", "1000", "--batch", "256", "--functional", "full", NULL);
    g_assert_cmpint(h->status, ==, 2);
    g_assert_true(g_str_has_prefix(h->err, huge));
    g_assert_cmpstr(h->out, ==, "");
}

/* The rough edges a new user meets: one line of ours, the right exit
 * status, and "did you mean" for a typo. */
static void
test_rough_edges(void)
{
    g_autoptr(Run) a = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "2040",
                          "--decode", "9", NULL);
    g_assert_cmpint(a->status, ==, 2);
    assert_one_error_line(a, "--prompt + --decode: expected at most tiny's context length, "
                             "max_position_embeddings 2048 (got 2040 + 9)");
    g_autoptr(Run) a2 = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "2040",
                           "--decode", "8", "--functional", "off", NULL);
    g_assert_cmpint(a2->status, ==, 0);
    g_autoptr(Run) b = hs("run", "--soc", "tiny", "--model", "tiny", "--functional", "layers=3",
                          NULL);
    g_assert_cmpint(b->status, ==, 2);
    assert_one_error_line(b, "--functional: expected layers=N with N at most tiny's 2 layers "
                             "(got layers=3; 'full' checks them all and the logits)");

    g_autoptr(Run) c = hs("run", "--prompt", "abc", NULL);
    g_assert_cmpint(c->status, ==, 2);
    assert_one_error_line(c, "run: --prompt: expected an integer (got \"abc\")");
    g_autoptr(Run) c2 = hs("compare", "--render=6o", NULL);
    g_assert_cmpint(c2->status, ==, 2);
    assert_one_error_line(c2, "compare: --render: expected a number (got \"6o\")");

    /* unknown names: exit 1 (bad input) for a SoC, a model and a policy alike */
    g_autoptr(Run) d = hs("run", "--model", "llama3-8b", NULL);
    g_assert_cmpint(d->status, ==, 1);
    g_assert_true(g_str_has_prefix(d->err, "hetero-sim: unknown model \"llama3-8b\" (did you "
                                           "mean llama-3-8b? known: "));
    g_autoptr(Run) e = hs("run", "--soc", "sd8gen_3", NULL);
    g_assert_cmpint(e->status, ==, 1);
    g_assert_true(g_str_has_prefix(e->err, "hetero-sim: unknown SoC \"sd8gen_3\" (did you "
                                           "mean sd8gen3? known: "));
    g_autoptr(Run) f = hs("compare", "--policies", "gpu-only,hetero-tensr", NULL);
    g_assert_cmpint(f->status, ==, 1);
    g_assert_true(g_str_has_prefix(f->err, "hetero-sim: unknown policy \"hetero-tensr\" (did "
                                           "you mean hetero-tensor? known: "));
    /* the variants, found by name but not listed, are named and suggested */
    g_autoptr(Run) v = hs("run", "-P", "mllm-npu/no-shadw", "--functional", "off", NULL);
    g_assert_cmpint(v->status, ==, 1);
    g_assert_true(g_str_has_prefix(v->err, "hetero-sim: unknown policy \"mllm-npu/no-shadw\" "
                                           "(did you mean mllm-npu/no-shadow? known: "));
    g_assert_nonnull(strstr(v->err, "; variants: hetero-tensor/sync-aware, mllm-npu/in-order"));
    g_assert_cmpstr(v->out, ==, "");
    g_autoptr(Run) g = hs("rnu", NULL);
    g_assert_cmpint(g->status, ==, 2);
    assert_one_error_line(g, "unknown command \"rnu\" (did you mean run? see 'hetero-sim --help')");
    g_autoptr(Run) h = hs("run", "--promt", "5", NULL);
    g_assert_cmpint(h->status, ==, 2);
    assert_one_error_line(h, "run: Unknown option --promt (did you mean --prompt?) "
                             "(see 'hetero-sim run --help')");
    g_autoptr(Run) i = hs("run", "--model", "qqqqqq", NULL);
    g_assert_null(strstr(i->err, "did you mean"));

    /* the teaching model's size in millions, not 0.00 B */
    g_autoptr(Run) m = hs("list", "models", NULL);
    g_assert_nonnull(strstr(m->out, "\ntiny               0.13 M params"));
}

/* explain: the cost model's reasoning for one kernel, and a tiny run's
 * events in order, on the classroom SoC whose default policy uses CPU,
 * GPU and NPU, fills the DRAM and syncs. */
static void
test_explain(void)
{
    g_autoptr(Run) c = hs("run", "--soc", "classroom", "--model", "tiny", "--prompt", "96",
                          "--decode", "2", "--format", "json", NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_autoptr(cJSON) jc = cJSON_Parse(c->out);
    const cJSON *devs = cJSON_GetObjectItem(jc, "devices");
    static const char *const procs[] = { "cpu", "gpu", "npu" };
    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        const cJSON *d = cJSON_GetObjectItem(devs, procs[i]);
        g_assert_cmpfloat(cJSON_GetObjectItem(d, "busy_ms")->valuedouble, >, 0.1);
    }
    const cJSON *en = cJSON_GetObjectItem(jc, "energy");
    g_assert_cmpfloat(cJSON_GetObjectItem(en, "prefill_j")->valuedouble, >=, 0.001);
    /* the ceiling (0.8 GB/s) reached: contention */
    g_assert_cmpfloat(cJSON_GetObjectItem(cJSON_GetObjectItem(jc, "dram"), "peak_gbps")->valuedouble,
                      >, 0.79);

    g_autoptr(Run) k = hs("explain", "--soc", "classroom", "--model", "tiny", "--prompt", "96",
                          "--decode", "2", "--task", "L0.ffn_down", NULL);
    g_assert_cmpint(k->status, ==, 0);
    g_assert_cmpstr(k->err, ==, "");
    static const char *const want[] = {
        "L0.ffn_down[tokens 0:64], prefill, on npu", "L0.ffn_down[tokens 64:96], prefill, on gpu",
        "tiles: the right operand [176 x 64] is cut into 22 x 8 = 176 tiles of 8 x 8",
        "14 fill/drain cycles", "re-layout: the vector unit rebuilds the 176 stationary tiles",
        "passes: 8 (the quantised left operand is streamed and dequantised again for every column fold",
        "dequantisation: the vector unit",
        "waited for: task ", "DRAM: npu drew ", "why: ", "-> compute-bound",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        if (strstr(k->out, want[i]) == NULL) {
            g_test_message("missing \"%s\" in:\n%s", want[i], k->out);
            g_test_fail();
        }
    }
    g_autoptr(Run) st = hs("explain", "--soc", "classroom", "--model", "tiny", "--prompt", "96",
                           "--decode", "2", "--steps", NULL);
    g_assert_cmpint(st->status, ==, 0);
    g_assert_nonnull(strstr(st->out, " start npu "));
    g_assert_nonnull(strstr(st->out, " start gpu "));
    g_assert_nonnull(strstr(st->out, " start cpu      #2 sync "));
    g_assert_nonnull(strstr(st->out, ": full, shared max-min fair"));
    /* one line per task start and end (135 tasks), plus DRAM lines */
    int lines = 0;
    for (const char *q = st->out; (q = strstr(q, "  start ")) != NULL; q++) {
        lines++;
    }
    g_assert_cmpint(lines, ==, 135);

    /* Llama-3-8B's FFN-down (its NPU rows): depth-blocked, X^T re-laid
     * once per 96 weight rows */
    g_autoptr(Run) l = hs("explain", "--task", "L0.ffn_down", "--decode", "1", NULL);
    g_assert_cmpint(l->status, ==, 0);
    g_assert_nonnull(strstr(l->out, "depth-blocked: the left operand has more columns than rows "
                                    "(14336 > 2304)"));
    g_assert_nonnull(strstr(l->out, "kept for 96 rows at a time while the depth is walked: the "
                                    "right operand comes in and is re-laid 24 times"));

    /* a decode task by id: its step (0 printed as 0), and the sync-aware
     * solver's reason (the hand-offs priced at the run's mechanism) */
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", NULL);
    g_autofree char *rec = g_build_filename(dir, "rec.json", NULL);
    g_autoptr(Run) rr = hs("run", "-P", "hetero-tensor/sync-aware", "--sync", "driver", "-p",
                           "64", "-d", "1", "--functional", "off", "--record", rec, NULL);
    g_assert_cmpint(rr->status, ==, 0);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(rec, &text, NULL, NULL));
    g_autoptr(cJSON) rj = cJSON_Parse(text);
    int gate = -1;
    cJSON *task;
    cJSON_ArrayForEach(task, cJSON_GetObjectItem(rj, "tasks")) {
        if (gate < 0 && strcmp(cJSON_GetObjectItem(task, "phase")->valuestring, "decode") == 0 &&
            strcmp(cJSON_GetObjectItem(task, "name")->valuestring, "L0.ffn_gate") == 0) {
            gate = cJSON_GetObjectItem(task, "id")->valueint;
        }
    }
    g_assert_cmpint(gate, >, 0);
    g_autofree char *id = g_strdup_printf("%d", gate);
    g_autoptr(Run) d = hs("explain", "-P", "hetero-tensor/sync-aware", "--sync", "driver", "-p",
                          "64", "-d", "1", "--functional", "off", "-k", id, NULL);
    g_assert_cmpint(d->status, ==, 0);
    g_assert_nonnull(strstr(d->out, "L0.ffn_gate, decode step 0, on gpu"));
    g_assert_nonnull(strstr(d->out, "hand-offs priced at the run's driver sync: "));
    g_unlink(rec);
    g_rmdir(dir);

    g_autoptr(Run) e = hs("explain", "--soc", "tiny", "--model", "tiny", NULL);
    g_assert_cmpint(e->status, ==, 2);
    g_autoptr(Run) f = hs("explain", "--soc", "tiny", "--model", "tiny", "--task", "L0.fn_down",
                          NULL);
    g_assert_cmpint(f->status, ==, 2);
    g_assert_nonnull(strstr(f->err, "did you mean L0.ffn_down?"));
    g_assert_cmpstr(f->out, ==, "");                 /* nothing printed before it */
}

/* A stack measured on another processor architecture says so: compare
 * prints each caveat once with its policies (QNN's mllm stack on the
 * Dimensity 9300's APU; cpu-only ran nothing there), run's JSON and CSV
 * carry it, and a run where the stack was measured has none. */
static void
test_compare_caveats(void)
{
    g_autoptr(Run) r = hs("compare", "--soc", "dimensity9300", "--model", "qwen1.5-1.8b",
                          "--prompt", "32", "--decode", "1", "--functional", "off",
                          "--policies", "cpu-only,chunked,mllm-npu", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_nonnull(strstr(r->out, "\n  caveat (chunked, mllm-npu): npu: stack mllm's figures "
                                    "for it were measured on the hexagon architecture; this "
                                    "npu's is mediatek-apu"));
    g_assert_null(strstr(r->out, "caveat (cpu-only"));
    g_autoptr(Run) j = hs("run", "--soc", "dimensity9300", "--model", "qwen1.5-1.8b",
                          "--prompt", "32", "--decode", "1", "--functional", "off",
                          "--policy", "npu-tts", "--format", "json", NULL);
    g_assert_cmpint(j->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(j->out);
    const cJSON *c = cJSON_GetObjectItem(root, "caveats");
    g_assert_true(cJSON_IsString(c));
    g_assert_true(g_str_has_prefix(c->valuestring, "npu: stack npu-tts's"));
    g_autoptr(Run) q = hs("run", "--soc", "sd8gen3", "--model", "qwen1.5-1.8b",
                          "--prompt", "32", "--decode", "1", "--functional", "off",
                          "--policy", "npu-tts", "--format", "json", NULL);
    g_assert_cmpint(q->status, ==, 0);
    g_autoptr(cJSON) qr = cJSON_Parse(q->out);
    g_assert_null(cJSON_GetObjectItem(qr, "caveats"));
    /* explain says it beside a kernel's reasoning, on that processor only */
    g_autoptr(Run) e = hs("explain", "--soc", "dimensity9300", "--model", "qwen1.5-1.8b",
                          "--prompt", "256", "--decode", "0", "--functional", "off",
                          "--policy", "mllm-npu", "--task", "L3.wq", NULL);
    g_assert_cmpint(e->status, ==, 0);
    g_assert_nonnull(strstr(e->out, "\n    caveat: npu: stack mllm's"));
    g_autoptr(Run) ec = hs("explain", "--soc", "dimensity9300", "--model", "qwen1.5-1.8b",
                           "--prompt", "256", "--decode", "0", "--functional", "off",
                           "--policy", "mllm-npu", "--task", "L3.attn", NULL);
    g_assert_cmpint(ec->status, ==, 0);
    g_assert_null(strstr(ec->out, "caveat"));
}

static void
test_compare_csv(void)
{
    g_autoptr(Run) r = hs("compare", "--soc", "tiny", "--model", "tiny", "--prompt", "33",
                          "--decode", "2", "--policies", "gpu-only,hetero-tensor",
                          "--format", "csv", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(g_strchomp(r->out), "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 3);
    g_assert_true(g_str_has_prefix(lines[0], "soc,model,policy,stack,sync,"));
    g_assert_true(g_str_has_prefix(lines[1], "tiny,tiny,gpu-only,heterollm,fast,33,2,1,"));
    g_assert_true(g_str_has_prefix(lines[2], "tiny,tiny,hetero-tensor,heterollm,fast,33,2,1,"));
    /* the values check and the heaviest op, as in the JSON (the columns
     * are the report's field table, tests/cli/test-sweep.c) */
    g_auto(GStrv) head = g_strsplit(lines[0], ",", -1);
    g_auto(GStrv) cells = g_strsplit(lines[1], ",", -1);
    /* the last three columns are the provenance: version, the command
     * (quoted: its --policies a,b holds a comma), config_hash */
    guint nh = g_strv_length(head);
    g_assert_cmpstr(head[nh - 2], ==, "command");
    g_assert_nonnull(strstr(lines[1], ",\"hetero-sim compare --soc tiny"));
    g_assert_cmpuint(g_strv_length(cells), ==, nh + 1);
    g_autoptr(GHashTable) cell = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; head[i]; i++) {
        g_hash_table_insert(cell, head[i], cells[i]);
    }
    g_assert_cmpstr(g_hash_table_lookup(cell, "values_match"), ==, "true");
    g_assert_cmpstr(g_hash_table_lookup(cell, "precision_changed"), ==, "false");  /* GPU only */
    g_assert_cmpstr(g_hash_table_lookup(cell, "heaviest_op"), ==, "ffn_down");
    g_assert_cmpfloat(g_ascii_strtod(g_hash_table_lookup(cell, "heaviest_op_share"), NULL), >,
                      0.05);
}

/* The text table ends with where the winner gains; --render adds the
 * game's frame rates. */
static void
test_compare_text(void)
{
    g_autoptr(Run) r = hs("compare", "--prompt", "256", "--decode", "2", "--functional", "off",
                          "--policies", "gpu-only,hetero-layer,hetero-tensor", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_nonnull(strstr(r->out, "  prefill: hetero-tensor is "));
    g_assert_nonnull(strstr(r->out, "x gpu-only; its heaviest op: ffn_down ("));
    g_assert_nonnull(strstr(r->out, "  decode: hetero-tensor is "));
    g_assert_null(strstr(r->out, "game FPS"));
    /* the table explains itself: a legend of its columns and units */
    g_assert_nonnull(strstr(r->out, "  columns: tok/s of prefill and decode; TTFT = prefill time"));
    g_assert_nonnull(strstr(r->out, "as % of its largest value"));
    /* columns stay aligned whatever the policies' names (transformer-lite
     * is the longest): every row's prefill figure (two decimals, then "*"
     * or a space) ends under the header's "prefill tok/s" */
    g_autoptr(Run) a = hs("compare", "--prompt", "64", "--decode", "1", "--functional", "off",
                          "--policies", "gpu-only,transformer-lite", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_auto(GStrv) al = g_strsplit(a->out, "\n", -1);
    const char *hdr_end = strstr(al[1], "prefill tok/s") + strlen("prefill tok/s");
    glong col = hdr_end - al[1];
    for (int i = 2; i <= 3; i++) {
        g_assert_cmpint((glong) strlen(al[i]), >, col);
        g_assert_true(g_ascii_isdigit(al[i][col - 3]) && al[i][col - 5] == '.');
        g_assert_true(al[i][col - 2] == '*' || al[i][col - 2] == ' ');
    }
    g_autoptr(Run) g = hs("compare", "--prompt", "64", "--decode", "2", "--functional", "off",
                          "--policies", "gpu-only", "--render", "60", NULL);
    g_assert_cmpint(g->status, ==, 0);
    g_assert_nonnull(strstr(g->out, "game FPS pre/dec"));
    g_assert_nonnull(strstr(g->out, "  prefill: gpu-only is the fastest;"));
    /* no decode steps: the decode columns say "-", not 0 tokens/s */
    g_autoptr(Run) p = hs("compare", "--prompt", "64", "--decode", "0", "--functional", "off",
                          "--policies", "gpu-only", NULL);
    g_assert_cmpint(p->status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(p->out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), >=, 3);
    g_auto(GStrv) cols = g_strsplit_set(g_strstrip(lines[2]), " ", -1);
    GPtrArray *f = g_ptr_array_new();
    for (char **c = cols; *c; c++) {
        if (**c) {
            g_ptr_array_add(f, *c);
        }
    }
    g_assert_cmpuint(f->len, >=, 8);          /* policy pre ttft dec preGB decGB J values */
    g_assert_cmpstr(f->pdata[0], ==, "gpu-only");
    g_assert_cmpstr(f->pdata[3], ==, "-");
    g_assert_cmpstr(f->pdata[5], ==, "-");
    g_assert_cmpfloat(g_ascii_strtod(f->pdata[1], NULL), >, 0);
    g_ptr_array_free(f, TRUE);
    g_autoptr(Run) bad = hs("run", "--llm-priority", "urgent", NULL);
    g_assert_cmpint(bad->status, ==, 2);
    g_assert_nonnull(strstr(bad->err, "--llm-priority: expected low or normal (got \"urgent\")"));
}

static void
test_lists(void)
{
    g_autoptr(Run) m = hs("list", "models", NULL);
    g_assert_cmpint(m->status, ==, 0);
    g_assert_nonnull(strstr(m->out, "llama-3-8b"));
    g_assert_nonnull(strstr(m->out, "8.03 B params  values+timing"));
    g_assert_nonnull(strstr(m->out, "\nphi-2              2.78 B params  values+timing "));
    g_assert_nonnull(strstr(m->out, "chatglm2-6b        6.24 B params  values+timing "));
    /* a block variant the engine does not compute: timing runs, values
     * refused by key before anything runs */
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", NULL);
    g_autofree char *glm = g_build_filename(dir, "glm-ln.json", NULL);
    g_autofree char *src = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "models",
                                            "chatglm2-6b.json", NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(src, &text, NULL, NULL));
    g_autoptr(GString) ln = g_string_new(text);
    g_assert_cmpuint(g_string_replace(ln, "\"rmsnorm\": true", "\"rmsnorm\": false", 1), ==, 1);
    g_assert_true(g_file_set_contents(glm, ln->str, -1, NULL));
    g_autoptr(Run) pv = hs("run", "--soc", "tiny", "--model", glm, "--prompt", "8",
                           "--decode", "1", NULL);
    g_assert_cmpint(pv->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: $.rmsnorm: expected true, the chatglm block "
                                            "the functional engine computes (got false); "
                                            "--functional off runs timing only", glm);
    assert_one_error_line(pv, want);
    g_assert_cmpstr(pv->out, ==, "");
    g_autoptr(Run) pt = hs("run", "--soc", "tiny", "--model", glm, "--prompt", "8",
                           "--decode", "1", "--functional", "off", NULL);
    g_assert_cmpint(pt->status, ==, 0);
    /* a model given as a file is said as one: "FILE (from NAME)" */
    g_autofree char *glm_base = g_path_get_basename(glm);
    g_autofree char *said = g_strdup_printf("%s (from glm-ln) on tiny", glm_base);
    g_assert_true(g_str_has_prefix(pt->out, said));
    g_unlink(glm);
    g_rmdir(dir);
    g_autoptr(Run) p = hs("list", "policies", NULL);
    g_assert_cmpint(p->status, ==, 0);
    g_assert_nonnull(strstr(p->out, "hetero-tensor"));
    g_assert_nonnull(strstr(p->out, "\nchunked "));
}

/* A recorded run replayed on the same SoC prints the same JSON (but the
 * host's wall time). */
static void
test_record_replay(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *rec = g_build_filename(dir, "rec.json", NULL);
    g_autoptr(Run) a = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "45",
                          "--decode", "3", "--batch", "2", "--policy", "chunked",
                          "--chunk", "16", "--functional", "full", "--format", "json",
                          "--record", rec, NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_autoptr(Run) b = hs("replay", rec, "--format", "json", NULL);
    g_assert_cmpint(b->status, ==, 0);
    assert_same_report(a->out, b->out);
    g_autoptr(cJSON) ja = cJSON_Parse(a->out), jb = cJSON_Parse(b->out);

    /* re-planned by another policy, and re-timed on another SoC */
    g_autoptr(Run) c = hs("replay", rec, "--policy", "gpu-only", "--format", "json", NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_autoptr(cJSON) jc = cJSON_Parse(c->out);
    g_assert_cmpstr(cJSON_GetObjectItem(jc, "policy")->valuestring, ==, "gpu-only");
    g_autoptr(Run) d = hs("replay", rec, "--soc", "sd8gen3", "--format", "json", NULL);
    g_assert_cmpint(d->status, ==, 0);
    g_autoptr(cJSON) jd = cJSON_Parse(d->out);
    g_assert_cmpstr(cJSON_GetObjectItem(jd, "soc")->valuestring, ==, "sd8gen3");
    /* re-timing says so, on stderr and in the JSON; --replan re-plans */
    assert_one_error_line(d, "note: re-timing the plan made for tiny on sd8gen3 (same "
                             "placements; --replan re-plans it for sd8gen3)");
    const cJSON *rd = cJSON_GetObjectItem(jd, "replay");
    g_assert_cmpstr(cJSON_GetObjectItem(rd, "plan")->valuestring, ==, "recorded");
    g_assert_cmpstr(cJSON_GetObjectItem(rd, "recorded_soc")->valuestring, ==, "tiny");
    g_autoptr(Run) d2 = hs("replay", rec, "--soc", "sd8gen3", "--replan", "--format", "json",
                           NULL);
    g_assert_cmpint(d2->status, ==, 0);
    g_assert_cmpstr(d2->err, ==, "");
    g_autoptr(cJSON) jd2 = cJSON_Parse(d2->out);
    const cJSON *rd2 = cJSON_GetObjectItem(jd2, "replay");
    g_assert_cmpstr(cJSON_GetObjectItem(rd2, "plan")->valuestring, ==, "replanned");
    g_assert_cmpstr(cJSON_GetObjectItem(jd2, "policy")->valuestring, ==, "chunked");
    /* the plain replay has no "replay" member (it is the recorded run) */
    g_assert_null(cJSON_GetObjectItem(jb, "replay"));
    /* the report says which weights the values were computed on */
    const cJSON *fa = cJSON_GetObjectItem(ja, "functional");
    g_assert_cmpstr(cJSON_GetObjectItem(fa, "weights")->valuestring, ==, "synthetic seed 1");
    /* --model DIR must be a model directory of the recorded model's shapes */
    g_autoptr(Run) m1 = hs("replay", rec, "--model", rec, NULL);
    g_assert_cmpint(m1->status, ==, 2);
    g_assert_nonnull(strstr(m1->err, "hetero-sim: --model: expected a model directory"));
    g_autofree char *mdir = g_build_filename(dir, "m", NULL);
    g_autofree char *mcfg = g_build_filename(mdir, "config.json", NULL);
    g_autofree char *tiny = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "models", "tiny.json",
                                          NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(tiny, &text, NULL, NULL));
    g_autoptr(GString) wider = g_string_new(text);
    g_string_replace(wider, "\"hidden_size\": 64", "\"hidden_size\": 128", 1);
    g_assert_cmpint(g_mkdir(mdir, 0700), ==, 0);
    g_assert_true(g_file_set_contents(mcfg, wider->str, -1, NULL));
    g_autoptr(Run) m2 = hs("replay", rec, "--model", mdir, NULL);
    g_assert_cmpint(m2->status, ==, 1);
    g_assert_nonnull(strstr(m2->err, "m/config.json: $.hidden_size: expected the recorded "
                                     "model's 64 (got 128)\n"));
    g_unlink(mcfg);
    g_rmdir(mdir);

    g_autoptr(Run) e = hs("replay", "/nonexistent.json", NULL);
    g_assert_cmpint(e->status, ==, 1);
    g_assert_cmpstr(e->err, ==, "hetero-sim: /nonexistent.json: cannot read: No such file or directory\n");
    g_unlink(rec);
    g_rmdir(dir);
}

/* Without a values check, a run with --trace and --record is streamed:
 * both files are written as it goes, complete; the recording
 * replays to the same JSON; --trace-steps keeps the steps asked for (and
 * the prefill unless --trace-no-prefill), each marked on the request's
 * track. */
static void
test_stream_trace_record(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *rec = g_build_filename(dir, "rec.json", NULL);
    g_autofree char *tr = g_build_filename(dir, "t.json", NULL);
    g_autofree char *small = g_build_filename(dir, "small.json", NULL);
    g_autoptr(Run) a = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "16",
                          "--decode", "12", "--functional", "off", "--format", "json",
                          "--record", rec, "--trace", tr, NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_autoptr(Run) b = hs("replay", rec, "--format", "json", NULL);
    g_assert_cmpint(b->status, ==, 0);
    assert_same_report(a->out, b->out);

    g_autofree char *full = NULL, *part = NULL;
    g_assert_true(g_file_get_contents(tr, &full, NULL, NULL));
    for (int s = 0; s < 12; s++) {
        g_autofree char *m = g_strdup_printf("\"name\":\"decode step %d\"", s);
        g_assert_nonnull(strstr(full, m));
    }
    g_assert_nonnull(strstr(full, "\"name\":\"prefill\",\"cat\":\"marker\""));
    g_autoptr(Run) c = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "16",
                          "--decode", "12", "--functional", "off", "--trace", small,
                          "--trace-steps", "3:4", "--trace-no-prefill", NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_assert_true(g_file_get_contents(small, &part, NULL, NULL));
    g_assert_nonnull(strstr(part, "\"name\":\"decode step 3\""));
    g_assert_nonnull(strstr(part, "\"name\":\"decode step 4\""));
    g_assert_null(strstr(part, "\"name\":\"decode step 5\""));
    g_assert_null(strstr(part, "\"phase\":\"prefill\""));
    g_assert_null(strstr(part, "\"step\":2,"));
    g_autoptr(cJSON) jp = cJSON_Parse(part);
    g_assert_nonnull(jp);
    g_assert_cmpuint(strlen(part) * 3, <, strlen(full));

    g_autoptr(Run) d = hs("run", "--soc", "tiny", "--model", "tiny", "--trace", small,
                          "--trace-steps", "4:3", NULL);
    g_assert_cmpint(d->status, ==, 2);
    assert_one_error_line(d, "run: --trace-steps: expected A:B, decode steps "
                             "0 <= A <= B (got \"4:3\")");
    g_unlink(rec);
    g_unlink(tr);
    g_unlink(small);
    g_rmdir(dir);
}

/* validate: every published point simulated; the command fails on a miss
 * that is not declared (with its reason) in the points file, and with
 * --strict on any miss. */
static void
test_validate(void)
{
    g_autoptr(Run) r = hs("validate", "--known-misses", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    g_assert_nonnull(j);
    const cJSON *rows = cJSON_GetObjectItem(j, "rows");
    g_assert_cmpint(cJSON_GetArraySize(rows), >=, 16);     /* every HeteroLLM row */
    int ok = 0;
    const cJSON *row = NULL;
    cJSON_ArrayForEach(row, rows) {
        gboolean row_ok = cJSON_IsTrue(cJSON_GetObjectItem(row, "ok"));
        const cJSON *km = cJSON_GetObjectItem(row, "known_miss");
        /* a row either meets its tolerance or says why not */
        g_assert_true(row_ok || (cJSON_IsString(km) && strlen(km->valuestring) > 20));
        /* and no row is excused while it passes */
        g_assert_true(!row_ok || km == NULL);
        /* a point a parameter was fitted to must still be met */
        const cJSON *cal = cJSON_GetObjectItem(row, "calibrated");
        g_assert_true(cal == NULL || (row_ok && cJSON_IsString(cal)));
        ok += row_ok;
        double e = cJSON_GetObjectItem(row, "error_pct")->valuedouble;
        double pub = cJSON_GetObjectItem(row, "published")->valuedouble;
        double sim = cJSON_GetObjectItem(row, "simulated")->valuedouble;
        const cJSON *rng = cJSON_GetObjectItem(row, "published_range");
        if (rng == NULL) {
            g_assert_cmpfloat(fabs(100 * (sim - pub) / pub - e), <, 1e-6);
        } else {
            /* a range is met anywhere inside; outside, the error is the
             * distance to the nearer bound */
            const cJSON *lo = cJSON_GetArrayItem(rng, 0), *hi = cJSON_GetArrayItem(rng, 1);
            gboolean in = (cJSON_IsNull(lo) || sim >= lo->valuedouble) &&
                          (cJSON_IsNull(hi) || sim <= hi->valuedouble);
            g_assert_cmpint(in, ==, row_ok);
            g_assert_true(!in || e == 0);
        }
    }
    g_assert_cmpint(ok, >=, 18);
    if (ok < cJSON_GetArraySize(rows)) {
        g_autoptr(Run) strict = hs("validate", "--strict", NULL);
        g_assert_cmpint(strict->status, ==, 1);
        g_autoptr(Run) plain = hs("validate", NULL);          /* every miss declared */
        g_assert_cmpint(plain->status, ==, 0);
    }

    /* a point the model misses without saying why fails the command */
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *pts = g_build_filename(dir, "p.json", NULL);
    g_assert_true(g_file_set_contents(pts,
        "{\"points\":[{\"id\":\"x\",\"paper\":\"none\",\"soc\":\"sd8gen3\","
        "\"model\":\"llama-3-8b\",\"metric\":\"decode_tokens_per_s\",\"policy\":\"gpu-only\","
        "\"sync\":\"fast\",\"workload\":{\"prompt\":16,\"decode\":2,\"batch\":1},"
        "\"published\":1000,\"tolerance_pct\":15}]}", -1, NULL));
    g_autoptr(Run) m = hs("validate", "--known-misses", "--points", pts, NULL);
    g_assert_cmpint(m->status, ==, 1);
    assert_one_error_line(m, "validate: some points are outside their tolerance and not "
                             "declared known misses");
    g_assert_nonnull(strstr(m->out, "| x | none | decode_tokens_per_s | 1000 |"));

    /* --out writes the table and plot whatever the verdict; the exit
     * status is validate's: 0 for a declared miss, 1 with --strict (out of
     * the box, `validate --out DIR` succeeds while every miss is declared) */
    g_assert_true(g_file_set_contents(pts,
        "{\"points\":[{\"id\":\"x\",\"paper\":\"none\",\"soc\":\"sd8gen3\","
        "\"model\":\"llama-3-8b\",\"metric\":\"decode_tokens_per_s\",\"policy\":\"gpu-only\","
        "\"sync\":\"fast\",\"workload\":{\"prompt\":16,\"decode\":2,\"batch\":1},"
        "\"published\":1000,\"tolerance_pct\":15,\"known_miss\":\"a test: declared to miss "
        "by two orders of magnitude\"}]}", -1, NULL));
    g_autofree char *out = g_build_filename(dir, "out", NULL);
    g_autofree char *svg = g_build_filename(out, "validate.svg", NULL);
    g_autofree char *csv = g_build_filename(out, "validate.csv", NULL);
    g_autoptr(Run) o1 = hs("validate", "--points", pts, "--out", out, "--strict", NULL);
    g_assert_cmpint(o1->status, ==, 1);
    g_assert_true(g_file_test(svg, G_FILE_TEST_EXISTS));
    g_unlink(svg);
    g_autoptr(Run) o2 = hs("validate", "--points", pts, "--out", out, NULL);
    g_assert_cmpint(o2->status, ==, 0);
    g_autoptr(Run) o3 = hs("validate", "--points", pts, "--strict", "--known-misses", NULL);
    g_assert_cmpint(o3->status, ==, 2);
    assert_one_error_line(o3, "validate: --strict and --known-misses contradict each other");
    g_autofree char *table = NULL;
    g_assert_true(g_file_get_contents(csv, &table, NULL, NULL));
    g_assert_true(g_str_has_prefix(table, "file,id,metric,published,simulated,error_pct,"
                                          "tolerance_pct,ok,version,command,config_hash\n"));
    g_assert_nonnull(strstr(table, ",hetero-sim validate --points "));
    g_autofree char *plot = NULL;
    g_assert_true(g_file_get_contents(svg, &plot, NULL, NULL));
    /* the legend, and this point drawn as a known miss in its own band */
    g_assert_nonnull(strstr(plot, ">known miss</text>"));
    g_assert_nonnull(strstr(plot, ">ok, calibrated</text>"));
    g_assert_nonnull(strstr(plot, "fill=\"#e08a00\"/>\n<text"));
    g_unlink(svg);
    g_unlink(csv);
    g_rmdir(out);

    g_assert_true(g_file_set_contents(pts, "{\"points\":[{\"id\":\"x\"}]}", -1, NULL));
    g_autoptr(Run) b = hs("validate", "--points", pts, NULL);
    g_assert_cmpint(b->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: $.points[0]: missing required key \"paper\" "
                                            "(a non-empty string, paper and section)", pts);
    assert_one_error_line(b, want);
    g_unlink(pts);
    g_rmdir(dir);
}

/* The simulated value of validate's row @id, from its JSON output. */
static double
validate_value(const Run *r, const char *id)
{
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    g_assert_nonnull(j);
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "rows")) {
        if (strcmp(cJSON_GetObjectItem(row, "id")->valuestring, id) == 0) {
            return cJSON_GetObjectItem(row, "simulated")->valuedouble;
        }
    }
    g_assert_not_reached();
}

/* validate --sensitivity's entry for @key in its JSON output @j. */
static const cJSON *
sensitivity_key(const cJSON *j, const char *key)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItem(j, "keys")) {
        if (strcmp(cJSON_GetObjectItem(k, "key")->valuestring, key) == 0) {
            return k;
        }
    }
    return NULL;
}

/* Row @id's simulated value at one end (@end "lower" / "higher") of a
 * key's range; @plain (the table's value) when the row did not move. */
static double
sensitivity_row(const cJSON *key, const char *end, const char *id, double plain)
{
    const cJSON *r = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(key, end),
                                                             "rows"), id);
    return r ? cJSON_GetObjectItem(r, "simulated")->valuedouble : plain;
}

/* validate --sensitivity 20 on one key of mllm's stack (with --derived
 * if @derived): npu-over-cpu-qwen-256's value at its lower and higher
 * end. */
static void
mllm_cpu_share_ends(const char *key, gboolean derived, double *lo, double *hi)
{
    g_autoptr(Run) r = hs("validate", "--sensitivity", "20", "--keys", key, "--only",
                          "npu-over-cpu-qwen-256", "-f", "json",
                          derived ? "--derived" : NULL, NULL);
    assert_ok(r);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    const cJSON *e = sensitivity_key(j, key);
    g_assert_nonnull(e);
    *lo = sensitivity_row(e, "lower", "npu-over-cpu-qwen-256", 0);
    *hi = sensitivity_row(e, "higher", "npu-over-cpu-qwen-256", 0);
}

/* validate --sensitivity: each assumed constant scaled down and up; a
 * row's value there is what `validate --set KEY=VALUE` gives; a stack key
 * reaches the stacks inheriting it; integer keys are rounded; a value the
 * loader refuses is reported, not fatal. */
static void
test_validate_sensitivity(void)
{
    const char *only = "decode-fast-vs-driver,npu-time-qwen-256,npu-over-cpu-qwen-256,"
                       "prefill-layer-vs-llama-cpp-256";
    g_autoptr(Run) r = hs("validate", "--only", only, "--sensitivity", "20", "--keys",
                          "sync.driver.*,npu.arrays,cpu.idle_w,stack@llama-cpp.cpu.call_us,"
                          "stack@heterollm.cpu.simd_efficiency", "-f", "json", NULL);
    assert_ok(r);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    g_assert_nonnull(j);
    g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItem(j, "keys")), ==, 6);
    g_autoptr(Run) t = hs("validate", "--only", only, "-f", "json", NULL);
    assert_ok(t);
    const double driver = validate_value(t, "decode-fast-vs-driver");
    const double npu = validate_value(t, "npu-time-qwen-256");

    /* finish_us 90 -> 72 and 108: the driver path's gain moves, as --set
     * moves it; the NPU's time does not */
    const cJSON *f = sensitivity_key(j, "sync.driver.finish_us");
    g_assert_nonnull(f);
    g_autoptr(Run) lo = hs("validate", "--only", only, "--set", "sync.driver.finish_us=72",
                           "-f", "json", NULL);
    g_assert_cmpint(lo->status, <=, 1);         /* 1: a row outside its tolerance */
    g_assert_cmpfloat(sensitivity_row(f, "lower", "decode-fast-vs-driver", driver), ==,
                      validate_value(lo, "decode-fast-vs-driver"));
    g_assert_cmpfloat(validate_value(lo, "decode-fast-vs-driver"), <, driver);
    g_assert_cmpfloat(sensitivity_row(f, "higher", "decode-fast-vs-driver", driver), >, driver);
    g_assert_cmpfloat(sensitivity_row(f, "lower", "npu-time-qwen-256", npu), ==, npu);
    /* 0 cannot be scaled */
    g_assert_nonnull(cJSON_GetObjectItem(sensitivity_key(j, "sync.driver.maint_gbps"),
                                         "not_scaled"));

    /* an integer key: 8 arrays -> 6 and 10, as --set npu.arrays=6 */
    const cJSON *a = sensitivity_key(j, "npu.arrays");
    g_assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "lower"),
                                                   "rounded")));
    g_autoptr(Run) six = hs("validate", "--only", "npu-time-qwen-256", "--set", "npu.arrays=6",
                            "-f", "json", NULL);
    g_assert_cmpint(six->status, <=, 1);
    g_assert_cmpfloat(sensitivity_row(a, "lower", "npu-time-qwen-256", npu), ==,
                      validate_value(six, "npu-time-qwen-256"));
    g_assert_cmpfloat(validate_value(six, "npu-time-qwen-256"), >, npu * 1.1);

    /* a stack key is changed in every stack inheriting it, not in one that
     * sets its own (mnn-cpu's call_us) */
    const cJSON *set = cJSON_GetObjectItem(sensitivity_key(j, "stack@llama-cpp.cpu.call_us"),
                                           "set");
    g_assert_nonnull(cJSON_GetObjectItem(set, "stack@llama-cpp.cpu.call_us"));
    g_assert_nonnull(cJSON_GetObjectItem(set, "stack@llama-cpp-heterollm.cpu.call_us"));
    g_assert_null(cJSON_GetObjectItem(set, "stack@mnn-cpu.cpu.call_us"));

    /* an efficiency of 1.2 is refused by the stack's loader; 0.8 runs */
    const cJSON *e = sensitivity_key(j, "stack@heterollm.cpu.simd_efficiency");
    g_assert_nonnull(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "higher"),
                                                "refused")->valuestring,
                            "expected a number in [0.001, 1] (got 1.2)"));
    g_assert_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "lower"), "mape_pct"));

    /* --refit: mllm's calibrated NPU efficiency is fitted again to its
     * row under 6 arrays, which absorbs most of the change: its row back
     * at its value, the predicted rows moving < 2 % where they moved
     * > 10 % with the efficiency held */
    g_autoptr(Run) rf = hs("validate", "--sensitivity", "20", "--refit", "--keys", "npu.arrays",
                           "--only", "npu-*,shadow-*", "-f", "json", NULL);
    assert_ok(rf);
    g_autoptr(cJSON) jr = cJSON_Parse(rf->out);
    const cJSON *lower = cJSON_GetObjectItem(sensitivity_key(jr, "npu.arrays"), "lower");
    const cJSON *eff = cJSON_GetObjectItem(cJSON_GetObjectItem(lower, "refit"),
                                           "stack@mllm.npu.matmul_efficiency");
    g_assert_nonnull(eff);
    g_assert_cmpfloat(eff->valuedouble, >, 0.0905 * 8 / 6 * 0.9);   /* fewer arrays, */
    g_assert_cmpfloat(eff->valuedouble, <, 0.0905 * 8 / 6 * 1.1);   /* higher share */
    g_assert_cmpfloat(fabs(sensitivity_row(sensitivity_key(jr, "npu.arrays"), "lower",
                                           "npu-time-qwen-256", npu) / npu - 1), <, 0.01);
    const cJSON *moved;
    cJSON_ArrayForEach(moved, cJSON_GetObjectItem(lower, "rows")) {
        if (strcmp(moved->string, "npu-time-qwen-256") != 0) {
            g_assert_cmpfloat(fabs(cJSON_GetObjectItem(moved, "change_pct")->valuedouble), <, 2);
        }
    }
    g_autoptr(Run) held = hs("validate", "--sensitivity", "20", "--keys", "npu.arrays",
                             "--only", "npu-*,shadow-*", "-f", "json", NULL);
    g_autoptr(cJSON) jh = cJSON_Parse(held->out);
    const cJSON *over = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
        cJSON_GetObjectItem(sensitivity_key(jh, "npu.arrays"), "lower"), "rows"),
        "npu-over-cpu-qwen-256"), "change_pct");
    g_assert_cmpfloat(fabs(over->valuedouble), >, 10);

    /* the text form ranks the keys: npu.arrays moves a row most */
    g_autoptr(Run) text = hs("validate", "--only", only, "--sensitivity", "20", "--keys",
                             "npu.arrays,cpu.idle_w,sync.driver.finish_us", NULL);
    assert_ok(text);
    const char *arrays = strstr(text->out, "| npu.arrays |");
    const char *finish = strstr(text->out, "| sync.driver.finish_us |");
    g_assert_nonnull(arrays);
    g_assert_nonnull(finish);
    g_assert_true(arrays < finish);
    g_assert_nonnull(strstr(text->out, "moved no row by 0.1 % or more (1): cpu.idle_w"));

    /* mllm's float kernels' share (assumed: no measurement of them) moves
     * its CPU share at 256 tokens by about its own scale; --derived adds
     * the keys whose source begins "derived", such as its linears' share
     * (from §2.2's INT8 ratio), which moves that row far less */
    double s_lo, s_hi;
    mllm_cpu_share_ends("stack@mllm.cpu.float_efficiency", FALSE, &s_lo, &s_hi);
    g_assert_cmpfloat(s_lo, <, 0.9 * s_hi);
    mllm_cpu_share_ends("stack@mllm.cpu.simd_efficiency", TRUE, &s_lo, &s_hi);
    g_assert_cmpfloat(s_lo, <, s_hi);
    g_assert_cmpfloat(s_lo, >, 0.95 * s_hi);
    g_autoptr(Run) nd = hs("validate", "--sensitivity", "20", "--keys",
                           "stack@mllm.cpu.simd_efficiency", NULL);
    g_assert_cmpint(nd->status, !=, 0);          /* derived, not assumed: none matches */

    g_autoptr(Run) k = hs("validate", "--sensitivity", "20", "--keys", "nope", NULL);
    g_assert_cmpint(k->status, !=, 0);
    assert_one_error_line(k, "validate: --keys: expected a pattern matching an assumed key "
                          "such as npu.stationary_kib or stack@heterollm.cpu.call_us (got none "
                          "matching)");
    g_autoptr(Run) k2 = hs("validate", "--keys", "npu.*", NULL);
    assert_one_error_line(k2, "validate: --keys: expected --sensitivity PCT beside it");
    g_autoptr(Run) k3 = hs("validate", "--refit", NULL);
    assert_one_error_line(k3, "validate: --refit: expected --sensitivity PCT beside it");
    g_autoptr(Run) z = hs("validate", "--sensitivity", "0", NULL);
    assert_one_error_line(z, "validate: --sensitivity: expected a percentage in (0, 100) "
                          "(got 0)");
    g_autoptr(Run) o = hs("validate", "--sensitivity", "20", "--out", "/tmp/x", NULL);
    assert_one_error_line(o, "validate: --out writes the table's files; expected it without "
                          "--sensitivity");

    /* soc@NAME edits that SoC only */
    g_autoptr(Run) sa = hs("run", "--functional", "off", "-d", "1", "-P", "gpu-only",
                           "--set", "soc@nope.npu.arrays=6", NULL);
    assert_one_error_line(sa, "--set soc@nope.npu.arrays=6: no SoC \"nope\" (hetero-sim list "
                          "socs)");
    g_autoptr(Run) sb = hs("run", "--functional", "off", "-d", "1", "-P", "gpu-only", "-s",
                           "sd8gen2", "--set", "soc@sd8gen3.npu.arrays=6", NULL);
    assert_ok(sb);
    g_assert_nonnull(strstr(sb->err, "changes nothing (it edits the SoC sd8gen3; this run's "
                            "is sd8gen2)"));

    /* stack@NAME: a bad value is refused though the run does not use that
     * stack, and a good one is said to change nothing; the run's own stack
     * takes it */
    g_autoptr(Run) sc = hs("run", "--functional", "off", "-d", "1", "-P", "gpu-only",
                           "--set", "stack@mllm.cpu.float_efficiency=2", NULL);
    g_assert_cmpint(sc->status, ==, 2);
    assert_one_error_line(sc, "--set stack@mllm.cpu.float_efficiency=2: expected a number in "
                          "[0, 1] (got 2)");
    g_autoptr(Run) sf = hs("soc", "show", "sd8gen3", "--set",
                           "stack@mllm.cpu.float_efficiency=2", NULL);
    assert_one_error_line(sf, "--set stack@mllm.cpu.float_efficiency=2: expected a number in "
                          "[0, 1] (got 2)");
    g_autoptr(Run) sd = hs("run", "--functional", "off", "-d", "1", "-P", "gpu-only",
                           "--set", "stack@mllm.cpu.float_efficiency=0.4", NULL);
    assert_ok(sd);
    g_assert_nonnull(strstr(sd->err, "changes nothing (it edits the stack mllm; this run's "
                            "is heterollm)"));
    g_autoptr(Run) se = hs("run", "--functional", "off", "-d", "1", "-P", "mllm-npu", "-m",
                           "qwen1.5-1.8b", "--set", "stack@mllm.cpu.float_efficiency=0.4", NULL);
    assert_ok(se);
    g_assert_null(strstr(se->err, "changes nothing"));

    /* soc show says what it does not show: another SoC's key, a stack's */
    g_autoptr(Run) so = hs("soc", "show", "sd8gen2", "--set", "soc@sd8gen3.npu.arrays=6",
                           "--set", "stack@mllm.cpu.call_us=5", NULL);
    assert_ok(so);
    g_assert_null(strstr(so->out, "--set soc@sd8gen3"));
    g_assert_nonnull(strstr(so->err, "--set soc@sd8gen3.npu.arrays=6 changes nothing (it edits "
                            "the SoC sd8gen3; this one is sd8gen2)"));
    g_assert_nonnull(strstr(so->err, "--set stack@mllm.cpu.call_us=5 is checked but not "
                            "shown"));

    /* stack show takes stack keys as run does, and only those: the
     * changed value is shown with the option as its source */
    g_autoptr(Run) sh = hs("stack", "show", "mllm", "--set", "stack.cpu.float_efficiency=0.8",
                           "--set", "stack@mllm.cpu.call_us=5", NULL);
    assert_ok(sh);
    g_assert_nonnull(strstr(sh->out, "[--set stack.cpu.float_efficiency=0.8]"));
    g_assert_nonnull(strstr(sh->out, "[--set stack@mllm.cpu.call_us=5]"));
    g_assert_null(strstr(sh->err, "changes nothing"));
    g_autoptr(Run) sho = hs("stack", "show", "mllm", "--set", "stack@heterollm.cpu.call_us=5",
                            NULL);
    assert_ok(sho);
    g_assert_null(strstr(sho->out, "--set stack@heterollm"));
    g_assert_nonnull(strstr(sho->err, "changes nothing (it edits the stack heterollm; this "
                             "one is mllm)"));
    g_autoptr(Run) shs = hs("stack", "show", "mllm", "--set", "npu.arrays=4", NULL);
    g_assert_cmpint(shs->status, ==, 2);
    assert_one_error_line(shs, "stack show: --set npu.arrays=4 changes a SoC, not a stack "
                          "(stack.KEY or stack@NAME.KEY)");
    g_autoptr(Run) shb = hs("stack", "show", "mllm", "--set", "stack.cpu.float_efficiency=2",
                            NULL);
    assert_one_error_line(shb, "--set stack.cpu.float_efficiency=2: expected a number in "
                          "[0, 1] (got 2)");

    /* --set indexes an array: an operating point's key */
    g_autoptr(Run) ix = hs("run", "--functional", "off", "-d", "1",
                           "--set", "gpu.dvfs.points.12.volt_mv=700", NULL);
    g_assert_cmpint(ix->status, !=, 0);
    assert_one_error_line(ix, "--set gpu.dvfs.points.12.volt_mv=700: "
                          "$.processors[1].dvfs.points is an array of 12: expected an index in "
                          "[0, 11] (got \"12\")");
    g_autoptr(Run) ok = hs("run", "--functional", "off", "-d", "1", "-P", "gpu-only", "-f",
                           "json", "--set", "gpu.dvfs.points.11.volt_mv=900", NULL);
    assert_ok(ok);
}

/* Prefill energy per token (J) of `run` with @policy, as its report says. */
static double
prefill_j_per_token(const char *policy)
{
    g_autoptr(Run) r = hs("run", "-P", policy, "-p", "64", "-d", "0", "--functional", "off",
                          "--format", "json", NULL);
    assert_ok(r);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    double e = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "energy"), "prefill_j")->valuedouble;
    g_assert_cmpfloat(e, >, 0);
    return e / 64;
}

/* Points may read energy (a saving: the baseline's joules per token over
 * the run's) and a game beside the LLM (its frame rate per phase; a
 * baseline with or without the game). */
static void
test_validate_energy_game(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *pts = g_build_filename(dir, "p.json", NULL);
#define PT(id, metric, policy, extra, wl) \
    "{\"id\":\"" id "\",\"paper\":\"none\",\"soc\":\"sd8gen3\",\"model\":\"llama-3-8b\"," \
    "\"metric\":\"" metric "\",\"policy\":\"" policy "\",\"sync\":\"fast\"," extra \
    "\"workload\":{\"prompt\":64,\"decode\":" wl "},\"published\":1,\"tolerance_pct\":10," \
    "\"known_miss\":\"a test of the metric, not of the model\"}"
    g_assert_true(g_file_set_contents(pts, "{\"points\":["
        PT("energy", "prefill_energy_saving", "hetero-layer",
           "\"baseline\":{\"policy\":\"gpu-only\",\"sync\":\"fast\"},", "0,\"batch\":1") ","
        PT("fps-normal", "prefill_fps", "gpu-only", "",
           "0,\"batch\":1,\"render_fps\":60") ","
        PT("fps-low", "prefill_fps", "gpu-only", "",
           "0,\"batch\":1,\"render_fps\":60,\"llm_priority\":\"low\"") ","
        PT("fps-decode", "decode_fps", "hetero-tensor", "",
           "8,\"batch\":1,\"render_fps\":30,\"llm_priority\":\"low\"") ","
        PT("game-cost", "prefill_speedup", "gpu-only",
           "\"baseline\":{\"policy\":\"gpu-only\",\"sync\":\"fast\",\"render_fps\":0},",
           "0,\"batch\":1,\"render_fps\":60,\"llm_priority\":\"low\",\"frame_ms\":4") "]}",
        -1, NULL));
#undef PT
    g_autoptr(Run) r = hs("validate", "--points", pts, "--format", "json", NULL);
    assert_ok(r);
    /* what the two runs' reports say, divided */
    double saving = prefill_j_per_token("gpu-only") / prefill_j_per_token("hetero-layer");
    g_assert_cmpfloat(saving, >, 1.5);            /* the NPU's matmuls cost less energy */
    g_assert_cmpfloat(fabs(validate_value(r, "energy") / saving - 1), <, 1e-9);
    /* an LLM filling the GPU's queue at the game's priority starves it;
     * at low priority the game keeps its 60 (30) frames a second */
    g_assert_cmpfloat(validate_value(r, "fps-normal"), <, 3);
    g_assert_cmpfloat(validate_value(r, "fps-low"), >, 57);
    /* (frames finished over ~0.6 s of decode: a frame more or less is 6 %) */
    g_assert_cmpfloat(fabs(validate_value(r, "fps-decode") - 30), <, 3);
    /* the game's 4 ms a frame cost the LLM's GPU-only prefill ~a quarter */
    double cost = validate_value(r, "game-cost");
    g_assert_cmpfloat(cost, >, 0.6);
    g_assert_cmpfloat(cost, <, 0.9);
    g_unlink(pts);
    g_rmdir(dir);
}

/* validate runs every paper's points file by default: a row per point
 * of each, the mean error per paper, and the fitted parameters apart. */
static void
test_validate_papers(void)
{
    g_autoptr(Run) r = hs("validate", "--known-misses", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    const cJSON *papers = cJSON_GetObjectItem(j, "papers");
    const char *want[] = { "heterollm", "mllm-npu", "npu-tts", "transformer-lite" };
    g_assert_cmpint(cJSON_GetArraySize(papers), ==, G_N_ELEMENTS(want));
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        const cJSON *p = cJSON_GetArrayItem(papers, (int) i);
        g_assert_cmpstr(cJSON_GetObjectItem(p, "file")->valuestring, ==, want[i]);
        g_assert_cmpint(cJSON_GetObjectItem(p, "points")->valueint, >=, 3);
        /* the rows each paper's mechanisms predict (known misses apart:
         * those wait for numbers the points files name) within 10 % */
        g_assert_cmpfloat(cJSON_GetObjectItem(p, "mape_known_misses_apart_pct")->valuedouble,
                          <=, 10.0);
    }
    /* --only: the rows whose ids match, and the means over those */
    g_autoptr(Run) o = hs("validate", "--only", "naive-*, vs-cpu-1024", "--format", "json",
                          NULL);
    assert_ok(o);
    g_autoptr(cJSON) oj = cJSON_Parse(o->out);
    const cJSON *orows = cJSON_GetObjectItem(oj, "rows");
    g_assert_cmpint(cJSON_GetArraySize(orows), ==, 4);
    const char *oid[] = { "naive-vs-cpu-qwen1.5-1.8b", "naive-vs-cpu-gemma-2b",
                          "naive-vs-cpu-llama-2-7b", "vs-cpu-1024" };
    for (guint i = 0; i < G_N_ELEMENTS(oid); i++) {
        g_assert_cmpstr(cJSON_GetObjectItem(cJSON_GetArrayItem(orows, (int) i), "id")
                        ->valuestring, ==, oid[i]);
    }
    /* what computed them, as every output says it */
    const cJSON *prov = cJSON_GetObjectItem(oj, "provenance");
    g_assert_true(g_str_has_prefix(cJSON_GetObjectItem(prov, "command")->valuestring,
                                   "hetero-sim validate --only "));
    g_assert_nonnull(cJSON_GetObjectItem(prov, "version"));
    const cJSON *opapers = cJSON_GetObjectItem(oj, "papers");
    g_assert_cmpint(cJSON_GetArraySize(opapers), ==, 1);
    g_assert_cmpint(cJSON_GetObjectItem(cJSON_GetArrayItem(opapers, 0), "points")->valueint,
                    ==, 4);
    g_autoptr(Run) none = hs("validate", "--only", "nope*", NULL);
    g_assert_cmpint(none->status, ==, 2);
    assert_one_error_line(none, "validate: --only: expected the id of a point, or a pattern "
                                "matching one (got \"nope*\"; 'hetero-sim validate' lists "
                                "them)");
    g_assert_cmpstr(none->out, ==, "");

    g_autoptr(Run) t = hs("validate", "--known-misses", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_assert_true(g_str_has_suffix(t->out, ": hetero-sim validate --known-misses\n"));
    g_assert_nonnull(strstr(t->out, "| paper | points | predicted | MAPE, predicted |"));
    g_assert_nonnull(strstr(t->out, "| heterollm | prefill-layer-vs-gpu-256 | "));
    g_assert_nonnull(strstr(t->out, "| all papers | "));
}

/* Broken points files: one line naming the JSON path, exit 1, no output. */
static void
test_bad_points(void)
{
    static const char *const cases[][2] = {
        { "prompt-zero.json", "$.points[0].workload.prompt: expected an integer in [1, 32768] (got 0)" },
        { "prompt-huge.json", "$.points[0].workload.prompt: expected an integer in [1, 32768] (got 1000000000000)" },
        { "prompts-negative.json", "$.points[0].workload.prompts[1]: expected an integer in [1, 32768] (got -1)" },
        { "prompts-empty.json", "$.points[0].workload.prompts: expected an array of 1 to 64 prompt lengths (got 0 of them)" },
        { "prompts-fraction.json", "$.points[0].workload.prompts[0]: expected an integer in [1, 32768] (got 64.5)" },
        { "prompt-and-prompts.json", "$.points[0].workload: expected exactly one of \"prompt\" and \"prompts\" (got both)" },
        { "batch-zero.json", "$.points[0].workload.batch: expected an integer in [1, 256] (got 0)" },
        { "range-reversed.json", "$.points[0].published_range[1]: expected a bound at least the lower one, 2 (got 1)" },
        { "range-open-both.json", "$.points[0].published_range: expected at least one finite bound (got [null, null])" },
        { "unknown-key.json", "$.points[0]: unknown key \"tolerance\" (known keys: id, paper, soc, model, metric, policy, sync, baseline, workload, published, published_range, tolerance_pct, known_miss, calibrated, note, stack)" },
        /* the range and notes on the param table's array kinds */
        { "range-three.json", "$.points[0].published_range: expected [lo, hi] with each in [1e-09, 1000000000] or null for an open end (got an array)" },
        { "range-string.json", "$.points[0].published_range[1]: expected a number in [1e-09, 1000000000] or null (got \"2\")" },
        { "notes-number.json", "$.notes[1]: expected a string (got 3)" },
        { "bad-sync.json", "$.points[0].sync: expected one of fast, driver (got \"slow\")" },
        { "ratio-no-baseline.json", "$.points[0]: missing key \"baseline\" (a prefill_speedup compares two runs)" },
        { "fps-no-game.json", "$.points[0].workload.render_fps: expected a frame rate above 0 for a prefill_fps point (got none)" },
        { "priority-bad.json", "$.points[0].workload.llm_priority: expected one of normal, low (got \"high\")" },
        { "game-baseline-fps-negative.json", "$.points[0].baseline.render_fps: expected a number in [0, 1000] (got -5)" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                                 "bad-points", cases[i][0], NULL);
        g_autoptr(Run) r = hs("validate", "--points", path, NULL);
        g_assert_cmpint(r->status, ==, 1);
        g_autofree char *want = g_strdup_printf("%s: %s", path, cases[i][1]);
        assert_one_error_line(r, want);
        g_assert_cmpstr(r->out, ==, "");
    }
}

static void
test_infer(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *dump = g_build_filename(dir, "logits.bin", NULL);
    g_autoptr(Run) r = hs("infer", "--model", "tiny", "--tokens", "1,2,3,4,5", "--steps", "3",
                          "--format", "json", "--dump-logits", dump, NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    g_assert_cmpstr(cJSON_GetObjectItem(j, "model")->valuestring, ==, "tiny");
    g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItem(j, "tokens")), ==, 3);
    g_assert_cmpint(cJSON_GetObjectItem(j, "steps")->valueint, ==, 3);
    /* 5 prompt positions + 3 steps, 256 float32 logits each */
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(dump, &bytes, &len, NULL));
    g_assert_cmpuint(len, ==, 8 * 256 * 4);
    /* the generated tokens are the argmax of the previous row */
    const float *lg = (const float *) bytes;
    for (int s = 0; s < 3; s++) {
        const float *row = lg + (4 + s) * 256;
        int best = 0;
        for (int i = 1; i < 256; i++) {
            best = row[i] > row[best] ? i : best;
        }
        g_assert_cmpint(best, ==,
                        cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tokens"), s)->valueint);
    }
    g_autoptr(Run) b = hs("infer", "--model", "tiny", "--tokens", "1,x", NULL);
    g_assert_cmpint(b->status, ==, 2);
    assert_one_error_line(b, "--tokens: expected comma-separated token ids in [0, 256) (got \"x\")");
    g_autoptr(Run) c = hs("infer", "--model", "tiny", "--tokens", "999", NULL);
    g_assert_cmpint(c->status, ==, 2);
    g_autoptr(Run) d = hs("infer", "--model", dir, "--tokens", "1", NULL);
    g_assert_cmpint(d->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s/config.json: cannot read: No such file or directory", dir);
    assert_one_error_line(d, want);

    /* dimensions at the spec's bounds: ~25 TB of weights, refused before
     * any is made, and no logits file left behind */
    g_unlink(dump);
    g_autofree char *big = g_build_filename(dir, "big.json", NULL);
    g_assert_true(g_file_set_contents(big,
        "{\"model_type\":\"llama\",\"hidden_size\":65536,\"intermediate_size\":262144,"
        "\"num_hidden_layers\":1024,\"num_attention_heads\":64,\"vocab_size\":1048576}",
        -1, NULL));
    g_autoptr(Run) e = hs("infer", "--model", big, "--tokens", "1", "--steps", "2",
                          "--dump-logits", dump, NULL);
    g_assert_cmpint(e->status, ==, 2);
    g_assert_true(g_str_has_prefix(e->err, "hetero-sim: infer: big with w4a16 weights over 3 "
                                           "positions needs about "));
    g_assert_nonnull(strstr(e->err, " GiB; try a smaller model\n"));
    g_assert_false(g_file_test(dump, G_FILE_TEST_EXISTS));
    g_unlink(big);
    g_rmdir(dir);
}

static void
test_probe(void)
{
    g_autoptr(Run) o = hs("probe", "--what", "npu-order", "--format", "json", NULL);
    g_assert_cmpint(o->status, ==, 0);
    g_autoptr(cJSON) jo = cJSON_Parse(o->out);
    g_assert_cmpstr(cJSON_GetObjectItem(jo, "probe")->valuestring, ==, "npu-order");
    const cJSON *rows = cJSON_GetObjectItem(jo, "rows");
    g_assert_cmpint(cJSON_GetArraySize(rows), ==, 7);               /* K = 32 .. 2048 */
    g_assert_cmpfloat(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "k")->valuedouble, ==, 32);
    g_assert_cmpfloat(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "ratio")->valuedouble, >, 1);
    /* what computed it, as every output says: JSON's provenance, the
     * text's last line */
    const cJSON *prov = cJSON_GetObjectItem(jo, "provenance");
    g_assert_cmpstr(cJSON_GetObjectItem(prov, "command")->valuestring, ==,
                    "hetero-sim probe --what npu-order --format json");
    g_assert_nonnull(cJSON_GetObjectItem(prov, "version"));
    g_autoptr(Run) ot = hs("probe", "--what", "sync", NULL);
    g_assert_cmpint(ot->status, ==, 0);
    g_assert_true(g_str_has_suffix(ot->out, ": hetero-sim probe --what sync\n"));

    g_autoptr(Run) m = hs("probe", "--what", "membw", "--format", "json", NULL);
    g_assert_cmpint(m->status, ==, 0);
    g_autoptr(cJSON) jm = cJSON_Parse(m->out);
    const cJSON *single = cJSON_GetObjectItem(jm, "single_gbps");
    g_assert_cmpfloat(cJSON_GetObjectItem(single, "gpu")->valuedouble, >=, 40);
    g_assert_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(jm, "pair_gbps"), "gpu+npu"));
    g_assert_nonnull(cJSON_GetObjectItem(jm, "all_gbps"));
    g_assert_cmpfloat(cJSON_GetObjectItem(jm, "peak_gbps")->valuedouble, ==, 68);
    /* contention the right way round: two streams together move more than
     * either alone, each getting less than alone (tiny: GPU 12, NPU 4 GB/s,
     * ceiling 16) */
    g_autoptr(Run) mt = hs("probe", "--what", "membw", "--soc", "tiny", "--format", "json", NULL);
    g_assert_cmpint(mt->status, ==, 0);
    g_autoptr(cJSON) jt = cJSON_Parse(mt->out);
    double g1 = cJSON_GetObjectItem(cJSON_GetObjectItem(jt, "single_gbps"), "gpu")->valuedouble;
    double gn = cJSON_GetObjectItem(cJSON_GetObjectItem(jt, "pair_gbps"), "gpu+npu")->valuedouble;
    g_assert_cmpfloat(gn, >, g1);
    const cJSON *pr = cJSON_GetArrayItem(cJSON_GetObjectItem(jt, "rows"), 3);
    g_assert_cmpstr(cJSON_GetObjectItem(pr, "set")->valuestring, ==, "gpu+npu");
    double sg = cJSON_GetObjectItem(pr, "gpu_gbps")->valuedouble;
    double sn = cJSON_GetObjectItem(pr, "npu_gbps")->valuedouble;
    g_assert_cmpfloat(fabs(sg + sn - gn), <, 1e-9);
    g_assert_cmpfloat(sg, <=, g1 + 1e-9);
    g_assert_cmpfloat(sg + sn, <=, 16 * 1.001);

    /* every policy at every length, through the simulator: hetero-tensor is
     * the fastest W4A16 policy at each (HeteroLLM §5.2), padding shows as
     * steps.  The other papers' systems run other precisions (mllm-npu's
     * INT8 is faster at some lengths) and are not compared here. */
    g_autoptr(Run) pf = hs("probe", "--what", "prefill", "--format", "json", NULL);
    g_assert_cmpint(pf->status, ==, 0);
    g_autoptr(cJSON) jp = cJSON_Parse(pf->out);
    const cJSON *prow = NULL;
    g_autoptr(GHashTable) best = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    int n_rows = 0, n_tensor = 0;
    cJSON_ArrayForEach(prow, cJSON_GetObjectItem(jp, "rows")) {
        gpointer seq = GINT_TO_POINTER(cJSON_GetObjectItem(prow, "seq")->valueint);
        double tps = cJSON_GetObjectItem(prow, "tokens_per_s")->valuedouble;
        g_assert_cmpfloat(tps, >, 0);
        double *b = g_hash_table_lookup(best, seq);
        if (b == NULL) {
            b = g_new0(double, 2);
            g_hash_table_insert(best, seq, b);
        }
        const char *pol = cJSON_GetObjectItem(prow, "policy")->valuestring;
        if (strcmp(pol, "hetero-tensor") == 0) {
            b[1] = tps;
            n_tensor++;
        } else if (strcmp(pol, "mllm-npu") != 0 && strcmp(pol, "transformer-lite") != 0 &&
                   strcmp(pol, "npu-tts") != 0) {
            b[0] = MAX(b[0], tps);
        }
        n_rows++;
    }
    g_assert_cmpint(n_tensor, ==, 13);
    g_assert_cmpint(n_rows, ==, 13 * 11);      /* 13 lengths x 11 policies */
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, best);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        const double *b = value;
        g_assert_cmpfloat(b[1], >, b[0]);
    }

    g_autoptr(Run) g = hs("probe", "--what", "npu-gemm", "--m", "512", "--k", "4096", "--n",
                          "256", "--format", "json", NULL);
    g_assert_cmpint(g->status, ==, 0);
    g_autoptr(cJSON) jg = cJSON_Parse(g->out);
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(jg, "rows"), 0);
    static const char *const keys[] = { "cycles", "compute_cycles", "weight_loads",
                                        "dram_bytes", "time_us" };
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        g_assert_cmpfloat(cJSON_GetObjectItem(row, keys[i])->valuedouble, >, 0);
    }
    /* 4096/32 x 256/32 stationary tiles */
    g_assert_cmpfloat(cJSON_GetObjectItem(row, "weight_loads")->valuedouble, ==, 1024);
    /* counts print as integers, not 3.38445e+06 */
    g_autoptr(Run) gt = hs("probe", "--what", "npu-gemm", "--m", "4096", "--k", "4096", "--n",
                           "4096", NULL);
    g_assert_cmpint(gt->status, ==, 0);
    g_assert_null(strstr(gt->out, "e+"));

    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *out = g_build_filename(dir, "curves", NULL);
    g_autoptr(Run) a = hs("probe", "--what", "all", "--out", out, NULL);
    g_assert_cmpint(a->status, ==, 0);
    static const char *const files[] = {
        "gpu-gemm.csv", "gpu-gemm.svg", "npu-stage.csv", "npu-stage.svg", "npu-order.csv",
        "npu-shape.csv", "npu-shape.svg", "membw.csv", "membw.svg", "npu-graph.csv",
        "npu-graph.svg", "sync.csv", "prefill.csv", "prefill.svg",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *f = g_build_filename(out, files[i], NULL);
        g_assert_true(g_file_test(f, G_FILE_TEST_IS_REGULAR));
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(f, &text, NULL, NULL));
        g_assert_true(g_str_has_suffix(files[i], ".svg") ? g_str_has_prefix(text, "<svg")
                                                          : strchr(text, ',') != NULL);
        if (g_str_has_suffix(files[i], ".svg")) {
            /* a title on each axis; a unit where the quantity has one */
            int titles = 0;
            for (const char *q = text; (q = strstr(q, "font-size=\"13\"")) != NULL; q++) {
                titles++;
            }
            g_assert_cmpint(titles, ==, 2);
        }
        if (strcmp(files[i], "gpu-gemm.svg") == 0) {
            g_assert_nonnull(strstr(text, "log2 scale"));      /* 1 .. 2048 tokens */
            g_assert_nonnull(strstr(text, ">1024<"));          /* ticks at powers of two */
        }
        if (strcmp(files[i], "npu-stage.svg") == 0) {
            g_assert_nonnull(strstr(text, "NPU compute time (µs)"));
            g_assert_nonnull(strstr(text, ">100<"));           /* 1-2-5 ticks, no 64.19 */
        }
        if (strcmp(files[i], "prefill.svg") == 0) {
            /* a line per policy */
            int lines = 0;
            for (const char *q = text; (q = strstr(q, "<polyline")) != NULL; q++) {
                lines++;
            }
            g_assert_cmpint(lines, ==, 11);
        }
        g_unlink(f);
    }
    /* and beside the curves, what computed them */
    g_autofree char *prov_file = g_build_filename(out, "provenance.json", NULL);
    g_autofree char *ptext = NULL;
    g_assert_true(g_file_get_contents(prov_file, &ptext, NULL, NULL));
    g_autoptr(cJSON) pj = cJSON_Parse(ptext);
    g_assert_true(g_str_has_prefix(cJSON_GetObjectItem(pj, "command")->valuestring,
                                   "hetero-sim probe --what all --out "));
    g_autoptr(GDir) d = g_dir_open(out, 0, NULL);
    const char *n;
    while ((n = g_dir_read_name(d)) != NULL) {
        g_autofree char *f = g_build_filename(out, n, NULL);
        g_unlink(f);
    }
    g_rmdir(out);
    /* --out naming a file: one line, the file untouched */
    g_autofree char *file = g_build_filename(dir, "notes.txt", NULL);
    g_assert_true(g_file_set_contents(file, "mine", -1, NULL));
    g_autoptr(Run) f = hs("probe", "--what", "membw", "--out", file, NULL);
    g_assert_cmpint(f->status, ==, 1);
    g_autofree char *want = g_strdup_printf("--out %s: expected a directory (got a file)", file);
    assert_one_error_line(f, want);
    g_autofree char *kept = NULL;
    g_assert_true(g_file_get_contents(file, &kept, NULL, NULL));
    g_assert_cmpstr(kept, ==, "mine");
    g_unlink(file);
    g_rmdir(dir);

    g_autoptr(Run) b = hs("probe", "--what", "npu-dance", NULL);
    g_assert_cmpint(b->status, ==, 2);
    g_assert_true(g_str_has_prefix(b->err, "hetero-sim: --what: expected one of "));
    g_autoptr(Run) c = hs("probe", "--what", "npu-gemm", "--m", "4", NULL);
    g_assert_cmpint(c->status, ==, 2);
    assert_one_error_line(c, "probe npu-gemm: expected --m, --k and --n, each a positive integer");
}

/* One row of a breakdown probe's JSON: @key of its only row. */
static double
probe_row(const char *what, const char *dtype, const char *m, const char *k, const char *n,
          const char *key)
{
    g_autoptr(Run) r = dtype
        ? hs("probe", "--what", what, "--m", m, "--k", k, "--n", n, "--dtype", dtype,
             "--format", "json", NULL)
        : hs("probe", "--what", what, "--m", m, "--k", k, "--n", n, "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), 0);
    g_assert_true(cJSON_IsNumber(cJSON_GetObjectItem(row, key)));
    return cJSON_GetObjectItem(row, key)->valuedouble;
}

/* --dtype is the weight's format on both breakdown probes (gpu-gemm once
 * ignored it and always ran INT4 weights), the weight the GPU's right
 * operand: a [1, 4096] x [4096, 4096] GEMV reads 2 bytes a weight in FP16,
 * half a byte in INT4 or FP4, one in INT8 groups; the activations and
 * output (8 KiB each) alike. */
static void
test_probe_dtype(void)
{
    const double w = 4096.0 * 4096.0, io = 2 * 4096 * 2;
    g_assert_cmpfloat(probe_row("gpu-gemm", "fp16", "1", "4096", "4096", "dram_bytes"), ==,
                      2 * w + io);
    g_assert_cmpfloat(probe_row("gpu-gemm", "w4a16", "1", "4096", "4096", "dram_bytes"), ==,
                      w / 2 + io);
    g_assert_cmpfloat(probe_row("gpu-gemm", NULL, "1", "4096", "4096", "dram_bytes"), ==,
                      w / 2 + io);
    g_assert_cmpfloat(probe_row("gpu-gemm", "fp4a16", "1", "4096", "4096", "dram_bytes"), ==,
                      w / 2 + io);
    /* a decode GEMV is bound by its bytes: FP16 weights take longer */
    g_assert_cmpfloat(probe_row("gpu-gemm", "fp16", "1", "4096", "4096", "time_us"), >,
                      2 * probe_row("gpu-gemm", "w4a16", "1", "4096", "4096", "time_us"));
    /* on the NPU the weight is the left operand: its bytes follow --m x --k */
    g_assert_cmpfloat(probe_row("npu-gemm", "fp4a16", "4096", "1024", "32", "dram_bytes"), ==,
                      probe_row("npu-gemm", "w4a16", "4096", "1024", "32", "dram_bytes"));
    g_assert_cmpfloat(probe_row("npu-gemm", "fp16", "4096", "1024", "32", "dram_bytes"), >,
                      probe_row("npu-gemm", "w4a16", "4096", "1024", "32", "dram_bytes"));

    g_autoptr(Run) a = hs("probe", "--what", "npu-stage", "--dtype", "fp16", NULL);
    g_assert_cmpint(a->status, ==, 2);
    assert_one_error_line(a, "--dtype: only npu-gemm and gpu-gemm take it (got --what "
                             "npu-stage)");
    g_assert_cmpstr(a->out, ==, "");
    /* the curve too: FP16 weights, four times the bytes of a GEMV */
    g_autoptr(Run) cf = hs("probe", "--what", "gpu-gemm", "--dtype", "fp16", "--format", "json",
                           NULL);
    g_autoptr(Run) ci = hs("probe", "--what", "gpu-gemm", "--format", "json", NULL);
    g_assert_cmpint(cf->status + ci->status, ==, 0);
    g_autoptr(cJSON) jf = cJSON_Parse(cf->out);
    g_autoptr(cJSON) ji = cJSON_Parse(ci->out);
    double tf = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(jf, "rows"), 0),
                                    "time_us")->valuedouble;
    double ti = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(ji, "rows"), 0),
                                    "time_us")->valuedouble;
    g_assert_cmpfloat(tf, >, 3 * ti);
    /* with every curve, the GPU's keeps its own INT4 default */
    g_autoptr(Run) al = hs("probe", "--what", "all", NULL);
    g_assert_cmpint(al->status, ==, 0);
    g_assert_nonnull(strstr(al->out, "([S,4096]x[4096,4096] w4a16)"));
    g_autoptr(Run) b = hs("probe", "--what", "gpu-gemm", "--m", "1", "--k", "64", "--n", "64",
                          "--dtype", "int4", NULL);
    g_assert_cmpint(b->status, ==, 2);
    assert_one_error_line(b, "--dtype: expected fp16, int8, w4a16, w8a8, q8_0 or fp4a16 "
                             "(got \"int4\")");
}

static void
test_policy_plugin(void)
{
    const char *so = g_getenv("HS_PLUGIN");
    g_assert_nonnull(so);
    g_autoptr(Run) r = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "64",
                          "--decode", "2", "--functional", "full", "--policy-plugin", so,
                          "--policy", "gpu-npu-alternate", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = cJSON_Parse(r->out);
    g_assert_cmpstr(cJSON_GetObjectItem(j, "policy")->valuestring, ==, "gpu-npu-alternate");
    const cJSON *f = cJSON_GetObjectItem(j, "functional");
    g_assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "match")));
    const cJSON *npu = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "devices"), "npu");
    g_assert_cmpfloat(cJSON_GetObjectItem(npu, "busy_ms")->valuedouble, >, 0);

    /* loaded without --policy: its policy runs (not hetero-tensor) */
    g_autoptr(Run) r2 = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "64",
                           "--decode", "0", "--functional", "off", "--policy-plugin", so,
                           "--format", "json", NULL);
    g_assert_cmpint(r2->status, ==, 0);
    g_autoptr(cJSON) j2 = cJSON_Parse(r2->out);
    g_assert_cmpstr(cJSON_GetObjectItem(j2, "policy")->valuestring, ==, "gpu-npu-alternate");
    /* list policies and replay load one too */
    g_autoptr(Run) l = hs("list", "policies", "--policy-plugin", so, NULL);
    g_assert_cmpint(l->status, ==, 0);
    g_assert_nonnull(strstr(l->out, "\ngpu-npu-alternate "));
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", &error);
    g_autofree char *rec = g_build_filename(dir, "rec.json", NULL);
    g_autoptr(Run) a = hs("run", "--soc", "tiny", "--model", "tiny", "--prompt", "64",
                          "--decode", "1", "--functional", "off", "--record", rec, NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_autoptr(Run) rp = hs("replay", rec, "--policy-plugin", so, "--format", "json", NULL);
    g_assert_cmpint(rp->status, ==, 0);
    g_autoptr(cJSON) jp = cJSON_Parse(rp->out);
    g_assert_cmpstr(cJSON_GetObjectItem(jp, "policy")->valuestring, ==, "gpu-npu-alternate");
    g_assert_cmpstr(cJSON_GetObjectItem(cJSON_GetObjectItem(jp, "replay"), "plan")->valuestring,
                    ==, "replanned");
    g_unlink(rec);
    g_rmdir(dir);
    /* a plug-in named like a built-in is refused, wherever it is loaded */
    const char *shadow = g_getenv("HS_PLUGIN_SHADOW");
    g_autoptr(Run) sh = hs("run", "--soc", "tiny", "--model", "tiny", "--policy-plugin", shadow,
                           "--policy", "gpu-only", NULL);
    g_assert_cmpint(sh->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: policy plug-in name \"gpu-only\" is a built-in "
                                            "policy's; rename it", shadow);
    assert_one_error_line(sh, want);
    g_autoptr(Run) sl = hs("list", "policies", "--policy-plugin", shadow, NULL);
    g_assert_cmpint(sl->status, ==, 1);

    g_autoptr(Run) bad = hs("run", "--policy-plugin", "/nonexistent/p.so", NULL);
    g_assert_cmpint(bad->status, ==, 1);
    g_assert_true(g_str_has_prefix(bad->err,
                  "hetero-sim: /nonexistent/p.so: cannot load policy plug-in: "));
}

/* Input text in a message reaches the terminal escaped, as one line, even
 * from a loader that echoes it raw (a fuzz find: tests/data/hostile/soc). */
static void
test_hostile_text(void)
{
    g_autofree char *soc = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                            "hostile", "soc", "control-cpu-raw-bytes.json", NULL);
    g_autoptr(Run) s = hs("soc", "show", soc, NULL);
    g_assert_cmpint(s->status, ==, 1);
    g_autofree char *want = g_strdup_printf(
        "%s: $.sync.control_cpu: expected the name of a cpu processor (cpu, cpu--id) "
        "(got \"\\x9dpu-mid\")", soc);
    assert_one_error_line(s, want);

    /* an odd head_dim: timing runs, values refused by name before anything runs */
    g_autofree char *dir = g_dir_make_tmp("hs-cli-XXXXXX", NULL);
    g_autofree char *model = g_build_filename(dir, "odd.json", NULL);
    g_assert_true(g_file_set_contents(model,
        "{\"model_type\":\"llama\",\"hidden_size\":126,\"intermediate_size\":256,"
        "\"num_hidden_layers\":2,\"num_attention_heads\":2,\"vocab_size\":512}", -1, NULL));
    g_autofree char *odd = g_strdup_printf("%s: $.head_dim: expected an even integer for the "
                                           "functional engine's rotary embedding, or "
                                           "--functional off for timing only (got 63)", model);
    g_autoptr(Run) r = hs("run", "--soc", "tiny", "--model", model, "--prompt", "8",
                          "--decode", "1", NULL);
    g_assert_cmpint(r->status, ==, 1);
    assert_one_error_line(r, odd);
    g_assert_cmpstr(r->out, ==, "");
    g_autoptr(Run) i = hs("infer", "--model", model, "--tokens", "1,2", NULL);
    g_assert_cmpint(i->status, ==, 1);
    assert_one_error_line(i, odd);
    g_autoptr(Run) t = hs("run", "--soc", "tiny", "--model", model, "--prompt", "8",
                          "--decode", "1", "--functional", "off", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_unlink(model);
    g_rmdir(dir);
}

/* A wrong result is a failure: exit 3, the reason first in the text, as
 * "failure" in the JSON and on stderr (tests/data/replay/make.py). */
static void
test_replay_wrong_plan(void)
{
    static const struct {
        const char *file, *why;
    } cases[] = {
        { "dropped-sync.json", "task 2 (L0.wq on npu) takes the output of task 1 "
                               "(L0.attn_norm on gpu) with no sync between them "
                               "(a dropped sync?)" },
        { "unordered.json", "policy hetero-layer computed wrong values: its logits differ "
                            "from the reference (max abs err " },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                                 "replay", cases[i].file, NULL);
        g_autoptr(Run) t = hs("replay", path, NULL);
        g_assert_cmpint(t->status, ==, 3);
        g_autofree char *top = g_strdup_printf("FAILED: %s", cases[i].why);
        g_assert_true(g_str_has_prefix(t->out, top));
        g_autofree char *err = g_strdup_printf("hetero-sim: %s", cases[i].why);
        g_assert_true(g_str_has_prefix(t->err, err));
        g_assert_null(strchr(strchr(t->err, '\n') + 1, '\n'));       /* one line */
        g_assert_nonnull(strstr(t->out, "tiny on tiny, policy hetero-layer"));

        g_autoptr(Run) j = hs("replay", path, "--format", "json", NULL);
        g_assert_cmpint(j->status, ==, 3);
        g_autoptr(cJSON) root = cJSON_Parse(j->out);
        g_assert_nonnull(root);
        const cJSON *f = cJSON_GetObjectItem(root, "failure");
        g_assert_true(cJSON_IsString(f));
        g_assert_true(g_str_has_prefix(f->valuestring, cases[i].why));
        const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "functional"), "match");
        g_assert_true(cJSON_IsBool(m));
        g_assert_true(cJSON_IsTrue(m) == (i == 0));   /* a dropped sync alone: right values */
    }
    /* the recording they were cut from replays cleanly */
    g_autofree char *base = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                             "replay", "base.json", NULL);
    g_autoptr(Run) ok = hs("replay", base, NULL);
    g_assert_cmpint(ok->status, ==, 0);
    g_assert_true(g_str_has_prefix(ok->out, "tiny on tiny"));
    g_assert_cmpstr(ok->err, ==, "");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_assert_nonnull(g_getenv("HS_BIN"));
    g_test_add_func("/cli/version", test_version);
    g_test_add_func("/cli/help", test_help);
    g_test_add_func("/cli/usage-errors", test_usage_errors);
    g_test_add_func("/cli/bad-config", test_bad_config);
    g_test_add_func("/cli/soc-show", test_soc_show);
    g_test_add_func("/cli/stacks", test_stacks);
    g_test_add_func("/cli/default-run", test_default_run);
    g_test_add_func("/cli/list-socs", test_list_socs);
    g_test_add_func("/cli/bench-kernel-quick", test_bench_kernel_quick);
    g_test_add_func("/cli/bench-default-quick", test_bench_default_quick);
    g_test_add_func("/cli/bench-engine-quick", test_bench_engine_quick);
    g_test_add_func("/cli/bench-sim-quick", test_bench_sim_quick);
    g_test_add_func("/cli/bench-sweep-quick", test_bench_sweep_quick);
    g_test_add_func("/cli/run-json-schema", test_run_json_schema);
    g_test_add_func("/cli/determinism-threads", test_determinism_threads);
    g_test_add_func("/cli/run-errors", test_run_errors);
    g_test_add_func("/cli/rough-edges", test_rough_edges);
    g_test_add_func("/cli/explain", test_explain);
    g_test_add_func("/cli/compare-csv", test_compare_csv);
    g_test_add_func("/cli/compare-caveats", test_compare_caveats);
    g_test_add_func("/cli/compare-trace", test_compare_trace);
    g_test_add_func("/cli/decode-past-4096-checked", test_decode_past_4096_checked);
    g_test_add_func("/cli/compare-text", test_compare_text);
    g_test_add_func("/cli/lists", test_lists);
    g_test_add_func("/cli/policy-plugin", test_policy_plugin);
    g_test_add_func("/cli/record-replay", test_record_replay);
    g_test_add_func("/cli/record-replay-long-decode", test_record_replay_long_decode);
    g_test_add_func("/cli/stream-trace-record", test_stream_trace_record);
    g_test_add_func("/cli/replay-wrong-plan", test_replay_wrong_plan);
    g_test_add_func("/cli/hostile-text", test_hostile_text);
    g_test_add_func("/cli/validate", test_validate);
    g_test_add_func("/cli/validate-papers", test_validate_papers);
    g_test_add_func("/cli/validate-energy-game", test_validate_energy_game);
    g_test_add_func("/cli/validate-sensitivity", test_validate_sensitivity);
    g_test_add_func("/cli/bad-points", test_bad_points);
    g_test_add_func("/cli/infer", test_infer);
    g_test_add_func("/cli/probe", test_probe);
    g_test_add_func("/cli/probe-dtype", test_probe_dtype);
    return g_test_run();
}
