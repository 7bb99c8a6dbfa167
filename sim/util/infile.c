/*
 * infile.c - see infile.h.
 */
#include "sim/util/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

gboolean
hs_infile_check(const char *path, const char *what, GQuark domain, gint code, GError **error)
{
    GStatBuf st;
    if (g_stat(path, &st) != 0) {
        return TRUE;
    }
    if (S_ISDIR(st.st_mode)) {
        g_set_error(error, domain, code, "%s: is a directory, expected %s", path, what);
        return FALSE;
    }
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        g_set_error(error, domain, code, "%s: is a device, expected %s", path, what);
        return FALSE;
    }
    return TRUE;
}

gboolean
hs_infile_read(const char *path, const char *what, GQuark domain, gint code, char **text,
               gsize *len, GError **error)
{
    if (!hs_infile_check(path, what, domain, code, error)) {
        return FALSE;
    }
    g_autoptr(GError) local = NULL;
    if (g_file_get_contents(path, text, len, &local)) {
        return TRUE;
    }
    /* GLib's message ("Failed to open file “x”: ...") is not this tool's
     * form: say why in the system's words, which an open() tells */
    int fd = g_open(path, O_RDONLY | O_NONBLOCK, 0);   /* a FIFO: no wait for a writer */
    int why = errno;
    if (fd >= 0) {
        close(fd);
        g_set_error(error, domain, code, "%s: cannot read: %s", path, local->message);
    } else {
        g_set_error(error, domain, code, "%s: cannot read: %s", path, g_strerror(why));
    }
    return FALSE;
}
