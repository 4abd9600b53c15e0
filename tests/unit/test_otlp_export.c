/*
 * The OTLP exporter against a scripted collector on 127.0.0.1 (a thread
 * of the test): spans sent and dropped are counted, retries follow the
 * status, and nothing waits past otlp_stop's deadline.
 */

#include <sys/socket.h>

#include <dlfcn.h>
#include <netdb.h>

#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#if defined(__SANITIZE_ADDRESS__)
/* ASan's (its header is clang's only). */
size_t	__sanitizer_get_current_allocated_bytes(void);
#else
#include <malloc.h>
#endif

#include "formats.h"

/* What the collector answers to request n: the last entry repeats. */
struct collector {
	int		 fd;
	int		 port;
	const char	*const *script;	/* a status line and fields, or
					   "hang": read, never answer */
	int		 requests;	/* answered or hung */
	int		 unanswered;	/* "unanswered" seen in bodies */
	char		 head[4096];	/* the last request's head */
	pthread_t	 thread;
};

/* getaddrinfo() calls so far (this program's own, counting). */
static int resolves;

/* Count the exporter's lookups, then look up as libc does. */
int
getaddrinfo(const char *node, const char *service,
    const struct addrinfo *hints, struct addrinfo **res)
{
	int	(*real)(const char *, const char *, const struct addrinfo *,
		    struct addrinfo **);

	__atomic_add_fetch(&resolves, 1, __ATOMIC_SEQ_CST);
	*(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo");
	return real(node, service, hints, res);
}

/* Bytes the process has allocated. */
static size_t
allocated(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return __sanitizer_get_current_allocated_bytes();
#else
	return mallinfo2().uordblks;
#endif
}

/* Export over http/json (the bodies can be searched) when set. */
static int export_json;

/* Read one request (head and Content-Length body) from c into co; -1
   at EOF. */
static int
collector_read(struct collector *co, int c)
{
	char	buf[65536], *e, *cl, *body, *p;
	size_t	len = 0, need, have, blen;
	ssize_t	r;

	for (;;) {
		buf[len] = '\0';
		if ((e = strstr(buf, "\r\n\r\n")) != NULL)
			break;
		if (len + 1 >= sizeof buf ||
		    (r = read(c, buf + len, sizeof buf - 1 - len)) <= 0)
			return -1;
		len += (size_t)r;
	}
	snprintf(co->head, sizeof co->head, "%.*s", (int)(e + 4 - buf), buf);
	cl = strcasestr(buf, "Content-Length:");
	need = cl != NULL ? strtoul(cl + 15, NULL, 10) : 0;
	body = calloc(1, need + 1);
	have = len - (size_t)(e + 4 - buf);
	blen = have < need ? have : need;
	memcpy(body, e + 4, blen);
	while (blen < need) {
		if ((r = read(c, body + blen, need - blen)) <= 0) {
			free(body);
			return -1;
		}
		blen += (size_t)r;
	}
	for (p = body; (p = strstr(p, "\"unanswered\"")) != NULL; p++)
		__atomic_add_fetch(&co->unanswered, 1, __ATOMIC_SEQ_CST);
	free(body);
	return 0;
}

/* The collector's thread: answer each request by the script. */
static void *
collector_main(void *arg)
{
	struct collector	*co = arg;
	const char		*a;
	int			 c, i, fd = co->fd;

	/* co is the test's: not read again once its connection ended (the
	   test may be over), hence fd kept here. */
	while ((c = accept(fd, NULL, NULL)) != -1) {
		while (collector_read(co, c) == 0) {
			for (i = 0; co->script[i + 1] != NULL &&
			    i < co->requests; i++)
				;
			a = co->script[i];
			__atomic_add_fetch(&co->requests, 1, __ATOMIC_SEQ_CST);
			if (strcmp(a, "hang") == 0) {
				sleep(30);
				break;
			}
			if (strncmp(a, "slow:", 5) == 0) {
				/*
				 * "slow:" then an answer: given 5 s late, so
				 * that a loaded ASan run fills the queue in
				 * time (with 2 s it once did not).
				 */
				sleep(5);
				a += 5;
			}
			if (write(c, a, strlen(a)) < 0)
				break;
		}
		close(c);
	}
	close(fd);
	return NULL;
}

/* Start a collector on a free port with script. */
static void
collector_start(struct collector *co, const char *const *script)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof sin;
	int			one = 1;

	memset(co, 0, sizeof *co);
	co->script = script;
	co->fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_neq(co->fd, -1);
	setsockopt(co->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(co->fd, (struct sockaddr *)&sin, sizeof sin), 0);
	cr_assert_eq(listen(co->fd, 8), 0);
	getsockname(co->fd, (struct sockaddr *)&sin, &len);
	co->port = ntohs(sin.sin_port);
	pthread_create(&co->thread, NULL, collector_main, co);
	pthread_detach(co->thread);
}

