/*
 * rpc.c: JSON-RPC across messages: each sender's requests awaiting an
 * answer (ids unique among them), responses to ids never sent or already
 * answered, requests never answered by the end.  Bounded: at most
 * CHECK_PENDING_MAX requests are tracked per sender, CHECK_ANSWERED_MAX
 * answered ids remembered.
 */
#include <stdlib.h>
#include <string.h>

#include "check_int.h"

/* Where each revision says ids are unique and every request answered. */
#define RPC_PAGE	"basic/index"

/*
 * The revisions that forbid a request id its sender used before in the
 * session, answered or not, and where they say so ("The request ID MUST
 * NOT have been previously used by the requestor within the same
 * session").  2026-07-28 only forbids one still awaiting its answer
 * (jsonrpc.duplicate-id), so it is not listed.  Used ids are remembered
 * as far as CHECK_ANSWERED_MAX answered ones go back.
 */
static const struct {
	enum proto_version	 v;
	const char		*page;
} rpc_no_reuse[] = {
	{ PROTO_V_2024_11_05, "basic/messages" },
	{ PROTO_V_2025_03_26, "basic/index" },
	{ PROTO_V_2025_06_18, "basic/index" },
	{ PROTO_V_2025_11_25, "basic/index" },
};

/*
 * Requests left unanswered that are each reported at the end; past this
 * the rest are counted in one finding, so a flood of a million does not
 * make a million lines.
 */
#define RPC_UNANSWERED_LISTED	100

/*
 * The longest id, progress token or cursor kept as it is.  Real ones are
 * short (a counter, a UUID, an opaque page token); a longer one is kept
 * as a prefix and its SHA-256, so up to CHECK_PENDING_MAX pending requests
 * cost a few hundred bytes each however long their ids are.
 */
#define RPC_KEY_MAX	256
/* The bytes of a long key's text kept in front of its digest. */
#define RPC_KEY_PREFIX	64

/*
 * What a map or a finding keeps for a JSON text (an id, a progress token,
 * a cursor as a JSON string; caller frees): the text itself when at most
 * RPC_KEY_MAX bytes, else its first RPC_KEY_PREFIX bytes, its length and
 * its SHA-256.  Such a key ends in ')', which no JSON value does, so it
 * never equals a short one, and two long texts share one only when their
 * digests collide.
 */
char *
rpc_key(const char *text)
{
	struct digest	*d;
	size_t		 len = strlen(text), cut = RPC_KEY_PREFIX;
	char		*hex, *key;

	if (len <= RPC_KEY_MAX)
		return (xstrdup(text));
	while (cut > 0 && (text[cut] & 0xc0) == 0x80)
		cut--;		/* not inside a UTF-8 sequence */
	d = digest_new();
	digest_update(d, text, len);
	hex = digest_hex_free(d);
	if (asprintf(&key, "%.*s... (%zu bytes, sha256 %s)", (int)cut, text,
	    len, hex) == -1)
		fatalx("out of memory keeping a long id");
	free(hex);
	return (key);
}

/* rpc_key() of text, freeing text; NULL stays NULL. */
char *
rpc_key_free(char *text)
{
	char	*key;

	if (text == NULL || strlen(text) <= RPC_KEY_MAX)
		return (text);
	key = rpc_key(text);
	free(text);
	return (key);
}

/* An empty set remembering at most cap keys. */
void
recent_init(struct recent *r, size_t cap)
{
	r->map = idmap_new();
	r->ring = xcalloc(cap, sizeof *r->ring);
	r->cap = cap;
	r->head = r->n = 0;
}

void
recent_free(struct recent *r)
{
	size_t	i;

	for (i = 0; i < r->n; i++)
		free(r->ring[(r->head + i) % r->cap]);
	free(r->ring);
	idmap_free(r->map);
	memset(r, 0, sizeof *r);
}

