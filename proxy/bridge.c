/*
 * The bridge: a client on one transport, the server on another, every
 * message recorded once on the way.  record --connect URL: the host on our
 * stdio (endpoint_stdio), the server at URL (an xport over HTTP).  record
 * --listen ADDR -- CMD: HTTP clients at ADDR (endpoint_http), CMD over
 * stdio (xport_stdio).
 *
 *   client ──endpoint──> tap(c2s) ──> xport_send ──> server
 *   client <──ereq/send── route <── tap(s2c) <──xport── server
 *
 * Over HTTP a request's answer goes back on its own POST (struct ereq):
 * the bridge keeps each pending request by its id's bytes, with the
 * progress token it names, so that the answer and its progress find the
 * POST; what else the server says goes on the one request in flight if
 * exactly one is (a stdio server has no streams: a client waiting on one
 * request expects its logging and sampling there), else the GET stream.
 */

#include <sys/queue.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include <jansson.h>

#include "bridge_int.h"
#include "protocol.h"

/*
 * After the host closed stdin (or a stop signal), how long the server
 * gets to answer what is in flight and end its session (DELETE), or a
 * command to stop: its own grace is 2 s for stdin, 2 s, then SIGTERM,
 * 2 s, SIGKILL (6 s), so a second more to see it gone.
 */
#define BRIDGE_FINISH_MS	7000
/*
 * What waits for the host on our stdout before reading the server pauses
 * (the host does not read), and how often it is looked at again then.
 */
#define BRIDGE_STDOUT_MAX	(16 * 1024 * 1024)
#define BRIDGE_STDOUT_POLL_MS	20
/*
 * What waits for the command to read it on its stdin before reading the
 * clients pauses (the command does not read), looked at as often.
 */
#define BRIDGE_STDIN_MAX	(16 * 1024 * 1024)
/*
 * When the command exits under --listen, how long its last answers (and
 * mcpreel's errors for what it left unanswered) get to reach the clients.
 */
#define BRIDGE_LINGER_MS	500

/* The exit status of a bridge that could not start (as EXIT_USAGE). */
#define BRIDGE_EXIT_USAGE	2

/* Why reading a side is paused, as bits: either holds it. */
#define BRIDGE_PAUSE_STORE	0x1	/* the writer's queue is full */
#define BRIDGE_PAUSE_CLIENT	0x2	/* the client's channel is full */
#define BRIDGE_PAUSE_SERVER	0x4	/* the command's stdin is full */

static void	bridge_stop(struct bridge *, const char *);

/* A note in the record, and in the log at debug level. */
void
bridge_note(struct bridge *b, const char *text)
{
	log_debug("note: %s", text);
	tap_event(b->tap, b->s, "note", text, strlen(text));
}

/* Remember the first reason the session is ending. */
static void
bridge_reason(struct bridge *b, const char *why)
{
	if (b->reason == NULL)
		b->reason = xstrdup(why);
}

/* Apply the pause bits to the server's side. */
static void
bridge_xpause(struct bridge *b, int bit, int on)
{
	if (on)
		b->xpause |= bit;
	else
		b->xpause &= ~bit;
	if (b->x != NULL)
		xport_pause(b->x, b->xpause != 0);
}

/* Apply the pause bits to the clients' side. */
static void
bridge_epause(struct bridge *b, int bit, int on)
{
	if (on)
		b->epause |= bit;
	else
		b->epause &= ~bit;
	if (b->ep != NULL)
		endpoint_pause(b->ep, b->epause != 0);
}

/* Record message bytes going dir; pause both sides when the writer lags. */
static void
bridge_tap(struct bridge *b, enum dir dir, const char *bytes, size_t len)
{
	struct line	l;

	line_init(&l, dir);
	line_add(&l, bytes, len, 1);
	if (tap_message(b->tap, b->s, NULL, line_finish(&l))) {
		bridge_epause(b, BRIDGE_PAUSE_STORE, 1);
		bridge_xpause(b, BRIDGE_PAUSE_STORE, 1);
	}
}

/* The writer caught up: read both sides again. */
static void
bridge_resume_cb(void *arg)
{
	struct bridge	*b = arg;

	bridge_epause(b, BRIDGE_PAUSE_STORE, 0);
	bridge_xpause(b, BRIDGE_PAUSE_STORE, 0);
}








/*
 * Send a client message to the server; over HTTP with the headers a
 * 2026-07-28 request carries (its revision named as MCP-Protocol-Version).
 * Only what names the word is parsed.
 */
