/* ioutil.h - private helpers shared by the text-format readers in src/io (OpenVINO IR, NNCF DOT,
 * Tarnawski, hsdag JSON): strict integer text, shape element counts, default graph metadata,
 * builder-failure messages, and opening a large JSON file to be read in pieces.
 * Not here: any format's grammar, JSON access (jsonin.h), weight attribution (constw.h); not public.
 * Entry points: hsdag_ioutil_parse_i64, hsdag_ioutil_shape_elems, hsdag_ioutil_meta_init,
 * hsdag_ioutil_builder_fail, hsdag_ioutil_open_pieces. */
#ifndef HSDAG_IO_IOUTIL_H
#define HSDAG_IO_IOUTIL_H

#include "hsdag/graph.h"

#include <stdio.h>

/* Strict decimal integer: optional blanks (space, tab, CR, LF), optional sign, digits, optional
 * blanks, nothing else; out of int64 range is an error. Returns 0 (and *out) or -1; s may be NULL. */
int hsdag_ioutil_parse_i64(const char *s, int64_t *out);

/* Elements of a shape of rank dims (the product; 1 for a scalar), or -1 if a dim is negative (dynamic).
 * Readers refuse a known count above HSDAG_MAX_ELEMS (ELIMIT). */
double hsdag_ioutil_shape_elems(const int64_t *dims, int rank);

/* Metadata of format f with every other field unknown: counts and versions -1, capacity NAN, name "". */
void hsdag_ioutil_meta_init(hsdag_graph_meta *m, hsdag_format f);

/* Sets the message for a builder call (add_node/add_output/add_edge) that returned brc < 0:
 * "what: out of memory" for ENOMEM, else "what: the graph builder refused it: <status>". Returns brc. */
int hsdag_ioutil_builder_fail(hsdag_err *e, const char *what, int brc);

/* Files from this size on are read in pieces (hsdag_jstream_init_file) by the readers that can: the text is never
 * held whole (at 10^6 ops the 345 MB graph file was a third of the pages every command touched). */
#define HSDAG_IOUTIL_PIECES_MIN ((size_t)4 << 20)
#define HSDAG_IOUTIL_PIECE ((size_t)1 << 20)
/* path opened for a piecewise read if it is a regular file of HSDAG_IOUTIL_PIECES_MIN to max_bytes bytes whose first
 * byte is '{': 1 with *f at offset 0 and its first head_len (<= HSDAG_IOUTIL_PIECES_MIN) bytes in head, else 0 (the
 * caller reads the file whole, which words every error). The caller closes *f. */
int hsdag_ioutil_open_pieces(FILE **f, char *head, size_t head_len, const char *path, size_t max_bytes);

#endif