/* Remember key (made an rpc_key), forgetting the oldest when full. */
void
recent_add(struct recent *r, const char *text)
{
	int64_t	 v;
	char	*old, *key;

	key = rpc_key(text);
	if (idmap_get(r->map, key, strlen(key), &v) == 0) {
		free(key);
		return;
	}
	if (r->n == r->cap) {
		old = r->ring[r->head];
		(void)idmap_take(r->map, old, strlen(old), &v, NULL);
		free(old);
		r->head = (r->head + 1) % r->cap;
		r->n--;
	}
	r->ring[(r->head + r->n) % r->cap] = key;
	r->n++;
	idmap_put(r->map, key, strlen(key), 1, NULL);
}

/* Whether text (as an rpc_key) is remembered. */
int
recent_has(struct recent *r, const char *text)
{
	int64_t	 v;
	char	*key;
	int	 rc;

	if (strlen(text) <= RPC_KEY_MAX)
		return (idmap_get(r->map, text, strlen(text), &v) == 0);
	key = rpc_key(text);
	rc = idmap_get(r->map, key, strlen(key), &v);
	free(key);
	return (rc == 0);
}

/* An empty side. */
void
rpc_init(struct side *s)
{
	memset(s, 0, sizeof *s);
	s->ids = idmap_new();
	s->tokens = idmap_new();
	recent_init(&s->answered, CHECK_ANSWERED_MAX);
	recent_init(&s->finished, CHECK_ANSWERED_MAX);
	recent_init(&s->unread, CHECK_ANSWERED_MAX);
}

static void
rpc_pend_clear(struct pend *p)
{
	free(p->key);
	free(p->method);
	free(p->token);
	free(p->cursor);
	free(p->target);
	memset(p, 0, sizeof *p);
}

void
rpc_free(struct side *s)
{
	size_t	i;

	for (i = 0; i < s->used; i++)
		rpc_pend_clear(&s->pend[i]);
	free(s->pend);
	free(s->freeidx);
	idmap_free(s->ids);
	idmap_free(s->tokens);
	recent_free(&s->answered);
	recent_free(&s->finished);
	recent_free(&s->unread);
	json_decref(s->caps);
	memset(s, 0, sizeof *s);
}

/* Look a key up in a map without taking it out. */
static int
rpc_lookup(struct idmap *map, const char *key, int64_t *slot)
{
	return (idmap_get(map, key, strlen(key), slot));
}

/* The request a sender has pending under id, or NULL. */
struct pend *
rpc_find(struct side *s, const char *id)
{
	int64_t	 slot;
	char	*key;
	int	 rc;

	if (strlen(id) <= RPC_KEY_MAX)
		rc = rpc_lookup(s->ids, id, &slot);
	else {
		key = rpc_key(id);
		rc = rpc_lookup(s->ids, key, &slot);
		free(key);
	}
	return (rc == 0 ? &s->pend[slot] : NULL);
}

/* A free slot, or NULL when CHECK_PENDING_MAX are in use. */
static struct pend *
rpc_slot(struct side *s)
{
	if (s->nfree > 0)
		return (&s->pend[s->freeidx[--s->nfree]]);
	if (s->used == CHECK_PENDING_MAX)
		return (NULL);
	if (s->used == s->alloc) {
		s->alloc = s->alloc == 0 ? 16 : s->alloc * 2;
		if (s->alloc > CHECK_PENDING_MAX)
			s->alloc = CHECK_PENDING_MAX;
		s->pend = xreallocarray(s->pend, s->alloc, sizeof *s->pend);
		s->freeidx = xreallocarray(s->freeidx, s->alloc,
		    sizeof *s->freeidx);
	}
	memset(&s->pend[s->used], 0, sizeof s->pend[s->used]);
	return (&s->pend[s->used++]);
}

/* A new request of dir reuses an answered id: report it where the
   revision forbids that. */
static void
rpc_reused(struct check *c, enum dir dir, const char *id,
    enum proto_version v)
{
	size_t	i;
	char	spec[64], path[64];