static void
bridge_send(struct bridge *b, const char *bytes, size_t len)
{
	const char	*version;
	json_t		*j;
	char		**h = NULL;

	if (b->ph != NULL && memmem(bytes, len,
	    "io.modelcontextprotocol/protocolVersion", 39) != NULL &&
	    (j = json_loadb(bytes, len, 0, NULL)) != NULL) {
		h = proto_headers_for(b->ph, j, &version);
		if (version != NULL)
			xport_set_protocol_version(b->x, version);
		json_decref(j);
	}
	xport_send(b->x, bytes, len, (const char *const *)h);
	proto_headers_list_free(h);
}

/*
 * A client request: remembered, then sent.  Refused (answered by us) when
 * too many are in flight, its id is already in flight, or the server is
 * gone.
 */
static void
bridge_request(struct bridge *b, struct ereq *er, const char *bytes,
    size_t len, const struct scan *sc)
{
	struct bpend	*p;
	char		*id, *why = NULL;
	int64_t		 v;

	id = bridge_pend_key(bytes, sc);
	if (b->gone != NULL)
		why = bridge_pend_why(b, b->gone);
	else if (b->npend >= BRIDGE_PENDING_MAX)
		xasprintf(&why, "mcpreel: %d requests are waiting for the "
		    "server's answers already; this one was not sent",
		    BRIDGE_PENDING_MAX);
	else if (idmap_get(b->byid, id, strlen(id), &v) == 0)
		xasprintf(&why, "mcpreel: a request with id %s is waiting for "
		    "the server's answer already; this one was not sent (the "
		    "server could not tell their answers apart)", id);
	if (why != NULL) {
		bridge_pend_answer(b, er, id, why);
		/* Said once on stderr: a flood must not flood the log. */
		if (b->gone == NULL && !b->refused_said) {
			b->refused_said = 1;
			log_warnx("%s", why + 9);
		} else if (b->gone == NULL)
			log_debug("%s", why + 9);
		free(why);
		free(id);
		return;
	}
	p = xcalloc(1, sizeof *p);
	p->id = id;
	p->er = er;
	p->token = bridge_pend_token(bytes, len, 1);
	p->init = sc->has_method && sc->method_len == 10 &&
	    memcmp(bytes + sc->method_off, "initialize", 10) == 0;
	idmap_put(b->byid, id, strlen(id), (int64_t)(intptr_t)p, NULL);
	if (p->token != NULL)
		idmap_put(b->bytoken, p->token, strlen(p->token),
		    (int64_t)(intptr_t)p, NULL);
	p->list = b->ph != NULL && sc->has_method && sc->method_len == 10 &&
	    memcmp(bytes + sc->method_off, "tools/list", 10) == 0;
	TAILQ_INSERT_TAIL(&b->pend, p, entry);
	b->npend++;
	bridge_send(b, bytes, len);
}

static void	bridge_poll_later(struct bridge *);

/* After a message went to the command, hold the clients back while its
   stdin has not taken BRIDGE_STDIN_MAX. */
static void
bridge_check_stdin(struct bridge *b)
{
	if (b->opt->connect != NULL ||
	    xport_stdio_unsent(b->x) < BRIDGE_STDIN_MAX)
		return;
	bridge_epause(b, BRIDGE_PAUSE_SERVER, 1);
	if (!evtimer_pending(b->poll_ev, NULL))
		bridge_poll_later(b);
}

/*
 * Stopping: nothing more goes to the server.  A request gets mcpreel's
 * error (a 202 would tell an HTTP client its answer comes later).
 */
static void
bridge_client_finishing(struct bridge *b, struct ereq *er, const char *bytes,
    size_t len, const struct scan *sc)
{
	char	*id, *why;

	if (sc->kind != KIND_REQUEST || !sc->has_id) {
		if (er != NULL)
			ereq_end(b->ep, er, NULL, 0);
		return;
	}
	if (b->gone != NULL)
		why = bridge_pend_why(b, b->gone);
	else
		why = xstrdup("mcpreel: mcpreel is stopping; this request was "
		    "not sent to the server");
	id = bridge_pend_key(bytes, sc);
	bridge_pend_answer(b, er, id, why);
	log_debug("%s", why + 9);
	free(id);
	free(why);
}

/*
 * A client's notifications/cancelled for a pending request: the server
 * will not answer it, so it waits no more (its POST ends).
 */
