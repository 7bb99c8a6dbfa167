/*
 * sweep-mpi.c - a sweep over MPI ranks (`mpirun -n N hetero-sim sweep
 * SPEC`): rank 0 owns the database and hands out point indices one at a
 * time to whichever rank asks (dynamic distribution: a slow point holds
 * up only its own rank); each other rank runs its points in a worker
 * process, as a local sweep does, and sends back each record as JSON text.
 * Every rank reads the same spec, so only indices and records travel.
 * Built only when meson finds MPI (HS_HAVE_MPI); otherwise a sweep under
 * mpirun is N independent local sweeps, which is why cmd-sweep.c refuses
 * that case.
 */
#include "sim/cli/sweep.h"
#include "sim/util/error.h"
#include "sim/util/json.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HS_HAVE_MPI
#include <mpi.h>

enum { TAG_RECORD = 1, TAG_WORK = 2, TAG_STOP = 3 };

static gboolean mpi_started;

gboolean
hs_sweep_mpi_start(int *rank, int *size)
{
    /* only under a launcher: a plain run must not need one */
    if (!g_getenv("OMPI_COMM_WORLD_SIZE") && !g_getenv("PMI_SIZE") && !g_getenv("PMIX_RANK")) {
        return FALSE;
    }
    MPI_Init(NULL, NULL);
    mpi_started = TRUE;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return *size > 1;
}

void
hs_sweep_mpi_finish(void)
{
    if (mpi_started) {
        MPI_Finalize();
        mpi_started = FALSE;
    }
}

/* Ranks on this host share its cores. */
static int
local_ranks(void)
{
    const char *s = g_getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (s == NULL) {
        s = g_getenv("SLURM_NTASKS_PER_NODE");
    }
    int n = s ? atoi(s) : 1;
    return MAX(n, 1);
}

void
hs_sweep_mpi_work(const HsSweepSpec *spec)
{
    /* an empty record asks for the first point */
    MPI_Send("", 0, MPI_CHAR, 0, TAG_RECORD, MPI_COMM_WORLD);
    int threads = hs_sweep_threads_per_point(local_ranks());
    /* one worker runs this rank's points, as a local sweep's do */
    HsSweepWorker worker = HS_SWEEP_WORKER_INIT;
    for (;;) {
        int point = -1;
        MPI_Status st;
        MPI_Recv(&point, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_STOP) {
            hs_sweep_worker_stop(&worker);
            return;
        }
        g_assert(point >= 0 && (guint) point < spec->points->len);
        const HsSweepPoint *p = spec->points->pdata[point];
        g_autoptr(GError) error = NULL;
        g_autoptr(cJSON) rec = NULL;
        if (hs_sweep_worker_give(&worker, spec, point, threads, (unsigned) local_ranks(),
                                 &worker, 1, &error)) {
            while (!hs_sweep_worker_read(&worker, spec, &rec)) {
            }
        }
        if (rec == NULL) {
            rec = cJSON_CreateObject();
            cJSON_AddStringToObject(rec, "key", p->key);
            cJSON_AddStringToObject(rec, "status", "error");
            cJSON_AddStringToObject(rec, "error", error ? error->message : "interrupted");
        }
        g_autofree char *json = hs_json_print(rec, FALSE);
        g_autofree char *text = g_strdup_printf("%d\n%s", point, json);
        MPI_Send(text, (int) strlen(text), MPI_CHAR, 0, TAG_RECORD, MPI_COMM_WORLD);
    }
}

gboolean
hs_sweep_mpi_coordinate(HsSweepRun *r, int size, GError **error)
{
    guint total = r->todo->len, done = 0;
    int active = size - 1;
    double t0 = (double) g_get_monotonic_time() * 1e-6;
    gboolean ok = TRUE;
    while (active > 0) {
        MPI_Status st;
        int len = 0;
        MPI_Probe(MPI_ANY_SOURCE, TAG_RECORD, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &len);
        g_autofree char *text = g_malloc((gsize) len + 1);
        MPI_Recv(text, len, MPI_CHAR, st.MPI_SOURCE, TAG_RECORD, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        text[len] = '\0';
        if (len > 0 && ok) {
            char *nl = strchr(text, '\n');
            g_autoptr(cJSON) rec = nl ? cJSON_Parse(nl + 1) : NULL;
            int point = atoi(text);
            if (rec == NULL) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_PARSE,
                            "sweep: rank %d sent a record that is not JSON", st.MPI_SOURCE);
                ok = FALSE;
            } else if (point < 0 || (guint) point >= r->spec->points->len) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_PARSE,
                            "sweep: rank %d sent a record of point %d, not one it was given",
                            st.MPI_SOURCE, point);
                ok = FALSE;
            } else {
                ok = hs_sweep_run_store(r, rec, point, error);
            }
            done++;
            if (r->progress) {
                hs_sweep_progress(done, total, t0, FALSE);
            }
        }
        /* rank 0 claims each point before handing it out, so two mpiruns
         * (or a local sweep) on one database share the points */
        int point = ok && r->db ? hs_sweep_run_next(r, error) : -1;
        if (point == -2) {
            ok = FALSE;
        }
        if (point >= 0) {
            MPI_Send(&point, 1, MPI_INT, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
        } else {
            int none = -1;
            MPI_Send(&none, 1, MPI_INT, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
            active--;
        }
    }
    if (r->progress) {
        hs_sweep_progress(done, total, t0, TRUE);
    }
    return ok;
}

#else  /* !HS_HAVE_MPI */

gboolean
hs_sweep_mpi_start(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    return FALSE;
}

void
hs_sweep_mpi_work(const HsSweepSpec *spec)
{
}

gboolean
hs_sweep_mpi_coordinate(HsSweepRun *r, int size, GError **error)
{
    g_assert_not_reached();
}

void
hs_sweep_mpi_finish(void)
{
}

#endif