	for (i = 0; i < sizeof rpc_no_reuse / sizeof rpc_no_reuse[0]; i++)
		if (rpc_no_reuse[i].v == v)
			break;
	if (i == sizeof rpc_no_reuse / sizeof rpc_no_reuse[0] ||
	    !recent_has(&c->side[dir].answered, id))
		return;
	/* A refused initialize began no session: its retry starts one.
	   One in a session begun is lifecycle.initialize-twice: one fault,
	   one finding. */
	if (c->cur != NULL && c->cur->method != NULL &&
	    strcmp(c->cur->method, "initialize") == 0)
		return;
	check_report(c, "jsonrpc.id-reused", PROTO_ERROR,
	    check_path(c, "id", path, sizeof path),
	    check_spec(v, rpc_no_reuse[i].page, spec, sizeof spec),
	    "id %s was used by an earlier request of the %s, already "
	    "answered; in %s a request id must not have been used before by "
	    "its sender within the session", id, dir == DIR_C2S ? "client" :
	    "server", proto_version_name(v));
}

/*
 * A request sent by dir with id: report an id already pending, else
 * track it (its progress token and cursor too).  j may be NULL (a cut
 * message).  Returns the new entry, or NULL when not tracked.
 */
struct pend *
rpc_request(struct check *c, enum dir dir, const char *id, int64_t seq,
    const char *method, enum proto_version v, const json_t *j)
{
	struct side	*s = &c->side[dir];
	struct pend	*p;
	const json_t	*token, *cursor, *name;
	char		 spec[64], path[64];

	if ((p = rpc_find(s, id)) != NULL && (p->refused || p->unknown))
		rpc_drop(c, dir, p);	/* a retry of a refused POST */
	else if (p != NULL) {
		check_report(c, "jsonrpc.duplicate-id", PROTO_ERROR,
		    check_path(c, "id", path, sizeof path),
		    check_spec(v, RPC_PAGE, spec, sizeof spec), "id %s is "
		    "already pending (sent at seq %lld, %s); a sender's "
		    "request ids must be unique among its unanswered "
		    "requests", id, (long long)p->seq, p->method != NULL ?
		    p->method : "a request");
		return (NULL);
	}
	rpc_reused(c, dir, id, v);
	if ((p = rpc_slot(s)) == NULL) {
		if (!s->limit_noted)
			check_report(c, "check.pending-limit", PROTO_NOTE, "$",
			    "mcpreel check", "too many pending requests "
			    "from the %s (%d); requests past them are not "
			    "tracked, and until as many unknown ids are "
			    "answered no unknown id, progress token or cancel "
			    "of the %s is reported",
			    dir == DIR_C2S ? "client" : "server",
			    CHECK_PENDING_MAX,
			    dir == DIR_C2S ? "client" : "server");
		s->limit_noted = 1;
		s->untracked++;
		return (NULL);
	}
	p->key = rpc_key(id);
	p->seq = seq;
	p->method = method != NULL ? xstrdup(method) : NULL;
	p->v = v;
	idmap_put(s->ids, p->key, strlen(p->key), p - s->pend, NULL);
	if (j == NULL)
		return (p);
	token = check_meta(j, "progressToken");
	if (token != NULL && (json_is_string(token) ||
	    json_is_integer(token))) {
		p->token = rpc_key_free(check_id_text(token));
		idmap_put(s->tokens, p->token, strlen(p->token),
		    p - s->pend, NULL);
	}
	cursor = json_object_get(json_object_get(j, "params"), "cursor");
	if (json_is_string(cursor))
		p->cursor = rpc_key_free(check_id_text(cursor));
	name = json_object_get(json_object_get(j, "params"), "name");
	if (!json_is_string(name))
		name = json_object_get(json_object_get(j, "params"), "uri");
	if (!json_is_string(name))
		name = json_object_get(json_object_get(j, "params"), "taskId");
	if (json_is_string(name)) {
		/* With its length: a name may hold a NUL. */
		p->target = tools_key(json_string_value(name),
		    json_string_length(name), &p->target_len);
	}
	return (p);
}

