/*
 * The mock's misses forwarded (--on-miss forward): the fallback server
 * gets a miss as it came and its answer goes back under the same id; the
 * exchange is recorded, and with --record-mode the client's side of the
 * fallback's traffic is held in order for the cassette.
 */

#include <sys/queue.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "formats.h"
#include "replay.h"
#include "store.h"
#include "mock_int.h"

/*
 * Record what went to or came from the fallback; a faulted client message
 * (delayed, mutated, corrupted) in its fault's role.
 */
static void
fallback_record(struct mock *mk, enum dir d, const char *bytes, size_t len)
{
	struct msg	*m;
	int64_t		 n;
	int		 role;

	if (mk->opt->w == NULL)
		return;
	m = msg_new(d, bytes, len);
	if (d == DIR_C2S && mockfault_taken(mk->mf, &n, &role)) {
		m->fault = n;
		m->fault_role = role;
	}
	writer_message(mk->opt->w, mk->opt->ws, NULL, m);
}

/*
 * Whether a message that is not a forwarded request or its answer belongs
 * to the forwarded exchanges in flight: what a server says while working
 * on a request (progress, log messages, its own requests to the client),
 * the client's answers to those, and its cancellations.  Not the rest
 * (the list_changed a server says as it handles the handshake mock passed
 * it, which may come late enough to overlap the first miss).
 */
static int
fallback_cassette_in_flight(enum dir d, const char *bytes, size_t len)
{
	struct scan	 sc;
	char		*method;
	int		 yes;

	scan_message(bytes, len, &sc);
	if (sc.kind == KIND_REQUEST)
		return d == DIR_S2C;
	if (sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR)
		return d == DIR_C2S;
	if (sc.kind != KIND_NOTIFICATION ||
	    (method = scan_method_dup(bytes, &sc)) == NULL)
		return 0;
	yes = d == DIR_S2C ? strcmp(method, "notifications/progress") == 0 ||
	    strcmp(method, "notifications/message") == 0 :
	    strcmp(method, "notifications/cancelled") == 0;
	free(method);
	return yes;
}

/*
 * Write a message into the cassette being recorded.  An exchange is
 * written when it ends, after what ended before it: a message earlier
 * than the last one written takes its times, so the cassette's order by
 * time is its order by seq (the order its pairing is read in).
 */
static void
fallback_cassette_put(struct mock *mk, struct msg *m)
{
	if (m->mono_ns < mk->cw_mono)
		m->mono_ns = mk->cw_mono;
	if (m->ts_ns < mk->cw_ts)
		m->ts_ns = mk->cw_ts;
	mk->cw_mono = m->mono_ns;
	mk->cw_ts = m->ts_ns;
	writer_message(mk->opt->cw, mk->opt->cws, NULL, m);
}

/* Drop the held messages (no forwarded exchange is left to take them). */
void
fallback_held_clear(struct mock *mk)
{
	size_t	i;

	for (i = 0; i < mk->nheld; i++)
		msg_free(mk->held[i].m);
	mk->nheld = 0;
	mk->heldbytes = 0;
}

/*
 * A message as the client sent or got it, for the cassette being
 * recorded, that is not a forwarded request or its answer (any): written
 * at once when no forwarded exchange is in flight and all of the
 * fallback's traffic is recorded; held for the exchanges in flight when
 * it belongs to them (or all is recorded); else not recorded.
 */
void
fallback_cassette(struct mock *mk, enum dir d, const char *bytes, size_t len)
{
	if (mk->opt->cw == NULL)
		return;
	if (json_object_size(mk->fb_waiting) == 0) {
		if (mk->opt->cw_all)
			fallback_cassette_put(mk, msg_new(d, bytes, len));
		return;
	}
	if (!mk->opt->cw_all && !fallback_cassette_in_flight(d, bytes, len))
		return;
	if (mk->heldbytes + len > MOCK_CASSETTE_HELD_MAX) {
		if (mk->stats->cw_lost++ == 0)
			log_warnx("mock: more than %zu MiB said while requests "
			    "were forwarded; the cassette will not be written",
			    MOCK_CASSETTE_HELD_MAX >> 20);
		return;
	}
	if (mk->nheld == mk->aheld) {
		mk->aheld = mk->aheld == 0 ? 16 : mk->aheld * 2;
		mk->held = xreallocarray(mk->held, mk->aheld,
		    sizeof *mk->held);
	}
	mk->held[mk->nheld].m = msg_new(d, bytes, len);
	mk->held[mk->nheld++].mark = ++mk->hmark;
	mk->heldbytes += len;
}

