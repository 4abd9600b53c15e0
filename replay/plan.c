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
 * How far a streamed plan reads ahead of the oldest message it still
 * holds.  A session smaller than this is read whole before the first
 * send, so it replays exactly as a whole plan does; past it, replay holds
 * only this window (the requests in flight and what was recorded around
 * them), whatever the session's length.  An MCP client has at most a few
 * thousand requests in flight, far fewer than this.
 */
#define PLAN_WINDOW_MSGS	16384
/*
 * The window's bytes: a few messages near the record cap fill it before
 * its count does.  Beyond it, reading ahead stops until the oldest go.
 */
#define PLAN_WINDOW_BYTES	(64u * 1024 * 1024)

/*
 * The requests a streamed plan keeps after letting go of the window
 * around them because their answers are not read yet (a long call with
 * many notifications before its answer), and their bytes: requests in
 * flight when recorded, a few thousand at most from a real client.  Past
 * either, the oldest is let go and its answer, when read, pairs with
 * nothing (replay notes how many).
 */
#define PLAN_PINNED_MAX		4096
#define PLAN_PINNED_BYTES	(64u * 1024 * 1024)

/* The pairing of requests and responses as a plan is read. */
struct plan_builder {
	struct idmap	*pending;	/* open requests: key -> index */
	size_t		*answered;	/* requests answered since the last
					   send: what it waits for */
	size_t		 nanswered, nalloc;
	int64_t		 prev_mono;
	struct rmsg	*pinned;	/* let go of, answer not read yet:
					   oldest first */
	size_t		*pinned_at;	/* their absolute indices, rising */
	size_t		 npinned, pinnedalloc, pinned_bytes;
};

/* A pairing with nothing read yet. */
static struct plan_builder *
plan_builder_new(void)
{
	struct plan_builder	*b = xcalloc(1, sizeof *b);

	b->pending = idmap_new();
	b->prev_mono = -1;
	return b;
}

static void	plan_msg_free(struct rmsg *);
static void	plan_forget(struct plan *, size_t, const struct rmsg *);

/* Free a pairing (NULL is nothing). */
static void
plan_builder_free(struct plan_builder *b)
{
	size_t	i;

	if (b == NULL)
		return;
	for (i = 0; i < b->npinned; i++)
		plan_msg_free(&b->pinned[i]);
	free(b->pinned);
	free(b->pinned_at);
	free(b->answered);
	idmap_free(b->pending);
	free(b);
}

