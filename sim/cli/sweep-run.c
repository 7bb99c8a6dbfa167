/*
 * sweep-run.c - a sweep's points on this machine's cores: --jobs worker
 * processes (sweep-point.c), each running one point after another, each
 * point claimed in the database before it starts (so two sweeps on one
 * database, or MPI ranks, share the points instead of each running them
 * all).  See sweep.h.
 */
#include "sim/cli/sweep.h"
#include "sim/util/error.h"
#include "sim/util/json.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
hs_sweep_threads_per_point(int workers)
{
    /* the points' OpenMP threads share the cores with each other: no
     * more threads in all than cores */
    return MAX(1, (int) g_get_num_processors() / MAX(workers, 1));
}

void
hs_sweep_progress(guint done, guint total, double t0_s, gboolean last)
{
    double dt = (double) g_get_monotonic_time() * 1e-6 - t0_s;
    double rate = dt > 0 ? done / dt : 0;
    if (rate > 0 && done < total) {
        int eta = (int) ((total - done) / rate + 0.5);
        fprintf(stderr, "\rsweep: %u/%u points, %.1f/s, ETA %d:%02d:%02d   ", done, total,
                rate, eta / 3600, eta / 60 % 60, eta % 60);
    } else {
        fprintf(stderr, "\rsweep: %u/%u points, %.1f/s%-20s", done, total, rate, "");
    }
    if (last) {
        fprintf(stderr, "\n");
    }
    fflush(stderr);
}

GArray *
hs_sweep_plan(const HsSweepSpec *spec, sqlite3 *db, const HsSweepPolicy *pol, char ***hashes,
              guint8 **hashed, guint *done, GError **error)
{
    g_autoptr(GHashTable) rows = hs_sweep_db_rows(db, error);
    if (rows == NULL) {
        return NULL;
    }
    *hashes = g_new0(char *, spec->points->len + 1);
    *hashed = g_new0(guint8, spec->points->len + 1);
    *done = 0;
    GArray *todo = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint i = 0; i < spec->points->len; i++) {
        const HsSweepPoint *p = spec->points->pdata[i];
        const HsSweepRow *row = g_hash_table_lookup(rows, p->key);
        if (row) {
            (*hashes)[i] = hs_sweep_point_hash(p, NULL, NULL);
            (*hashed)[i] = TRUE;
        }
        HsSweepState s = hs_sweep_row_state(row, (*hashes)[i], pol);
        if (s == HS_SWEEP_DONE) {
            ++*done;
        } else {
            /* a live claim is tried again when its turn comes: its sweep
             * may have died or finished by then */
            int idx = (int) i;
            g_array_append_val(todo, idx);
        }
    }
    return todo;
}

void
hs_sweep_hashes_free(char **h, guint n)
{
    for (guint i = 0; h && i < n; i++) {
        g_free(h[i]);
    }
    g_free(h);
}

/* r->hashes[@point], computed when first asked for: a point without a
 * row needs its hash only when it is claimed, so a fresh sweep of many
 * points starts at once instead of resolving every point first (a
 * millisecond or more each: 54 000 points stored nothing in 10 s). */
static const char *
run_hash(HsSweepRun *r, int point)
{
    if (r->hashes == NULL) {
        return NULL;
    }
    if (r->hashed && !r->hashed[point]) {
        r->hashes[point] = hs_sweep_point_hash(r->spec->points->pdata[point], NULL, NULL);
        r->hashed[point] = TRUE;
    }
    return r->hashes[point];
}

int
hs_sweep_run_next(HsSweepRun *r, GError **error)
{
    if (r->pol.me == NULL) {
        g_autofree char *me = hs_sweep_claimant();
        r->pol.me = g_intern_string(me);
    }
    int got = -1;
    while (got == -1 && r->next < r->todo->len) {
        int point = g_array_index(r->todo, int, r->next++);
        const HsSweepPoint *p = r->spec->points->pdata[point];
        HsSweepState found;
        gboolean claimed = FALSE;
        if (!hs_sweep_db_claim(r->db, p->key, point, run_hash(r, point), &r->pol, &found,
                               &claimed, error)) {
            got = -2;
            break;
        }
        switch (found) {
        case HS_SWEEP_DONE:
            r->done_meanwhile++;        /* another sweep stored it since we looked */
            break;
        case HS_SWEEP_CLAIMED:
            r->claimed_by_others++;
            break;
        case HS_SWEEP_CLAIMED_ELSEWHERE:
            r->claimed_elsewhere++;
            break;
        case HS_SWEEP_STALE_CONFIG:
            r->stale_config++;
            break;
        case HS_SWEEP_STALE_VERSION:
            r->stale_version++;
            break;
        case HS_SWEEP_CLAIMED_DEAD:
            r->reclaimed++;
            break;
        default:
            break;
        }
        if (claimed) {
            r->run_now++;
            got = point;
        }
    }
    return got;
}

