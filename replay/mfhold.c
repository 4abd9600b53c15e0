/*
 * What the fault edge of the mock holds (mock --fault): its queue of
 * items (delayed messages, requests held by drop or timeout), bounded by
 * MOCKFAULT_HELD_MAX and _BYTES; a request's answer under a timeout rule;
 * and a client's cancellation of a held request.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "fault.h"
#include "replay.h"
#include "mockfault_int.h"

/* Free a held item taken off the queue. */
void
mfhold_free(struct mfitem *it)
{
	free(it->bytes);
	free(it->fb);
	json_decref(it->id);
	free(it);
}

/* A new held item, queued last. */
struct mfitem *
mfhold_add(struct mockfault *mf, enum mf_what what, struct ereq *er,
    const char *bytes, size_t len, int64_t due_ns, int64_t fault)
{
	struct mfitem	*it = xcalloc(1, sizeof *it);

	it->what = what;
	it->er = er;
	if (bytes != NULL) {
		it->bytes = xmalloc(len + 1);
		memcpy(it->bytes, bytes, len);
		it->bytes[len] = '\0';
		it->len = len;
	}
	it->due_ns = due_ns;
	it->fault = fault;
	TAILQ_INSERT_TAIL(&mf->items, it, entry);
	mf->nitems++;
	mf->held_bytes += it->len;
	return it;
}

/* Take a held item off the queue (the caller frees it). */
void
mfhold_remove(struct mockfault *mf, struct mfitem *it)
{
	TAILQ_REMOVE(&mf->items, it, entry);
	mf->nitems--;
	mf->held_bytes -= it->len + it->fblen;
}

/* Keep the fallback's bytes fb (NULL: none) with a queued message. */
void
mfhold_fb(struct mockfault *mf, struct mfitem *it, const char *fb,
    size_t fblen)
{
	if (fb == NULL)
		return;
	it->fb = xmalloc(fblen + 1);
	memcpy(it->fb, fb, fblen);
	it->fblen = fblen;
	mf->held_bytes += fblen;
}

/*
 * Whether MOCKFAULT_HELD_MAX messages or _BYTES are held (warned once), or
 * the mock stops: then nothing more is held.
 */
int
mfhold_full(struct mockfault *mf)
{
	if (mf->finished)
		return 1;
	if (mf->nitems < MOCKFAULT_HELD_MAX &&
	    mf->held_bytes < MOCKFAULT_HELD_BYTES)
		return 0;
	if (!mf->full_warned) {
		mf->full_warned = 1;
		log_warnx("mock: %zu messages (%zu bytes) are held by faults: "
		    "what a rule would hold now goes on at once", mf->nitems,
		    mf->held_bytes);
	}
	return 1;
}

/*
 * Hold er's POST with no answer, as a server that lost the request
 * (over stdio there is nothing to hold).
 */
void
mfhold_request(struct mockfault *mf, struct ereq *er, enum mf_what what,
    int64_t due_ns, int64_t n, json_t *id)
{
	struct mfitem	*it;

	if (er == NULL)
		return;
	if (mfhold_full(mf)) {
		ereq_end(mf->ep, er, NULL, 0);
		return;
	}
	it = mfhold_add(mf, what, er, NULL, 0, due_ns, n);
	it->id = json_incref(id);
}

/*
 * The answer to a request under a timeout rule: never given.  Over HTTP
 * its POST ends, with no answer, at the deadline (the request's time plus
 * the rule's ms; at once if that has passed).  It belongs to the request's
 * fault, said when the request came; one the mock did not see come (its
 * id too long, forgotten) is a fault of its own.
 */
void
mfhold_late_answer(struct mockfault *mf, const struct fault_hit *hit,
    enum mockfault_how how, struct ereq *er, const char *bytes, size_t len,
    const char *fb, size_t fblen)
{
	json_t	*id = mfnote_id(bytes, len);
	int64_t	 n, deadline, now = clock_mono_ns();

	if ((n = mfnote_faulted_n(mf->note, id, &deadline)) == 0)
		n = mfnote_fault(mf->note, hit, DIR_S2C, bytes, len);
	else
		log_info("mock: fault #%lld: the answer to a request under "
		    "timeout is held, then dropped", (long long)n);
	mfnote_record_fb(mf->note, bytes, len, fb, fblen, n,
	    FAULT_ROLE_ORIGINAL);
	if (how == MOCKFAULT_REQ_END && er != NULL) {
		mfhold_request(mf, er, MF_EXPIRE, deadline > now ? deadline : now, n,
		    id);
		if (!mf->running)
			mockfault_run(mf);
	}
	json_decref(id);
}

/* Whether anything but dropped requests is still held. */
int
mfhold_busy(const struct mockfault *mf)
{
	const struct mfitem	*it;

	TAILQ_FOREACH(it, &mf->items, entry) {
		if (it->what != MF_HOLD)
			return 1;
	}
	return 0;
}

/*
 * The client cancelled a request (notifications/cancelled): say it, at
 * the default level when a fault held that request (then, still held, it
 * is never played).
 */
void
mfhold_cancelled(struct mockfault *mf, const char *bytes, size_t len)
{
	struct mfitem	*it, *next;
	json_t		*msg, *id;
	char		*text;
	int64_t		 n;
	int		 held = 0;

	if ((msg = json_loadb(bytes, len, 0, NULL)) == NULL)
		return;
	id = json_object_get(json_object_get(msg, "params"), "requestId");
	if (id == NULL) {
		json_decref(msg);
		return;
	}
	n = mfnote_faulted_n(mf->note, id, NULL);
	for (it = TAILQ_FIRST(&mf->items); it != NULL; it = next) {
		next = TAILQ_NEXT(it, entry);
		if (it->what == MF_OUT || it->id == NULL ||
		    !json_equal(it->id, id))
			continue;
		n = it->fault;
		held = 1;
		mfhold_remove(mf, it);
		if (it->er != NULL)
			ereq_end(mf->ep, it->er, NULL, 0);
		mfhold_free(it);
	}
	text = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
	if (n != 0)
		log_warnx("mock: the client cancelled request %.*s (fault "
		    "#%lld)%s", MOCKFAULT_LOG_FIELD, text != NULL ? text : "?",
		    (long long)n, held ? ": still held, it is not played" :
		    "");
	else
		log_info("mock: the client cancelled request %.*s",
		    MOCKFAULT_LOG_FIELD, text != NULL ? text : "?");
	free(text);
	json_decref(msg);
}
