/* Messages and the names of their directions and kinds. */

#include <stdlib.h>
#include <string.h>

#include "core.h"

static const char *dir_names[DIR_MAX] = { "c2s", "s2c" };

static const char *kind_names[KIND_MAX] = {
	"invalid", "request", "response", "error", "notification", "batch"
};

/* The stored name of a direction. */
const char *
dir_name(enum dir d)
{
	return (d < DIR_MAX) ? dir_names[d] : "?";
}

/* The stored name of a kind. */
const char *
kind_name(enum msg_kind k)
{
	return (k < KIND_MAX) ? kind_names[k] : "?";
}

/* The kind a stored name stands for, or -1. */
int
kind_from_name(const char *name)
{
	int	k;

	for (k = 0; k < KIND_MAX; k++) {
		if (strcmp(kind_names[k], name) == 0)
			return k;
	}
	return -1;
}

/*
 * A message with room for len bytes (and a NUL after them, for debugging
 * convenience), stamped with both clocks now; the caller fills raw.
 */
struct msg *
msg_alloc(enum dir d, size_t len)
{
	struct msg	*m;

	/* One allocation for both: a message costs one malloc and one free. */
	if (len > SIZE_MAX - sizeof *m - 1)
		fatalx("a message of %zu bytes is too large to hold", len);
	m = xmalloc(sizeof *m + len + 1);
	m->dir = d;
	m->ts_ns = clock_wall_ns();
	m->mono_ns = clock_mono_ns();
	m->raw = (char *)(m + 1);
	m->raw[len] = '\0';
	m->len = len;
	m->sse_id = NULL;
	return m;
}

/*
 * Make room in m (NULL: a new message) for cap bytes, keeping what it
 * holds; for gathering a message as it arrives.  Returns the message,
 * which may have moved.
 */
struct msg *
msg_realloc(struct msg *m, enum dir d, size_t cap)
{
	if (cap > SIZE_MAX - sizeof *m - 1)
		fatalx("a message of %zu bytes is too large to hold", cap);
	if (m == NULL) {
		m = xmalloc(sizeof *m + cap + 1);
		m->dir = d;
		m->sse_id = NULL;
		m->len = 0;
	} else
		m = xreallocarray(m, 1, sizeof *m + cap + 1);
	m->raw = (char *)(m + 1);
	return m;
}

/* A gathered message is complete at len bytes: stamp it now. */
struct msg *
msg_finish(struct msg *m, size_t len)
{
	m->len = len;
	m->raw[len] = '\0';
	m->ts_ns = clock_wall_ns();
	m->mono_ns = clock_mono_ns();
	return m;
}

/* A message holding a copy of len bytes, stamped with both clocks now. */
struct msg *
msg_new(enum dir d, const void *bytes, size_t len)
{
	struct msg	*m = msg_alloc(d, len);

	memcpy(m->raw, bytes, len);
	return m;
}

void
msg_free(struct msg *m)
{
	if (m == NULL)
		return;
	free(m->sse_id);
	free(m);
}