static void
bridge_cancelled(struct bridge *b, const char *bytes, size_t len)
{
	json_t		*j;
	struct bpend	*p;
	const char	*method;
	char		*id, *key;
	int64_t		 v;

	if (memmem(bytes, len, "notifications/cancelled", 23) == NULL ||
	    (j = json_loadb(bytes, len, 0, NULL)) == NULL)
		return;
	method = json_string_value(json_object_get(j, "method"));
	if (method == NULL || strcmp(method, "notifications/cancelled") != 0 ||
	    (id = json_dumps(json_object_get(json_object_get(j, "params"),
	    "requestId"), JSON_COMPACT | JSON_ENCODE_ANY)) == NULL) {
		json_decref(j);
		return;
	}
	json_decref(j);
	key = bridge_pend_canon(id);
	if (idmap_get(b->byid, key, strlen(key), &v) == 0) {
		p = (struct bpend *)(intptr_t)v;
		bridge_pend_take(b, p);
		if (p->er != NULL)
			ereq_end(b->ep, p->er, NULL, 0);
		bridge_pend_free(p);
	}
	free(key);
	free(id);
}

/* A whole client message: recorded, then on to the server. */
static void
bridge_client_cb(struct ereq *er, const char *bytes, size_t len, void *arg)
{
	struct bridge	*b = arg;
	struct scan	 sc;

	bridge_tap(b, DIR_C2S, bytes, len);
	scan_message(bytes, len, &sc);
	if (b->finishing) {
		bridge_client_finishing(b, er, bytes, len, &sc);
		return;
	}
	if (sc.kind == KIND_REQUEST && sc.has_id)
		bridge_request(b, er, bytes, len, &sc);
	else {
		if (sc.kind == KIND_NOTIFICATION)
			bridge_cancelled(b, bytes, len);
		/* Over HTTP the endpoint answered it (202) already. */
		if (er != NULL)
			ereq_end(b->ep, er, NULL, 0);
		if (b->gone == NULL)
			bridge_send(b, bytes, len);
	}
	bridge_check_stdin(b);
}

/* The stdout backlog is still over BRIDGE_STDOUT_MAX: look again soon. */
static void
bridge_poll_later(struct bridge *b)
{
	struct timeval	tv = { 0, BRIDGE_STDOUT_POLL_MS * 1000 };

	evtimer_add(b->poll_ev, &tv);
}

/*
 * After a message went to the client on er's channel (NULL: the stream),
 * hold the server back while that channel is full.
 */
static void
bridge_check_full(struct bridge *b, struct ereq *er)
{
	uint64_t	queued, written;

	if (b->stdio_host) {
		endpoint_progress(b->ep, &queued, &written);
		if (queued - written < BRIDGE_STDOUT_MAX)
			return;
		bridge_xpause(b, BRIDGE_PAUSE_CLIENT, 1);
		if (!evtimer_pending(b->poll_ev, NULL))
			bridge_poll_later(b);
		return;
	}
	if (endpoint_full(b->ep, er) == 1)
		bridge_xpause(b, BRIDGE_PAUSE_CLIENT, 1);
}

/* Look again at what waits on our stdout or the command's stdin. */
static void
bridge_poll_cb(evutil_socket_t fd, short events, void *arg)
{
	struct bridge	*b = arg;
	uint64_t	 queued, written;
	int		 again = 0;

	if (b->stdio_host && (b->xpause & BRIDGE_PAUSE_CLIENT)) {
		endpoint_progress(b->ep, &queued, &written);
		if (queued - written >= BRIDGE_STDOUT_MAX)
			again = 1;
		else
			bridge_xpause(b, BRIDGE_PAUSE_CLIENT, 0);
	}
	if (b->epause & BRIDGE_PAUSE_SERVER) {
		if (xport_stdio_unsent(b->x) >= BRIDGE_STDIN_MAX / 2)
			again = 1;
		else
			bridge_epause(b, BRIDGE_PAUSE_SERVER, 0);
	}
	if (again)
		bridge_poll_later(b);
}

/* The client's channel drained: the server may go on. */
static void
bridge_drained_cb(void *arg)
{
	struct bridge	*b = arg;

	bridge_xpause(b, BRIDGE_PAUSE_CLIENT, 0);
}

/*
 * An initialize's answer names the version later HTTP requests name; a
 * tools/list's, the arguments 2026-07-28 requests carry as headers.
 */