/* An exporter to port (timeout_ms per batch). */
static struct otlp *
export_start(int port, int timeout_ms)
{
	struct otlp_config	 c;
	struct otlp		*o;
	char			 url[64], *cause = NULL;

	unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
	unsetenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS");
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	cr_assert_eq(otlp_config_env(&c, url, &cause), 0, "%s", cause);
	c.timeout_ms = timeout_ms;
	if (export_json)
		c.protocol = OTLP_HTTP_JSON;
	o = otlp_start(&c, &cause);
	cr_assert_not_null(o, "%s", cause);
	otlp_config_clear(&c);
	return o;
}

/* Pass n tools/call requests and their answers through session s; the
   longest otlp_message call in ns. */
static int64_t
export_calls(struct otlp *o, struct otlp_sess *s, int n)
{
	struct msg	*m;
	char		 raw[256];
	int		 i, d;
	int64_t		 t0, dt, max = 0;

	for (i = 1; i <= n; i++) {
		for (d = 0; d < 2; d++) {
			if (d == 0)
				snprintf(raw, sizeof raw, "{\"jsonrpc\":\"2.0\","
				    "\"id\":%d,\"method\":\"tools/call\","
				    "\"params\":{\"name\":\"echo\"}}", i);
			else
				snprintf(raw, sizeof raw, "{\"jsonrpc\":\"2.0\","
				    "\"id\":%d,\"result\":{\"content\":[]}}", i);
			m = msg_new(d == 0 ? DIR_C2S : DIR_S2C, raw,
			    strlen(raw));
			m->ts_ns = clock_wall_ns();
			t0 = clock_mono_ns();
			otlp_message(o, s, m);
			dt = clock_mono_ns() - t0;
			if (dt > max)
				max = dt;
			msg_free(m);
		}
	}
	return max;
}

/* A session of o. */
static struct otlp_sess *
export_session(struct otlp *o)
{
	struct otlp_sess_info	si;

	memset(&si, 0, sizeof si);
	si.transport = "stdio";
	si.started_ns = clock_wall_ns();
	si.target = "test";
	return otlp_session(o, &si);
}

#define OK_200	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"

Test(otlp_export, sent_in_batches_on_one_connection, .timeout = 20)
{
	static const char *const script[] = { OK_200, NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s, *s2;
	uint64_t		 sent, dropped;

	collector_start(&co, script);
	o = export_start(co.port, 5000);
	s = export_session(o);
	s2 = export_session(o);
	export_calls(o, s, 1000);
	export_calls(o, s2, 30);
	otlp_session_end(o, s, clock_wall_ns());
	otlp_stop(o, 5000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 1030);
	cr_assert_eq(dropped, 0);
	cr_assert_eq(otlp_session_dropped(s), 0);
	/* 512 + 512 + the rest (one more when a loaded machine stalls the
	   test past the 1 s timer). */
	cr_assert_geq(__atomic_load_n(&co.requests, __ATOMIC_SEQ_CST), 3);
	cr_assert_leq(__atomic_load_n(&co.requests, __ATOMIC_SEQ_CST), 4);
	otlp_free(o);
}

Test(otlp_export, http_500_drops_at_once, .timeout = 20)
{
	static const char *const script[] = {
		"HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\nboom", NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;
	int64_t			 t0;

	collector_start(&co, script);
	o = export_start(co.port, 5000);
	s = export_session(o);
	export_calls(o, s, 10);
	t0 = clock_mono_ns();
	otlp_stop(o, 5000);
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)4000000000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 0);
	cr_assert_eq(dropped, 10);
	cr_assert_eq(otlp_session_dropped(s), 10);
	/* Not retried: one request a batch (two when the timer split). */
	cr_assert_leq(__atomic_load_n(&co.requests, __ATOMIC_SEQ_CST), 2);
	otlp_free(o);
}

