/*
 * mcp_load: an MCP client over Streamable HTTP for the peers comparison
 * (bench/scen_peers.sh).  Where http_load POSTs bare JSON-RPC to an echo,
 * this one does what an SDK client does first: it POSTs initialize, keeps
 * the Mcp-Session-Id the server gives, sends notifications/initialized,
 * and then sends its requests with the session id and the negotiated
 * MCP-Protocol-Version.  Answers may be JSON or an SSE stream (what the
 * SDK servers send by default), framed by Content-Length or chunked.
 *
 *   latency     one connection, one request at a time: p50, p99 and mean
 *               to the whole answer, and p50, p99 to its head
 *   throughput  --conns connections sharing the session, each one
 *               request at a time, N in all: messages per second
 *
 * The request is ping, or tools/call of the tool "echo" with a message of
 * --size bytes (an SDK proxy answers ping itself; echo goes through).
 * Every answer is checked: status 200, the id, and for echo the message.
 */

#include <netdb.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"

/* Defaults: the count of issue 22's real pair, and http_load's size. */
#define MLOAD_COUNT		350
#define MLOAD_SIZE		200
#define MLOAD_CONNS		4
/* Round trips before the latency count starts. */
#define MLOAD_WARMUP		50
/* The whole run's limit. */
#define MLOAD_TIMEOUT		120
/* The longest session id or protocol version we keep. */
#define MLOAD_HDR_MAX		256
/*
 * A request's head: the fixed lines, the path, host and port of struct
 * htarget and the two MLOAD_HDR_MAX values above fit in half of it.
 */
#define MLOAD_HEAD_MAX		4096
/* The version asked for; the server's answer is what is sent after. */
#define MLOAD_VERSION		"2025-06-18"

/*
 * Where to send, and the session every connection shares: written by the
 * handshake alone, before the connections' threads start, and only read
 * by them (a thread writing it while another copies it into a request
 * sent that request without its session id).
 */
struct mtarget {
	struct htarget	 h;
	int		 echo;		/* tools/call echo, else ping */
	size_t		 size;
	char		 session[MLOAD_HDR_MAX];
	char		 version[MLOAD_HDR_MAX];
};

static __dead void	usage(void);
static void		mconn_header_cb(void *, const char *, const char *);
static void		mconn_post(struct loadconn *, const char *, size_t);
static const char	*mconn_message(struct loadconn *, uint64_t);
static void		mconn_handshake(struct loadconn *);
static void		mconn_round_trip_cb(struct loadconn *, uint64_t,
			    int64_t *);

/* Each connection's arg is the struct mtarget. */
static const struct loadrun_ops mconn_ops = { mconn_round_trip_cb, 1 };

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr,
	    "usage: mcp_load [--scenario latency|throughput] [--method "
	    "ping|echo] [--count N]\n"
	    "                [--size BYTES] [--conns N] [--warmup N] "
	    "[--timeout SEC] URL\n"
	    "Initialize an MCP session over Streamable HTTP at URL, send N "
	    "requests and\nprint one line of key=value results.  Defaults: "
	    "ping, %d requests, %d\nconnections for throughput, echo "
	    "messages of %d bytes.\n", MLOAD_COUNT, MLOAD_CONNS, MLOAD_SIZE);
	exit(2);
}

/* Keep the session id the server sent to initialize. */
static void
mconn_header_cb(void *arg, const char *name, const char *v)
{
	struct mtarget	*t = arg;

	if (strcasecmp(name, "Mcp-Session-Id") == 0 && strlen(v) <
	    MLOAD_HDR_MAX)
		snprintf(t->session, sizeof t->session, "%s", v);
}

/* POST a JSON-RPC message of len bytes with the session's headers. */
static void
mconn_post(struct loadconn *c, const char *msg, size_t len)
{
	const struct mtarget	*t = c->arg;
	char			*req;
	int			 hl;

	req = loadrun_req(c, MLOAD_HEAD_MAX + len);
	hl = snprintf(req, MLOAD_HEAD_MAX, "POST %s HTTP/1.1\r\nHost: %s:%s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n%s%s%s%s%s%s"
	    "Content-Length: %zu\r\n\r\n", t->h.path, t->h.host, t->h.port,
	    t->session[0] ? "Mcp-Session-Id: " : "", t->session,
	    t->session[0] ? "\r\n" : "",
	    t->version[0] ? "MCP-Protocol-Version: " : "", t->version,
	    t->version[0] ? "\r\n" : "", len);
	if (hl < 0 || hl >= MLOAD_HEAD_MAX)
		util_fatalx("a request head over %d bytes", MLOAD_HEAD_MAX);
	memcpy(req + hl, msg, len);
	hlink_write(&c->hc, req, (size_t)hl + len);
}

/*
 * The JSON-RPC message in the body: the body itself, or the data of the
 * first SSE event that has one (servers may send a priming event first).
 */
static const char *
mconn_message(struct loadconn *c, uint64_t id)
{
	const char	*p = c->hc.body;

	if (*p == '{')
		return p;
	while ((p = strstr(p, "data:")) != NULL) {
		p += 5;
		while (*p == ' ')
			p++;
		if (*p == '{')
			return p;
	}
	util_fatalx("the answer to request %llu has no JSON-RPC message: "
	    "%.200s", (unsigned long long)id, c->hc.body);
}

