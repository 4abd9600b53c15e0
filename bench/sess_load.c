/*
 * sess_load: many concurrent MCP sessions over Streamable HTTP, for the
 * many-sessions benchmark (bench/scen_sessions.sh).
 *
 * Each session has its GET text/event-stream on a connection of its own,
 * and POSTs (initialize, the initialized notification, then requests, one
 * at a time) on a pool of --post-conns keep-alive connections shared by
 * all sessions, one request on a connection at a time (no pipelining), a
 * session waiting in line when all are busy.  A real host keeps one POST
 * connection per session (--post-conns N does that), but through a proxy
 * that is four descriptors a session and the proxy's RLIMIT_NOFILE may
 * not allow 40 000: the pool keeps what is measured the GET streams.
 * Phases, one after the other:
 *
 *   open    session 0 alone, then the others, at most LOAD_OPENING at a
 *           time; with --rss-pid, that process's VmRSS with 1 session open
 *           and idle, then with all N: (RSS_N - RSS_1) / (N - 1) per session
 *   steady  --seconds T: each session sends one request a second, spread
 *           evenly over the second
 *   active  --active A sessions send requests closed loop (the next when
 *           the answer came) for --active-seconds
 *   end     every session waits for the events it is owed, then DELETEs
 *
 * Every answer is checked (status, id) and so is every event pushed on a
 * GET stream (a notifications/message whose data is the id of a request
 * of that same session): a proxy that loses, mangles or crosses a message
 * between sessions counts as an error.  One key=value line on stdout.
 */

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "sess.h"

/* Sessions being opened at once: a burst is kept under listen backlogs. */
#define LOAD_OPENING		64
/* Events taken from epoll at a time. */
#define LOAD_EVENTS		512
/* How long the process measured is left to settle before its RSS is read. */
#define LOAD_SETTLE_MS		1000
/* How long stragglers (answers, events, DELETEs) are waited for. */
#define LOAD_DRAIN_MS		10000
/* POST connections shared by the sessions, unless --post-conns says. */
#define LOAD_POOL		256
/* Errors described on stderr; the rest are only counted. */
#define LOAD_ERRORS_SAID	10

enum lstate {
	LS_IDLE,	/* not started */
	LS_INIT,	/* initialize sent */
	LS_NOTIFIED,	/* initialized notification sent */
	LS_STREAM,	/* GET sent, its head not yet back */
	LS_READY,	/* open: GET stream up */
	LS_DELETING,	/* DELETE sent */
	LS_DONE		/* DELETE answered */
};

/* One connection: a session's GET, or one of the POST pool. */
struct lconn {
	int		 fd;
	uint32_t	 sess;		/* GET: its session; POST: the one served */
	int		 busy;		/* POST: a request is out */
	int		 get;		/* the GET stream */
	int		 headed;	/* GET: its head came */
	char		*in;
	size_t		 inlen;
	char		*out;
	size_t		 outlen;
	size_t		 outoff;
};

/* One session. */
struct lsess {
	enum lstate	 state;
	struct lconn	 get;
	char		*body;		/* a POST waiting for a connection */
	const char	*method;
	char		 sid[64];
	uint64_t	 seq;		/* requests sent */
	uint64_t	 inflight_id;	/* 0 when none */
	int64_t		 sent_ns;
	int		 late;		/* a request came due while one was out */
	uint64_t	 answers;
	uint64_t	 events;
};

static struct sockaddr_in	 target;
static char			 host[80];
static struct lsess		*sess;
static uint32_t			 nsess;
static int			 epfd;
static int			 active_phase;	/* closed loop */
static struct lconn		*pool;		/* the POST connections */
static uint32_t			 npool, nfree, *freel;
static uint32_t			*waitq, line_head, line_len; /* sessions waiting */
static int64_t			*lat;
static size_t			 nlat, caplat;
static uint64_t			 n_requests, n_answers, n_events, n_errors;
static uint64_t			 n_late, n_ready, n_done;

static __dead void	usage(void);
static void		load_error(uint32_t, const char *, ...) PRINTFLIKE(2, 3);
static int		lconn_open(struct lconn *, uint32_t, int);
static void		lconn_flush(struct lconn *);
static void		lconn_send(struct lconn *, const char *, ...)
			    PRINTFLIKE(2, 3);
