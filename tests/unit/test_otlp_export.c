/*
 * The OTLP exporter against a scripted collector on 127.0.0.1 (a thread
 * of the test): spans sent and dropped are counted, retries follow the
 * status, and nothing waits past otlp_stop's deadline.
 */

#include <sys/socket.h>

#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "formats.h"

/* What the collector answers to request n: the last entry repeats. */
struct collector {
	int		 fd;
	int		 port;
	const char	*const *script;	/* a status line and fields, or
					   "hang": read, never answer */
	int		 requests;	/* answered or hung */
	pthread_t	 thread;
};

/* Read one request (head and Content-Length body) from c; -1 at EOF. */
static int
collector_read(int c)
{
	char	buf[65536], *e, *cl;
	size_t	len = 0, need;
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
	cl = strcasestr(buf, "Content-Length:");
	need = cl != NULL ? strtoul(cl + 15, NULL, 10) : 0;
	need -= len - (size_t)(e + 4 - buf) < need ?
	    len - (size_t)(e + 4 - buf) : need;
	while (need > 0) {
		if ((r = read(c, buf, need < sizeof buf ? need :
		    sizeof buf)) <= 0)
			return -1;
		need -= (size_t)r;
	}
	return 0;
}

/* The collector's thread: answer each request by the script. */
static void *
collector_main(void *arg)
{
	struct collector	*co = arg;
	const char		*a;
	int			 c, i;

	while ((c = accept(co->fd, NULL, NULL)) != -1) {
		while (collector_read(c) == 0) {
			for (i = 0; co->script[i + 1] != NULL &&
			    i < co->requests; i++)
				;
			a = co->script[i];
			__atomic_add_fetch(&co->requests, 1, __ATOMIC_SEQ_CST);
			if (strcmp(a, "hang") == 0) {
				sleep(30);
				break;
			}
			if (write(c, a, strlen(a)) < 0)
				break;
		}
		close(c);
	}
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
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)1000000000);
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

Test(otlp_export, closed_port_within_deadline, .timeout = 20)
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
	shutdown(co.fd, SHUT_RDWR);
	close(co.fd);
	o = export_start(port, 10000);
	s = export_session(o);
	export_calls(o, s, 5);
	t0 = clock_mono_ns();
	otlp_stop(o, 1500);
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)2500000000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 0);
	cr_assert_eq(dropped, 5);
	cr_assert_eq(otlp_session_dropped(s), 5);
	otlp_free(o);
}

Test(otlp_export, hung_collector_fills_the_queue, .timeout = 20)
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
	/* Past one batch, and past the queue while the first one hangs. */
	export_calls(o, s, OTLP_QUEUE_MAX);
	export_calls(o, s, 512);
	t0 = clock_mono_ns();
	otlp_stop(o, 1000);
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)2000000000);
	otlp_totals(o, &sent, &dropped);
	cr_assert_eq(sent, 0);
	cr_assert_eq(dropped, OTLP_QUEUE_MAX + 512);
	cr_assert_eq(otlp_session_dropped(s), dropped);
	otlp_free(o);
}
