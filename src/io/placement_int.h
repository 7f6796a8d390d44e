/* placement_int.h - the two readers behind hsdag_placement_parse, for tests and fuzz targets that compare them:
 * the streaming reader (hsdag placement JSON only, no document tree) and the json-c tree reader (every format,
 * every error message). Not here: the public entry points (placement.h); not public.
 * Entry points: hsdag_placement_parse_stream, hsdag_placement_parse_tree. */
#ifndef HSDAG_IO_PLACEMENT_INT_H
#define HSDAG_IO_PLACEMENT_INT_H

#include "hsdag/placement.h"

/* 0 with device[] and *info set; HSDAG_ENOMEM; or HSDAG_JSTREAM_STOP (2) when it does not take the text: any
 * error, any format but {"placement": {...}}, a key given twice, or a construct left to json-c (jsonstream.h).
 * Writes no message. Whatever it takes, hsdag_placement_parse_tree takes too with the same result. */
int hsdag_placement_parse_stream(int32_t *device, hsdag_placement_info *info, const void *buf, size_t len,
                                 const hsdag_graph *g, const hsdag_devices *devs);
/* The json-c reader: every placement format, every error worded. */
int hsdag_placement_parse_tree(int32_t *device, hsdag_placement_info *info, const void *buf, size_t len,
                               const char *what, const hsdag_graph *g, const hsdag_devices *devs,
                               hsdag_err *e);

#endif
