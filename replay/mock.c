/*
 * The mock server: plays the server of a recorded session.  Each live
 * request is answered with the recorded answer to the matching recorded
 * request (mfind.c), under the live id; what the server did while that
 * request was in flight is played first (progress with the live progress
 * token, log messages, its own requests to the client, whose answers are
 * awaited), and what it sent unasked after the answer follows it.
 * Nothing here ever contacts a real server, unless misses are to be
 * forwarded (--on-miss forward): then a miss goes to the fallback server
 * as it came, its answer comes back under the same id, and the exchange is
 * recorded as a session of its own.  The client's lifecycle messages
 * (initialize, notifications/initialized) are passed to the fallback too,
 * so it is ready when the first miss comes.  With --record-mode the
 * client's side of the fallback's traffic is recorded too, for the
 * cassette.  This file is the live side (requests matched, the endpoint,
 * the fault edge, the run); play.c plays a match, fallback.c forwards a
 * miss.
 */

#include <sys/queue.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "formats.h"
#include "replay.h"
#include "store.h"
#include "mock_int.h"


/* --otlp: a message between the client and the mock, as a span's part. */
static void
mock_otlp(struct mock *mk, enum dir d, const char *bytes, size_t len)
{
	struct msg	*m;

	if (mk->opt->otlp == NULL || bytes == NULL || len == 0)
		return;
	m = msg_new(d, bytes, len);
	otlp_message(mk->opt->otlp, mk->opt->otlp_sess, m);
	msg_free(m);
}

/*
 * A message for the client, through the fault edge when there are rules
 * (fb: the message as the fallback sent it, which the edge records once
 * its rules have decided; NULL: the mock's own).
 */
void
mock_out(struct mock *mk, enum mockfault_how how, struct ereq *er,
    const char *bytes, size_t len, const char *fb, size_t fblen)
{
	mock_otlp(mk, DIR_S2C, bytes, len);
	if (mk->mf != NULL)
		mockfault_out(mk->mf, how, er, bytes, len, fb, fblen);
	else if (how == MOCKFAULT_SEND)
		endpoint_send(mk->ep, bytes, len);
	else if (how == MOCKFAULT_REQ_SEND)
		ereq_send(mk->ep, er, bytes, len);
	else
		ereq_end(mk->ep, er, bytes, len);
}

/* Count the answers the endpoint has written since we last looked. */
static void
mock_settle(struct mock *mk)
{
	uint64_t	queued, written;

	endpoint_progress(mk->ep, &queued, &written);
	while (mk->pend0 < mk->npend && mk->pend[mk->pend0].mark <= written) {
		(*mk->pend[mk->pend0].counter)++;
		mk->pend0++;
	}
	if (mk->pend0 == mk->npend)
		mk->pend0 = mk->npend = 0;
}

/*
 * An answer was just handed to the endpoint: count it in *counter once it
 * is written (at once if it is, or the endpoint does not count).  Only
 * answers not yet written are held, so this grows no faster than what
 * the endpoint holds for a client that does not read.
 */
void
mock_count(struct mock *mk, uint64_t *counter)
{
	uint64_t	queued, written;

	mock_settle(mk);
	endpoint_progress(mk->ep, &queued, &written);
	if (written >= queued) {
		(*counter)++;
		return;
	}
	if (mk->pend0 > 0 && mk->pend0 >= mk->npend / 2) {
		memmove(mk->pend, mk->pend + mk->pend0, (mk->npend -
		    mk->pend0) * sizeof *mk->pend);
		mk->npend -= mk->pend0;
		mk->pend0 = 0;
	}
	mk->pend = xreallocarray(mk->pend, mk->npend + 1, sizeof *mk->pend);
	mk->pend[mk->npend].mark = queued;
	mk->pend[mk->npend++].counter = counter;
}

/* Recorded message i, as JSON to send (caller frees), read from disk. */
json_t *
mock_copy(struct mock *mk, size_t i)
{
	json_t	*shared = mfind_message(mk->md, i), *v;

	v = json_deep_copy(shared);
	json_decref(shared);
	return v;
}

/* A message as the compact text sent (caller frees); "null" if none. */
char *
mock_dump(const json_t *v)
{
	char	*s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
		    JSON_ENCODE_ANY);

	return s != NULL ? s : xstrdup("null");
}

