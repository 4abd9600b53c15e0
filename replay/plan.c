/*
 * The replay plan: a recorded session's messages, which of them replay
 * sends (the client's requests, notifications and batches, as recorded),
 * and for each, the responses the recorded client had received before
 * sending it.  Replay waits for those, so pipelined traffic stays
 * pipelined and request/response ping-pong stays ping-pong.  The client's
 * answers to server requests are not sent from here: they answer the live
 * server's own requests as those arrive.
 */

#include <stdlib.h>
#include <string.h>

#include "check_session.h"
#include "replay.h"

/* Add a recorded message (in the order the proxy saw it). */
void
plan_add(struct plan *p, int64_t seq, enum dir d, int64_t mono_ns,
    const void *raw, size_t len)
{
	struct rmsg	*m;
	struct scan	 sc;

	if (p->n == p->alloc) {
		p->alloc = p->alloc == 0 ? 1024 : p->alloc * 2;
		p->m = xreallocarray(p->m, p->alloc, sizeof *p->m);
	}
	m = &p->m[p->n++];
	memset(m, 0, sizeof *m);
	m->seq = seq;
	m->dir = d;
	m->mono_ns = mono_ns;
	m->raw = xmalloc(len + 1);
	if (len > 0)		/* an empty message may come as NULL */
		memcpy(m->raw, raw, len);
	m->raw[len] = '\0';
	m->len = len;
	scan_message(m->raw, len, &sc);
	m->kind = sc.kind;
	m->method = scan_method_dup(m->raw, &sc);
	m->id = scan_id_dup(m->raw, &sc);
	/* Not parsed yet: see plan_json(). */
	m->jdone = sc.kind == KIND_INVALID;
	m->answer = m->request = -1;
}

/*
 * A recorded message parsed, or NULL when it is not JSON.  Parsed on
 * first use, not when added: a mock answers from a recording of a
 * hundred thousand messages at once, and most answers are never asked
 * for, so their JSON is not built (half the start-up time and most of
 * the memory).  The cache is no part of the plan's value, so a plan
 * read through a const pointer still fills it.
 */
json_t *
plan_json(const struct rmsg *r)
{
	struct rmsg	*w = (struct rmsg *)r;

	/* The plain case read fast (check's reader), else by jansson. */
	if (!w->jdone) {
		if ((w->jcache = jload(w->raw, w->len)) == NULL)
			w->jcache = json_loadb(w->raw, w->len,
			    JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		w->jdone = 1;
	}
	return w->jcache;
}

/*
 * Forget a message's parsed JSON once its last user is done with it: a
 * replay compares each answer as it comes, and a million parsed requests
 * and answers kept to the end were most of its memory.  plan_json()
 * parses it again if it is asked for later.
 */
void
plan_json_drop(const struct rmsg *r)
{
	struct rmsg	*w = (struct rmsg *)r;

	if (w->jcache == NULL)
		return;		/* not parsed, or not JSON: nothing held */
	json_decref(w->jcache);
	w->jcache = NULL;
	w->jdone = 0;
}

/*
 * The message just added was recorded cut at the record cap: its raw is
 * a prefix, so what it is comes from its row (the writer classified the
 * whole bytes).  It is never sent and never compared.
 */
void
plan_set_truncated(struct plan *p, enum msg_kind kind, const char *method,
    const char *id)
{
	struct rmsg	*m = &p->m[p->n - 1];

	m->truncated = 1;
	m->kind = kind;
	free(m->method);
	free(m->id);
	m->method = method != NULL ? xstrdup(method) : NULL;
	m->id = id != NULL ? xstrdup(id) : NULL;
	json_decref(m->jcache);
	m->jcache = NULL;
	m->jdone = 1;
}

/* The pending-request key: the request's direction, then its id text. */
static size_t
plan_key(char *key, size_t size, enum dir d, const char *id)
{
	size_t	len = strlen(id);

	if (len + 2 > size)
		return 0;
	key[0] = (char)('0' + d);
	memcpy(key + 1, id, len + 1);
	return len + 1;
}

/*
 * Pair requests with responses (by id, in order, as the writer does) and
 * work out the sends and what each waits for.
 */
void
plan_build(struct plan *p)
{
	struct idmap	*pending = idmap_new();
	size_t		*answered = NULL, nanswered = 0, nalloc = 0;
	size_t		 done = 0, i, klen;
	int64_t		 idx, prev_mono = -1;
	char		 key[512];
	struct rmsg	*m;
	struct send	*s;

	for (i = 0; i < p->n; i++) {
		m = &p->m[i];
		if (m->id != NULL && m->kind == KIND_REQUEST) {
			if ((klen = plan_key(key, sizeof key, m->dir,
			    m->id)) != 0)
				idmap_put(pending, key, klen, (int64_t)i, NULL);
		} else if (m->id != NULL && (m->kind == KIND_RESPONSE ||
		    m->kind == KIND_ERROR)) {
			klen = plan_key(key, sizeof key, !m->dir, m->id);
			if (klen != 0 && idmap_take(pending, key, klen, &idx,
			    NULL) == 0) {
				m->request = (ssize_t)idx;
				p->m[idx].answer = (ssize_t)i;
				if (m->method == NULL && p->m[idx].method !=
				    NULL)
					m->method = xstrdup(p->m[idx].method);
				if (m->dir == DIR_S2C &&
				    !p->m[idx].truncated) {
					if (nanswered == nalloc) {
						nalloc = nalloc * 2 + 256;
						answered = xreallocarray(
						    answered, nalloc,
						    sizeof *answered);
					}
					answered[nanswered++] = (size_t)idx;
				}
			}
		}

		/* What the client sends of its own accord. */
		if (m->dir != DIR_C2S || m->kind == KIND_RESPONSE ||
		    m->kind == KIND_ERROR || m->truncated)
			continue;
		if (p->nsends == p->sendsalloc) {
			p->sendsalloc = p->sendsalloc == 0 ? 256 :
			    p->sendsalloc * 2;
			p->sends = xreallocarray(p->sends, p->sendsalloc,
			    sizeof *p->sends);
		}
		s = &p->sends[p->nsends++];
		memset(s, 0, sizeof *s);
		s->msg = i;
		s->gap_ns = (prev_mono < 0) ? 0 : clock_sub(m->mono_ns,
		    prev_mono);
		prev_mono = m->mono_ns;
		if (nanswered > done) {
			s->nneeds = nanswered - done;
			s->needs = xreallocarray(NULL, s->nneeds,
			    sizeof *s->needs);
			memcpy(s->needs, answered + done,
			    s->nneeds * sizeof *s->needs);
			done = nanswered;
		}
	}
	free(answered);
	idmap_free(pending);
}

void
plan_clear(struct plan *p)
{
	size_t	i;

	for (i = 0; i < p->n; i++) {
		free(p->m[i].method);
		free(p->m[i].id);
		free(p->m[i].raw);
		json_decref(p->m[i].jcache);
	}
	for (i = 0; i < p->nsends; i++)
		free(p->sends[i].needs);
	free(p->m);
	free(p->sends);
	memset(p, 0, sizeof *p);
}
