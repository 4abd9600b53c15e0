/*
 * http_load: the client side of the HTTP benchmarks.  It POSTs JSON-RPC
 * requests to URL (http_echo, or mcpreel or mitmdump in front of it) on
 * keep-alive connections and prints one line of key=value results:
 *
 *   latency     one connection, one request at a time: p50, p99, mean
 *   throughput  --conns connections in parallel, each one request at a
 *               time, N in all: messages per second, both directions
 *
 * Both also print cpu_s, the CPU time the client itself used, so the
 * harness can say what each part of a run costs.  Every answer is checked
 * (status 200, the id, the length), so a proxy that drops or mangles one
 * fails the run.  Answers may come with Content-Length or chunked, as
 * application/json or as a text/event-stream of one event whose data is
 * the answer (http_echo --answer sse).
 */

#include <netdb.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"

/* Defaults of the two scenarios. */
#define HLOAD_LATENCY_COUNT	5000
#define HLOAD_THROUGHPUT_COUNT	100000
#define HLOAD_SIZE		200
#define HLOAD_CONNS		4
/* Round trips before the latency count starts. */
#define HLOAD_WARMUP		500
/* The whole run's limit. */
#define HLOAD_TIMEOUT		120
/* A request's head: the fixed lines and struct htarget's fields fit. */
#define HLOAD_REQ_HEAD_MAX	2048

/* Where to send and what: shared by the connections, read only. */
struct hload {
	struct htarget	 t;
	size_t		 size;
};

static __dead void	usage(void);
static void		hclient_header_cb(void *, const char *, const char *);
static size_t		hclient_sse_data(struct loadconn *);
static void		hclient_round_trip_cb(struct loadconn *, uint64_t,
			    int64_t *);

/* struct loadconn's flag here: the answer is an event stream. */
static const struct loadrun_ops hclient_ops = { hclient_round_trip_cb, 0 };

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr,
	    "usage: http_load [--scenario latency|throughput] [--count N] "
	    "[--size BYTES]\n"
	    "                 [--conns N] [--warmup N] [--timeout SEC] URL\n"
	    "POST JSON-RPC requests to URL (http://HOST:PORT/PATH) and print "
	    "one line of\nkey=value results.  Defaults: latency %d requests on "
	    "one connection,\nthroughput %d requests over %d connections, %d "
	    "bytes each.\n", HLOAD_LATENCY_COUNT, HLOAD_THROUGHPUT_COUNT,
	    HLOAD_CONNS, HLOAD_SIZE);
	exit(2);
}

/* Note an answer framed as an event stream. */
static void
hclient_header_cb(void *arg, const char *name, const char *v)
{
	struct loadconn	*c = arg;

	if (strcasecmp(name, "Content-Type") == 0 &&
	    strncasecmp(v, "text/event-stream", 17) == 0)
		c->flag = 1;
}

/*
 * An event-stream body to the data of its one event (a single data line,
 * as http_echo and the MCP SDKs send it), in place; its length.
 */
static size_t
hclient_sse_data(struct loadconn *c)
{
	char	*body = c->hc.body, *d, *nl;
	size_t	 blen = c->hc.blen;

	if ((d = memmem(body, blen, "data: ", 6)) == NULL)
		util_fatalx("an event-stream answer with no data: %.80s",
		    blen > 0 ? body : "(empty body)");
	d += 6;
	if ((nl = memchr(d, '\n', blen - (size_t)(d - body))) == NULL)
		util_fatalx("an event-stream answer not ended by a newline");
	memmove(body, d, (size_t)(nl - d));
	body[nl - d] = '\0';
	return (size_t)(nl - d);
}

/* Send request id and read and check its answer. */
static void
hclient_round_trip_cb(struct loadconn *c, uint64_t id, int64_t *head_ns)
{
	const struct hload	*l = c->arg;
	const struct htarget	*t = &l->t;
	size_t			 blen, reqlen, off, idlen;
	char			 num[32], *req;
	int			 hl, nl;

	reqlen = util_request_len(id, l->size);	/* with a newline */
	req = loadrun_req(c, HLOAD_REQ_HEAD_MAX + reqlen);
	hl = snprintf(req, HLOAD_REQ_HEAD_MAX, "POST %s HTTP/1.1\r\n"
	    "Host: %s:%s\r\nContent-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "Content-Length: %zu\r\n\r\n", t->path, t->host, t->port,
	    reqlen - 1);
	if (hl < 0 || hl >= HLOAD_REQ_HEAD_MAX)
		util_fatalx("a request head over %d bytes", HLOAD_REQ_HEAD_MAX);
	util_request_fill(req + hl, id, l->size);
	hlink_write(&c->hc, req, (size_t)hl + reqlen - 1);

	c->flag = 0;
	hlink_response(&c->hc, hclient_header_cb, c, head_ns);
	nl = snprintf(num, sizeof num, "%llu", (unsigned long long)id);
	if (c->hc.status != 200)
		util_fatalx("answer %s: status %d, expected 200: %.200s", num,
		    c->hc.status, c->hc.body);
	blen = c->flag ? hclient_sse_data(c) : c->hc.blen;
	if (util_find_id(c->hc.body, blen, &off, &idlen) != 0 ||
	    idlen != (size_t)nl || memcmp(c->hc.body + off, num, idlen) != 0)
		util_fatalx("the answer to request %s has another id or none: "
		    "%.80s", num, blen > 0 ? c->hc.body : "(empty body)");
	if (blen != reqlen - 1)
		util_fatalx("the answer to request %s is %zu bytes, expected %zu",
		    num, blen, reqlen - 1);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		LOADRUN_LONGOPTS,
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct loadrun	 r;
	struct hload	 l;
	int		 ch;

	util_setprogname(argv[0]);
	loadrun_init(&r, HLOAD_SIZE, HLOAD_CONNS, HLOAD_WARMUP, HLOAD_TIMEOUT);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (loadrun_option(&r, ch, optarg) != 0)
			usage();
	}
	if (loadrun_finish(&r, argc, argv, HLOAD_LATENCY_COUNT,
	    HLOAD_THROUGHPUT_COUNT, "HTTP") != 0)
		usage();
	memset(&l, 0, sizeof l);
	l.size = r.size;
	hlink_target(&l.t, r.url);
	loadrun_run(&r, &hclient_ops, &l.t, &l);

	if (r.sc == LOADRUN_LATENCY)
		printf("scenario=http_latency count=%zu size=%zu warmup=%zu "
		    "sent=%llu received=%llu p50_us=%.1f p99_us=%.1f "
		    "mean_us=%.1f max_us=%.1f cpu_s=%.3f status=0\n", r.count,
		    r.size, r.warmup, (unsigned long long)r.sent,
		    (unsigned long long)r.received, r.st.p50_us, r.st.p99_us,
		    r.st.mean_us, r.st.max_us, r.cpu_s);
	else
		printf("scenario=http_throughput count=%zu size=%zu conns=%zu "
		    "sent=%llu received=%llu elapsed_s=%.3f msgs_per_s=%.0f "
		    "cpu_s=%.3f status=0\n", r.count, r.size, r.conns,
		    (unsigned long long)r.sent, (unsigned long long)r.received,
		    (double)r.elapsed_ns / 1e9, loadrun_msgs_per_s(&r),
		    r.cpu_s);
	fflush(stdout);
	freeaddrinfo(l.t.ai);
	return 0;
}