/* A live request: play its match, or explain the miss. */
static void
mock_request(struct mock *mk, struct ereq *er, json_t *msg, const char *bytes,
    size_t len)
{
	struct mdent		*e;
	const char		*pv;
	struct play		*pl;
	struct missed		*ms;
	json_t			*err, *out;
	char			*s, sid[33];
	size_t			 i;

	e = mfind_find(mk->md, msg);
	if (mk->fb != NULL && e != NULL &&
	    strcmp(e->method, "initialize") == 0)
		fallback_send(mk, bytes, len);	/* it must be ready too */
	if (e == NULL && fallback_forward(mk, er, msg, bytes, len) == 0)
		return;
	if (e == NULL) {
		err = mfind_miss(mk->md, msg);
		out = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
		    json_object_get(msg, "id"), "error", err);
		s = mock_dump(out);
		if (mk->opt->listen == NULL && (!TAILQ_EMPTY(&mk->misses) ||
		    play_miss_waits(mk, mk->nplays))) {
			ms = xcalloc(1, sizeof *ms);
			ms->er = er;
			ms->text = s;
			ms->seq = mk->nplays;
			TAILQ_INSERT_TAIL(&mk->misses, ms, entry);
		} else {
			mock_out(mk, MOCKFAULT_REQ_END, er, s, strlen(s), NULL,
			    0);
			free(s);
			mock_count(mk, &mk->stats->missed);
		}
		json_decref(out);
		log_info("mock: no recorded answer to a %s request",
		    json_string_value(json_object_get(msg, "method")) ?
		    json_string_value(json_object_get(msg, "method")) : "?");
		return;
	}
	if (redacted_in(e->answer)) {
		s = redacted_where(e->answer, 8);
		log_info("mock: the recorded answer (seq %lld) holds values "
		    "redacted when recorded: the client gets \"" REDACTED
		    "\" at %s", (long long)e->resp_seq, s);
		free(s);
	}
	/* A 2025-style initialize opens a session over HTTP. */
	if (strcmp(e->method, "initialize") == 0 &&
	    (pv = json_string_value(json_object_get(json_object_get(
	    e->answer, "result"), "protocolVersion"))) !=
	    NULL && strcmp(pv, MOCK_SESSIONLESS_FROM) < 0) {
		for (i = 0; i < 32; i++)
			sid[i] = "0123456789abcdef"[arc4random_uniform(16)];
		sid[32] = '\0';
		endpoint_set_session(mk->ep, sid);
	}
	pl = xcalloc(1, sizeof *pl);
	pl->mk = mk;
	pl->er = er;
	pl->e = e;
	pl->live_id = json_incref(json_object_get(msg, "id"));
	pl->live_token = json_incref(play_progress_token(msg));
	pl->rec_token = json_incref(play_progress_token(e->request));
	/*
	 * Until it is sent a play holds no parsed message: a client that
	 * reads nothing while it sends on costs the plays, not their answers.
	 */
	json_decref(e->request);
	json_decref(e->answer);
	e->request = e->answer = NULL;
	pl->start_ns = pl->last_ns = clock_mono_ns();
	pl->start_seq = mk->nplays++;
	pl->timer = evtimer_new(mk->base, play_timer_cb, pl);
	TAILQ_INSERT_TAIL(&mk->plays, pl, entry);
	play_step(pl);
}

/*
 * The client answered one of our server requests: go on with its play.
 * Returns 0 if it was ours.
 */
static int
mock_answer(struct mock *mk, const char *idtext)
{
	struct play	*pl;

	TAILQ_FOREACH(pl, &mk->plays, entry) {
		if (pl->waiting != NULL && strcmp(pl->waiting, idtext) == 0) {
			free(pl->waiting);
			pl->waiting = NULL;
			evtimer_del(pl->timer);
			pl->step++;
			play_step(pl);
			return 0;
		}
	}
	return -1;
}

/* A client message, past the fault edge if any: handle it. */
static void
mock_deliver(struct ereq *er, const char *bytes, size_t len, void *arg)
{
	struct mock	*mk = arg;
	struct scan	 sc;
	json_t		*msg, *out;
	char		*idtext, *s;

	scan_message(bytes, len, &sc);
	msg = (sc.kind == KIND_INVALID) ? NULL : json_loadb(bytes, len,
	    JSON_DECODE_ANY, NULL);
	switch (msg != NULL ? sc.kind : KIND_INVALID) {
	case KIND_REQUEST:
		mock_request(mk, er, msg, bytes, len);
		break;
	case KIND_RESPONSE:
	case KIND_ERROR:
		/* Ours, or the fallback's (it asked through us). */
		if ((idtext = scan_id_dup(bytes, &sc)) != NULL &&
		    mock_answer(mk, idtext) != 0) {
			if (mk->fb != NULL) {
				fallback_cassette(mk, DIR_C2S, bytes, len);
				fallback_send(mk, bytes, len);
			}
			else
				log_debug("mock: an answer (id %s) to nothing "
				    "we asked", idtext);
		}
		free(idtext);
		break;
	case KIND_NOTIFICATION:
		if (mk->fb != NULL) {
			fallback_cassette(mk, DIR_C2S, bytes, len);
			fallback_send(mk, bytes, len);
		}
		break;
	default:
		/* As a JSON-RPC server would: a parse error, no id. */
		out = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0",
		    "id", "error", "code", sc.kind == KIND_BATCH ? -32600 :
		    -32700, "message", sc.kind == KIND_BATCH ? "mcpreel mock: "
		    "batches are not played" : "mcpreel mock: not a JSON-RPC "
		    "message");
		s = mock_dump(out);
		mock_out(mk, MOCKFAULT_REQ_END, er, s, strlen(s), NULL, 0);
		er = NULL;
		free(s);
		json_decref(out);
		break;
	}
	if (er != NULL && sc.kind != KIND_REQUEST)
		ereq_end(mk->ep, er, NULL, 0);
	json_decref(msg);
}

