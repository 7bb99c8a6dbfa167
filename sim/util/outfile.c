/*
 * outfile.c - see outfile.h.
 */
#include "sim/util/outfile.h"
#include "sim/util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum {
    OUT_STDOUT,                  /* "-" */
    OUT_DIRECT,                  /* a character device or FIFO, written in place */
    OUT_RENAME,                  /* a temporary file renamed over dest on commit */
} OutKind;

struct HsOutFile {
    OutKind kind;
    FILE *fp;
    int fd;
    int err;         /* errno of the first failed write or close, 0 if none */
    char *path;      /* the name as the user gave it, for messages */
    char *dest;      /* what is written or renamed over: @path, links followed */
    char *tmp_path;  /* OUT_RENAME: where we write until commit */
};

/* ---- inputs ------------------------------------------------------------- */

typedef struct Input {
    dev_t dev;
    ino_t ino;
    char *path;
} Input;

static GMutex inputs_lock;
static GArray *inputs;           /* of Input, never freed: the process's inputs */
static GPtrArray *pending;       /* HsOutFile renamed on commit, not yet freed */

void
hs_input_note(const char *path)
{
    struct stat st;
    if (path == NULL || strcmp(path, "-") == 0 || stat(path, &st) != 0) {
        return;
    }
    g_mutex_lock(&inputs_lock);
    if (inputs == NULL) {
        inputs = g_array_new(FALSE, FALSE, sizeof(Input));
    }
    gboolean seen = FALSE;
    for (guint i = 0; i < inputs->len && !seen; i++) {
        const Input *in = &g_array_index(inputs, Input, i);
        seen = in->dev == st.st_dev && in->ino == st.st_ino;
    }
    if (!seen) {
        Input in = { st.st_dev, st.st_ino, g_strdup(path) };
        g_array_append_val(inputs, in);
    }
    g_mutex_unlock(&inputs_lock);
}

void
hs_input_note_dir(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d)) != NULL) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR)) {
            hs_input_note(p);
        }
    }
}

gboolean
hs_outdir_check(const char *dir, GError **error)
{
    if (g_file_test(dir, G_FILE_TEST_EXISTS) && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "--out %s: expected a directory (got a file)", dir);
        return FALSE;
    }
    return TRUE;
}

gboolean
hs_outdir_make(const char *dir, GError **error)
{
    if (!hs_outdir_check(dir, error)) {
        return FALSE;
    }
    if (g_mkdir_with_parents(dir, 0777) != 0) {
        int e = errno;
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "--out %s: cannot create the directory: %s", dir, g_strerror(e));
        return FALSE;
    }
    return TRUE;
}

gboolean
hs_outfile_check(const char *path, GError **error)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0) {
        return TRUE;
    }
    g_autofree char *clash = NULL;
    g_mutex_lock(&inputs_lock);
    for (guint i = 0; inputs && i < inputs->len && clash == NULL; i++) {
        const Input *in = &g_array_index(inputs, Input, i);
        if (in->dev == st.st_dev && in->ino == st.st_ino) {
            clash = g_strdup(in->path);
        }
    }
    g_mutex_unlock(&inputs_lock);
    /* /dev/stdin given as an input and /dev/stdout as the output may be
     * the same terminal: only files can be overwritten */
    if (clash && S_ISREG(st.st_mode)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "%s: is an input of this run (%s); refusing to overwrite it", path, clash);
        return FALSE;
    }
    /* an output file is replaced by a rename, which asks only the folder,
     * and root may write anything: a file its owner made read-only stays
     * (no write bit at all is a deliberate "keep", for root too) */
    if (S_ISREG(st.st_mode) && ((st.st_mode & 0222) == 0 || access(path, W_OK) != 0)) {
        int e = (st.st_mode & 0222) == 0 ? EACCES : errno;
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "%s: cannot write: %s (mode %04o); refusing to change it", path,
                    g_strerror(e), (unsigned) (st.st_mode & 07777));
        return FALSE;
    }
    return TRUE;
}

