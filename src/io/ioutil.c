/* ioutil.c - helpers shared by the src/io readers: strict integers, shape sizes, default metadata,
 * builder failures.
 * Not here: any format's grammar or JSON access (jsonin.c); nothing public (src/io/ioutil.h).
 * Entry points: hsdag_ioutil_parse_i64, hsdag_ioutil_shape_elems, hsdag_ioutil_meta_init,
 * hsdag_ioutil_builder_fail. */
#include "ioutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ioutil_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int hsdag_ioutil_parse_i64(const char *s, int64_t *out)
{
    if (!s) return -1;
    while (ioutil_blank(*s)) s++;
    if (!((*s >= '0' && *s <= '9') || *s == '-' || *s == '+')) return -1; /* no other strtoll blanks */
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno == ERANGE) return -1;
    while (ioutil_blank(*end)) end++;
    if (*end) return -1;
    *out = (int64_t)v;
    return 0;
}

double hsdag_ioutil_shape_elems(const int64_t *dims, int rank)
{
    double el = 1.0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1.0;
        el *= (double)dims[i];
    }
    return el;
}

void hsdag_ioutil_meta_init(hsdag_graph_meta *m, hsdag_format f)
{
    memset(m, 0, sizeof *m);
    m->format = f;
    m->file_nodes = m->file_edges = -1;
    m->ir_version = m->opset = -1;
    m->max_accels = m->max_cpus = -1;
    m->max_size_per_accel = NAN;
    m->name = "";
}

int hsdag_ioutil_builder_fail(hsdag_err *e, const char *what, int brc)
{
    if (brc == HSDAG_ENOMEM) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    return hsdag_err_set(e, brc, "%s: the graph builder refused it: %s", what, hsdag_status_str(brc));
}

int hsdag_ioutil_open_pieces(FILE **f, char *head, size_t head_len, const char *path, size_t max_bytes)
{
    struct stat st;
    char c;
    *f = fopen(path, "rb");
    if (!*f) return 0;
    if (fstat(fileno(*f), &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= HSDAG_IOUTIL_PIECES_MIN &&
        (size_t)st.st_size <= max_bytes && head_len <= HSDAG_IOUTIL_PIECES_MIN &&
        fread(head ? head : &c, 1, head ? head_len : 1, *f) == (head ? head_len : 1) &&
        (head ? head[0] : c) == '{' && fseek(*f, 0, SEEK_SET) == 0)
        return 1;
    fclose(*f);
    *f = NULL;
    return 0;
}