static void		lsess_post(uint32_t, const char *, const char *);
static void		lpool_send(struct lconn *, uint32_t);
static void		lsess_request(uint32_t);
static void		lsess_answer(uint32_t, const char *, size_t,
			    const char *, size_t);
static void		lsess_event(uint32_t, const char *, size_t);
static void		lconn_read_post(struct lconn *);
static void		lconn_read_get(struct lconn *);
static void		load_poll(int);

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr, "usage: sess_load [--sessions N] [--seconds T] "
	    "[--active A] [--active-seconds S] [--post-conns P] [--rss-pid PID] URL\n");
	exit(2);
}

/* Count an error, and say what it was for the first few. */
static void
load_error(uint32_t s, const char *fmt, ...)
{
	char	buf[256];
	va_list	ap;

	if (n_errors++ >= LOAD_ERRORS_SAID)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	util_warnx("session %u: %s", s, buf);
}

/* Connect one of a session's connections (non-blocking). */
static int
lconn_open(struct lconn *c, uint32_t s, int get)
{
	struct epoll_event	ev;
	int			one = 1;

	memset(c, 0, sizeof *c);
	c->sess = s;
	c->get = get;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd == -1) {
		load_error(s, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(c->fd, (struct sockaddr *)&target, sizeof target) != 0 &&
	    errno != EINPROGRESS) {
		load_error(s, "connect: %s", strerror(errno));
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	ev.events = EPOLLIN | EPOLLOUT;
	ev.data.ptr = c;
	epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
	return 0;
}

/* Write what is queued on a connection, as far as it goes. */
static void
lconn_flush(struct lconn *c)
{
	ssize_t	n;

	while (c->outoff < c->outlen) {
		n = write(c->fd, c->out + c->outoff, c->outlen - c->outoff);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == ENOTCONN))
			return;
		if (n <= 0) {
			load_error(c->sess, "writing: %s", strerror(errno));
			c->outoff = c->outlen;
			break;
		}
		c->outoff += (size_t)n;
	}
	c->outlen = c->outoff = 0;
}