/*
 * A forwarded exchange has ended (entry, out of fb_waiting): answered
 * (answer, as the client got it), its request, the held messages that
 * came after it and its answer go into the cassette together, so a
 * request is paired with its own answer whatever the client's ids; not
 * answered (NULL), nothing of it does.
 */
static void
fallback_cassette_end(struct mock *mk, json_t *entry, const char *answer)
{
	struct msg	*req;
	uint64_t	 mark;
	size_t		 i, k = 0;

	req = (struct msg *)(intptr_t)json_integer_value(json_object_get(entry,
	    "req"));
	json_object_del(entry, "req");
	if (req == NULL)
		return;
	if (answer == NULL) {
		msg_free(req);
		if (json_object_size(mk->fb_waiting) == 0)
			fallback_held_clear(mk);
		return;
	}
	mark = (uint64_t)json_integer_value(json_object_get(entry, "mark"));
	fallback_cassette_put(mk, req);
	for (i = 0; i < mk->nheld; i++) {
		if (mk->held[i].mark > mark) {
			mk->heldbytes -= mk->held[i].m->len;
			fallback_cassette_put(mk, mk->held[i].m);
		} else
			mk->held[k++] = mk->held[i];
	}
	mk->nheld = k;
	fallback_cassette_put(mk, msg_new(DIR_S2C, answer, strlen(answer)));
	if (json_object_size(mk->fb_waiting) == 0)
		fallback_held_clear(mk);
}

/* Pass a client message on to the fallback server. */
void
fallback_send(struct mock *mk, const char *bytes, size_t len)
{
	fallback_record(mk, DIR_C2S, bytes, len);
	xport_send(mk->fb, bytes, len, NULL);
}

/*
 * A message from the fallback: the answer to a forwarded request goes back
 * on that request's channel; anything else goes to the client unasked.
 */
/* End a request that was forwarded: the answer under the client's id. */
static void
fallback_answer(struct mock *mk, json_t *entry, json_t *answer,
    const char *fb, size_t fblen)
{
	struct ereq	*er = (struct ereq *)(intptr_t)json_integer_value(
			    json_object_get(entry, "er"));
	char		*s;

	json_object_set(answer, "id", json_object_get(entry, "id"));
	s = mock_dump(answer);
	/* The fallback's answer; not the mock's error when it gave none. */
	fallback_cassette_end(mk, entry, fb != NULL ? s : NULL);
	mock_out(mk, MOCKFAULT_REQ_END, er, s, strlen(s), fb, fblen);
	free(s);
}

/*
 * A message from the fallback: the answer to a forwarded request goes back
 * on that request's channel, under the client's own id; anything else goes
 * to the client unasked.
 */
void
fallback_message_cb(const char *bytes, size_t len, void *arg)
{
	struct mock	*mk = arg;
	struct scan	 sc;
	json_t		*entry, *answer;
	char		*idtext;
	const char	*note;

	/* With rules, the fault edge records what it passes on. */
	if (mk->mf == NULL)
		fallback_record(mk, DIR_S2C, bytes, len);
	scan_message(bytes, len, &sc);
	if ((sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR) &&
	    (idtext = scan_id_dup(bytes, &sc)) != NULL) {
		entry = json_incref(json_object_get(mk->fb_waiting, idtext));
		/* Out of the map first: ending it may take the next request. */
		json_object_del(mk->fb_waiting, idtext);
		if (entry != NULL && (answer = json_loadb(bytes, len, 0,
		    NULL)) != NULL) {
			fallback_answer(mk, entry, answer, bytes, len);
			json_decref(answer);
			mock_maybe_exit(mk);
		} else if (mk->mf != NULL)
			fallback_record(mk, DIR_S2C, bytes, len);
		if (entry == NULL)
			log_debug("mock: the fallback answered %s, which "
			    "nobody waits for", idtext);
		json_decref(entry);
		free(idtext);
		return;
	}
	if (endpoint_full(mk->ep, NULL) == 2 && mk->opt->w != NULL) {
		/* Recorded as sent, so say it did not reach the client. */
		note = "mcpreel mock: the client had not opened its event "
		    "stream and enough waited for it: this message was not "
		    "delivered";
		writer_event(mk->opt->w, mk->opt->ws, "note", note,
		    strlen(note));
	}
	fallback_cassette(mk, DIR_S2C, bytes, len);
	mock_out(mk, MOCKFAULT_SEND, NULL, bytes, len, bytes, len);
	/*
	 * A client that does not keep up with its event stream: the fallback
	 * waits (its socket or pipe fills, as it would writing to the client
	 * itself) until the stream drains or closes.
	 */
	if (endpoint_full(mk->ep, NULL) == 1)
		xport_pause(mk->fb, 1);
}

