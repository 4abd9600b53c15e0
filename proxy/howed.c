/*
 * The answers a stream owes its client: the ids of the JSON-RPC requests
 * whose responses it is to carry (a POST's own requests; over legacy
 * HTTP+SSE, those POSTed in the session), so that a client closing it can
 * be told from one leaving mid-response.  An answer settles a request
 * only by its id, compared as JSON text as written (1 and "1" differ, as
 * they do to the client), and never by an id null.  What cannot be known
 * by id (too many, a batch cut at the record cap, a request with a null
 * id) is owed until the stream ends: the safe side.
 */

#include <stdlib.h>
#include <string.h>

#include "http_int.h"

/* Whether an id's JSON text is null: nothing can be settled by it. */
static int
howed_id_null(const char *id, size_t len)
{
	return len == 4 && memcmp(id, "null", 4) == 0;
}

/*
 * Owe an answer to the request with this id (its JSON text).  Past
 * HOWED_IDS_MAX, with an id longer than HOWED_ID_MAX or an id null, it is
 * owed until the stream ends.
 */
void
howed_add(struct howed *o, const char *id, size_t len)
{
	if (howed_id_null(id, len) || len > HOWED_ID_MAX ||
	    o->n >= HOWED_IDS_MAX) {
		o->unknown++;
		return;
	}
	o->ids = xreallocarray(o->ids, o->n + 1, sizeof *o->ids);
	o->ids[o->n++] = xstrndup(id, len);
}

/* Settle the answer owed under id, if one is: 1 if it was, else 0. */
int
howed_settle(struct howed *o, const char *id, size_t len)
{
	size_t	i;

	if (howed_id_null(id, len))
		return 0;
	for (i = 0; i < o->n; i++) {
		if (strlen(o->ids[i]) != len || memcmp(o->ids[i], id, len) != 0)
			continue;
		free(o->ids[i]);
		o->ids[i] = o->ids[--o->n];
		return 1;
	}
	return 0;
}

/* Whether any answer is still owed. */
int
howed_any(const struct howed *o)
{
	return o->n > 0 || o->unknown > 0;
}

/* Forget what is owed (the owner is freed). */
void
howed_clear(struct howed *o)
{
	size_t	i;

	for (i = 0; i < o->n; i++)
		free(o->ids[i]);
	free(o->ids);
	memset(o, 0, sizeof *o);
}

/* One message (or batch element): owe its answer if it is a request. */
static int
howed_request_cb(const char *p, size_t len, void *arg)
{
	struct howed	*o = arg;
	struct scan	 sc;

	scan_message(p, len, &sc);
	if (sc.kind == KIND_REQUEST)
		howed_add(o, p + sc.id_off, sc.id_len);
	return 0;
}

/*
 * A request body: owe the answers to the requests it carries, one for a
 * request, one per request inside a batch (its notifications and
 * responses are owed nothing).
 */
void
howed_requests(struct howed *o, const char *p, size_t len)
{
	struct scan	sc;

	scan_message(p, len, &sc);
	if (sc.kind == KIND_BATCH)
		howed_batch(o, p, len);
	else if (sc.kind == KIND_REQUEST)
		howed_add(o, p + sc.id_off, sc.id_len);
}

/* A batch (already scanned as one): owe the answers to its requests. */
void
howed_batch(struct howed *o, const char *p, size_t len)
{
	scan_elements(p, len, howed_request_cb, o);
}

/* What howed_answers counts for one message. */
struct howed_seen {
	struct howed	*o;		/* settled in, or NULL */
	int		 n;		/* answers with an id not null */
	int		 settled;	/* of them, owed in o */
};

/* One message (or batch element): settle it if it is an answer. */
static int
howed_answer_cb(const char *p, size_t len, void *arg)
{
	struct howed_seen	*s = arg;
	struct scan		 sc;

	scan_message(p, len, &sc);
	if ((sc.kind != KIND_RESPONSE && sc.kind != KIND_ERROR) ||
	    !sc.has_id || howed_id_null(p + sc.id_off, sc.id_len))
		return 0;
	s->n++;
	if (s->o != NULL && howed_settle(s->o, p + sc.id_off, sc.id_len))
		s->settled++;
	return 0;
}

/*
 * A message the stream carried (one, or a batch of them): settle in o
 * (unless NULL) the answers it holds.  Returns how many answers with an
 * id (not null) it holds, owed in o or not.
 */
int
howed_answers(struct howed *o, const char *p, size_t len)
{
	struct howed_seen	s = { o, 0, 0 };
	struct scan		sc;

	scan_message(p, len, &sc);
	if (sc.kind == KIND_BATCH)
		scan_elements(p, len, howed_answer_cb, &s);
	else if (sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR)
		howed_answer_cb(p, len, &s);
	return s.n;
}
