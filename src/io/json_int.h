/* json_int.h - the two readers behind hsdag_json_read, for tests and fuzz targets that compare them: the
 * streaming reader (the fast path, no document tree) and the json-c tree reader (every error message).
 * Not here: the public entry point (io.h: hsdag_json_read tries the first, then the second); not public.
 * Entry points: hsdag_json_read_stream, hsdag_json_read_file_stream, hsdag_json_read_tree. */
#ifndef HSDAG_IO_JSON_INT_H
#define HSDAG_IO_JSON_INT_H

#include "hsdag/graph.h"

#include <stdio.h>

/* 0 with *out set; HSDAG_ENOMEM; or HSDAG_JSTREAM_STOP (2) when it does not take the text: a syntax or schema
 * error, a graph the builder refuses, or a construct left to json-c (jsonstream.h). Writes no message. Whatever it takes,
 * hsdag_json_read_tree takes too and builds the same graph. */
int hsdag_json_read_stream(hsdag_graph **out, const void *buf, size_t len);
/* The same reader on the text of f from its current position, read in newline-aligned pieces of about `piece`
 * bytes (hsdag_jstream_init_file), so a large file is never held whole; the same result as
 * hsdag_json_read_stream on the file's bytes, and STOP also for a read error or a file over
 * HSDAG_MAX_FILE_BYTES. */
int hsdag_json_read_file_stream(hsdag_graph **out, FILE *f, size_t piece);
/* The json-c reader: the whole document as a tree, then the graph; words every error. */
int hsdag_json_read_tree(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e);

#endif