/* Queue a formatted request on a connection and write it. */
static void
lconn_send(struct lconn *c, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	c->out = util_xrealloc(c->out, c->outlen + (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(c->out + c->outlen, (size_t)n + 1, fmt, ap);
	va_end(ap);
	c->outlen += (size_t)n;
	lconn_flush(c);
}

/* Send a session's waiting POST on a free pool connection. */
static void
lpool_send(struct lconn *c, uint32_t s)
{
	struct lsess	*ls = &sess[s];
	char		 sidh[96] = "";

	if (ls->sid[0] != '\0')
		snprintf(sidh, sizeof sidh, "Mcp-Session-Id: %s\r\n", ls->sid);
	c->busy = 1;
	c->sess = s;
	lconn_send(c, "%s /mcp HTTP/1.1\r\nHost: %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "MCP-Protocol-Version: 2025-06-18\r\n%s"
	    "Content-Length: %zu\r\n\r\n%s", ls->method, host, sidh,
	    strlen(ls->body), ls->body);
	free(ls->body);
	ls->body = NULL;
}

/*
 * POST a JSON-RPC body for a session: on a free pool connection (opened
 * on first need), or in line for the next one.
 */
static void
lsess_post(uint32_t s, const char *method, const char *body)
{
	struct lconn	*c;
	uint32_t	 i;

	if (sess[s].body != NULL)
		util_fatalx("session %u: a POST while one waits", s);
	sess[s].method = method;
	sess[s].body = strdup(body);
	if (sess[s].body == NULL)
		util_fatal("strdup");
	while (nfree > 0) {
		i = freel[--nfree];
		c = &pool[i];
		if (c->fd == -1 && lconn_open(c, s, 0) != 0)
			continue;
		lpool_send(c, s);
		return;
	}
	waitq[(line_head + line_len++) % nsess] = s;
}

/* Send a session's next request (a ping-like bench/echo call). */
static void
lsess_request(uint32_t s)
{
	struct lsess	*ls = &sess[s];
	char		 body[256];

	ls->inflight_id = (uint64_t)s * SESS_ID_SPAN + ++ls->seq;
	if (ls->seq >= SESS_ID_SPAN)
		util_fatalx("session %u sent too many requests", s);
	snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%llu,"
	    "\"method\":\"bench/echo\",\"params\":{\"pad\":\"xxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}",
	    (unsigned long long)ls->inflight_id);
	ls->sent_ns = util_now_ns();
	n_requests++;
	lsess_post(s, "POST", body);
}

/* A whole answer on a session's POST connection: check it, go on. */
static void
lsess_answer(uint32_t s, const char *head, size_t hlen, const char *body,
    size_t blen)
{
	struct lsess	*ls = &sess[s];
	const char	*v;
	size_t		 vlen, off, idlen;
	int		 status = 0;
	unsigned long long id;

	sscanf(head, "HTTP/1.1 %d", &status);
	switch (ls->state) {
	case LS_INIT:
		if (status != 200 || sess_header(head, hlen, "Mcp-Session-Id",
		    &v, &vlen) != 0 || vlen >= sizeof ls->sid) {
			load_error(s, "initialize got %d without a session id",
			    status);
			ls->state = LS_DONE;
			n_done++;
			return;
		}
		memcpy(ls->sid, v, vlen);
		ls->sid[vlen] = '\0';
		ls->state = LS_NOTIFIED;
		lsess_post(s, "POST", "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/initialized\"}");
		return;
	case LS_NOTIFIED:
		if (status != 202)
			load_error(s, "the initialized notification got %d",
			    status);
		ls->state = LS_STREAM;
		if (lconn_open(&ls->get, s, 1) == 0)
			lconn_send(&ls->get, "GET /mcp HTTP/1.1\r\nHost: %s\r\n"
			    "Accept: text/event-stream\r\nMCP-Protocol-Version: "
			    "2025-06-18\r\nMcp-Session-Id: %s\r\n\r\n", host,
			    ls->sid);
		return;
	case LS_DELETING:
		if (status != 200)
			load_error(s, "DELETE got %d", status);
		ls->state = LS_DONE;
		n_done++;
		if (ls->get.fd > 0) {
			epoll_ctl(epfd, EPOLL_CTL_DEL, ls->get.fd, NULL);
			close(ls->get.fd);
			ls->get.fd = -1;
		}
		return;
	default:
		break;
	}
	if (ls->inflight_id == 0) {
		load_error(s, "an answer to no request (%d)", status);
		return;
	}
	if (status != 200 || util_find_id(body, blen, &off, &idlen) != 0 ||
	    sscanf(body + off, "%llu", &id) != 1 || id != ls->inflight_id) {
		load_error(s, "request %llu got %d: %.*s",
		    (unsigned long long)ls->inflight_id, status,
		    (int)(blen > 80 ? 80 : blen), body);
		ls->inflight_id = 0;
		return;
	}
	if (nlat == caplat) {
		caplat = caplat ? caplat * 2 : 65536;
		lat = util_xrealloc(lat, caplat * sizeof *lat);
	}
	lat[nlat++] = util_now_ns() - ls->sent_ns;
	ls->inflight_id = 0;
	ls->answers++;
	n_answers++;
	if (active_phase || ls->late) {
		if (ls->late)
			n_late++;
		ls->late = 0;
		lsess_request(s);
	}
}

/* One SSE event's text on a session's stream: it must be one of ours. */
static void
lsess_event(uint32_t s, const char *ev, size_t len)
{
	const char		*d;
	unsigned long long	 id;

	if (len == 0 || ev[0] == ':')
		return;		/* a comment */
	d = memmem(ev, len, "\"data\":", 7);
	if (d == NULL || sscanf(d + 7, "%llu", &id) != 1 ||
	    id / SESS_ID_SPAN != s || id % SESS_ID_SPAN == 0 ||
	    id % SESS_ID_SPAN > sess[s].seq) {
		load_error(s, "an event not of this session: %.*s",
		    (int)(len > 80 ? 80 : len), ev);
		return;
	}
	sess[s].events++;
	n_events++;
}

/* Read answers on a POST connection. */
static void
lconn_read_post(struct lconn *c)
{
	char	*p;
	size_t	 len, hlen, blen;
	int	 n;

	if ((n = sess_read(c->fd, &c->in, &c->inlen)) <= 0) {
		load_error(c->sess, "a POST connection closed: %s",
		    n == 0 ? "EOF" : strerror(errno));
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
		return;
	}
	p = c->in;
	len = c->inlen;
	while ((hlen = sess_head_len(p, len)) != 0) {
		blen = sess_header_num(p, hlen, "Content-Length", 0);
		if (len < hlen + blen)
			break;
		if (!c->busy) {
			load_error(c->sess, "an answer to nothing sent");
			break;
		}
		c->busy = 0;
		lsess_answer(c->sess, p, hlen, p + hlen, blen);
		if (!c->busy) {
			if (line_len > 0) {
				lpool_send(c, waitq[line_head]);
				line_head = (line_head + 1) % nsess;
				line_len--;
			} else
				freel[nfree++] = (uint32_t)(c - pool);
		}
		p += hlen + blen;
		len -= hlen + blen;
	}
	sess_keep(&c->in, &c->inlen, p, len);
}

/* Read a GET stream: its head, then chunks of SSE events. */
static void
lconn_read_get(struct lconn *c)
{
	struct lsess	*ls = &sess[c->sess];
	char		*p, *eol, *evend, *data = NULL;
	size_t		 len, hlen, clen, dlen = 0;
	int		 status = 0, eof = 0;

	eof = sess_read(c->fd, &c->in, &c->inlen) <= 0;
	p = c->in;
	len = c->inlen;
	if (!c->headed && (hlen = sess_head_len(p, len)) != 0) {
		sscanf(p, "HTTP/1.1 %d", &status);
		if (status != 200)
			load_error(c->sess, "GET got %d", status);
		else if (ls->state == LS_STREAM) {
			ls->state = LS_READY;
			n_ready++;
		}
		c->headed = 1;
		p += hlen;
		len -= hlen;
	}
	/* Whole chunks: their data, events split on blank lines. */
	while (c->headed && (eol = memmem(p, len, "\r\n", 2)) != NULL) {
		clen = strtoul(p, NULL, 16);
		if (len < (size_t)(eol - p) + 2 + clen + 2)
			break;
		data = util_xrealloc(data, dlen + clen);
		memcpy(data + dlen, eol + 2, clen);
		dlen += clen;
		len -= (size_t)(eol - p) + 2 + clen + 2;
		p = eol + 2 + clen + 2;
	}
	if (dlen > 0) {
		char	*q = data;
		size_t	 left = dlen;

		while ((evend = memmem(q, left, "\n\n", 2)) != NULL) {
			lsess_event(c->sess, q, (size_t)(evend - q));
			left -= (size_t)(evend - q) + 2;
			q = evend + 2;
		}
		if (left > 0)
			load_error(c->sess, "an event split over chunks");
		free(data);
	}
	sess_keep(&c->in, &c->inlen, p, len);
	if (eof) {
		if (ls->state != LS_DELETING && ls->state != LS_DONE)
			load_error(c->sess, "the GET stream ended");
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
}

/* Wait up to ms for the sockets and serve what they have. */
static void
load_poll(int ms)
{
	struct epoll_event	 evs[LOAD_EVENTS];
	struct lconn		*c;
	int			 i, n;

	n = epoll_wait(epfd, evs, LOAD_EVENTS, ms);
	if (n == -1 && errno != EINTR)
		util_fatal("epoll_wait");
	for (i = 0; i < n; i++) {
		c = evs[i].data.ptr;
		if (c->fd == -1)
			continue;
		if (evs[i].events & EPOLLOUT) {
			struct epoll_event	ev = { .events = EPOLLIN,
						       .data.ptr = c };

			lconn_flush(c);
			if (c->outlen == 0)
				epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
		}
		if (c->fd != -1 && (evs[i].events & (EPOLLIN | EPOLLHUP |
		    EPOLLERR))) {
			if (c->get)
				lconn_read_get(c);
			else
				lconn_read_post(c);
		}
	}
}

/* Start a session: connect its POST connection and send initialize. */
static void
load_start(uint32_t s)
{
	sess[s].state = LS_INIT;
	lsess_post(s, "POST", "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"sess_load\","
	    "\"version\":\"1.0\"}}}");
}

/* Serve the sockets until cond() holds or ms pass; 0 if it held. */
static int
load_until(int (*cond)(void), int ms)
{
	int64_t	end = util_now_ns() + (int64_t)ms * 1000000;

	while (!cond()) {
		if (util_now_ns() >= end)
			return -1;
		load_poll(10);
	}
	return 0;
}

/* Serve the sockets for ms, letting the measured process go idle. */
static void
load_settle(int ms)
{
	int64_t	end = util_now_ns() + (int64_t)ms * 1000000;

	while (util_now_ns() < end)
		load_poll(10);
}

static uint64_t	load_opened;
/* Whether every session started is open or given up. */
static int
load_all_open(void)
{
	return n_ready + n_done >= load_opened;
}

/* Whether no request is out and every event owed has come. */
static int
load_quiet(void)
{
	uint32_t	s;

	for (s = 0; s < nsess; s++)
		if (sess[s].inflight_id != 0 || (sess[s].state == LS_READY &&
		    sess[s].events < sess[s].answers))
			return 0;
	return 1;
}

/* Whether every DELETE is answered. */
static int
load_all_done(void)
{
	return n_done >= nsess;
}

/* Print a phase's latency figures under a prefix and forget them. */
static void
load_print_lat(const char *prefix)
{
	struct bench_stats	st;

	util_stats(lat, nlat, &st);
	printf(" %sp50_us=%.1f %sp99_us=%.1f %smean_us=%.1f", prefix,
	    st.p50_us, prefix, st.p99_us, prefix, st.mean_us);
	nlat = 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sessions",		required_argument,	NULL, 'n' },
		{ "seconds",		required_argument,	NULL, 't' },
		{ "active",		required_argument,	NULL, 'a' },
		{ "active-seconds",	required_argument,	NULL, 'd' },
		{ "rss-pid",		required_argument,	NULL, 'r' },
		{ "post-conns",		required_argument,	NULL, 'p' },
		{ NULL, 0, NULL, 0 }
	};
	uint32_t	 s, next, active = 1000;
	unsigned	 seconds = 5, active_seconds = 3, port;
	int64_t		 t0, now, end, due;
	uint64_t	 steady_req, steady_ans, round;
	long		 rss1 = -1, rssn = -1, cpu0 = -1, cpu1 = -1;
	pid_t		 rss_pid = 0;
	char		 addr[64];
	int		 ch;

	util_setprogname(argv[0]);
	nsess = 10000;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			nsess = (uint32_t)util_parse_size("--sessions", optarg);
			break;
		case 't':
			seconds = (unsigned)util_parse_size("--seconds", optarg);
			break;
		case 'a':
			active = (uint32_t)util_parse_size("--active", optarg);
			break;
		case 'd':
			active_seconds = (unsigned)util_parse_size(
			    "--active-seconds", optarg);
			break;
		case 'p':
			npool = (uint32_t)util_parse_size("--post-conns", optarg);
			break;
		case 'r':
			rss_pid = (pid_t)util_parse_size("--rss-pid", optarg);
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc)
		usage();
	if (nsess == 0 || nsess > SESS_MAX)
		util_fatalx("--sessions must be 1 to %d", SESS_MAX);
	if (active > nsess)
		active = nsess;
	if (sscanf(argv[optind], "http://%63[0-9.]:%u", addr, &port) != 2 ||
	    port > 65535)
		util_fatalx("%s: expected http://IPv4:PORT/...", argv[optind]);
	memset(&target, 0, sizeof target);
	target.sin_family = AF_INET;
	target.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &target.sin_addr) != 1)
		util_fatalx("%s: not an IPv4 address", addr);
	snprintf(host, sizeof host, "%s:%u", addr, port);
	signal(SIGPIPE, SIG_IGN);
	if (npool == 0 || npool > nsess)
		npool = nsess < LOAD_POOL ? nsess : LOAD_POOL;
	if (sess_raise_nofile((unsigned long)nsess + npool + 64) <
	    (unsigned long)nsess + npool + 64)
		util_fatalx("cannot have %lu descriptors: raise ulimit -n",
		    (unsigned long)nsess + npool + 64);
	util_watchdog(120 + 2 * seconds + 2 * active_seconds + nsess / 200,
	    "sess_load: the run took too long");
	if ((sess = calloc(nsess, sizeof *sess)) == NULL)
		util_fatal("allocating %u sessions", nsess);
	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		util_fatal("epoll_create1");
	pool = util_xmalloc(npool * sizeof *pool);
	freel = util_xmalloc(npool * sizeof *freel);
	waitq = util_xmalloc(nsess * sizeof *waitq);
	for (nfree = 0; nfree < npool; nfree++) {
		memset(&pool[npool - 1 - nfree], 0, sizeof *pool);
		pool[npool - 1 - nfree].fd = -1;
		freel[nfree] = npool - 1 - nfree;
	}

	/* Open: one session, its RSS; then the rest, a window at a time. */
	load_start(0);
	load_opened = 1;
	if (load_until(load_all_open, LOAD_DRAIN_MS) != 0)
		util_fatalx("the first session did not open");
	if (rss_pid != 0) {
		load_settle(LOAD_SETTLE_MS);
		rss1 = sess_rss_kb(rss_pid);
	}
	for (next = 1; next < nsess || !load_all_open();) {
		while (next < nsess && load_opened - n_ready - n_done <
		    LOAD_OPENING) {
			load_start(next++);
			load_opened++;
		}
		load_poll(10);
	}
	if (rss_pid != 0) {
		load_settle(LOAD_SETTLE_MS);
		rssn = sess_rss_kb(rss_pid);
	}

	/* Steady: session s sends at t0 + s/N s, and every second after. */
	if (rss_pid != 0)
		cpu0 = sess_cpu_ticks(rss_pid);
	t0 = util_now_ns();
	end = t0 + (int64_t)seconds * 1000000000;
	next = 0;
	round = 0;
	for (;;) {
		now = util_now_ns();
		due = t0 + (int64_t)round * 1000000000 +
		    (int64_t)((double)next / nsess * 1e9);
		if (due >= end)
			break;
		if (now >= due) {
			if (sess[next].state == LS_READY) {
				if (sess[next].inflight_id != 0)
					sess[next].late = 1;
				else
					lsess_request(next);
			}
			if (++next == nsess) {
				next = 0;
				round++;
			}
			continue;
		}
		load_poll((int)((due - now) / 1000000));
	}
	load_until(load_quiet, LOAD_DRAIN_MS);
	steady_req = n_requests;
	steady_ans = n_answers;
	printf("sessions=%u post_conns=%u ready=%llu requests=%llu answers=%llu late=%llu",
	    nsess, npool, (unsigned long long)n_ready, (unsigned long long)steady_req,
	    (unsigned long long)steady_ans, (unsigned long long)n_late);
	load_print_lat("");

	/* Active: the first A sessions, closed loop. */
	active_phase = 1;
	t0 = util_now_ns();
	for (s = 0; s < active; s++)
		if (sess[s].state == LS_READY && sess[s].inflight_id == 0)
			lsess_request(s);
	end = t0 + (int64_t)active_seconds * 1000000000;
	while (util_now_ns() < end)
		load_poll(10);
	active_phase = 0;
	now = util_now_ns();
	load_until(load_quiet, LOAD_DRAIN_MS);
	printf(" active=%u active_requests=%llu active_rps=%.0f", active,
	    (unsigned long long)(n_requests - steady_req),
	    (double)(n_answers - steady_ans) / ((double)(now - t0) / 1e9));
	load_print_lat("active_");
	if (rss_pid != 0)
		cpu1 = sess_cpu_ticks(rss_pid);

	/* End: every session DELETEd, once its last answer came. */
	for (s = 0; s < nsess; s++) {
		if (sess[s].state != LS_READY)
			continue;
		if (sess[s].inflight_id != 0) {
			load_error(s, "request %llu not answered in %d ms",
			    (unsigned long long)sess[s].inflight_id,
			    LOAD_DRAIN_MS);
			sess[s].state = LS_DONE;
			n_done++;
			continue;
		}
		sess[s].state = LS_DELETING;
		lsess_post(s, "DELETE", "");
	}
	if (load_until(load_all_done, LOAD_DRAIN_MS) != 0)
		load_error(0, "%llu sessions not DELETEd in time",
		    (unsigned long long)(nsess - n_done));
	printf(" total_requests=%llu answers=%llu events=%llu errors=%llu"
	    " messages=%llu", (unsigned long long)n_requests,
	    (unsigned long long)n_answers, (unsigned long long)n_events,
	    (unsigned long long)n_errors,
	    (unsigned long long)(3 * n_ready + 3 * n_answers));
	if (rss_pid != 0)
		printf(" rss1_kb=%ld rssn_kb=%ld per_session_b=%.0f"
		    " cpu_us_per_req=%.1f", rss1, rssn, nsess > 1 ?
		    (double)(rssn - rss1) * 1024 / (nsess - 1) : 0.0,
		    cpu0 < 0 || cpu1 < 0 || n_answers == 0 ? 0.0 :
		    (double)(cpu1 - cpu0) * 1e6 / sysconf(_SC_CLK_TCK) /
		    (double)n_answers);
	printf("\n");
	return n_errors == 0 && n_ready == nsess ? 0 : 1;
}
