/* ioutil.h - private helpers shared by the text-format readers in src/io (OpenVINO IR, NNCF DOT,
 * Tarnawski, hsdag JSON): strict integer text, shape element counts, default graph metadata and
 * builder-failure messages.
 * Not here: any format's grammar, JSON access (jsonin.h), weight attribution (constw.h); not public.
 * Entry points: hsdag_ioutil_parse_i64, hsdag_ioutil_shape_elems, hsdag_ioutil_meta_init,
 * hsdag_ioutil_builder_fail. */
#ifndef HSDAG_IO_IOUTIL_H
#define HSDAG_IO_IOUTIL_H

#include "hsdag/graph.h"

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

#endif
