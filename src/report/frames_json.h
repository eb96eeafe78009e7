/*
 * frames_json.h - a frame as upstream's "frames" list in JSON.
 */
#ifndef NPUREPORT_FRAMES_JSON_H
#define NPUREPORT_FRAMES_JSON_H

#include <jansson.h>

#include "alloc/core/snapshot.h"

/* [] without a frame, else [{"name": ..., "filename": ..., "line": ...}]
 * (the keys in the order torch's py_symbolize sets them); NULL on ENOMEM. */
json_t *frames_json(const struct npa_frame *f);

#endif /* NPUREPORT_FRAMES_JSON_H */
