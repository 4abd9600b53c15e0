/*
 * Fault injection over stdio: the requests it remembers.  A client
 * request's id and method, for the faults row of its answer (whose
 * method the answer does not carry), and a request under a timeout rule,
 * whose answer is to be swallowed.  Both are rings, bounded in count and
 * in the text they hold.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "fault.h"
#include "record_int.h"

/*
 * Requests remembered for the faults rows of their answers (method) and
 * requests under a timeout rule whose answer is to be swallowed: the
 * oldest are forgotten past these.
 */
#define INJECT_REQS_MAX		1024
#define INJECT_TIMEOUTS_MAX	1024
/*
 * What they keep is bounded as fault/ bounds its own: an id or a method
 * longer than FAULT_KEEP_MAX bytes is not kept (the request is not
 * remembered), and the ring of requests holds at most INJECT_REQS_BYTES
 * of text, forgetting its oldest past that; the timeouts' ids hold at most
 * INJECT_TIMEOUTS_MAX * (FAULT_KEEP_MAX + 1) bytes.
 */
#define INJECT_REQS_BYTES	((size_t)128 * 1024)

/* A request remembered: its id's text and method (or a timeout's fault). */
struct inject_req {
	char			*id;
	char			*method;
	int64_t			 fault;		/* timeouts: its fault */
	int64_t			 deadline;	/* timeouts: monotonic ns */
};

/* The rings. */
struct inject_reqs {
	struct inject_req	 reqs[INJECT_REQS_MAX];	/* a ring */
	size_t			 nreq;
	size_t			 reqs_bytes;	/* text the ring holds */
	struct inject_req	 tos[INJECT_TIMEOUTS_MAX]; /* a ring */
	size_t			 nto;
};

/* Free what a remembered request holds. */
static void
inject_req_clear(struct inject_req *q)
{
	free(q->id);
	free(q->method);
	memset(q, 0, sizeof *q);
}

/*
 * A message's id's text, or NULL when it has none or it is longer than
 * anything remembered (FAULT_KEEP_MAX): for the faults row and lookups.
 */
char *
inject_id_dup(const char *p, const struct scan *sc)
{
	if (!sc->has_id || sc->id_len > FAULT_KEEP_MAX)
		return NULL;
	return scan_id_dup(p, sc);
}

/* A message's method, or NULL when it has none or it is too long. */
char *
inject_method_dup(const char *p, const struct scan *sc)
{
	if (!sc->has_method || sc->method_len > FAULT_KEEP_MAX)
		return NULL;
	return scan_method_dup(p, sc);
}

/* The bytes a remembered request's text takes. */
static size_t
inject_req_bytes(const struct inject_req *q)
{
	return (q->id != NULL ? strlen(q->id) + 1 : 0) +
	    (q->method != NULL ? strlen(q->method) + 1 : 0);
}

/* Forget request slot i of the ring. */
static void
inject_forget(struct inject_reqs *ij, size_t i)
{
	ij->reqs_bytes -= inject_req_bytes(&ij->reqs[i]);
	inject_req_clear(&ij->reqs[i]);
}

/*
 * Remember a client request's id and method (a ring), unless either is
 * longer than FAULT_KEEP_MAX; past INJECT_REQS_BYTES the oldest go.
 */
void
inject_reqs_remember(struct inject_reqs *ij, const char *p, const struct scan *sc)
{
	struct inject_req	*q;
	size_t			 i, slot;

	if (!sc->has_id || sc->id_len > FAULT_KEEP_MAX ||
	    (sc->has_method && sc->method_len > FAULT_KEEP_MAX))
		return;
	slot = ij->nreq++ % INJECT_REQS_MAX;
	inject_forget(ij, slot);
	q = &ij->reqs[slot];
	q->id = inject_id_dup(p, sc);
	q->method = inject_method_dup(p, sc);
	ij->reqs_bytes += inject_req_bytes(q);
	/* The oldest follow the newest in the ring. */
	for (i = 1; i < INJECT_REQS_MAX &&
	    ij->reqs_bytes > INJECT_REQS_BYTES; i++)
		inject_forget(ij, (slot + i) % INJECT_REQS_MAX);
}

/* The method of the request a response answers, if remembered. */
const char *
inject_reqs_method_of(struct inject_reqs *ij, const char *id)
{
	size_t	i;

	for (i = 0; i < INJECT_REQS_MAX; i++) {
		if (ij->reqs[i].id != NULL && strcmp(ij->reqs[i].id, id) == 0)
			return ij->reqs[i].method;
	}
	return NULL;
}

/* Whether any request under a timeout rule is remembered. */
int
inject_reqs_timeouts(const struct inject_reqs *ij)
{
	return ij->nto != 0;
}

/*
 * Remember a request under a timeout rule (fault n) whose answer is to be
 * swallowed: its id (at most FAULT_KEEP_MAX bytes), past deadline or not.
 */
void
inject_reqs_timeout(struct inject_reqs *ij, const char *id, int64_t n,
    int64_t deadline)
{
	struct inject_req	*q;

	if (strlen(id) > FAULT_KEEP_MAX)
		return;
	q = &ij->tos[ij->nto++ % INJECT_TIMEOUTS_MAX];
	inject_req_clear(q);
	q->id = xstrdup(id);
	q->fault = n;
	q->deadline = deadline;
}

/*
 * Whether the answer with this id is one to a request under a timeout
 * rule: 1, and its fault in *n, forgetting it; else 0.
 */
int
inject_reqs_timed_out(struct inject_reqs *ij, const char *id, int64_t *n)
{
	struct inject_req	*q;
	size_t			 i;
	int64_t			 now = clock_mono_ns();

	if (ij->nto == 0)
		return 0;
	for (i = 0; i < INJECT_TIMEOUTS_MAX; i++) {
		q = &ij->tos[i];
		if (q->id == NULL || strcmp(q->id, id) != 0)
			continue;
		log_debug("fault #%lld: the answer to request %s came %s its "
		    "timeout: dropped", (long long)q->fault, id,
		    now < q->deadline ? "before" : "after");
		*n = q->fault;
		inject_req_clear(q);
		return 1;
	}
	return 0;
}

/* Requests remembered: none yet. */
struct inject_reqs *
inject_reqs_new(void)
{
	return xcalloc(1, sizeof(struct inject_reqs));
}

/* Free the requests remembered. */
void
inject_reqs_free(struct inject_reqs *ij)
{
	size_t	i;

	if (ij == NULL)
		return;
	for (i = 0; i < INJECT_REQS_MAX; i++)
		inject_req_clear(&ij->reqs[i]);
	for (i = 0; i < INJECT_TIMEOUTS_MAX; i++)
		inject_req_clear(&ij->tos[i]);
	free(ij);
}
