/* hsdag.h - the umbrella header: includes every public header of libhsdag, lowest layer first.
 * Not here: any declaration of its own; include one module's header instead to depend on less.
 * Entry points: see each header (common.h, codec.h, graph.h, gen.h, nn.h, io.h, devices.h, placement.h, split.h, sim.h,
 *   place.h, features.h, learn.h, measure.h, placeto.h, rnnplace.h, pretrain.h, pacml.h, cluster.h); the folder
 *   map is in README.md ("Layout").
 *
 * Usage:
 *   #include <hsdag/hsdag.h>      // cc prog.c $(pkg-config --cflags --libs hsdag)
 *   hsdag_graph *g; hsdag_err e = {0};
 *   if (hsdag_load_file(&g, "model.onnx", HSDAG_FMT_UNKNOWN, &e) < 0) fprintf(stderr, "%s\n", e.msg);
 */
#ifndef HSDAG_H
#define HSDAG_H

#include "hsdag/common.h"
#include "hsdag/codec.h"
#include "hsdag/graph.h"
#include "hsdag/gen.h"
#include "hsdag/coarsen.h"
#include "hsdag/nn.h"
#include "hsdag/devices.h"
#include "hsdag/io.h"
#include "hsdag/placement.h"
#include "hsdag/split.h"
#include "hsdag/ortprof.h"
#include "hsdag/sim.h"
#include "hsdag/calibrate.h"
#include "hsdag/place.h"
#include "hsdag/features.h"
#include "hsdag/learn.h"
#include "hsdag/measure.h"
#include "hsdag/placeto.h"
#include "hsdag/rnnplace.h"
#include "hsdag/pretrain.h"
#include "hsdag/pacml.h"
#include "hsdag/cluster.h"

#endif