/* ---- one file ----------------------------------------------------------- */

static void
set_io_error(GError **error, const char *path, const char *what, int e)
{
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: %s: %s", path, what,
                g_strerror(e));
}

/*
 * The stream writes through these, so the reason of the first failure is
 * kept (stdio only keeps "an error happened", and errno is long gone by
 * commit time).
 */
static ssize_t
cookie_write(void *cookie, const char *buf, size_t size)
{
    HsOutFile *f = cookie;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(f->fd, buf + done, size - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            if (f->err == 0) {
                f->err = n < 0 ? errno : EIO;
            }
            /* glibc's fopencookie: 0 means an error (fopencookie(3)) */
            return done > 0 ? (ssize_t) done : 0;
        }
        done += (size_t) n;
    }
    return (ssize_t) size;
}

static int
cookie_close(void *cookie)
{
    HsOutFile *f = cookie;
    int rc = close(f->fd);
    if (rc != 0 && f->err == 0) {
        f->err = errno;          /* NFS and the like report late */
    }
    f->fd = -1;
    return rc;
}

static gboolean
attach_stream(HsOutFile *f, int fd)
{
    f->fd = fd;
    f->fp = fopencookie(f, "w", (cookie_io_functions_t) {
        .write = cookie_write, .close = cookie_close,
    });
    if (f->fp == NULL) {
        close(fd);
        f->fd = -1;
        return FALSE;
    }
    return TRUE;
}

/* N when @path is one of our open files by number, /proc/self/fd/N or
 * /dev/fd/N; else -1. */
static int
fd_path(const char *path)
{
    const char *n = g_str_has_prefix(path, "/proc/self/fd/") ? path + strlen("/proc/self/fd/")
                    : g_str_has_prefix(path, "/dev/fd/") ? path + strlen("/dev/fd/") : NULL;
    guint64 fd;
    return n && g_ascii_string_to_unsigned(n, 10, 0, G_MAXINT, &fd, NULL) ? (int) fd : -1;
}

/*
 * @path with its symbolic links followed to the file they name (which may
 * not exist yet); NULL with errno ELOOP after 40 links.  A link through
 * one of our open files (/dev/stdout is /proc/self/fd/1) stops there, with
 * *@fd its number: the target of such a "link" is no path to rename over
 * (pipe:[1234]), and the shell's redirection is what the user meant.
 * (transfer full)
 */
static char *
follow_links(const char *path, int *fd)
{
    char *cur = g_strdup(path);
    *fd = -1;
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        if ((*fd = fd_path(cur)) >= 0) {
            return cur;
        }
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            return cur;
        }
        g_autofree char *to = g_file_read_link(cur, NULL);
        if (to == NULL) {
            return cur;          /* the open below says why */
        }
        char *next;
        if (g_path_is_absolute(to)) {
            next = g_steal_pointer(&to);
        } else {
            g_autofree char *dir = g_path_get_dirname(cur);
            next = g_build_filename(dir, to, NULL);
        }
        g_free(cur);
        cur = next;
    }
    g_free(cur);
    errno = ELOOP;
    return NULL;
}