static void
bridge_learn(struct bridge *b, const struct bpend *p, const char *bytes,
    size_t len)
{
	json_t		*j;
	const char	*v;

	if ((j = json_loadb(bytes, len, 0, NULL)) == NULL)
		return;
	v = json_string_value(json_object_get(json_object_get(j, "result"),
	    "protocolVersion"));
	if (p->init && v != NULL)
		xport_set_protocol_version(b->x, v);
	if (p->list && b->ph != NULL)
		proto_headers_learn(b->ph, json_object_get(j, "result"));
	json_decref(j);
}

/*
 * --transport auto found a legacy HTTP+SSE server: the session's row,
 * written before it was known, says "sse" from now.
 */
static void
bridge_check_transport(struct bridge *b)
{
	if (b->sse_said || b->x == NULL || !xport_remote_legacy(b->x))
		return;
	b->sse_said = 1;
	tap_session_transport(b->tap, b->s, "sse");
}

/* A whole server message: recorded, then on the channel it belongs to. */
static void
bridge_server_cb(const char *bytes, size_t len, void *arg)
{
	struct bridge	*b = arg;
	struct bpend	*p = NULL;
	struct ereq	*er = NULL;
	struct scan	 sc;
	char		*id, *tok, *note;
	int64_t		 v;

	if (!b->heard)
		bridge_check_transport(b);
	b->heard = 1;
	bridge_tap(b, DIR_S2C, bytes, len);
	scan_message(bytes, len, &sc);
	if ((sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR) && sc.has_id) {
		id = bridge_pend_key(bytes, &sc);
		if (idmap_get(b->byid, id, strlen(id), &v) == 0) {
			p = (struct bpend *)(intptr_t)v;
			bridge_pend_take(b, p);
			if ((p->init || p->list) && sc.kind == KIND_RESPONSE)
				bridge_learn(b, p, bytes, len);
			if (p->er != NULL)
				ereq_end(b->ep, p->er, bytes, len);
			else
				endpoint_send(b->ep, bytes, len);
			bridge_pend_free(p);
			bridge_check_full(b, NULL);
		} else {
			xasprintf(&note, "the server answered id %s, which no "
			    "client request waits for: sent on the stream of "
			    "messages nobody asked for", id);
			bridge_note(b, note);
			free(note);
			endpoint_send(b->ep, bytes, len);
			bridge_check_full(b, NULL);
		}
		free(id);
		return;
	}
	if (!b->stdio_host) {
		if (sc.kind == KIND_NOTIFICATION && (tok = bridge_pend_token(bytes,
		    len, 0)) != NULL) {
			if (idmap_get(b->bytoken, tok, strlen(tok), &v) == 0)
				p = (struct bpend *)(intptr_t)v;
			free(tok);
		}
		if (p == NULL)
			p = bridge_pend_only(b);
		if (p != NULL)
			er = p->er;
	}
	if (er != NULL)
		ereq_send(b->ep, er, bytes, len);
	else
		endpoint_send(b->ep, bytes, len);
	bridge_check_full(b, er);
}

/* A line of the command's stderr, a note of the transport's. */
static void
bridge_event_cb(const char *kind, const char *text, size_t len, void *arg)
{
	struct bridge	*b = arg;
	char		*line;
	ssize_t		 n;
	size_t		 off = 0;

	if (strcmp(kind, "stderr") == 0) {
		/* Passed on, as record -- CMD passes the server's stderr. */
		line = xmalloc(len + 1);
		memcpy(line, text, len);
		line[len] = '\n';
		while (off < len + 1 && (n = write(STDERR_FILENO, line + off,
		    len + 1 - off)) > 0)
			off += (size_t)n;
		free(line);
	} else
		log_debug("bridge %s: %.*s", kind, (int)len, text);
	tap_event(b->tap, b->s, kind, text, len);
}

/* The server side ended: asked for, or the server is gone. */
static void
bridge_closed_cb(const char *why, void *arg)
{
	struct bridge	*b = arg;
	struct timeval	 tv = { 0, BRIDGE_LINGER_MS * 1000 };
	char		*text;

	if (b->finishing) {
		if (b->opt->connect == NULL)
			tap_event(b->tap, b->s, "exit", why, strlen(why));
		bridge_reason(b, why);
		event_base_loopbreak(b->base);
		return;
	}
	free(b->gone);
	b->gone = xstrdup(why);
	if (b->opt->connect != NULL) {
		text = bridge_pend_why(b, why);
		bridge_pend_say(b, text);
		bridge_note(b, text);
		free(text);
		/* Each request from now on gets the error: the host decides. */
		bridge_pend_fail_all(b, why);
		return;
	}
	/* The command exited: what it left unanswered gets an error. */
	if (strncmp(why, "server exited", 13) == 0 ||
	    strncmp(why, "server killed", 13) == 0)
		log_info("%s", why);
	else
		log_warnx("the server: %s", why);
	tap_event(b->tap, b->s, "exit", why, strlen(why));
	bridge_reason(b, why);
	bridge_pend_fail_all(b, why);
	b->finishing = 1;
	evtimer_add(b->stop_ev, &tv);
}