/* Initialize the session on this connection, as an SDK client does. */
static void
mconn_handshake(struct loadconn *c)
{
	struct mtarget	*t = c->arg;
	static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"" MLOAD_VERSION
	    "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"mcp_load\","
	    "\"version\":\"1.0.0\"}}}";
	static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}";
	const char	*m, *v, *e;

	mconn_post(c, init, sizeof init - 1);
	hlink_response(&c->hc, mconn_header_cb, t, NULL);
	if (c->hc.status != 200)
		util_fatalx("initialize: status %d: %.200s", c->hc.status,
		    c->hc.body);
	m = mconn_message(c, 0);
	if ((v = strstr(m, "\"protocolVersion\":\"")) == NULL)
		util_fatalx("initialize: no protocolVersion: %.200s", m);
	v += sizeof "\"protocolVersion\":\"" - 1;
	if ((e = strchr(v, '"')) == NULL || e - v >= MLOAD_HDR_MAX)
		util_fatalx("initialize: a bad protocolVersion: %.200s", m);
	snprintf(t->version, MLOAD_HDR_MAX, "%.*s", (int)(e - v), v);
	mconn_post(c, note, sizeof note - 1);
	hlink_response(&c->hc, mconn_header_cb, t, NULL);
	if (c->hc.status != 202 && c->hc.status != 200 && c->hc.status != 204)
		util_fatalx("notifications/initialized: status %d: %.200s",
		    c->hc.status, c->hc.body);
}

/* Send request id and read and check its answer; its head time too. */
static void
mconn_round_trip_cb(struct loadconn *c, uint64_t id, int64_t *head_ns)
{
	const struct mtarget	*t = c->arg;
	static const char	 rhead[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	char			*msg, num[32];
	const char		*m;
	size_t			 len, off, idlen, pad = 0;
	int			 nl;

	nl = snprintf(num, sizeof num, "%llu", (unsigned long long)id);
	if (t->echo)
		pad = t->size;
	msg = util_xmalloc(sizeof rhead + (size_t)nl + 128 + pad);
	len = (size_t)sprintf(msg, "%s%s,\"method\":\"%s\"", rhead, num,
	    t->echo ? "tools/call" : "ping");
	if (t->echo) {
		len += (size_t)sprintf(msg + len, ",\"params\":{\"name\":"
		    "\"echo\",\"arguments\":{\"message\":\"");
		memset(msg + len, 'x', pad);
		len += pad;
		len += (size_t)sprintf(msg + len, "\"}}");
	}
	len += (size_t)sprintf(msg + len, "}");
	mconn_post(c, msg, len);
	free(msg);

	/* The session is the handshake's: the headers of answers are not read. */
	hlink_response(&c->hc, NULL, NULL, head_ns);
	if (c->hc.status != 200)
		util_fatalx("request %s: status %d: %.200s", num, c->hc.status,
		    c->hc.body);
	m = mconn_message(c, id);
	if (util_find_id(m, strlen(m), &off, &idlen) != 0 ||
	    idlen != (size_t)nl || memcmp(m + off, num, idlen) != 0)
		util_fatalx("the answer to request %s has another id or none: "
		    "%.200s", num, m);
	if (strstr(m, "\"result\":") == NULL)
		util_fatalx("the answer to request %s is no result: %.200s",
		    num, m);
	/* The text may have a prefix ("Echo: " from server-everything). */
	if (t->echo && ((m = strstr(m, "\"text\":\"")) == NULL ||
	    (m = strchr(m + 8, 'x')) == NULL || strspn(m, "x") != pad))
		util_fatalx("the answer to request %s does not echo the %zu "
		    "bytes: %.200s", num, pad, c->hc.body);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		LOADRUN_LONGOPTS,
		{ "method",	required_argument,	NULL, 'm' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct loadrun		 r;
	struct mtarget		 t;
	struct loadconn		*init;
	int			 ch;

	util_setprogname(argv[0]);
	memset(&t, 0, sizeof t);
	loadrun_init(&r, MLOAD_SIZE, MLOAD_CONNS, MLOAD_WARMUP, MLOAD_TIMEOUT);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (ch == 'm') {
			if (strcmp(optarg, "ping") != 0 &&
			    strcmp(optarg, "echo") != 0)
				util_fatalx("unknown method \"%s\" (ping or "
				    "echo)", optarg);
			t.echo = strcmp(optarg, "echo") == 0;
		} else if (loadrun_option(&r, ch, optarg) != 0)
			usage();
	}
	if (loadrun_finish(&r, argc, argv, MLOAD_COUNT, MLOAD_COUNT,
	    "MCP") != 0)
		usage();
	t.size = r.size;
	hlink_target(&t.h, r.url);

	/* The session, on a connection of its own, closed after. */
	init = loadrun_open(&t.h, &t);
	mconn_handshake(init);
	loadrun_close(init);

	loadrun_run(&r, &mconn_ops, &t.h, &t);
	if (r.sc == LOADRUN_LATENCY)
		printf("scenario=mcp_latency method=%s count=%zu size=%zu "
		    "warmup=%zu sent=%llu received=%llu p50_us=%.1f "
		    "p99_us=%.1f mean_us=%.1f max_us=%.1f head_p50_us=%.1f "
		    "head_p99_us=%.1f cpu_s=%.3f status=0\n",
		    t.echo ? "echo" : "ping", r.count, r.size, r.warmup,
		    (unsigned long long)r.sent, (unsigned long long)r.received,
		    r.st.p50_us, r.st.p99_us, r.st.mean_us, r.st.max_us,
		    r.head.p50_us, r.head.p99_us, r.cpu_s);
	else
		printf("scenario=mcp_throughput method=%s count=%zu size=%zu "
		    "conns=%zu sent=%llu received=%llu elapsed_s=%.3f "
		    "msgs_per_s=%.0f cpu_s=%.3f status=0\n",
		    t.echo ? "echo" : "ping", r.count, r.size, r.conns,
		    (unsigned long long)r.sent, (unsigned long long)r.received,
		    (double)r.elapsed_ns / 1e9, loadrun_msgs_per_s(&r), r.cpu_s);
	fflush(stdout);
	freeaddrinfo(t.h.ai);
	return 0;
}
