/*
 * infile.c - see infile.h.
 */
#include "sim/util/infile.h"

#include <glib/gstdio.h>
#include <sys/stat.h>

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
