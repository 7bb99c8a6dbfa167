/*
 * sweep-point.c - running one point of a sweep: in this process, or in a
 * worker process that runs one point after another.  See sweep.h.
 */
#include "sim/cli/sweep.h"
#include "sim/cli/config.h"
#include "sim/cli/report-fields.h"
#include "sim/cli/run-opts.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/mem.h"
#include "sim/util/version-info.h"
#include "hw/stack.h"

#include <errno.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* A point resolved as `run` resolves its options. */
typedef struct Resolved {
    HsRunOpts o;
    char *policy_name;
    HsFormat format;
    HwSoc *soc;
    MdlSpec *spec;
    SimWorkload w;
    const SimPolicy *policy;
} Resolved;

static void
resolved_clear(Resolved *r)
{
    g_free(r->policy_name);
    g_clear_pointer(&r->soc, hw_soc_free);
    g_clear_pointer(&r->spec, mdl_spec_free);
    hs_run_opts_clear(&r->o);
}

/* @args resolved into @r (clear it in every case). */
static gboolean
resolve(GStrv args, Resolved *r, GError **error)
{
    gboolean help = FALSE;
    GOptionEntry extra[] = {
        { "policy", 'P', 0, G_OPTION_ARG_STRING, &r->policy_name, "policy", "POLICY" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    int argc = (int) g_strv_length(args);
    g_autofree char **view = g_memdup2(args, sizeof(char *) * (argc + 1));
    char **argv = view;
    return hs_run_opts_parse("run", "", extra, &r->o, &argc, &argv, &help, error) &&
           hs_run_opts_resolve(&r->o, HS_FORMATS_ALL, &r->format, &r->soc, &r->spec, &r->w,
                               error) &&
           (r->policy = hs_run_opts_policy(&r->o, r->policy_name ? r->policy_name
                                                                 : "hetero-tensor",
                                           error)) != NULL;
}

/* See hs_sweep_point_hash: the stack is the one sim_run picks (run.c:
 * --stack, else the policy's own, else the default). */
static char *
resolved_hash(const Resolved *r, char **config_hash, GError **error)
{
    const char *name = r->w.stack ? r->w.stack
                       : r->policy->stack ? r->policy->stack : SIM_DEFAULT_STACK;
    const HwStack *stack = hw_soc_stack(r->soc, name, error);
    if (stack == NULL) {
        return NULL;
    }
    g_autofree char *config = hs_config_hash(r->soc, r->spec, &r->w);
    g_autoptr(cJSON) o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "config", config);
    cJSON_AddStringToObject(o, "policy", r->policy->name);
    cJSON_AddItemToObject(o, "stack", hw_stack_to_json(stack));
    g_autofree char *text = hs_json_print(o, FALSE);
    if (config_hash) {
        *config_hash = g_steal_pointer(&config);
    }
    return g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
}

char *
hs_sweep_point_command(const HsSweepPoint *p)
{
    g_auto(GStrv) args = hs_sweep_point_argv(p);
    g_autoptr(GString) s = g_string_new("hetero-sim");
    for (char **a = args; *a; a++) {
        g_autofree char *q = hs_shell_quote(*a);
        g_string_append_printf(s, " %s", q);
    }
    return g_string_free(g_steal_pointer(&s), FALSE);
}

char *
hs_sweep_point_hash(const HsSweepPoint *p, char **config_hash, GError **error)
{
    g_auto(GStrv) args = hs_sweep_point_argv(p);
    Resolved r = { 0 };
    HsProvenance *outer = hs_provenance_push();     /* resolve sets the point's */
    char *hash = resolve(args, &r, error) ? resolved_hash(&r, config_hash, error) : NULL;
    hs_provenance_pop(outer);
    resolved_clear(&r);
    return hash;
}

/* `run --format json` with @args, as cmd-run.c prints it, and *hash
 * (hs_sweep_point_hash, NULL if the settings do not resolve).
 * (transfer full) */
static cJSON *
run_json(GStrv args, char **hash, GError **error)
{
    Resolved r = { 0 };
    SimRunReport rep = { 0 };
    cJSON *j = NULL;
    /* the point's provenance is its own `run` (resolve sets the command
     * line), the sweep's is put back after */
    HsProvenance *outer = hs_provenance_push();
    gboolean ok = resolve(args, &r, error) && (*hash = resolved_hash(&r, NULL, error)) != NULL &&
                  sim_run(r.soc, r.spec, r.policy, &r.w, NULL, &rep, NULL, NULL, error);
    if (ok) {
        /* as `run` reports it: a SoC, model or stack file said as one
         * ("npu2x.json (from sd8gen3)"), its provenance with it */
        hs_provenance_config(r.o.soc, r.o.model, r.o.stack, r.soc, r.spec, &r.w);
        rep.soc = hs_provenance_soc();
        rep.model = hs_provenance_model();
        if (r.o.stack) {
            rep.stack = hs_provenance_label(r.o.stack, rep.stack);
        }
        j = hs_report_json(r.soc, &rep);
        cJSON_AddItemToObject(j, "config", hs_config_json(r.o.ovr, r.soc, r.spec, &r.w));
        cJSON_AddItemToObject(j, "provenance", hs_provenance_json());
    }
    hs_provenance_pop(outer);
    sim_run_report_clear(&rep);
    resolved_clear(&r);
    return j;
}

cJSON *
hs_sweep_point_run(const HsSweepPoint *p)
{
    g_auto(GStrv) args = hs_sweep_point_argv(p);
    g_autoptr(GError) error = NULL;
    gint64 t0 = g_get_monotonic_time();
    g_autofree char *hash = NULL;
    cJSON *result = run_json(args, &hash, &error);
    double wall_s = (double) (g_get_monotonic_time() - t0) * 1e-6;

    cJSON *rec = cJSON_CreateObject();
    cJSON_AddStringToObject(rec, "key", p->key);
    cJSON_AddStringToObject(rec, "status", result ? "ok" : "error");
    if (result) {
        /* host time is the one thing that differs between two runs of a
         * point: it goes to its own column, not into the result */
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(result, "sim"),
                                                "wall_s");
    } else {
        cJSON_AddStringToObject(rec, "error", error->message);
    }
    cJSON_AddNumberToObject(rec, "wall_s", wall_s);
    /* the engine's OpenMP threads: a worker's share of the cores (see
     * hs_sweep_threads_per_point), with wall_s a fact of the host */
    cJSON_AddNumberToObject(rec, "threads", omp_get_max_threads());
    if (hash) {
        cJSON_AddStringToObject(rec, "point_hash", hash);
    }
    cJSON_AddStringToObject(rec, "version", hs_version());
    g_autofree char *command = hs_sweep_point_command(p);
    cJSON_AddStringToObject(rec, "command", command);
    if (result) {
        cJSON_AddItemToObject(rec, "result", result);
    }
    return rec;
}