/* The host closed our stdin: end the server's session, then stop. */
static void
bridge_host_closed_cb(const char *why, void *arg)
{
	struct bridge	*b = arg;

	log_debug("bridge: %s", why);
	bridge_stop(b, why);
}

/* Our stdout cannot be written: the host is gone. */
static void
bridge_host_failed_cb(const char *why, void *arg)
{
	struct bridge	*b = arg;

	log_warnx("%s", why);
	bridge_note(b, why);
	bridge_stop(b, why);
}

/*
 * Stop: end the server side politely (DELETE its session; stop the
 * command), BRIDGE_FINISH_MS at most, then the loop ends.
 */
static void
bridge_stop(struct bridge *b, const char *why)
{
	struct timeval	tv = { BRIDGE_FINISH_MS / 1000,
			    (BRIDGE_FINISH_MS % 1000) * 1000 };

	bridge_reason(b, why);
	if (b->finishing)
		return;
	b->finishing = 1;
	evtimer_add(b->stop_ev, &tv);
	if (b->gone != NULL) {
		event_base_loopbreak(b->base);
		return;
	}
	xport_finish(b->x);
}

static void
bridge_stop_cb(evutil_socket_t fd, short events, void *arg)
{
	struct bridge	*b = arg;

	if (b->gone == NULL && !b->lingering)
		log_warnx("the server did not finish within %d ms: not "
		    "waiting", BRIDGE_FINISH_MS);
	event_base_loopbreak(b->base);
}

static void
bridge_signal_cb(evutil_socket_t sig, short events, void *arg)
{
	struct bridge	*b = arg;
	char		*note;

	xasprintf(&note, "mcpreel got %s: stopping", strsignal((int)sig));
	log_info("%s", note);
	bridge_note(b, note);
	/* The host may kill us soon after: the end is written now too. */
	tap_session_end(b->tap, b->s, -1, 0, note);
	bridge_stop(b, note);
	free(note);
}

/*
 * The server side: the URL (connect) or the command over stdio; NULL
 * with *cause (and *code: 127 for a command not found, else 2).
 */
static struct xport *
bridge_xport(struct bridge *b, const struct xport_cbs *cbs, int *code,
    char **cause)
{
	const struct bridge_options	*opt = b->opt;
	struct xport			*x;

	*code = BRIDGE_EXIT_USAGE;
	if (opt->connect == NULL)
		return xport_stdio(b->base, opt->argv, BRIDGE_MESSAGE_MAX, cbs,
		    b, code, cause);
	x = xport_remote(b->base, opt->transport, opt->connect, opt->cacert,
	    opt->insecure, BRIDGE_MESSAGE_MAX, cbs, b, cause);
	if (x != NULL && opt->nheaders > 0 && xport_set_headers(x,
	    opt->headers, opt->nheaders, cause) != 0) {
		xport_free(x);
		return NULL;
	}
	return x;
}

/*
 * Run the bridge opt says until its end (the host closing stdin, the
 * command exiting, a stop signal), recording into session s.  Returns -1
 * when it could not start (res says why and the exit code).
 */