HsOutFile *
hs_outfile_open(const char *path, GError **error)
{
    HsOutFile *f = g_new0(HsOutFile, 1);
    f->fd = -1;

    if (strcmp(path, "-") == 0) {
        f->kind = OUT_STDOUT;
        f->fp = stdout;
        return f;
    }
    f->path = g_strdup(path);
    if (!hs_outfile_check(path, error)) {
        hs_outfile_abort(f);
        return NULL;
    }
    int via_fd;
    f->dest = follow_links(path, &via_fd);
    if (f->dest == NULL) {
        set_io_error(error, path, "cannot open", errno);
        hs_outfile_abort(f);
        return NULL;
    }
    struct stat st;
    if (via_fd >= 0) {
        /* written through our own descriptor (shared offset, as the
         * shell's "2>&1" would), after what stdio holds for it */
        int fd = fstat(via_fd, &st) != 0 ? -1 : S_ISDIR(st.st_mode) ? (errno = EISDIR, -1)
                 : dup(via_fd);
        if (fd < 0) {
            set_io_error(error, path, "cannot open", errno);
            hs_outfile_abort(f);
            return NULL;
        }
        fflush(stdout);
        fflush(stderr);
        f->kind = OUT_DIRECT;
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        if (!attach_stream(f, fd)) {
            set_io_error(error, path, "cannot open", errno);
            hs_outfile_abort(f);
            return NULL;
        }
        return f;
    }
    gboolean exists = stat(f->dest, &st) == 0;
    if (!exists && errno != ENOENT) {
        set_io_error(error, path, "cannot open", errno);
        hs_outfile_abort(f);
        return NULL;
    }
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        /* /dev/null, /dev/full, a named pipe: written where it is, never
         * replaced (no O_CREAT, no O_TRUNC); a FIFO waits for its reader */
        f->kind = OUT_DIRECT;
        int fd;
        do {
            fd = open(f->dest, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0 || !attach_stream(f, fd)) {
            set_io_error(error, path, "cannot open", errno);
            hs_outfile_abort(f);
            return NULL;
        }
        return f;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "%s: is %s; expected a file to write", path,
                    S_ISDIR(st.st_mode) ? "a directory" : S_ISBLK(st.st_mode) ? "a block device"
                    : S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file");
        hs_outfile_abort(f);
        return NULL;
    }
    /* two outputs renamed onto one file: the first would be lost */
    g_autofree char *canon = g_canonicalize_filename(f->dest, NULL);
    gboolean twice = FALSE;
    g_mutex_lock(&inputs_lock);
    for (guint i = 0; pending && i < pending->len && !twice; i++) {
        const HsOutFile *o = pending->pdata[i];
        g_autofree char *other = g_canonicalize_filename(o->dest, NULL);
        twice = strcmp(other, canon) == 0;
    }
    g_mutex_unlock(&inputs_lock);
    if (twice) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "%s: is already an output of this run; expected a file of its own", path);
        hs_outfile_abort(f);
        return NULL;
    }
    f->kind = OUT_RENAME;
    f->tmp_path = g_strdup_printf("%s.tmp-XXXXXX", f->dest);
    int fd = g_mkstemp(f->tmp_path);
    if (fd < 0) {
        set_io_error(error, path, "cannot create file", errno);
        g_clear_pointer(&f->tmp_path, g_free);
        hs_outfile_abort(f);
        return NULL;
    }
    if (exists) {
        /* the replacement keeps the file's owner and mode (best effort:
         * only root may give a file away) */
        if (fchown(fd, st.st_uid, st.st_gid) != 0) {
            /* ours, then */
        }
        if (fchmod(fd, st.st_mode & 07777) != 0) {
            /* harmless: the file is still ours to write */
        }
    } else {
        /* mkstemp makes the file 0600; give it what a plain create would */
        mode_t um = umask(0);
        umask(um);
        if (fchmod(fd, 0666 & ~um) != 0) {
            /* harmless: the file is still ours to write */
        }
    }
    if (!attach_stream(f, fd)) {
        set_io_error(error, path, "cannot create file", errno);
        hs_outfile_abort(f);
        return NULL;
    }
    g_mutex_lock(&inputs_lock);
    if (pending == NULL) {
        pending = g_ptr_array_new();
    }
    g_ptr_array_add(pending, f);
    g_mutex_unlock(&inputs_lock);
    return f;
}

FILE *
hs_outfile_stream(HsOutFile *f)
{
    return f->fp;
}

gboolean
hs_outfile_ok(HsOutFile *f, GError **error)
{
    if (f->kind == OUT_STDOUT) {
        if (ferror(stdout)) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                        "standard output: cannot write");
            return FALSE;
        }
        return TRUE;
    }
    if (f->err != 0 || ferror(f->fp)) {
        set_io_error(error, f->path, "cannot write", f->err ? f->err : EIO);
        return FALSE;
    }
    return TRUE;
}

