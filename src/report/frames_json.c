/*
 * frames_json.c - a frame as upstream's "frames" list in JSON.
 */
#include "frames_json.h"

json_t *frames_json(const struct npa_frame *f)
{
	if (f->filename == NULL)
		return json_array();
	return json_pack("[{s:s, s:s, s:I}]", "name", f->name ? f->name : "",
			 "filename", f->filename, "line", (json_int_t)f->line);
}
