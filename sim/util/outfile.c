/*
 * outfile.c - see outfile.h.
 */
#include "sim/util/outfile.h"
#include "sim/util/error.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct HsOutFile {
    FILE *fp;
    char *path;      /* final name; NULL for stdout */
    char *tmp_path;  /* where we write until commit */
};

HsOutFile *
hs_outfile_open(const char *path, GError **error)
{
    HsOutFile *f = g_new0(HsOutFile, 1);

    if (strcmp(path, "-") == 0) {
        f->fp = stdout;
        return f;
    }
    f->path = g_strdup(path);
    f->tmp_path = g_strdup_printf("%s.tmp-XXXXXX", path);
    int fd = g_mkstemp(f->tmp_path);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "%s: cannot create file: %s", path, g_strerror(e));
        g_clear_pointer(&f->tmp_path, g_free);
        hs_outfile_abort(f);
        return NULL;
    }
    /* mkstemp makes the file 0600; give it what a plain create would */
    mode_t um = umask(0);
    umask(um);
    if (fchmod(fd, 0666 & ~um) != 0) {
        /* harmless: the file is still ours to write */
    }
    f->fp = fdopen(fd, "w");
    g_assert(f->fp != NULL);
    return f;
}

FILE *
hs_outfile_stream(HsOutFile *f)
{
    return f->fp;
}

gboolean
hs_outfile_commit(HsOutFile *f, GError **error)
{
    gboolean ok = TRUE;

    if (f->path == NULL) {
        ok = fflush(f->fp) == 0 && !ferror(f->fp);
        if (!ok) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                        "cannot write to standard output");
        }
        g_free(f);
        return ok;
    }
    if (ferror(f->fp) || fflush(f->fp) != 0) {
        ok = FALSE;
    }
    if (fclose(f->fp) != 0) {
        ok = FALSE;
    }
    f->fp = NULL;
    if (ok && g_rename(f->tmp_path, f->path) != 0) {
        ok = FALSE;
    }
    if (!ok) {
        int e = errno;
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "%s: cannot write file: %s", f->path, g_strerror(e));
    } else {
        g_clear_pointer(&f->tmp_path, g_free);
    }
    hs_outfile_abort(f);
    return ok;
}

void
hs_outfile_abort(HsOutFile *f)
{
    if (f == NULL) {
        return;
    }
    if (f->fp && f->fp != stdout) {
        fclose(f->fp);
    }
    if (f->tmp_path) {
        g_unlink(f->tmp_path);
    }
    g_free(f->tmp_path);
    g_free(f->path);
    g_free(f);
}

gboolean
hs_outfile_write_all(const char *path, const void *data, gsize len,
                     GError **error)
{
    g_autoptr(HsOutFile) f = hs_outfile_open(path, error);
    if (f == NULL) {
        return FALSE;
    }
    if (len > 0 && fwrite(data, 1, len, hs_outfile_stream(f)) != len) {
        /* the commit below reports the stream error */
    }
    return hs_outfile_commit(g_steal_pointer(&f), error);
}
