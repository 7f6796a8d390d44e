/* cli.c - shared CLI helpers: error reporting, strict number parsing, progress bar, output.
 * Not here: subcommands (tools/cmd_*.c) or the dispatcher (tools/hsdag.c).
 * Entry points: cli_usage_error, cli_fail, cli_parse_*, cli_progress_*, cli_write_out. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "hsdag %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see hsdag %s --help)\n", cmd);
    return CLI_BADINPUT;
}

int cli_fail(const char *cmd, int status, const hsdag_err *e)
{
    const char *msg = (e && e->msg[0]) ? e->msg : hsdag_status_str(status);
    fprintf(stderr, "hsdag %s: %s\n", cmd, msg);
    switch (status) {
    case HSDAG_EIO:
    case HSDAG_EPARSE:
    case HSDAG_EINVAL:
    case HSDAG_ECYCLE:
    case HSDAG_EDANGLING:
    case HSDAG_ELIMIT:
    case HSDAG_EFORMAT:
    case HSDAG_EUNSUPPORTED:
        return CLI_BADINPUT;
    default:
        return CLI_FAIL;
    }
}

int cli_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

void cli_progress_start(cli_progress *p, const char *label, long total, int quiet)
{
    memset(p, 0, sizeof *p);
    p->active = !quiet && isatty(2) && total > 0;
    p->total = total;
    p->label = label;
    p->t0 = hsdag_now();
}

void cli_progress_update(cli_progress *p, long done, const char *extra)
{
    if (!p->active) return;
    double now = hsdag_now();
    if (done < p->total && now - p->last < 0.1) return;
    p->last = now;
    int width = 24, fill = (int)(width * (double)done / (double)p->total);
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    double el = now - p->t0, eta = done > 0 ? el * (double)(p->total - done) / (double)done : 0;
    int em = (int)(eta / 60), es = (int)fmod(eta, 60);
    fprintf(stderr, "\r%s [%s] %ld/%ld %s  ETA %d:%02d ", p->label ? p->label : "", bar, done, p->total,
            extra ? extra : "", em, es);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->active) fprintf(stderr, "\r\033[K");
    p->active = 0;
}

int cli_write_out(const char *cmd, const char *path, const hsdag_buf *b)
{
    if (b->oom) {
        fprintf(stderr, "hsdag %s: out of memory\n", cmd);
        return CLI_FAIL;
    }
    if (!path || strcmp(path, "-") == 0) {
        if ((b->len && fwrite(b->data, 1, b->len, stdout) != b->len) || fflush(stdout) != 0) {
            fprintf(stderr, "hsdag %s: standard output: write failed: %s\n", cmd, strerror(errno));
            clearerr(stdout);
            return CLI_FAIL;
        }
        return CLI_OK;
    }
    hsdag_err e = {0};
    if (hsdag_write_file_atomic(path, b->data ? b->data : "", b->len, &e) < 0) {
        fprintf(stderr, "hsdag %s: %s\n", cmd, e.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}