Test(otlp_export, retried_after_429_and_503, .timeout = 20)
{
	static const char *const script[] = {
		"HTTP/1.1 429 Slow\r\nRetry-After: 0\r\n"
		"Transfer-Encoding: chunked\r\n\r\n4\r\nslow\r\n0\r\n\r\n",
		"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n",
		OK_200, NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;

	collector_start(&co, script);
	o = export_start(co.port, 5000);
	s = export_session(o);
	export_calls(o, s, 10);
	otlp_stop(o, 5000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 10);
	cr_assert_eq(dropped, 0);
	cr_assert_geq(__atomic_load_n(&co.requests, __ATOMIC_SEQ_CST), 3);
	otlp_free(o);
}

Test(otlp_export, closed_port_within_deadline, .timeout = 40)
{
	static const char *const script[] = { OK_200, NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;
	int64_t			 t0;
	int			 port;

	/* A port nothing listens on: one that was just closed. */
	collector_start(&co, script);
	port = co.port;
	shutdown(co.fd, SHUT_RDWR);	/* its thread closes it */
	o = export_start(port, 10000);
	s = export_session(o);
	export_calls(o, s, 5);
	t0 = clock_mono_ns();
	otlp_stop(o, 1500);
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)10000000000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 0);
	cr_assert_eq(dropped, 5);
	cr_assert_eq(otlp_session_dropped(s), 5);
	otlp_free(o);
}

Test(otlp_export, hung_collector_fills_the_queue, .timeout = 40)
{
	static const char *const script[] = { "hang", NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;
	int64_t			 t0;

	collector_start(&co, script);
	o = export_start(co.port, 10000);
	s = export_session(o);
	/* Past one batch, and past the queue while the first one hangs:
	   never waiting for room, and dropped before the stop.  The
	   collector hangs for ever, so a call that waited for room, or a
	   stop that waited for the collector, would take the test's whole
	   timeout; the bounds below only tell that from a busy machine
	   (an ASan build on two loaded cores took over 2 s to stop). */
	cr_assert_lt(export_calls(o, s, OTLP_QUEUE_MAX), (int64_t)5000000000);
	cr_assert_lt(export_calls(o, s, 512), (int64_t)5000000000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_gt(dropped, 0);
	t0 = clock_mono_ns();
	otlp_stop(o, 1000);
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)10000000000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 0);
	cr_assert_eq(dropped, OTLP_QUEUE_MAX + 512);
	cr_assert_eq(otlp_session_dropped(s), dropped);
	otlp_free(o);
}

/* Pass one message of session s (raw, direction d) to o. */
static void
export_raw(struct otlp *o, struct otlp_sess *s, enum dir d, const char *raw)
{
	struct msg	*m = msg_new(d, raw, strlen(raw));

	m->ts_ns = clock_wall_ns();
	otlp_message(o, s, m);
	msg_free(m);
}