gboolean
hs_sweep_run_store(HsSweepRun *r, cJSON *rec, int point, GError **error)
{
    const HsSweepPoint *p = r->spec->points->pdata[point];
    if (rec == NULL) {
        /* interrupted: not a result, so nothing of it is kept */
        r->run_now--;
        return hs_sweep_db_release(r->db, p->key, r->pol.me, error);
    }
    const char *hash = run_hash(r, point);
    if (hash && !cJSON_HasObjectItem(rec, "point_hash")) {
        /* a point whose process died says nothing of its configuration */
        cJSON_AddStringToObject(rec, "point_hash", hash);
    }
    return hs_sweep_db_insert(r->db, rec, point, error);
}

gboolean
hs_sweep_run_local(HsSweepRun *r, GError **error)
{
    guint total = r->todo->len, next = r->next, done = 0, running = 0;
    int jobs = MAX(1, MIN(r->jobs, (int) MAX(total, 1)));
    int threads = hs_sweep_threads_per_point(jobs);
    g_autofree HsSweepWorker *slot = g_new(HsSweepWorker, jobs);
    g_autofree struct pollfd *pfd = g_new0(struct pollfd, jobs);
    double t0 = (double) g_get_monotonic_time() * 1e-6;
    gboolean ok = TRUE;

    gboolean more = TRUE;
    for (int k = 0; k < jobs; k++) {
        slot[k] = (HsSweepWorker) HS_SWEEP_WORKER_INIT;
    }
    while (ok && ((more && next < total) || running > 0)) {
        for (int k = 0; k < jobs && more && next < total; k++) {
            if (slot[k].point >= 0) {
                continue;
            }
            int point = hs_sweep_run_next(r, error);
            next = r->next;
            if (point == -2) {
                ok = FALSE;
                break;
            }
            if (point < 0) {
                more = FALSE;           /* the rest is done or claimed */
                break;
            }
            if (!hs_sweep_worker_give(&slot[k], r->spec, point, threads, (unsigned) jobs, slot,
                                      jobs, error)) {
                hs_sweep_run_store(r, NULL, point, NULL);
                ok = FALSE;
                break;
            }
            running++;
        }
        if (!ok) {
            break;
        }
        if (running == 0) {
            continue;                   /* nothing left to claim or wait for */
        }
        for (int k = 0; k < jobs; k++) {
            /* an idle worker is not listened to (poll skips fd -1) */
            pfd[k] = (struct pollfd) { .fd = slot[k].point >= 0 ? slot[k].fd : -1,
                                       .events = POLLIN };
        }
        if (poll(pfd, (nfds_t) jobs, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "sweep: poll failed (%s)",
                        g_strerror(errno));
            ok = FALSE;
            break;
        }
        for (int k = 0; k < jobs && ok; k++) {
            if (pfd[k].fd < 0 || !(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            int point = slot[k].point;
            cJSON *rec = NULL;
            if (!hs_sweep_worker_read(&slot[k], r->spec, &rec)) {
                continue;               /* more of the record to come */
            }
            running--;
            ok = hs_sweep_run_store(r, rec, point, error);
            done += rec != NULL;
            cJSON_Delete(rec);
            if (r->progress) {
                hs_sweep_progress(done, total, t0, FALSE);
            }
        }
    }
    /* the workers told to go (a point running finishes unrecorded: on a
     * failure, its claim released) */
    for (int k = 0; k < jobs; k++) {
        int point = slot[k].point;
        hs_sweep_worker_stop(&slot[k]);
        if (point >= 0) {
            hs_sweep_run_store(r, NULL, point, NULL);
        }
    }
    if (r->progress) {
        hs_sweep_progress(done, total, t0, TRUE);
    }
    return ok;
}