static void
mock_message_cb(struct ereq *er, const char *bytes, size_t len, void *arg)
{
	struct mock	*mk = arg;

	mock_otlp(mk, DIR_C2S, bytes, len);
	if (mk->mf != NULL)
		mockfault_in(mk->mf, er, bytes, len);
	else
		mock_deliver(er, bytes, len, mk);
}

/* A fault closed stdio as a dying server's: stop. */
static void
mock_fault_closed_cb(const char *why, void *arg)
{
	struct mock	*mk = arg;

	log_debug("mock: %s; stopping", why);
	event_base_loopbreak(mk->base);
}

static void
mock_fault_idle_cb(void *arg)
{
	mock_maybe_exit(arg);
}

/*
 * Once the client has gone (stdin closed), stop when nothing is still
 * being played or waiting on the fallback; MOCK_EXIT_WAIT_MS at most
 * without the client reading anything.
 */
void
mock_maybe_exit(struct mock *mk)
{
	struct timeval	tv = { MOCK_EXIT_WAIT_MS / 1000,
			    (MOCK_EXIT_WAIT_MS % 1000) * 1000 };
	uint64_t	queued;

	if (!mk->stdin_closed)
		return;
	if (TAILQ_EMPTY(&mk->plays) && json_object_size(mk->fb_waiting) == 0 &&
	    !mockfault_busy(mk->mf))
		event_base_loopbreak(mk->base);
	else if (!mk->input_file && !evtimer_pending(mk->exit_ev, NULL)) {
		endpoint_progress(mk->ep, &queued, &mk->exit_written);
		evtimer_add(mk->exit_ev, &tv);
	}
}

static void
mock_exit_cb(evutil_socket_t fd, short events, void *arg)
{
	struct mock	*mk = arg;
	struct timeval	 tv = { MOCK_EXIT_WAIT_MS / 1000,
			    (MOCK_EXIT_WAIT_MS % 1000) * 1000 };
	uint64_t	 queued, written;

	/* A client still reading what is played gets another while. */
	if (!mk->fb_finishing) {
		endpoint_progress(mk->ep, &queued, &written);
		if (written > mk->exit_written) {
			mk->exit_written = written;
			evtimer_add(mk->exit_ev, &tv);
			return;
		}
	}
	if (mk->fb_finishing)
		log_warnx("mock: the fallback server did not stop within %d "
		    "ms", MOCK_FALLBACK_FINISH_MS);
	else
		log_warnx("mock: the client has gone; not waiting longer for "
		    "what is still being answered");
	event_base_loopbreak(mk->base);
}

static void
mock_closed_cb(const char *why, void *arg)
{
	struct mock	*mk = arg;
	struct play	*pl, *next;

	mk->stdin_closed = 1;
	log_debug("mock: %s", why);
	/* Plays waiting for a client answer go on without it. */
	for (pl = TAILQ_FIRST(&mk->plays); pl != NULL; pl = next) {
		next = TAILQ_NEXT(pl, entry);
		if (pl->waiting == NULL)
			continue;
		free(pl->waiting);
		pl->waiting = NULL;
		evtimer_del(pl->timer);
		pl->step++;
		play_step(pl);
	}
	mock_maybe_exit(mk);
}

/* Our output failed: the client cannot get answers any more; stop. */
/* The client's output drained: the plays that waited for it go on. */
static void
mock_drained_cb(void *arg)
{
	struct mock	*mk = arg;
	struct play	*pl, *next;

	if (mk->fb != NULL && mk->fb->paused && endpoint_full(mk->ep, NULL) !=
	    1)
		xport_pause(mk->fb, 0);
	for (pl = TAILQ_FIRST(&mk->plays); pl != NULL; pl = next) {
		next = TAILQ_NEXT(pl, entry);
		if (!pl->blocked)
			continue;
		pl->blocked = 0;
		play_step(pl);
	}
}