int
bridge_run(struct writer *w, struct wsession *s,
    const struct bridge_options *opt, struct record_result *res)
{
	struct bridge		 b;
	struct endpoint_cbs	 ecbs = { bridge_client_cb,
				    bridge_host_closed_cb,
				    bridge_host_failed_cb, bridge_drained_cb };
	struct xport_cbs	 xcbs = { bridge_server_cb, bridge_event_cb,
				    bridge_closed_cb, bridge_pend_failed_cb };
	static const int	 sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction	 oldhup;
	char			*cause = NULL, *origin = NULL;
	int			 code, i;

	memset(res, 0, sizeof *res);
	res->exit_status = -1;
	memset(&b, 0, sizeof b);
	b.opt = opt;
	b.s = s;
	b.stdio_host = opt->connect != NULL;
	TAILQ_INIT(&b.pend);
	b.byid = idmap_new();
	b.bytoken = idmap_new();
	if (opt->connect != NULL)
		b.ph = proto_headers_new();
	evthread_use_pthreads();
	if (b.stdio_host)
		b.base = endpoint_stdio_base_new();
	else if ((b.base = event_base_new()) == NULL)
		fatalx("cannot create an event loop");
	b.tap = tap_new(b.base, w, bridge_resume_cb, &b);
	b.poll_ev = evtimer_new(b.base, bridge_poll_cb, &b);
	b.stop_ev = evtimer_new(b.base, bridge_stop_cb, &b);
	if (opt->note != NULL)
		bridge_note(&b, opt->note);

	if (!b.stdio_host) {
		/* Listening first: a busy address starts nothing. */
		b.ep = endpoint_http(b.base, opt->listen, &opt->lim, &ecbs, &b,
		    &origin, &cause);
		code = BRIDGE_EXIT_USAGE;
	}
	if ((b.stdio_host || b.ep != NULL) &&
	    (b.x = bridge_xport(&b, &xcbs, &code, &cause)) == NULL) {
		endpoint_free(b.ep);
		b.ep = NULL;
	}
	if (b.stdio_host && b.x != NULL)
		b.ep = endpoint_stdio(b.base, &ecbs, &b);
	if (b.ep == NULL || b.x == NULL) {
		cause = tap_redact_text(cause);
		tap_event(b.tap, b.s, "note", cause, strlen(cause));
		res->exit_code = code;
		res->reason = cause;
		free(origin);
		tap_free(b.tap);
		event_free(b.poll_ev);
		event_free(b.stop_ev);
		idmap_free(b.byid);
		idmap_free(b.bytoken);
		proto_headers_free(b.ph);
		event_base_free(b.base);
		return -1;
	}
	endpoint_set_who(b.ep, "record");
	/*
	 * SIGHUP (the terminal closed) stops as SIGTERM does, so the session
	 * ends in the record; started ignoring it (nohup), it stays ignored.
	 */
	for (i = 0; i < 3; i++) {
		if (sigs[i] == SIGHUP && sigaction(SIGHUP, NULL, &oldhup) == 0 &&
		    oldhup.sa_handler == SIG_IGN)
			continue;
		b.sigs[i] = evsignal_new(b.base, sigs[i], bridge_signal_cb, &b);
		evsignal_add(b.sigs[i], NULL);
	}
	if (!b.stdio_host) {
		endpoint_http_check_origin(b.ep, 1);
		/* The address bound (port 0 picked one), in the note. */
		xasprintf(&cause, "bridge: Streamable HTTP clients at %s, "
		    "stdio server", origin);
		bridge_note(&b, cause);
		free(cause);
		/* Said at any log level, alone on its line: scripts wait. */
		log_warnx("listening on %s", origin);
		free(origin);
	}

	event_base_dispatch(b.base);
	bridge_check_transport(&b);

	/* What is still pending will not be answered now. */
	if (b.npend > 0) {
		char	*why = b.gone != NULL ? xstrdup(b.gone) :
			    xstrdup("mcpreel stopped before the answer came");
		struct timeval	 tv = { 0, BRIDGE_LINGER_MS * 1000 };

		bridge_pend_fail_all(&b, why);
		free(why);
		/* Over HTTP the loop writes them: a moment for that. */
		if (!b.stdio_host) {
			b.lingering = 1;
			evtimer_del(b.stop_ev);
			evtimer_add(b.stop_ev, &tv);
			event_base_dispatch(b.base);
		}
	}
	endpoint_flush(b.ep);
	if (b.x->exit_code >= 0) {
		res->exit_status = b.x->exit_code;
		res->exit_code = b.x->exit_code;
		res->exit_signal = b.x->exit_signal;
	} else
		res->exit_code = (!b.heard && b.failed) ? 1 : 0;
	if (opt->connect == NULL && b.x->exit_code < 0)
		res->exit_code = 0;
	res->reason = xstrdup(b.reason != NULL ? b.reason :
	    "recording stopped");

	record_stop_mask(SIG_BLOCK);
	for (i = 0; i < 3; i++) {
		if (b.sigs[i] != NULL)
			event_free(b.sigs[i]);
	}
	xport_free(b.x);
	endpoint_free(b.ep);
	event_free(b.poll_ev);
	event_free(b.stop_ev);
	tap_free(b.tap);
	idmap_free(b.byid);
	idmap_free(b.bytoken);
	proto_headers_free(b.ph);
	free(b.gone);
	free(b.reason);
	event_base_free(b.base);
	return 0;
}
