/*
 * Values a server issues and its client sends back (cursors, task ids,
 * request state), which differ from run to run: learnt from two answers
 * to the same request, and put in place of one run's values in a
 * request of that run, so it reads as the other run's.  replay maps the
 * recording's values to the live server's; diff maps B's to A's.
 */

#include <string.h>

#include "replay.h"

/* Keys whose values the server issues and the client sends back. */
static const char *opaque_keys[] = {
	"requestState",		/* 2026-07-28 multi round-trip requests */
	"nextCursor",		/* pagination: answered as "cursor" */
	"cursor",
	"taskId",		/* 2025-11-25 tasks */
	NULL
};

/*
 * Replace the opaque values remap has learnt in v (a message about to be
 * sent, or matched); how many were replaced.
 */
int
remap_apply(const json_t *remap, json_t *v)
{
	const char	*k;
	json_t		*c, *to;
	size_t		 i;
	int		 n = 0, j;

	if (json_is_object(v)) {
		json_object_foreach(v, k, c) {
			for (j = 0; opaque_keys[j] != NULL; j++) {
				if (strcmp(k, opaque_keys[j]) != 0 ||
				    !json_is_string(c))
					continue;
				to = json_object_get(remap,
				    json_string_value(c));
				if (to != NULL) {
					json_object_set(v, k, to);
					n++;
				}
			}
			n += remap_apply(remap, json_object_get(v, k));
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c)
			n += remap_apply(remap, c);
	}
	return n;
}

/*
 * Learn opaque values from a recorded answer rec and its counterpart
 * live: remap gets rec's value -> live's where they differ.
 */
void
remap_learn(json_t *remap, const json_t *rec, const json_t *live)
{
	const char	*k;
	json_t		*c, *l;
	size_t		 i;
	int		 j;

	if (json_is_object(rec) && json_is_object(live)) {
		json_object_foreach((json_t *)rec, k, c) {
			l = json_object_get(live, k);
			if (l == NULL)
				continue;
			for (j = 0; opaque_keys[j] != NULL; j++) {
				if (strcmp(k, opaque_keys[j]) == 0 &&
				    json_is_string(c) && json_is_string(l) &&
				    !json_equal(c, l))
					json_object_set(remap,
					    json_string_value(c), l);
			}
			remap_learn(remap, c, l);
		}
	} else if (json_is_array(rec) && json_is_array(live)) {
		for (i = 0; i < json_array_size(rec) &&
		    i < json_array_size(live); i++)
			remap_learn(remap, json_array_get(rec, i),
			    json_array_get(live, i));
	}
}