/*
 * A response sent by dir with id: the request of the other side it
 * answers, or NULL after reporting an id never sent or already answered.
 */
struct pend *
rpc_response(struct check *c, enum dir dir, const char *id)
{
	struct side	*s = &c->side[!dir];
	struct pend	*p;
	char		 spec[64], path[64];

	if ((p = rpc_find(s, id)) != NULL)
		return (p);
	check_path(c, "id", path, sizeof path);
	check_spec(c->cur->v, RPC_PAGE, spec, sizeof spec);
	/* An id answered already is no untracked request's answer: it
	   must not use up their count. */
	if (recent_has(&s->answered, id))
		check_report(c, "jsonrpc.answered-twice", PROTO_ERROR, path,
		    spec, "id %s was already answered; a request gets "
		    "exactly one response", id);
	else if (s->untracked > 0)
		s->untracked--;	/* taken as the answer of one not tracked */
	else
		check_report(c, "jsonrpc.unknown-id", PROTO_ERROR, path, spec,
		    "no request with id %s was sent by the %s; a response "
		    "answers a request of the other side", id,
		    dir == DIR_C2S ? "server" : "client");
	return (NULL);
}

/* Retire an answered request of the sender dir. */
void
rpc_done(struct check *c, enum dir dir, struct pend *p)
{
	struct side	*s = &c->side[dir];

	recent_add(&s->answered, p->key);
	if (p->token != NULL)
		recent_add(&s->finished, p->token);
	rpc_drop(c, dir, p);
}

/* Forget a request of the sender dir, answered or not. */
void
rpc_drop(struct check *c, enum dir dir, struct pend *p)
{
	struct side	*s = &c->side[dir];
	int64_t		 slot;

	(void)idmap_take(s->ids, p->key, strlen(p->key), &slot, NULL);
	if (p->token != NULL)
		(void)idmap_take(s->tokens, p->token, strlen(p->token), &slot,
		    NULL);
	rpc_pend_clear(p);
	s->freeidx[s->nfree++] = (size_t)(p - s->pend);
}

/*
 * The end: requests never answered.  A warning when the session ended
 * (every request should have had its answer by then), a note when it did
 * not (the answer may still come, or the recording stopped first).  A
 * request its sender cancelled needs no answer.
 */
void
rpc_end(struct check *c, enum check_end how)
{
	struct side	*s;
	struct pend	*p;
	size_t		 i, listed = 0, more = 0;
	char		 spec[64];
	int		 d, sev;

	sev = how == CHECK_END_CLEAN ? PROTO_WARNING : PROTO_NOTE;
	for (d = 0; d < DIR_MAX; d++) {
		s = &c->side[d];
		for (i = 0; i < s->used; i++) {
			p = &s->pend[i];
			if (p->key == NULL || p->cancelled || p->refused)
				continue;
			if (listed++ >= RPC_UNANSWERED_LISTED) {
				more++;
				continue;
			}
			check_report_at(c, p->seq, (enum dir)d, p->method,
			    p->key, "jsonrpc.unanswered", sev, "$",
			    check_spec(p->v, RPC_PAGE, spec, sizeof spec),
			    "%s %s was never answered%s", p->method != NULL ?
			    p->method : "the request", p->key,
			    how == CHECK_END_CLEAN ? " before the session "
			    "ended" : " (the session has not ended)");
		}
	}
	for (d = 0; d < DIR_MAX; d++)
		more += c->side[d].untracked;	/* never tracked, unanswered */
	if (more > 0)
		check_report_at(c, 0, DIR_C2S, NULL, NULL,
		    "jsonrpc.unanswered", sev, "$", check_spec(c->v, RPC_PAGE,
		    spec, sizeof spec), "%zu more requests were never "
		    "answered", more);
}