static gboolean
write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return FALSE;
        }
        buf += n;
        len -= (size_t) n;
    }
    return TRUE;
}

/* FALSE at the end of the file (or on an error) before @len bytes. */
static gboolean
read_all(int fd, void *buf, size_t len)
{
    char *at = buf;
    while (len > 0) {
        ssize_t n = read(fd, at, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return FALSE;
        }
        at += n;
        len -= (size_t) n;
    }
    return TRUE;
}

/* HS_SWEEP_TEST_KILL=POINT:SIGNAL (sweep.h): a worker's death, on cue */
static void
test_kill(int point)
{
    const char *s = g_getenv("HS_SWEEP_TEST_KILL");
    int at = -1, sig = 0;
    if (s && sscanf(s, "%d:%d", &at, &sig) == 2 && at == point) {
        kill(getpid(), sig);
    }
}

/* A worker's life: points in, records out, until the parent goes. */
G_GNUC_NORETURN static void
worker_main(const HsSweepSpec *spec, int fd, int threads, unsigned concurrent)
{
    /* the parent's Ctrl-C reaches the whole group; a point's own failure
     * is its record */
    omp_set_num_threads(MAX(threads, 1));
    hs_mem_set_concurrent(concurrent);
    int point = -1;
    while (read_all(fd, &point, sizeof(point))) {
        g_assert(point >= 0 && (guint) point < spec->points->len);
        test_kill(point);
        g_autoptr(cJSON) rec = hs_sweep_point_run(spec->points->pdata[point]);
        g_autofree char *text = hs_json_print(rec, FALSE);
        /* the NUL ends the record (JSON text has none of its own) */
        if (!write_all(fd, text, strlen(text) + 1)) {
            _exit(3);
        }
    }
    _exit(0);
}