static void
mock_failed_cb(const char *why, void *arg)
{
	struct mock	*mk = arg;

	if (mk->stats->out_error == NULL)
		mk->stats->out_error = xstrdup(why);
	log_warnx("mock: %s; stopping", why);
	event_base_loopbreak(mk->base);
}

static void
mock_signal_cb(evutil_socket_t sig, short events, void *arg)
{
	struct mock	*mk = arg;

	log_info("mock: stopping (%s)", strsignal((int)sig));
	event_base_loopbreak(mk->base);
}

/* The default options: stdio, the recorded gaps capped at MOCK_GAP_CAP_MS. */
void
mock_options_init(struct mock_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->latency_scale = 1.0;
	opt->latency_cap_ns = (int64_t)MOCK_GAP_CAP_MS * 1000000;
}

/*
 * --latency: "capped" (the default), "none", "recorded" (the recorded
 * gaps, uncapped) or "scale:X" (the recorded gaps times X, capped at
 * MOCK_SCALED_CAP_MS).
 * Returns -1 for anything else.
 */
int
mock_parse_latency(struct mock_options *opt, const char *s)
{
	char	*end;
	double	 x;

	if (strcmp(s, "capped") == 0) {
		opt->latency_scale = 1.0;
		opt->latency_cap_ns = (int64_t)MOCK_GAP_CAP_MS * 1000000;
	} else if (strcmp(s, "none") == 0) {
		opt->latency_scale = 0;
		opt->latency_cap_ns = 0;
	} else if (strcmp(s, "recorded") == 0) {
		opt->latency_scale = 1.0;
		opt->latency_cap_ns = INT64_MAX;
	} else if (strncmp(s, "scale:", 6) == 0) {
		errno = 0;
		x = strtod(s + 6, &end);
		if (errno != 0 || end == s + 6 || *end != '\0' || !(x >= 0) ||
		    x > MOCK_SCALE_MAX)
			return -1;
		opt->latency_scale = x;
		opt->latency_cap_ns = (int64_t)MOCK_SCALED_CAP_MS * 1000000;
	} else
		return -1;
	return 0;
}

/*
 * Serve the recording md over stdio (listen NULL) or Streamable HTTP
 * on listen, until stdin closes or a signal.  Returns -1 (cause) when it
 * cannot start.
 */
int
mock_run(struct mdisk *md, const struct mock_options *opt,
    struct mock_stats *stats, char **cause)
{
	struct mock		 mk;
	struct endpoint_cbs	 cbs = { mock_message_cb, mock_closed_cb,
				    mock_failed_cb, mock_drained_cb };
	struct xport_cbs	 fcbs = { fallback_message_cb, fallback_event_cb,
				    fallback_closed_cb, NULL };
	struct mockfault_cbs	 mfcbs = { mock_deliver, mock_fault_closed_cb,
				    mock_fault_idle_cb };
	struct event		*sigs[2];
	struct play		*pl;
	char			*origin = NULL, *s;
	struct mitem		*prelude;
	size_t			 i, nprelude;

