/*
 * HTTP recording sessions: which MCP session each exchange belongs to
 * (the Mcp-Session-Id the server issued, or the legacy sessionId), how
 * its headers are stored (credentials redacted), and holding its messages
 * until that is known.
 */

#include <sys/random.h>
#include <sys/socket.h>

#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <jansson.h>

#include "http_int.h"
#include "check_session.h"
#include "formats.h"

/* Header fields whose values are credentials, always redacted. */
static const char *redacted_headers[] = {
	"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
	"Mcp-Session-Id", NULL
};

/*
 * The run's seed of the id table's hash: a client chooses the session
 * ids it sends, and with a hash known in advance could put every session
 * in one chain (each request then walks HTTP_SESSIONS_MAX of them).  From
 * the kernel, else from the clock, the pid and an address (ASLR).
 */
static uint32_t
hsession_seed(void)
{
	uint32_t	seed;

	if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == sizeof seed)
		return seed;
	return (uint32_t)clock_mono_ns() ^ ((uint32_t)getpid() << 16) ^
	    (uint32_t)(uintptr_t)&seed;
}

/*
 * The bucket of the id table a session id falls in: FNV-1a from the
 * run's seed, its bits mixed (murmur3's finalizer) so that the bucket
 * depends on all of them, not on the low ones alone.
 */