static gboolean
worker_start(HsSweepWorker *w, const HsSweepSpec *spec, int threads, unsigned concurrent,
             const HsSweepWorker *others, int n_others, GError **error)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "sweep: cannot create a socket (%s)", g_strerror(errno));
        return FALSE;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) {
        close(sv[0]);
        close(sv[1]);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "sweep: cannot start a worker process (%s)", g_strerror(errno));
        return FALSE;
    }
    if (child == 0) {
        close(sv[0]);
        /* the other workers' sockets are the parent's alone: each worker
         * then reads the end of its own when the parent goes */
        for (int k = 0; k < n_others; k++) {
            if (others[k].fd >= 0) {
                close(others[k].fd);
            }
        }
        worker_main(spec, sv[1], threads, concurrent);
    }
    close(sv[1]);
    w->pid = (int) child;
    w->fd = sv[0];
    w->point = -1;
    return TRUE;
}

/* Close @w's socket and reap its worker: the wait status (0 if none). */
static int
worker_reap(HsSweepWorker *w)
{
    int status = 0;
    if (w->fd >= 0) {
        close(w->fd);
        w->fd = -1;
    }
    if (w->pid > 0) {
        while (waitpid((pid_t) w->pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    w->pid = -1;
    return status;
}

void
hs_sweep_worker_stop(HsSweepWorker *w)
{
    worker_reap(w);
    w->point = -1;
    if (w->out) {
        g_string_free(w->out, TRUE);
        w->out = NULL;
    }
}

gboolean
hs_sweep_worker_give(HsSweepWorker *w, const HsSweepSpec *spec, int point, int threads,
                     unsigned concurrent, const HsSweepWorker *others, int n_others,
                     GError **error)
{
    g_assert(w->point < 0 && point >= 0 && (guint) point < spec->points->len);
    for (int attempt = 0;; attempt++) {
        if (w->pid < 0 && !worker_start(w, spec, threads, concurrent, others, n_others, error)) {
            return FALSE;
        }
        ssize_t n;
        /* MSG_NOSIGNAL: a worker gone is an error here, not our SIGPIPE */
        while ((n = send(w->fd, &point, sizeof(point), MSG_NOSIGNAL)) < 0 && errno == EINTR) {
        }
        if (n == (ssize_t) sizeof(point)) {
            break;
        }
        /* it died between points (nothing of a point lost): a new one */
        int why = n < 0 ? errno : EIO;
        worker_reap(w);
        if (attempt > 0) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                        "sweep: cannot give a point to a worker process (%s)",
                        g_strerror(why));
            return FALSE;
        }
    }
    w->point = point;
    if (w->out == NULL) {
        w->out = g_string_new(NULL);
    }
    g_string_truncate(w->out, 0);
    return TRUE;
}

/* The record of @p that says @why it has no result. */
static cJSON *
error_record(const HsSweepPoint *p, const char *why)
{
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddStringToObject(rec, "key", p->key);
    cJSON_AddStringToObject(rec, "status", "error");
    cJSON_AddStringToObject(rec, "error", why);
    cJSON_AddStringToObject(rec, "version", hs_version());
    g_autofree char *command = hs_sweep_point_command(p);
    cJSON_AddStringToObject(rec, "command", command);
    return rec;
}

gboolean
hs_sweep_worker_read(HsSweepWorker *w, const HsSweepSpec *spec, cJSON **rec)
{
    g_assert(w->point >= 0 && w->fd >= 0);
    const HsSweepPoint *p = spec->points->pdata[w->point];
    char buf[65536];
    ssize_t n = read(w->fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) {
        return FALSE;
    }
    if (n > 0) {
        g_string_append_len(w->out, buf, n);
        if (memchr(buf, '\0', (size_t) n) == NULL) {
            return FALSE;
        }
        /* the record, to its NUL (the worker sends nothing after it) */
        *rec = cJSON_Parse(w->out->str);
        w->point = -1;
        if (*rec == NULL) {
            hs_sweep_worker_stop(w);
            *rec = error_record(p, "the point's process sent a record that is not JSON");
        }
        return TRUE;
    }
    /* the end of the socket (or an error on it): the worker is gone */
    int status = worker_reap(w);
    w->point = -1;
    *rec = NULL;
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM ||
                                WTERMSIG(status) == SIGHUP)) {
        return TRUE;                /* interrupted, not failed: the next run redoes it */
    }
    g_autofree char *why = WIFSIGNALED(status)
        ? g_strdup_printf("the point's process died (signal %d, %s)", WTERMSIG(status),
                          g_strsignal(WTERMSIG(status)))
        : g_strdup_printf("the point's process exited with status %d without a result",
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    *rec = error_record(p, why);
    return TRUE;
}