/* Where pinned message i (absolute) is in b->pinned, or -1. */
static ssize_t
plan_pinned_find(const struct plan_builder *b, size_t i)
{
	size_t	lo = 0, hi, mid;

	if (b == NULL)
		return -1;
	hi = b->npinned;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (b->pinned_at[mid] == i)
			return (ssize_t)mid;
		if (b->pinned_at[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * Message i (absolute), or NULL when it was let go or not read yet.  A
 * request pinned (let go of with the window, its answer not read yet)
 * is still found.
 */
static struct rmsg *
plan_msg_or_null(const struct plan *p, size_t i)
{
	ssize_t	k;

	if (i < p->base + p->off) {
		if ((k = plan_pinned_find(p->b, i)) < 0)
			return NULL;
		return &p->b->pinned[k];
	}
	if (i >= p->base + p->n)
		return NULL;
	return &p->m[i - p->base];
}

/* Whether message i (absolute) is a pinned request. */
int
plan_pinned(const struct plan *p, size_t i)
{
	return i < plan_first(p) && plan_pinned_find(p->b, i) >= 0;
}

/*
 * Whether message i (absolute, in the window), when let go, is pinned: a
 * request of a streamed plan not read to its end whose answer is not
 * read yet.  Its answer, when read, pairs with it as in a whole plan.
 */
int
plan_pins(const struct plan *p, size_t i)
{
	const struct rmsg	*m = plan_msg(p, i);
	char			 key[512];
	size_t			 klen;
	int64_t			 idx;

	if (p->b == NULL || p->src == NULL || p->src_done ||
	    m->kind != KIND_REQUEST || m->id == NULL || m->answer >= 0 ||
	    (klen = plan_key(key, sizeof key, m->dir, m->id)) == 0)
		return 0;
	return idmap_get(p->b->pending, key, klen, &idx) == 0 &&
	    (size_t)idx == i;
}

/* Whether as many requests are pinned as may be. */
int
plan_pins_full(const struct plan *p)
{
	return p->b != NULL && (p->b->npinned >= PLAN_PINNED_MAX ||
	    p->b->pinned_bytes >= PLAN_PINNED_BYTES);
}

/* The oldest pinned request's absolute index, or -1 when none. */
ssize_t
plan_pinned_oldest(const struct plan *p)
{
	if (p->b == NULL || p->b->npinned == 0)
		return -1;
	return (ssize_t)p->b->pinned_at[0];
}

/*
 * Let pinned request i (absolute) go: its answer was read (the caller
 * is done with it), or it is the oldest of too many.
 */
void
plan_unpin(struct plan *p, size_t i)
{
	struct plan_builder	*b = p->b;
	ssize_t			 k;

	if ((k = plan_pinned_find(b, i)) < 0)
		fatalx("%s: message %zu is not pinned", __func__, i);
	b->pinned_bytes -= b->pinned[k].len;
	plan_forget(p, i, &b->pinned[k]);
	plan_msg_free(&b->pinned[k]);
	memmove(b->pinned + k, b->pinned + k + 1, (b->npinned - (size_t)k -
	    1) * sizeof *b->pinned);
	memmove(b->pinned_at + k, b->pinned_at + k + 1, (b->npinned -
	    (size_t)k - 1) * sizeof *b->pinned_at);
	b->npinned--;
}

/*
 * Message m (absolute index i) is let go for good: if it is a request
 * still pending, forget it, so the pending requests are at most those
 * the window and the pins hold (an answer to it would pair with nothing
 * anyway), not every request a recording never answered.
 */
static void
plan_forget(struct plan *p, size_t i, const struct rmsg *m)
{
	char	key[512];
	size_t	klen;
	int64_t	idx;

	if (p->b == NULL || m->kind != KIND_REQUEST || m->id == NULL ||
	    (klen = plan_key(key, sizeof key, m->dir, m->id)) == 0)
		return;
	if (idmap_get(p->b->pending, key, klen, &idx) == 0 &&
	    (size_t)idx == i)
		idmap_take(p->b->pending, key, klen, &idx, NULL);
}

/* Keep message m (absolute index i, being let go) pinned. */
static void
plan_pin(struct plan *p, size_t i, const struct rmsg *m)
{
	struct plan_builder	*b = p->b;

	if (b->npinned == b->pinnedalloc) {
		b->pinnedalloc = b->pinnedalloc * 2 + 16;
		b->pinned = xreallocarray(b->pinned, b->pinnedalloc,
		    sizeof *b->pinned);
		b->pinned_at = xreallocarray(b->pinned_at, b->pinnedalloc,
		    sizeof *b->pinned_at);
	}
	b->pinned[b->npinned] = *m;
	/* Parsed again if its answer comes: kept as bytes meanwhile. */
	plan_json_drop(&b->pinned[b->npinned]);
	b->pinned_at[b->npinned++] = i;
	b->pinned_bytes += m->len;
}

/* Message i (absolute), which must be in the plan's window. */
struct rmsg *
plan_msg(const struct plan *p, size_t i)
{
	struct rmsg	*m = plan_msg_or_null(p, i);

	if (m == NULL)
		fatalx("%s: message %zu is not in the window [%zu, %zu)",
		    __func__, i, p->base + p->off, p->base + p->n);
	return m;
}

/* Send k (absolute), which must be in the plan's window. */
struct send *
plan_send(const struct plan *p, size_t k)
{
	if (k < p->sbase + p->soff || k >= p->sbase + p->nsends)
		fatalx("%s: send %zu is not in the window", __func__, k);
	return &p->sends[k - p->sbase];
}

/* The oldest message held, and one past the newest read. */
size_t
plan_first(const struct plan *p)
{
	return p->base + p->off;
}

size_t
plan_end(const struct plan *p)
{
	return p->base + p->n;
}

/* One past the last send read. */
size_t
plan_sends_end(const struct plan *p)
{
	return p->sbase + p->nsends;
}

/*
 * Pair message i (absolute, the newest) with its request if it answers
 * one, and if the client sent it of its own accord, add it as a send
 * waiting for the answers that came since the previous send (by id, in
 * order, as the writer pairs them).  A request already let go of is not
 * paired: its answer was more than the window away.
 */
static void
plan_build_one(struct plan *p, struct plan_builder *b, size_t i)
{
	struct rmsg	*m = plan_msg(p, i), *q;
	struct send	*s;
	char		 key[512];
	size_t		 klen;
	int64_t		 idx;

	if (m->id != NULL && m->kind == KIND_REQUEST) {
		if ((klen = plan_key(key, sizeof key, m->dir, m->id)) != 0)
			idmap_put(b->pending, key, klen, (int64_t)i, NULL);
	} else if (m->id != NULL && (m->kind == KIND_RESPONSE ||
	    m->kind == KIND_ERROR)) {
		klen = plan_key(key, sizeof key, !m->dir, m->id);
		if (klen != 0 && idmap_take(b->pending, key, klen, &idx,
		    NULL) == 0 && (q = plan_msg_or_null(p, (size_t)idx)) !=
		    NULL) {
			m->request = (ssize_t)idx;
			q->answer = (ssize_t)i;
			if (m->method == NULL && q->method != NULL)
				m->method = xstrdup(q->method);
			if (m->dir == DIR_S2C && !q->truncated) {
				if (b->nanswered == b->nalloc) {
					b->nalloc = b->nalloc * 2 + 256;
					b->answered = xreallocarray(
					    b->answered, b->nalloc,
					    sizeof *b->answered);
				}
				b->answered[b->nanswered++] = (size_t)idx;
			}
		}
	}

	/* What the client sends of its own accord. */
	if (m->dir != DIR_C2S || m->kind == KIND_RESPONSE ||
	    m->kind == KIND_ERROR || m->truncated)
		return;
	if (p->nsends == p->sendsalloc) {
		p->sendsalloc = p->sendsalloc == 0 ? 256 : p->sendsalloc * 2;
		p->sends = xreallocarray(p->sends, p->sendsalloc,
		    sizeof *p->sends);
	}
	s = &p->sends[p->nsends++];
	memset(s, 0, sizeof *s);
	s->msg = i;
	s->gap_ns = (b->prev_mono < 0) ? 0 : clock_sub(m->mono_ns,
	    b->prev_mono);
	b->prev_mono = m->mono_ns;
	if (b->nanswered > 0) {
		s->nneeds = b->nanswered;
		s->needs = xreallocarray(NULL, s->nneeds, sizeof *s->needs);
		memcpy(s->needs, b->answered, s->nneeds * sizeof *s->needs);
		b->nanswered = 0;
	}
}

/*
 * Pair requests with responses (by id, in order, as the writer does) and
 * work out the sends and what each waits for: a whole plan, every
 * message added.
 */
void
plan_build(struct plan *p)
{
	struct plan_builder	*b = plan_builder_new();
	size_t			 i;

	for (i = 0; i < p->n; i++)
		plan_build_one(p, b, i);
	plan_builder_free(b);
}

/*
 * Make p (empty) a streamed plan: its messages come from src, read ahead
 * by plan_fill() as far as the window allows.
 */
void
plan_stream(struct plan *p, plan_source_fn src, void *arg)
{
	memset(p, 0, sizeof *p);
	p->src = src;
	p->src_arg = arg;
	p->b = plan_builder_new();
}

/* Whether a streamed plan's window holds as much as it may. */
int
plan_full(const struct plan *p)
{
	return p->n - p->off >= PLAN_WINDOW_MSGS ||
	    p->wbytes >= PLAN_WINDOW_BYTES;
}

/*
 * Read a streamed plan ahead until its window is full or the session
 * ends: the number of messages read, or -1 (cause set) when reading
 * failed (the plan then ends there).  A whole plan reads nothing.
 */
int
plan_fill(struct plan *p, char **cause)
{
	int	rc, added = 0;

	while (p->src != NULL && !p->src_done && !plan_full(p)) {
		if ((rc = p->src(p, p->src_arg, cause)) <= 0) {
			p->src_done = 1;
			if (rc < 0)
				return -1;
			break;
		}
		p->wbytes += p->m[p->n - 1].len;
		plan_build_one(p, p->b, plan_end(p) - 1);
		added++;
	}
	return added;
}

/* Free what message m holds. */
static void
plan_msg_free(struct rmsg *m)
{
	free(m->method);
	free(m->id);
	free(m->raw);
	json_decref(m->jcache);
}

/*
 * Let a streamed plan's messages before msg and sends before send go
 * (absolute indices; the caller is done with them), but for the requests
 * plan_pins() keeps (while not plan_pins_full(): the caller lets the
 * oldest go first with plan_unpin()).  The arrays move
 * down once half of them is let go, so each message moves O(1) times.
 */
void
plan_release(struct plan *p, size_t msg, size_t send)
{
	while (plan_first(p) < msg && p->off < p->n) {
		p->wbytes -= p->m[p->off].len;
		if (plan_pins(p, plan_first(p)) && !plan_pins_full(p))
			plan_pin(p, plan_first(p), &p->m[p->off]);
		else {
			plan_forget(p, plan_first(p), &p->m[p->off]);
			plan_msg_free(&p->m[p->off]);
		}
		p->off++;
	}
	if (p->off > 0 && p->off >= p->n / 2) {
		memmove(p->m, p->m + p->off, (p->n - p->off) * sizeof *p->m);
		p->base += p->off;
		p->n -= p->off;
		p->off = 0;
	}
	while (p->sbase + p->soff < send && p->soff < p->nsends)
		free(p->sends[p->soff++].needs);
	if (p->soff > 0 && p->soff >= p->nsends / 2) {
		memmove(p->sends, p->sends + p->soff, (p->nsends - p->soff) *
		    sizeof *p->sends);
		p->sbase += p->soff;
		p->nsends -= p->soff;
		p->soff = 0;
	}
}

/* Free what plan p holds (whole or streamed; its source is the caller's). */
void
plan_clear(struct plan *p)
{
	size_t	i;

	for (i = p->off; i < p->n; i++)
		plan_msg_free(&p->m[i]);
	for (i = p->soff; i < p->nsends; i++)
		free(p->sends[i].needs);
	plan_builder_free(p->b);
	free(p->m);
	free(p->sends);
	memset(p, 0, sizeof *p);
}