/* Flush and close; FALSE with the reason when anything failed.  The
 * temporary file stays for the rename or the abort. */
static gboolean
finish(HsOutFile *f, GError **error)
{
    if (f->kind == OUT_STDOUT) {
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            int e = errno;
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                        "standard output: cannot write%s%s", e ? ": " : "",
                        e ? g_strerror(e) : "");
            return FALSE;
        }
        return TRUE;
    }
    gboolean ok = fflush(f->fp) == 0 && !ferror(f->fp);
    ok = fclose(f->fp) == 0 && ok;
    f->fp = NULL;
    if (!ok || f->err != 0) {
        set_io_error(error, f->path, "cannot write", f->err ? f->err : EIO);
        return FALSE;
    }
    return TRUE;
}

static gboolean
publish(HsOutFile *f, GError **error)
{
    if (f->kind != OUT_RENAME) {
        return TRUE;
    }
    if (g_rename(f->tmp_path, f->dest) != 0) {
        set_io_error(error, f->path, "cannot write file", errno);
        return FALSE;
    }
    g_clear_pointer(&f->tmp_path, g_free);
    return TRUE;
}

gboolean
hs_outfile_commit(HsOutFile *f, GError **error)
{
    gboolean ok = finish(f, error) && publish(f, error);
    hs_outfile_abort(f);
    return ok;
}

void
hs_outfile_abort(HsOutFile *f)
{
    if (f == NULL) {
        return;
    }
    if (f->fp && f->kind != OUT_STDOUT) {
        fclose(f->fp);
    }
    if (f->tmp_path) {
        g_unlink(f->tmp_path);
    }
    if (f->kind == OUT_RENAME) {
        g_mutex_lock(&inputs_lock);
        if (pending) {           /* not there if its open failed */
            g_ptr_array_remove_fast(pending, f);
        }
        g_mutex_unlock(&inputs_lock);
    }
    g_free(f->tmp_path);
    g_free(f->dest);
    g_free(f->path);
    g_free(f);
}

static gboolean
write_data(HsOutFile *f, const void *data, gsize len)
{
    return len == 0 || fwrite(data, 1, len, hs_outfile_stream(f)) == len;
}

gboolean
hs_outfile_write_all(const char *path, const void *data, gsize len,
                     GError **error)
{
    g_autoptr(HsOutFile) f = hs_outfile_open(path, error);
    if (f == NULL) {
        return FALSE;
    }
    write_data(f, data, len);    /* the commit reports a failed write */
    return hs_outfile_commit(g_steal_pointer(&f), error);
}

/* ---- several files ------------------------------------------------------ */

struct HsOutGroup {
    GPtrArray *files;            /* of HsOutFile, written and closed */
};

HsOutGroup *
hs_outgroup_new(void)
{
    HsOutGroup *g = g_new0(HsOutGroup, 1);
    g->files = g_ptr_array_new_with_free_func((GDestroyNotify) hs_outfile_abort);
    return g;
}

gboolean
hs_outgroup_write(HsOutGroup *g, const char *path, const void *data, gsize len,
                  GError **error)
{
    HsOutFile *f = hs_outfile_open(path, error);
    if (f == NULL) {
        return FALSE;
    }
    g_ptr_array_add(g->files, f);    /* its temporary file goes with the group */
    write_data(f, data, len);
    return finish(f, error);
}

gboolean
hs_outgroup_commit(HsOutGroup *g, GError **error)
{
    gboolean ok = TRUE;
    for (guint i = 0; i < g->files->len && ok; i++) {
        ok = publish(g->files->pdata[i], error);
    }
    hs_outgroup_free(g);
    return ok;
}

void
hs_outgroup_free(HsOutGroup *g)
{
    if (g == NULL) {
        return;
    }
    g_ptr_array_unref(g->files);
    g_free(g);
}