struct hsession **
hsession_bucket(struct hproxy *p, const char *key)
{
	uint32_t	h;

	if (p->by_key == NULL) {
		p->by_key = xcalloc(HSESSION_BUCKETS, sizeof *p->by_key);
		p->hseed = hsession_seed();
	}
	h = 2166136261u ^ p->hseed;
	for (; *key != '\0'; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return &p->by_key[h % HSESSION_BUCKETS];
}

/* Give a session its id and put it at the head of the id's bucket. */
void
hsession_key(struct hproxy *p, struct hsession *hs, const char *key)
{
	struct hsession	**b = hsession_bucket(p, key);

	hs->key = xstrdup(key);
	hs->hnext = *b;
	*b = hs;
}

static struct hsession *
hsession_new(struct hproxy *p, const char *key, int legacy, int pending,
    int64_t started_ns)
{
	struct hsession	*hs = xcalloc(1, sizeof *hs);
	char		*target;

	if (key != NULL)
		hsession_key(p, hs, key);
	hs->legacy = legacy;
	p->nlegacy += legacy;
	hs->pending = pending;
	target = tap_redact_url(p->opt->upstream);
	hs->ws = writer_session_begin_at(p->w, p->opt->name, legacy ? "sse" :
	    "http", target, started_ns);
	hs->started_ns = started_ns;
	free(target);
	/* --fault: the rules' count and seed, so the run can be repeated. */
	if (p->opt->faults != NULL && p->opt->faults->note != NULL)
		tap_event(p->tap, hs->ws, "note", p->opt->faults->note,
		    strlen(p->opt->faults->note));
	hs->next = p->sessions;
	if (p->sessions != NULL)
		p->sessions->prevp = &hs->next;
	hs->prevp = &p->sessions;
	p->sessions = hs;
	/* The normal course of traffic: shown with -v. */
	log_debug("new %s session%s", legacy ? "legacy HTTP+SSE" :
	    "Streamable HTTP", key != NULL ? "" : pending ? " (its id comes "
	    "with the initialize response)" : " (no session id)");
	return hs;
}

/*
 * Whether one more session may be held (p->max_sessions), retiring an
 * ended one for it if need be; counts it if so.  Past the bound, sessions
 * share the run's default one.
 */
static int
hsession_room(struct hproxy *p)
{
	int64_t	now;

	if (p->nsessions >= p->max_sessions && !hretire_room(p)) {
		/*
		 * Said once a crossing (p->full clears when one retires),
		 * and not again within HSESSION_WARN_MS.
		 */
		if (!p->full) {
			p->full = 1;
			now = clock_mono_ns();
			if (p->warned_ns == 0 || now - p->warned_ns >=
			    (int64_t)HSESSION_WARN_MS * 1000000) {
				p->warned_ns = now;
				log_warnx("more than %d MCP sessions held at "
				    "once: new ones are recorded in the run's "
				    "default session until an ended one is "
				    "retired (--max-sessions)",
				    p->max_sessions);
			}
		}
		return 0;
	}
	p->nsessions++;
	return 1;
}

/* A session made under the bound (hsession_room counted it). */
static struct hsession *
hsession_new_counted(struct hproxy *p, const char *key, int legacy,
    int pending, int64_t started_ns)
{
	struct hsession	*hs = hsession_new(p, key, legacy, pending, started_ns);

	hs->counted = 1;
	return hs;
}

/* The session for an MCP session id, made on first sight. */
struct hsession *
hsession_get(struct hproxy *p, const char *key, int legacy,
    int64_t started_ns)
{
	struct hsession	*hs, *ended = NULL;
	int		 refused = 0;

	/* A live one first: a server may give an id out again. */
	for (hs = *hsession_bucket(p, key); hs != NULL; hs = hs->hnext) {
		if (hs->legacy != legacy || strcmp(hs->key, key) != 0)
			continue;
		if (hs->refused)
			refused = 1;
		else if (!hs->ended)
			return hs;
		else if (ended == NULL)
			ended = hs;
	}
	if (ended != NULL)
		return hretire_touch(p, ended);
	/* Begun in the default session: it goes on there. */
	if (refused)
		return hsession_default(p, started_ns);
	if (!hsession_room(p)) {
		hretire_refuse(p, key, legacy);
		return hsession_default(p, started_ns);
	}
	return hsession_new_counted(p, key, legacy, 0, started_ns);
}

/* The session for traffic that carries no session id. */
struct hsession *
hsession_default(struct hproxy *p, int64_t started_ns)
{
	if (p->dflt == NULL)
		p->dflt = hsession_new(p, NULL, 0, 0, started_ns);
	return p->dflt;
}

/*
 * --durable: the session an initialize request begins, made before the
 * response that names it, since the request must be committed (to its
 * session) before it is forwarded; hsession_settle() keys it.  Once the
 * upstream has answered an initialize with no session id (it has no
 * sessions), initialize goes to the default session like the rest; and
 * a session that got no id (a failed attempt) is taken up again by the
 * next, so that a client retrying makes one session, not one a try.
 */
struct hsession *
hsession_pending(struct hproxy *p, int64_t started_ns)
{
	struct hsession	*hs;

	if (p->stateless)
		return hsession_default(p, started_ns);
	if ((hs = p->spare) != NULL) {
		p->spare = NULL;
		hs->pending = 1;
		return hs;
	}
	if (!hsession_room(p))
		return hsession_default(p, started_ns);
	return hsession_new_counted(p, NULL, 0, 1, started_ns);
}

/*
 * The response to a pending session's initialize came, naming the session
 * sid; or none came, or it named none.  Answered with a 2xx and no id, the
 * upstream has no sessions: this becomes the default session, if there is
 * none yet.  Refused or unanswered, it waits for the client's next try.
 * A session still live under sid (a server giving an id out again) ends:
 * this one takes its traffic from now on.
 */
void
hsession_settle(struct hproxy *p, struct hsession *hs, const char *sid,
    int answered)
{
	struct hsession	*o;

	if (!hs->pending) {
		/*
		 * --durable: an initialize put in the default session for
		 * want of room (p->full); the rest of its session goes on
		 * there.
		 */
		if (hs == p->dflt && p->full && sid != NULL && *sid != '\0')
			hretire_refuse(p, sid, 0);
		return;
	}
	hs->pending = 0;
	if (sid != NULL && *sid != '\0') {
		for (o = *hsession_bucket(p, sid); o != NULL; o = o->hnext) {
			if (o != hs && !o->legacy && !o->refused &&
			    strcmp(o->key, sid) == 0)
				hsession_end(p, o, "a new initialize was given "
				    "the same session id");
		}
		hsession_key(p, hs, sid);
		return;
	}
	if (!answered) {
		/* Refused, or no answer: the next initialize tries again. */
		p->spare = hs;
		return;
	}
	p->stateless = 1;
	if (p->dflt == NULL)
		p->dflt = hs;
	else if (hs != p->dflt)
		p->spare = hs;
}

/*
 * End a session's recording (a DELETE, or the end of the run); it is
 * retired later (hretire_ended).
 */
void
hsession_end(struct hproxy *p, struct hsession *hs, const char *why)
{
	if (hs->ended)
		return;
	hs->ended = 1;
	writer_session_end(p->w, hs->ws, -1, 0, why);
	tap_check_end(hs->ws);
	tap_otlp_end(hs->ws);
	hretire_ended(p, hs);
}

/* Take a keyed session out of the id table (it is being retired). */
void
hsession_unkey(struct hproxy *p, struct hsession *hs)
{
	struct hsession	**pp;

	if (hs->key == NULL)
		return;
	for (pp = hsession_bucket(p, hs->key); *pp != NULL;
	    pp = &(*pp)->hnext) {
		if (*pp == hs) {
			*pp = hs->hnext;
			break;
		}
	}
}

/*
 * record --otlp: session hs's export begins with the exchange x that
 * first belongs to it, whose connection names the client; the upstream
 * is the server.
 */
static void
hsession_otlp(struct hproxy *p, struct hsession *hs, struct hexch *x)
{
	struct otlp_sess_info	 info;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof ss;
	char			 host[NI_MAXHOST], serv[NI_MAXSERV];
	char			*target;
	int			 fd;

	hs->otlp = 1;
	memset(&info, 0, sizeof info);
	info.transport = hs->legacy ? "sse" : "http";
	info.started_ns = hs->started_ns;
	target = tap_redact_url(p->opt->upstream);
	info.target = target;
	fd = bufferevent_getfd(x->c->cbev);
	if (fd >= 0 && getpeername(fd, (struct sockaddr *)&ss, &sslen) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, sslen, host, sizeof host,
	    serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
		info.client_address = host;
		info.client_port = atoi(serv);
		/* Kept in the row: an export names the same client. */
		writer_session_client(p->w, hs->ws, host, info.client_port);
	}
	info.server_address = p->up.url.host;
	info.server_port = p->up.url.port != NULL ? atoi(p->up.url.port) :
	    (p->up.url.tls ? 443 : 80);
	tap_otlp_begin(hs->ws, &info);
	free(target);
}

void
hsession_end_all(struct hproxy *p, const char *why)
{
	struct hsession	*hs;

	for (hs = p->sessions; hs != NULL; hs = hs->next)
		hsession_end(p, hs, why);
}

/*
 * Free a session, and its recording session unless it was handed back
 * (hs->ws NULL); then the writer must have stopped.
 */
void
hsession_free(struct hsession *hs)
{
	writer_session_free(hs->ws);
	howed_clear(&hs->owed);
	free(hs->endpoint);
	free(hs->key);
	free(hs);
}

/* Free a list of sessions; the writer must have stopped. */
void
hsession_free_all(struct hsession *hs)
{
	struct hsession	*next;

	for (; hs != NULL; hs = next) {
		next = hs->next;
		hsession_free(hs);
	}
}

/*
 * The query parameters that name a legacy session: the TypeScript SDK's
 * sessionId and the Python SDK's session_id.  A session named otherwise
 * is found by its endpoint (hsession_legacy_find).
 */
static const char *const legacy_params[] = { "sessionId=", "session_id=",
    NULL };

/* Find the value of a legacy session parameter in a target, or NULL. */
static const char *
query_param(const char *target, size_t *len)
{
	const char	*q = strchr(target, '?'), *p;
	size_t		 i;

	if (q == NULL)
		return NULL;
	for (p = q + 1; *p != '\0' && *p != '#';) {
		for (i = 0; legacy_params[i] != NULL; i++) {
			if (strncmp(p, legacy_params[i],
			    strlen(legacy_params[i])) == 0) {
				p += strlen(legacy_params[i]);
				*len = strcspn(p, "&#");
				return p;
			}
		}
		p += strcspn(p, "&#");
		if (*p == '&')
			p++;
	}
	return NULL;
}

/* The legacy session id in a request-target or endpoint URL (caller frees). */
char *
hsession_query_id(const char *target)
{
	const char	*v;
	size_t		 len;

	if ((v = query_param(target, &len)) == NULL || len == 0)
		return NULL;
	return xstrndup(v, len);
}

/*
 * A URL or request-target reduced to its path and query, as a client
 * sends it in a request-target (caller frees): how an endpoint event's
 * URL and the POSTs to it are matched, whatever names the session in it.
 */
char *
hsession_endpoint_key(const char *url)
{
	const char	*p = url, *end;

	if (strncasecmp(p, "http://", 7) == 0 ||
	    strncasecmp(p, "https://", 8) == 0) {
		p = strstr(p, "//") + 2;
		p += strcspn(p, "/?#");
	}
	end = p + strcspn(p, "#");
	if (end == p || *p == '?') {
		char	*s;

		xasprintf(&s, "/%.*s", (int)(end - p), p);
		return s;
	}
	return xstrndup(p, (size_t)(end - p));
}

/*
 * The legacy session whose endpoint event named target (a live one
 * first, as hsession_get), or NULL.
 */
struct hsession *
hsession_legacy_find(struct hproxy *p, const char *target)
{
	struct hsession	*hs, *ended = NULL;
	char		*key;

	/* Streamable HTTP only: no walk over its sessions per request. */
	if (p->nlegacy == 0)
		return NULL;
	key = hsession_endpoint_key(target);

	for (hs = p->sessions; hs != NULL; hs = hs->next) {
		if (!hs->legacy || hs->endpoint == NULL ||
		    strcmp(hs->endpoint, key) != 0)
			continue;
		if (!hs->ended)
			break;
		if (ended == NULL)
			ended = hs;
	}
	free(key);
	if (hs == NULL && ended != NULL)
		hs = hretire_touch(p, ended);
	return hs;
}

/*
 * A target or URL as stored and logged (caller frees): its sessionId and
 * the other secrets a URL can hold redacted (redact_url).
 */
char *
hsession_redact_path(const char *target)
{
	return tap_redact_url(target);
}

static int
header_redacted(struct hproxy *p, const char *name)
{
	size_t	i;

	if (strncasecmp(name, "Mcp-Param-", 10) == 0)
		return 1;
	for (i = 0; redacted_headers[i] != NULL; i++) {
		if (strcasecmp(name, redacted_headers[i]) == 0)
			return 1;
	}
	for (i = 0; i < p->opt->nredact; i++) {
		if (strcasecmp(name, p->opt->redact[i]) == 0)
			return 1;
	}
	/* Named like a secret (X-Api-Key, Private-Token): by shape. */
	return tap_redacts_key(name);
}

/*
 * A head's fields as stored: a JSON array of [name, value], credentials
 * as "[REDACTED]", and each other value redacted as text (a Location
 * with ?code=, a token in a custom header) (caller frees).
 */
char *
hsession_headers_json(struct hproxy *p, const struct http_head *h)
{
	json_t	*a = json_array(), *pair, *v;
	char	*s;
	size_t	 i;

	for (i = 0; i < h->nheaders; i++) {
		char	*val;

		if (header_redacted(p, h->headers[i].name))
			val = xstrdup(HTTP_REDACTED);
		else
			val = tap_redact_text(xstrdup(h->headers[i].value));
		if ((v = json_string(val)) == NULL)
			v = json_string("(not UTF-8)");
		free(val);
		pair = json_array();
		/* Names are tokens: ASCII, so always a valid string. */
		json_array_append_new(pair, json_string(h->headers[i].name));
		json_array_append_new(pair, v);
		json_array_append_new(a, pair);
	}
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	/* (Each value had the credential shapes as text: not again here.) */
	return s != NULL ? s : xstrdup("[]");
}

/*
 * Trailer field lines as stored, like headers (hsession_headers_json);
 * NULL when there are none (caller frees).
 */
char *
hsession_trailers_json(struct hproxy *p, struct evbuffer *lines)
{
	struct http_head	 h;
	char			*cause = NULL, *s;

	if (evbuffer_get_length(lines) == 0)
		return NULL;
	/* The decoder checked every line: this cannot fail. */
	if (http_fields_parse(lines, &h, &cause) != 0) {
		log_warnx("trailer fields not recorded: %s", cause);
		free(cause);
		return NULL;
	}
	s = hsession_headers_json(p, &h);
	http_head_clear(&h);
	return s;
}

static const struct check_http *hexch_live(struct hexch *);

/*
 * The exchange's session is now known: write its request (and response
 * head, if it came) and the messages held until now.
 */
void
hexch_assign(struct hexch *x, struct hsession *hs)
{
	struct hproxy		*p = x->c->p;
	struct wexchange_info	 info;
	char			*path, *reqh;
	size_t			 i;

	if (x->hs != NULL)
		return;
	x->hs = hs;
	/* Not retired while x refers to it (hexch_free lets go). */
	hs->refs++;
	x->wait_endpoint = 0;
	if (!hs->otlp && tap_exporting())
		hsession_otlp(p, hs, x);
	path = hsession_redact_path(x->req.target);
	reqh = hsession_headers_json(p, &x->req);
	memset(&info, 0, sizeof info);
	info.conn = x->c->id;
	info.method = x->req.method;
	info.path = path;
	info.headers = reqh;
	info.ts_ns = x->ts_ns;
	info.mono_ns = x->mono_ns;
	x->wx = writer_exchange_begin(p->w, hs->ws, &info);
	free(path);
	free(reqh);
	if (x->have_resp)
		hexch_record_response(x);
	/* --fault: a row that waited for the session, before its messages. */
	hfault_assigned(x);
	for (i = 0; i < x->nheld; i++) {
		if (x->held[i]->fault_role != FAULT_ROLE_NONE &&
		    x->held[i]->fault == 0)
			x->held[i]->fault = x->fault_n;
		tap_message_http(p->tap, hs->ws, x->wx, x->held[i],
		    hexch_live(x));
	}
	free(x->held);
	x->held = NULL;
	x->nheld = 0;
}

/* Record the exchange's response head (its session is known). */
void
hexch_record_response(struct hexch *x)
{
	struct hproxy		*p = x->c->p;
	struct wexchange_info	 info;
	char			*resph;

	resph = hsession_headers_json(p, &x->resp);
	memset(&info, 0, sizeof info);
	info.headers = resph;
	info.mono_ns = clock_mono_ns();
	writer_exchange_response(p->w, x->wx, x->resp.status, &info);
	free(resph);
}

/*
 * What record --check gets of the exchange a message came in: its method,
 * path and request heads as stored, and its status and response heads
 * once they came (a client's POST body comes before them: then the rules
 * of its request heads run live, those of its status only in 'mcpreel
 * check').  NULL when not checking.
 */
static const struct check_http *
hexch_live(struct hexch *x)
{
	struct hproxy		*p = x->c->p;
	struct check_http	*h;

	if (!tap_checking() || x->hs == NULL)
		return NULL;
	if ((h = x->live) == NULL) {
		h = x->live = xcalloc(1, sizeof *x->live);
		h->exchange = ++p->nlive;
		h->method = xstrdup(x->req.method != NULL ? x->req.method :
		    "");
		h->path = hsession_redact_path(x->req.target);
		h->request_headers = hsession_headers_json(p, &x->req);
		h->legacy_sse = x->hs->legacy;
	}
	if (x->have_resp && h->status == 0) {
		h->status = x->resp.status;
		h->response_headers = hsession_headers_json(p, &x->resp);
	}
	return h;
}

/* Free what hexch_live() made. */
void
hexch_live_free(struct hexch *x)
{
	if (x->live == NULL)
		return;
	free((char *)x->live->method);
	free((char *)x->live->path);
	free((char *)x->live->request_headers);
	free((char *)x->live->response_headers);
	free(x->live);
	x->live = NULL;
}

/* Record a message of this exchange, or hold it until its session is known. */
void
hexch_tap(struct hexch *x, struct msg *m)
{
	if (x->hs != NULL) {
		tap_message_http(x->c->p->tap, x->hs->ws, x->wx, m,
		    hexch_live(x));
		return;
	}
	x->held = xreallocarray(x->held, x->nheld + 1, sizeof *x->held);
	x->held[x->nheld++] = m;
}

/* Log one line at level (log_vwrite's variadic form). */
static void
hsession_log(enum log_level level, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(level, fmt, ap);
	va_end(ap);
}

/*
 * Note something about an exchange in its session's events, and log it
 * at level: LOG_LEVEL_INFO (shown by default) for what went wrong,
 * LOG_LEVEL_DEBUG for what is kept for people but is no one's concern.
 */
static void
hexch_vnote(struct hexch *x, enum log_level level, const char *fmt,
    va_list ap)
{
	struct hsession	*hs;
	char		*text, *path, *full;

	if (vasprintf(&text, fmt, ap) == -1)
		fatalx("out of memory");
	path = hsession_redact_path(x->req.target != NULL ? x->req.target :
	    "?");
	xasprintf(&full, "%s %s: %s", x->req.method != NULL ?
	    x->req.method : "?", path, text);
	hsession_log(level, "connection %llu: %s", (unsigned long long)x->c->id,
	    full);
	hs = (x->hs != NULL) ? x->hs : hsession_default(x->c->p, x->ts_ns);
	tap_event(x->c->p->tap, hs->ws, "note", full, strlen(full));
	free(full);
	free(path);
	free(text);
}

/* Note something that went wrong with an exchange: events and the log. */
void
hexch_note(struct hexch *x, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	hexch_vnote(x, LOG_LEVEL_INFO, fmt, ap);
	va_end(ap);
}

/* Note something about an exchange, logged at level. */
void
hexch_note_at(struct hexch *x, enum log_level level, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	hexch_vnote(x, level, fmt, ap);
	va_end(ap);
}