/* Requests in the builder whose answers the full queue dropped. */
static void
export_dropped_answers(int lots)
{
	static const char *const script[] = {
		"slow:" OK_200, OK_200, NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;
	char			 raw[128];
	int			 i, nreq = lots ? 200 : 50;

	export_json = 1;
	collector_start(&co, script);
	o = export_start(co.port, 10000);
	export_json = 0;
	s = export_session(o);
	/* 10 answered: a batch sent after 1 s (and up to a tick, 0.2 s),
	   which the collector holds 5 s while the queue is empty. */
	export_calls(o, s, 10);
	usleep(1600000);
	/* Requests queued behind it, then the queue filled with pings. */
	for (i = 1; i <= nreq; i++) {
		snprintf(raw, sizeof raw, "{\"jsonrpc\":\"2.0\",\"id\":"
		    "\"r%d\",\"method\":\"tools/list\"}", i);
		export_raw(o, s, DIR_C2S, raw);
	}
	for (i = 0; i < OTLP_QUEUE_MAX - nreq; i++)
		export_raw(o, s, DIR_S2C, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/message\",\"params\":{}}");
	/* Their answers: the queue is full, so they are dropped. */
	for (i = 1; i <= nreq; i++) {
		snprintf(raw, sizeof raw, "{\"jsonrpc\":\"2.0\",\"id\":"
		    "\"r%d\",\"result\":{\"tools\":[]}}", i);
		export_raw(o, s, DIR_S2C, raw);
	}
	otlp_session_end(o, s, clock_wall_ns());
	/* OTLP_QUEUE_MAX spans to send (64 batches, slow under ASan). */
	otlp_stop(o, 30000);
	otlp_totals(o, &sent, &dropped);
	/* Each request is one span, counted dropped, never an error. */
	cr_assert_eq(__atomic_load_n(&co.unanswered, __ATOMIC_SEQ_CST), 0);
	cr_assert_eq(dropped, (uint64_t)nreq, "%llu sent %llu", (unsigned long long)dropped, (unsigned long long)sent);
	cr_assert_eq(sent, 10 + OTLP_QUEUE_MAX - nreq);
	cr_assert_eq(otlp_session_dropped(s), (uint64_t)nreq);
	otlp_free(o);
}

Test(otlp_export, dropped_answers_are_not_unanswered, .timeout = 60)
{
	export_dropped_answers(0);
}

Test(otlp_export, dropped_answers_past_the_set_make_it_lossy,
    .timeout = 60)
{
	export_dropped_answers(1);
}

Test(otlp_export, ended_sessions_keep_little, .timeout = 30)
{
	static const char *const script[] = { OK_200, NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;
	size_t			 before, after;
	int			 i, n = 2000;

	collector_start(&co, script);
	o = export_start(co.port, 5000);
	before = allocated();
	for (i = 0; i < n; i++) {
		s = export_session(o);
		export_calls(o, s, 1);
		otlp_session_end(o, s, clock_wall_ns());
	}
	otlp_stop(o, 5000);
	after = allocated();
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, (uint64_t)n);
	/* The small struct for otlp_session_dropped, not the builder. */
	cr_assert_lt((after - before) / (size_t)n, 400, "%zu bytes a session",
	    (after - before) / (size_t)n);
	otlp_free(o);
}

/* A collector answering 429 with retry_after: POSTs within the timeout. */
static int
export_429(const char *const *script, int timeout_ms)
{
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;

	collector_start(&co, script);
	o = export_start(co.port, timeout_ms);
	s = export_session(o);
	export_calls(o, s, 1);
	otlp_stop(o, 10000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 0);
	cr_assert_eq(dropped, 1);
	otlp_free(o);
	return __atomic_load_n(&co.requests, __ATOMIC_SEQ_CST);
}

Test(otlp_export, retry_after_0_backs_off, .timeout = 20)
{
	static const char *const script[] = {
		"HTTP/1.1 429 Slow\r\nRetry-After: 0\r\n"
		"Content-Length: 0\r\n\r\n", NULL };

	/* at 0, ~1 s (0.8-1.2), ~3 s (2.4-3.6): past 2.2 s */
	cr_assert_eq(export_429(script, 2200), 2);
}

Test(otlp_export, retry_after_2_is_waited, .timeout = 20)
{
	static const char *const script[] = {
		"HTTP/1.1 503 Busy\r\nRetry-After: 2\r\n"
		"Content-Length: 0\r\n\r\n", NULL };

	/* at 0, 2 s (not ~1 s), then 4 s (2 doubled, ±20%: over 3.2 s) */
	cr_assert_eq(export_429(script, 3000), 2);
	cr_assert_eq(export_429(script, 1900), 1);
}

Test(otlp_export, a_backlog_goes_at_once, .timeout = 20)
{
	static const char *const script[] = { OK_200, NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;
	char			 raw[128];
	int			 i;

	collector_start(&co, script);
	o = export_start(co.port, 5000);
	s = export_session(o);
	for (i = 1; i <= 3000; i++) {
		snprintf(raw, sizeof raw, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\"}", i);
		export_raw(o, s, DIR_C2S, raw);
	}
	/* 3000 unanswered spans at once: 6 POSTs now, not one a second */
	otlp_session_end(o, s, clock_wall_ns());
	usleep(1500000);
	cr_assert_eq(__atomic_load_n(&co.requests, __ATOMIC_SEQ_CST), 6);
	otlp_stop(o, 5000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 3000);
	otlp_free(o);
}

/* n calls through a collector with script; sent and dropped. */
static void
export_through(const char *const *script, int json, int timeout_ms, int n,
    uint64_t *sent, uint64_t *dropped, int *requests)
{
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;

	export_json = json;
	collector_start(&co, script);
	o = export_start(co.port, timeout_ms);
	export_json = 0;
	s = export_session(o);
	export_calls(o, s, n);
	otlp_stop(o, 5000);
	otlp_totals(o, sent, dropped);
	cr_assert_eq(otlp_session_dropped(s), *dropped);
	*requests = __atomic_load_n(&co.requests, __ATOMIC_SEQ_CST);
	otlp_free(o);
}

Test(otlp_export, a_2xx_with_a_bad_body_is_sent, .timeout = 20)
{
	static const char *const script[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", NULL };
	uint64_t	sent, dropped;
	int		requests;

	export_through(script, 0, 1500, 5, &sent, &dropped, &requests);
	cr_assert_eq(sent, 5);
	cr_assert_eq(dropped, 0);
	cr_assert_eq(requests, 1);
}

Test(otlp_export, partial_success_rejected_are_dropped, .timeout = 20)
{
	static const char *const pb[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n"
		"Content-Length: 4\r\n\r\n\x0a\x02\x08\x03", NULL };
	static const char *const js[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		"Content-Length: 40\r\n\r\n"
		"{\"partialSuccess\":{\"rejectedSpans\":\"3\"}}", NULL };
	static const char *const none[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		"Content-Length: 21\r\n\r\n{\"partialSuccess\":{}}", NULL };
	uint64_t	sent, dropped;
	int		requests;

	export_through(pb, 0, 5000, 10, &sent, &dropped, &requests);
	cr_assert_eq(sent, 7, "%d %d", (int)sent, (int)dropped);
	cr_assert_eq(dropped, 3);
	export_through(js, 1, 5000, 10, &sent, &dropped, &requests);
	cr_assert_eq(sent, 7);
	cr_assert_eq(dropped, 3);
	export_through(none, 1, 5000, 10, &sent, &dropped, &requests);
	cr_assert_eq(sent, 10);
	cr_assert_eq(dropped, 0);
}

/* Run n calls through a collector with script (port: none listening
   when 0 is given for script) and return what stderr said. */
static char *
export_said(const char *const *script, int n, int *requests)
{
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	char			 path[] = "/tmp/otlp-said-XXXXXX", *out;
	int			 fd, saved, port;
	ssize_t			 r;

	collector_start(&co, script != NULL ? script :
	    (const char *const []){ OK_200, NULL });
	port = co.port;
	if (script == NULL) {
		shutdown(co.fd, SHUT_RDWR);	/* its thread closes it */
	}
	fd = mkstemp(path);
	cr_assert_neq(fd, -1);
	unlink(path);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	o = export_start(port, 1500);
	s = export_session(o);
	export_calls(o, s, n);
	otlp_stop(o, 3000);
	otlp_free(o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	out = calloc(1, 8192);
	r = pread(fd, out, 8191, 0);
	cr_assert_geq(r, 0);
	close(fd);
	*requests = __atomic_load_n(&co.requests, __ATOMIC_SEQ_CST);
	return out;
}

Test(otlp_export, failures_say_what_to_do, .timeout = 20)
{
	static const char *const s401[] = {
		"HTTP/1.1 401 No\r\nContent-Length: 0\r\n\r\n", NULL };
	static const char *const s404[] = {
		"HTTP/1.1 404 No\r\nContent-Length: 0\r\n\r\n", NULL };
	char	*said;
	int	 requests;

	said = export_said(s401, 3, &requests);
	cr_assert_not_null(strstr(said, "HTTP 401 (check the headers: "
	    "--otlp-header or OTEL_EXPORTER_OTLP_HEADERS)"), "%s", said);
	cr_assert_eq(requests, 1);
	free(said);
	said = export_said(s404, 3, &requests);
	cr_assert_not_null(strstr(said, "/v1/traces"), "%s", said);
	free(said);
	said = export_said(NULL, 3, &requests);
	cr_assert_not_null(strstr(said, "is a collector listening there?"),
	    "%s", said);
	free(said);
}

/* What otlp_start says of url with (or without) a header. */
static char *
export_start_said(const char *url, int header)
{
	struct otlp_config	 c;
	struct otlp		*o;
	char			 path[] = "/tmp/otlp-said-XXXXXX", *out, *cause;
	int			 fd, saved;
	ssize_t			 r;

	unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
	unsetenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS");
	cr_assert_eq(otlp_config_env(&c, url, &cause), 0);
	if (header)
		cr_assert_eq(otlp_config_header(&c, "X-Key: k", &cause), 0);
	fd = mkstemp(path);
	unlink(path);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	o = otlp_start(&c, &cause);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	cr_assert_not_null(o);
	otlp_free(o);
	otlp_config_clear(&c);
	out = calloc(1, 4096);
	r = pread(fd, out, 4095, 0);
	cr_assert_geq(r, 0);
	close(fd);
	return out;
}

Test(otlp_export, headers_in_clear_text_are_warned_once, .timeout = 10)
{
	char	*said;

	said = export_start_said("http://127.0.0.1:9", 1);
	cr_assert_str_eq(said, "");
	free(said);
	said = export_start_said("https://192.0.2.1:9", 1);
	cr_assert_str_eq(said, "");
	free(said);
	said = export_start_said("http://192.0.2.1:9", 0);
	cr_assert_str_eq(said, "");
	free(said);
	said = export_start_said("http://192.0.2.1:9", 1);
	cr_assert_not_null(strstr(said, "in clear text"), "%s", said);
	cr_assert_null(strstr(said, "X-Key"));
	free(said);
	said = export_start_said("http://192.0.2.2:9", 1);
	cr_assert_str_eq(said, "");	/* once */
	free(said);
}

Test(otlp_export, a_query_alone_gets_a_path, .timeout = 10)
{
	static const char *const script[] = { OK_200, NULL };
	struct collector	 co;
	struct otlp_config	 c;
	struct otlp		*o;
	struct otlp_sess	*s;
	char			 url[64], *cause = NULL;
	uint64_t		 sent, dropped;

	collector_start(&co, script);
	snprintf(url, sizeof url, "http://127.0.0.1:%d?k=v", co.port);
	setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url, 1);
	cr_assert_eq(otlp_config_env(&c, "env", &cause), 0, "%s", cause);
	unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
	o = otlp_start(&c, &cause);
	otlp_config_clear(&c);
	s = export_session(o);
	export_calls(o, s, 2);
	otlp_stop(o, 3000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 2);
	cr_assert_eq(strncmp(co.head, "POST /?k=v HTTP/1.1\r\n", 21), 0,
	    "%s", co.head);
	otlp_free(o);
}

Test(otlp_export, resolved_once, .timeout = 20)
{
	static const char *const script[] = {
		"HTTP/1.1 200 OK\r\nConnection: close\r\n"
		"Content-Length: 0\r\n\r\n", NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;
	int			 port;

	collector_start(&co, script);
	o = export_start(co.port, 5000);
	s = export_session(o);
	/* 3 batches, each on a new connection: one lookup */
	export_calls(o, s, 1200);
	otlp_stop(o, 5000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 1200);
	cr_assert_eq(__atomic_load_n(&co.requests, __ATOMIC_SEQ_CST), 3);
	cr_assert_eq(__atomic_load_n(&resolves, __ATOMIC_SEQ_CST), 1);
	otlp_free(o);

	/* Every address refused: looked up again at each retry. */
	collector_start(&co, script);
	port = co.port;
	shutdown(co.fd, SHUT_RDWR);	/* its thread closes it */
	o = export_start(port, 2500);
	s = export_session(o);
	export_calls(o, s, 1);
	otlp_stop(o, 5000);
	/* at 0 and ~1 s (then ~3 s is past 2.5 s) */
	cr_assert_eq(__atomic_load_n(&resolves, __ATOMIC_SEQ_CST), 3);
	otlp_free(o);
}

Test(otlp_export, configured_headers_reach_the_collector, .timeout = 10)
{
	static const char *const script[] = { OK_200, NULL };
	struct collector	 co;
	struct otlp_config	 c;
	struct otlp		*o;
	struct otlp_sess	*s;
	char			 url[64], *cause = NULL;
	uint64_t		 sent, dropped;

	collector_start(&co, script);
	snprintf(url, sizeof url, "http://127.0.0.1:%d", co.port);
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=k%201", 1);
	cr_assert_eq(otlp_config_env(&c, url, &cause), 0, "%s", cause);
	unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
	cr_assert_eq(otlp_config_header(&c, "X-Tenant: t", &cause), 0);
	o = otlp_start(&c, &cause);
	otlp_config_clear(&c);
	s = export_session(o);
	export_calls(o, s, 1);
	otlp_stop(o, 3000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 1);
	cr_assert_not_null(strstr(co.head, "\r\napi-key: k 1\r\n"), "%s",
	    co.head);
	cr_assert_not_null(strstr(co.head, "\r\nX-Tenant: t\r\n"));
	cr_assert_not_null(strstr(co.head,
	    "\r\nContent-Type: application/x-protobuf\r\n"));
	otlp_free(o);
}

/* Whether the collector got a request within ms. */
static int
export_request_within(struct collector *co, int ms)
{
	int	i;

	for (i = 0; i < ms / 10; i++) {
		if (__atomic_load_n(&co->requests, __ATOMIC_SEQ_CST) > 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

Test(otlp_export, one_message_is_sent_within_a_second, .timeout = 20)
{
	static const char *const script[] = { OK_200, NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;
	int64_t			 t0;

	collector_start(&co, script);
	o = export_start(co.port, 5000);
	s = export_session(o);
	/* The exporter is idle (nothing queued for a tick): the producer
	   wakes it for the message, no session end, no stop. */
	usleep(500000);
	t0 = clock_mono_ns();
	export_raw(o, s, DIR_S2C, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/message\",\"params\":{}}");
	cr_assert(export_request_within(&co, 3000));
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)2500000000);
	/* A call while the exporter ticks: its span a batch delay later. */
	usleep(100000);
	t0 = clock_mono_ns();
	export_calls(o, s, 1);
	while (__atomic_load_n(&co.requests, __ATOMIC_SEQ_CST) < 2 &&
	    clock_mono_ns() - t0 < (int64_t)3000000000)
		usleep(10000);
	cr_assert_eq(__atomic_load_n(&co.requests, __ATOMIC_SEQ_CST), 2);
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)2900000000);
	otlp_stop(o, 5000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 2);
	cr_assert_eq(dropped, 0);
	otlp_free(o);
}

/*
 * With the exporter held by a hung collector, n notifications of len
 * bytes each; the spans dropped before the stop.
 */
static uint64_t
export_big_held(size_t len, int n)
{
	static const char *const script[] = { "hang", NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped, before;
	char			*raw;
	int			 i;

	collector_start(&co, script);
	o = export_start(co.port, 10000);
	s = export_session(o);
	export_calls(o, s, 1);
	cr_assert(export_request_within(&co, 3000));
	raw = malloc(len + 1);
	memset(raw, 'x', len);
	memcpy(raw, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
	    "\"params\":{\"data\":\"", 68);
	memcpy(raw + len - 3, "\"}}", 3);
	raw[len] = '\0';
	for (i = 0; i < n; i++)
		export_raw(o, s, DIR_S2C, raw);
	free(raw);
	otlp_totals(o, &sent, &dropped);
	before = dropped;
	otlp_stop(o, 500);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 0);
	cr_assert_eq(dropped, (uint64_t)n + 1);
	otlp_free(o);
	return before;
}

Test(otlp_export, copies_count_in_the_byte_bound, .timeout = 60)
{
	size_t		len = OTLP_COPY_MAX;
	uint64_t	d;

	/* Each one queued as a copy of its 4 KiB: under 4096 fit in
	   OTLP_QUEUE_BYTES, the rest of 5000 are dropped at once. */
	d = export_big_held(len, 5000);
	cr_assert_geq(d, 5000 - OTLP_QUEUE_BYTES / len, "%llu",
	    (unsigned long long)d);
	cr_assert_leq(d, 5000 - OTLP_QUEUE_BYTES / (len + 1024), "%llu",
	    (unsigned long long)d);
	/* Over OTLP_COPY_MAX: made into facts at once, with no copy (and
	   no payload): all 5000 fit. */
	d = export_big_held(2 * OTLP_COPY_MAX, 5000);
	cr_assert_eq(d, 0, "%llu", (unsigned long long)d);
}

Test(otlp_export, items_sent_leave_the_queue, .timeout = 20)
{
	static const char *const script[] = { "hang", NULL };
	struct collector	 co;
	struct otlp		*o;
	struct otlp_sess	*s;
	uint64_t		 sent, dropped;

	collector_start(&co, script);
	o = export_start(co.port, 10000);
	s = export_session(o);
	/* One full batch: the last item makes its 512th span, so the
	   exporter took every item before it sends (and hangs). */
	export_calls(o, s, 512);
	cr_assert(export_request_within(&co, 3000));
	/* Those items are done: the whole queue is free again. */
	export_calls(o, s, OTLP_QUEUE_MAX / 2);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(dropped, 0, "%llu", (unsigned long long)dropped);
	export_calls(o, s, 1);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(dropped, 1, "%llu", (unsigned long long)dropped);
	otlp_stop(o, 500);
	otlp_free(o);
}
