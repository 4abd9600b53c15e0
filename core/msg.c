/* Messages and the names of their directions and kinds. */

#include <sys/mman.h>

#include <stdlib.h>
#include <string.h>

#include "core.h"

/*
 * From this size a message gets a mapping of its own, with huge pages where
 * the kernel has them: touching a fresh 64 MiB in 4 KiB pages costs ~200 ms
 * of page faults on a virtual machine, in 2 MiB pages ~15 ms.
 */
#define MSG_HUGE_MIN	(4u * 1024 * 1024)
#define MSG_HUGE_ALIGN	(2u * 1024 * 1024)

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

/* The stored name of a fault role (messages.fault_role), NULL for none. */
const char *
fault_role_name(int role)
{
	switch (role) {
	case FAULT_ROLE_ORIGINAL:
		return "original";
	case FAULT_ROLE_INJECTED:
		return "injected";
	case FAULT_ROLE_DELAYED:
		return "delayed";
	default:
		return NULL;
	}
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

/* Map total bytes (a multiple of MSG_HUGE_ALIGN) for a huge message. */
static struct msg *
msg_map(size_t total)
{
	void	*p;

	p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("cannot map %zu bytes for a message", total);
	(void)madvise(p, total, MADV_HUGEPAGE);
	return p;
}

/* Bytes to map for a message of cap bytes, or 0 when malloc will do. */
static size_t
msg_map_len(size_t cap)
{
	size_t	total = sizeof(struct msg) + cap + 1;

	if (total < MSG_HUGE_MIN)
		return 0;
	return (total + MSG_HUGE_ALIGN - 1) & ~(size_t)(MSG_HUGE_ALIGN - 1);
}

/* Room for a message of cap bytes: one allocation for struct and bytes. */
static struct msg *
msg_room(size_t cap)
{
	struct msg	*m;
	size_t		 map_len;

	if (cap > SIZE_MAX - sizeof *m - MSG_HUGE_ALIGN)
		fatalx("a message of %zu bytes is too large to hold", cap);
	if ((map_len = msg_map_len(cap)) != 0)
		m = msg_map(map_len);
	else
		m = xmalloc(sizeof *m + cap + 1);
	m->map_len = map_len;
	return m;
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
	m = msg_room(len);
	m->dir = d;
	m->ts_ns = clock_wall_ns();
	m->mono_ns = clock_mono_ns();
	m->raw = (char *)(m + 1);
	m->raw[len] = '\0';
	m->len = len;
	m->sse_id = NULL;
	m->wire_size = -1;
	m->sha256 = NULL;
	m->flags = 0;
	m->ident = NULL;
	m->ident_len = 0;
	m->fault = 0;
	m->fault_role = FAULT_ROLE_NONE;
	return m;
}

/*
 * Make room in m (NULL: a new message) for cap bytes, keeping what it
 * holds (its len bytes: keep len up to date while gathering); for gathering
 * a message as it arrives.  Returns the message, which may have moved.
 */
struct msg *
msg_realloc(struct msg *m, enum dir d, size_t cap)
{
	struct msg	*n;
	size_t		 map_len;
	void		*p;

	if (m == NULL) {
		m = msg_room(cap);
		m->dir = d;
		m->sse_id = NULL;
		m->wire_size = -1;
		m->sha256 = NULL;
		m->flags = 0;
		m->ident = NULL;
		m->ident_len = 0;
		m->fault = 0;
		m->fault_role = FAULT_ROLE_NONE;
		m->len = 0;
	} else if (cap > SIZE_MAX - sizeof *m - MSG_HUGE_ALIGN)
		fatalx("a message of %zu bytes is too large to hold", cap);
	else if ((map_len = msg_map_len(cap)) == 0)
		m = xreallocarray(m, 1, sizeof *m + cap + 1);
	else if (m->map_len != 0) {
		/* Grown in place or moved by the kernel: no bytes copied. */
		if (map_len != m->map_len) {
			p = mremap(m, m->map_len, map_len, MREMAP_MAYMOVE);
			if (p == MAP_FAILED)
				fatal("cannot grow a message to %zu bytes", cap);
			m = p;
			(void)madvise(m, map_len, MADV_HUGEPAGE);
			m->map_len = map_len;
		}
	} else {
		/* From the heap to a mapping of its own, once. */
		n = msg_map(map_len);
		memcpy(n, m, sizeof *m + m->len);
		n->map_len = map_len;
		free(m);
		m = n;
	}
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

	if (len > 0)		/* an empty message may come as NULL */
		memcpy(m->raw, bytes, len);
	return m;
}

void
msg_free(struct msg *m)
{
	if (m == NULL)
		return;
	free(m->sse_id);
	free(m->sha256);
	free(m->ident);
	if (m->map_len != 0)
		munmap(m, m->map_len);
	else
		free(m);
}