/* Forwarded requests the fallback did not answer in time get an error. */
void
fallback_sweep_cb(evutil_socket_t fd, short events, void *arg)
{
	struct mock	*mk = arg;
	struct timeval	 tv = { 1, 0 };
	const char	*k;
	json_t		*entry, *err;
	void		*tmp;
	char		*why;
	int64_t		 now = clock_mono_ns();

	json_object_foreach_safe(mk->fb_waiting, tmp, k, entry) {
		/* Once the fallback is gone, nothing it had will come. */
		if (mk->fb_why == NULL && json_integer_value(json_object_get(
		    entry, "deadline")) > now)
			continue;
		json_incref(entry);
		json_object_del(mk->fb_waiting, k);
		if (mk->fb_why != NULL)
			xasprintf(&why, "mcpreel mock: the fallback server is "
			    "gone: %s", mk->fb_why);
		else
			xasprintf(&why, "mcpreel mock: the fallback server "
			    "did not answer within %d s (the longest mock "
			    "waits for a forwarded request)",
			    MOCK_FALLBACK_TIMEOUT_MS / 1000);
		err = json_pack("{s:s, s:{s:i, s:s}}", "jsonrpc", "2.0",
		    "error", "code", -32603, "message", why);
		free(why);
		fallback_answer(mk, entry, err, NULL, 0);
		mk->stats->fb_failed++;
		json_decref(err);
		json_decref(entry);
	}
	if (json_object_size(mk->fb_waiting) > 0)
		evtimer_add(mk->fb_sweep, &tv);
	mock_maybe_exit(mk);
}

void
fallback_event_cb(const char *kind, const char *text, size_t len, void *arg)
{
	struct mock	*mk = arg;

	if (mk->opt->w != NULL)
		writer_event(mk->opt->w, mk->opt->ws, kind, text, len);
	log_debug("mock fallback %s: %.*s", kind, (int)len, text);
}

void
fallback_closed_cb(const char *why, void *arg)
{
	struct mock	*mk = arg;

	if (!mk->fb_finishing) {
		log_warnx("mock: the fallback server is gone: %s", why);
		mk->stats->fb_lost = 1;
	}
	free(mk->fb_why);
	mk->fb_why = xstrdup(why);
	if (mk->fb_finishing)
		event_base_loopbreak(mk->base);
	else if (json_object_size(mk->fb_waiting) > 0)
		event_active(mk->fb_sweep, EV_TIMEOUT, 0);
}

/*
 * Forward a missed request under an id of ours (clients may reuse ids, and
 * over HTTP there are many clients); 0 when it went, -1 when it cannot.
 */
int
fallback_forward(struct mock *mk, struct ereq *er, const json_t *msg,
    const char *bytes, size_t len)
{
	struct timeval	 tv = { 1, 0 };
	json_t		*copy, *entry;
	char		*id, *idtext, *s;

	if (mk->fb == NULL || mk->fb_why != NULL)
		return -1;
	xasprintf(&id, "mcpreel-fb-%llu", (unsigned long long)++mk->next_id);
	xasprintf(&idtext, "\"%s\"", id);
	entry = json_pack("{s:I, s:O, s:I}", "er", (json_int_t)(intptr_t)er,
	    "id", json_object_get(msg, "id"), "deadline", (json_int_t)
	    (clock_mono_ns() + (int64_t)MOCK_FALLBACK_TIMEOUT_MS * 1000000));
	if (mk->opt->cw != NULL) {
		json_object_set_new(entry, "req", json_integer((json_int_t)
		    (intptr_t)msg_new(DIR_C2S, bytes, len)));
		json_object_set_new(entry, "mark", json_integer((json_int_t)
		    mk->hmark));
	}
	json_object_set_new(mk->fb_waiting, idtext, entry);
	copy = json_deep_copy(msg);
	json_object_set_new(copy, "id", json_string(id));
	s = mock_dump(copy);
	fallback_send(mk, s, strlen(s));
	free(s);
	json_decref(copy);
	free(idtext);
	free(id);
	if (!evtimer_pending(mk->fb_sweep, NULL))
		evtimer_add(mk->fb_sweep, &tv);
	mk->stats->forwarded++;
	return 0;
}