	memset(&mk, 0, sizeof mk);
	memset(stats, 0, sizeof *stats);
	mk.md = md;
	mk.opt = opt;
	mk.stats = stats;
	TAILQ_INIT(&mk.plays);
	TAILQ_INIT(&mk.misses);
	evthread_use_pthreads();
	if (opt->listen == NULL)
		mk.base = endpoint_stdio_base_new();
	else if ((mk.base = event_base_new()) == NULL)
		fatalx("cannot create an event loop");
	mk.fb_waiting = json_object();
	mk.exit_ev = evtimer_new(mk.base, mock_exit_cb, &mk);
	mk.kick_ev = evtimer_new(mk.base, play_kick_cb, &mk);
	mk.fb_sweep = evtimer_new(mk.base, fallback_sweep_cb, &mk);
	if (opt->fallback != NULL && (mk.fb = opt->fallback(mk.base, &fcbs,
	    &mk, opt->fallback_arg, cause)) == NULL) {
		json_decref(mk.fb_waiting);
		event_free(mk.exit_ev);
		event_free(mk.kick_ev);
		event_free(mk.fb_sweep);
		event_base_free(mk.base);
		return -1;
	}
	if (opt->listen != NULL) {
		mk.ep = endpoint_http(mk.base, opt->listen, &opt->lim, &cbs,
		    &mk, &origin, cause);
		if (mk.ep == NULL) {
			xport_free(mk.fb);
			json_decref(mk.fb_waiting);
			event_free(mk.exit_ev);
			event_free(mk.kick_ev);
			event_free(mk.fb_sweep);
			event_base_free(mk.base);
			return -1;
		}
		mk.mf = mockfault_new(mk.base, mk.ep, opt, &mfcbs, &mk);
		/* Said at any log level, alone on its line: scripts wait. */
		log_warnx("listening on %s", origin);
		free(origin);
	} else {
		mk.ep = endpoint_stdio(mk.base, &cbs, &mk);
		mk.mf = mockfault_new(mk.base, mk.ep, opt, &mfcbs, &mk);
		mk.input_file = endpoint_stdio_input_is_file();
		/* What the server said before any request, it says first. */
		nprelude = mfind_prelude(md, &prelude);
		for (i = 0; i < nprelude; i++) {
			json_t	*msg = mock_copy(&mk, prelude[i].msg);

			if (msg == NULL)
				continue;
			s = mock_dump(msg);
			mock_out(&mk, MOCKFAULT_SEND, NULL, s, strlen(s), NULL,
			    0);
			free(s);
			json_decref(msg);
		}
		free(prelude);
	}
	sigs[0] = evsignal_new(mk.base, SIGINT, mock_signal_cb, &mk);
	sigs[1] = evsignal_new(mk.base, SIGTERM, mock_signal_cb, &mk);
	evsignal_add(sigs[0], NULL);
	evsignal_add(sigs[1], NULL);

	event_base_dispatch(mk.base);

	/* What faults hold goes first: it may be on a play's channel. */
	mockfault_finish(mk.mf);
	/* Plays still waiting (on latency or an answer) end unanswered. */
	while ((pl = TAILQ_FIRST(&mk.plays)) != NULL) {
		if (pl->step <= pl->e->nbefore)
			stats->dropped++;
		if (pl->er != NULL)
			ereq_end(mk.ep, pl->er, NULL, 0);
		play_free(pl);
	}
	/* With no play left before them, the held miss errors go. */
	play_misses_flush(&mk);
	endpoint_flush(mk.ep);
	mock_settle(&mk);
	stats->unwritten = mk.npend - mk.pend0;
	free(mk.pend);
	if (mk.fb != NULL) {
		/* Requests still with the fallback end unanswered. */
		const char	*k;
		json_t		*v;

		struct timeval	 tv = { MOCK_FALLBACK_FINISH_MS / 1000,
				    (MOCK_FALLBACK_FINISH_MS % 1000) * 1000 };

		stats->dropped += json_object_size(mk.fb_waiting);
		stats->fb_failed += json_object_size(mk.fb_waiting);
		json_object_foreach(mk.fb_waiting, k, v) {
			ereq_end(mk.ep, (struct ereq *)(intptr_t)
			    json_integer_value(json_object_get(v, "er")), NULL,
			    0);
			msg_free((struct msg *)(intptr_t)json_integer_value(
			    json_object_get(v, "req")));
		}
		json_object_clear(mk.fb_waiting);
		fallback_held_clear(&mk);
		/* Let it stop the way clients stop servers, briefly. */
		if (mk.fb_why == NULL) {
			mk.fb_finishing = 1;
			xport_finish(mk.fb);
			evtimer_del(mk.exit_ev);
			evtimer_add(mk.exit_ev, &tv);
			event_base_dispatch(mk.base);
		}
		xport_free(mk.fb);
	}
	json_decref(mk.fb_waiting);
	fallback_held_clear(&mk);
	free(mk.held);
	free(mk.fb_why);
	event_free(mk.exit_ev);
	event_free(mk.kick_ev);
	event_free(mk.fb_sweep);
	/*
	 * A cassette is written, and the OpenTelemetry exporter finishes,
	 * when mock_run returns: from here a stop signal waits (blocked to
	 * the end), rather than ending the process with the recording
	 * unwritten or half of it beside the file, or the session's row
	 * without its end and dropped-span count.
	 */
	if (opt->cw != NULL || opt->otlp != NULL) {
		sigset_t	stop;

		sigemptyset(&stop);
		sigaddset(&stop, SIGINT);
		sigaddset(&stop, SIGTERM);
		sigaddset(&stop, SIGHUP);
		sigprocmask(SIG_BLOCK, &stop, NULL);
	}
	event_free(sigs[0]);
	event_free(sigs[1]);
	mockfault_free(mk.mf);
	endpoint_free(mk.ep);
	event_base_free(mk.base);
	return 0;
}
