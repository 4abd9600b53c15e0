/*
 * http_load: the client side of the HTTP benchmarks.  It POSTs JSON-RPC
 * requests to URL (http_echo, or mcpreel or mitmdump in front of it) on
 * keep-alive connections and prints one line of key=value results:
 *
 *   latency     one connection, one request at a time: p50, p99, mean
 *   throughput  --conns connections in parallel, each one request at a
 *               time, N in all: messages per second, both directions
 *
 * Every answer is checked (status 200, the id, the length), so a proxy
 * that drops or mangles one fails the run.  Answers may come with
 * Content-Length or chunked, as application/json or as a text/event-stream
 * of one event whose data is the answer (http_echo --answer sse).
 */

#include <sys/socket.h>
#include <sys/types.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench.h"

/* Defaults of the two scenarios, from issue 6. */
#define HLOAD_LATENCY_COUNT	5000
#define HLOAD_THROUGHPUT_COUNT	100000
#define HLOAD_SIZE		200
#define HLOAD_CONNS		4
/* Round trips before the latency count starts. */
#define HLOAD_WARMUP		500
/* Connections at most: each is a thread. */
#define HLOAD_CONNS_MAX		256
/* The whole run's limit. */
#define HLOAD_TIMEOUT		120
/* The longest answer head we accept. */
#define HLOAD_HEAD_MAX		(64 * 1024)

enum hscenario {
	HSCENARIO_LATENCY,
	HSCENARIO_THROUGHPUT,
	HSCENARIO_MAX
};

static const char *hscenario_names[HSCENARIO_MAX] = {
	"latency", "throughput"
};

/* Where to send: parsed from the URL once. */
struct target {
	char		 host[256];
	char		 port[8];
	char		 path[1024];
	struct addrinfo	*ai;
};

/* One keep-alive connection and the requests it sends. */
struct hclient {
	const struct target	*t;
	size_t			 size;
	uint64_t		 first_id;
	size_t			 count;		/* requests to time */
	size_t			 warmup;	/* before those */
	int64_t			*ns;		/* count latencies, or NULL */
	pthread_barrier_t	*start;		/* throughput: go together */

	int			 fd;
	char			*req;		/* head and body */
	size_t			 req_cap;
	char			*buf;		/* what was read */
	size_t			 len;
	size_t			 cap;
	char			*body;		/* an answer's body, decoded */
	size_t			 body_cap;
	uint64_t		 sent;
	uint64_t		 received;
};

static __dead void	usage(void);
static void		target_parse(struct target *, const char *);
static void		hclient_connect(struct hclient *);
static void		hclient_fill(struct hclient *);
static size_t		hclient_line(struct hclient *, size_t);
static void		hclient_body_put(struct hclient *, size_t *,
			    const char *, size_t);
static size_t		hclient_response(struct hclient *, size_t *);
static void		hclient_send(struct hclient *, size_t);
static void		hclient_round_trip(struct hclient *, uint64_t);
static void		*hclient_main(void *);

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

/* Split http://HOST[:PORT][/PATH] and resolve HOST. */
static void
target_parse(struct target *t, const char *url)
{
	struct addrinfo	 hints;
	const char	*p, *slash, *colon;
	size_t		 hl;
	int		 error;

	if (strncmp(url, "http://", 7) != 0)
		util_fatalx("%s: only http:// URLs are supported", url);
	p = url + 7;
	slash = strchr(p, '/');
	if (slash == NULL)
		slash = p + strlen(p);
	colon = memchr(p, ':', (size_t)(slash - p));
	hl = (size_t)((colon != NULL ? colon : slash) - p);
	if (hl == 0 || hl >= sizeof t->host)
		util_fatalx("%s: no host, or too long a host", url);
	memcpy(t->host, p, hl);
	t->host[hl] = '\0';
	if (colon != NULL) {
		if ((size_t)(slash - colon - 1) >= sizeof t->port ||
		    slash == colon + 1)
			util_fatalx("%s: a bad port", url);
		memcpy(t->port, colon + 1, (size_t)(slash - colon - 1));
		t->port[slash - colon - 1] = '\0';
	} else
		snprintf(t->port, sizeof t->port, "80");
	if (strlen(slash) >= sizeof t->path)
		util_fatalx("%s: too long a path", url);
	snprintf(t->path, sizeof t->path, "%s", *slash == '\0' ? "/" : slash);

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((error = getaddrinfo(t->host, t->port, &hints, &t->ai)) != 0)
		util_fatalx("cannot resolve %s: %s", t->host,
		    gai_strerror(error));
}

/* Open the connection, without Nagle: requests are small and sequential. */
static void
hclient_connect(struct hclient *c)
{
	struct addrinfo	*ai;
	int		 one = 1;

	for (ai = c->t->ai; ai != NULL; ai = ai->ai_next) {
		c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (c->fd == -1)
			continue;
		if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(c->fd);
		c->fd = -1;
	}
	if (c->fd == -1)
		util_fatal("cannot connect to %s:%s", c->t->host, c->t->port);
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Read more of the answer into the buffer; the server closing is fatal. */
static void
hclient_fill(struct hclient *c)
{
	ssize_t	n;

	if (c->len == c->cap) {
		if (c->cap >= BENCH_MSG_MAX)
			util_fatalx("an answer over %zu bytes", BENCH_MSG_MAX);
		c->cap *= 2;
		c->buf = util_xrealloc(c->buf, c->cap);
	}
	do
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		util_fatal("reading from %s:%s", c->t->host, c->t->port);
	if (n == 0)
		util_fatalx("%s:%s closed the connection after %llu of %llu "
		    "answers", c->t->host, c->t->port,
		    (unsigned long long)c->received,
		    (unsigned long long)c->sent);
	c->len += (size_t)n;
}

/* Read until a CRLF-ended line starts at off; returns the offset past it. */
static size_t
hclient_line(struct hclient *c, size_t off)
{
	char	*nl;

	while ((nl = memmem(c->buf + off, c->len - off, "\r\n", 2)) == NULL) {
		if (c->len - off > HLOAD_HEAD_MAX)
			util_fatalx("an answer line over %d bytes",
			    HLOAD_HEAD_MAX);
		hclient_fill(c);
	}
	return (size_t)(nl - c->buf) + 2;
}

/* Append to the decoded body. */
static void
hclient_body_put(struct hclient *c, size_t *blen, const char *p, size_t len)
{
	if (*blen + len > c->body_cap) {
		c->body_cap = (*blen + len) * 2;
		c->body = util_xrealloc(c->body, c->body_cap);
	}
	memcpy(c->body + *blen, p, len);
	*blen += len;
}

/*
 * An event-stream body to the data of its one event (a single data line,
 * as http_echo and the MCP SDKs send it), in place.
 */
static void
hclient_sse_data(struct hclient *c, size_t *blen)
{
	char	*d, *nl;

	if ((d = memmem(c->body, *blen, "data: ", 6)) == NULL)
		util_fatalx("an event-stream answer with no data: %.80s",
		    *blen > 0 ? c->body : "(empty body)");
	d += 6;
	if ((nl = memchr(d, '\n', *blen - (size_t)(d - c->body))) == NULL)
		util_fatalx("an event-stream answer not ended by a newline");
	memmove(c->body, d, (size_t)(nl - d));
	*blen = (size_t)(nl - d);
}

/*
 * Read one whole answer: check its status is 200 and put its body in
 * c->body (*blen bytes).  Returns how much of the buffer it took.
 */
static size_t
hclient_response(struct hclient *c, size_t *blen)
{
	char	*end, *line, *next, *colon, *v;
	size_t	 head_len, off, start, chunk, clen = 0;
	int	 status, chunked = 0, has_len = 0, sse = 0;

	while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4)) == NULL) {
		if (c->len > HLOAD_HEAD_MAX)
			util_fatalx("an answer head over %d bytes",
			    HLOAD_HEAD_MAX);
		hclient_fill(c);
	}
	head_len = (size_t)(end - c->buf) + 4;
	if (sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1)
		util_fatalx("not an HTTP answer: %.40s", c->buf);
	if (status != 200)
		util_fatalx("answer %llu: status %d, expected 200: %.200s",
		    (unsigned long long)c->received, status, c->buf);
	/* Headers, parsed in place: the head is done with afterwards. */
	*end = '\0';
	line = strstr(c->buf, "\r\n");
	while (line != NULL) {
		line += 2;
		if ((next = strstr(line, "\r\n")) != NULL)
			*next = '\0';
		if ((colon = strchr(line, ':')) != NULL) {
			*colon = '\0';
			v = colon + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			if (strcasecmp(line, "Content-Length") == 0) {
				clen = strtoull(v, NULL, 10);
				has_len = 1;
			} else if (strcasecmp(line, "Transfer-Encoding") == 0 &&
			    strcasestr(v, "chunked") != NULL)
				chunked = 1;
			else if (strcasecmp(line, "Content-Type") == 0 &&
			    strncasecmp(v, "text/event-stream", 17) == 0)
				sse = 1;
		}
		line = next;
	}

	*blen = 0;
	if (!chunked) {
		if (!has_len)
			util_fatalx("an answer with neither Content-Length nor "
			    "chunked: cannot frame it");
		if (clen > BENCH_MSG_MAX)
			util_fatalx("an answer of %zu bytes", clen);
		if (c->cap < head_len + clen) {
			c->cap = head_len + clen;
			c->buf = util_xrealloc(c->buf, c->cap);
		}
		while (c->len < head_len + clen)
			hclient_fill(c);
		hclient_body_put(c, blen, c->buf + head_len, clen);
		if (sse)
			hclient_sse_data(c, blen);
		return head_len + clen;
	}
	off = head_len;
	for (;;) {
		start = off;
		off = hclient_line(c, off);
		chunk = strtoull(c->buf + start, NULL, 16);
		if (chunk == 0)
			break;
		if (chunk > BENCH_MSG_MAX)
			util_fatalx("a chunk of %zu bytes", chunk);
		while (c->len < off + chunk + 2)
			hclient_fill(c);
		hclient_body_put(c, blen, c->buf + off, chunk);
		off += chunk + 2;
	}
	/* Trailers, if any, up to the empty line. */
	for (;;) {
		start = off;
		off = hclient_line(c, off);
		if (off == start + 2)
			break;
	}
	if (sse)
		hclient_sse_data(c, blen);
	return off;
}

/* Write the first len bytes of c->req, the request without its newline. */
static void
hclient_send(struct hclient *c, size_t len)
{
	const char	*p = c->req;
	ssize_t		 n;

	while (len > 0) {
		n = write(c->fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			util_fatal("writing to %s:%s", c->t->host, c->t->port);
		p += n;
		len -= (size_t)n;
	}
}

/* Send request id and read and check its answer. */
static void
hclient_round_trip(struct hclient *c, uint64_t id)
{
	size_t		 blen, reqlen, used, off, idlen, need;
	char		 num[32];
	int		 hl, nl;

	reqlen = util_request_len(id, c->size);	/* with a newline */
	need = 512 + reqlen;
	if (c->req_cap < need) {
		c->req = util_xrealloc(c->req, need);
		c->req_cap = need;
	}
	hl = snprintf(c->req, 512, "POST %s HTTP/1.1\r\nHost: %s:%s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "Content-Length: %zu\r\n\r\n", c->t->path, c->t->host,
	    c->t->port, reqlen - 1);
	util_request_fill(c->req + hl, id, c->size);
	hclient_send(c, (size_t)hl + reqlen - 1);
	c->sent++;

	used = hclient_response(c, &blen);
	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;

	nl = snprintf(num, sizeof num, "%llu", (unsigned long long)id);
	if (util_find_id(c->body, blen, &off, &idlen) != 0 ||
	    idlen != (size_t)nl || memcmp(c->body + off, num, idlen) != 0)
		util_fatalx("the answer to request %s has another id or none: "
		    "%.80s", num, blen > 0 ? c->body : "(empty body)");
	if (blen != reqlen - 1)
		util_fatalx("the answer to request %s is %zu bytes, expected %zu",
		    num, blen, reqlen - 1);
	c->received++;
}

/* Run one connection's requests, timing them if asked. */
static void *
hclient_main(void *arg)
{
	struct hclient	*c = arg;
	int64_t		 t0;
	size_t		 i;

	c->cap = 64 * 1024;
	c->buf = util_xmalloc(c->cap);
	hclient_connect(c);
	for (i = 0; i < c->warmup; i++)
		hclient_round_trip(c, c->first_id + i);
	if (c->start != NULL)
		pthread_barrier_wait(c->start);
	for (i = 0; i < c->count; i++) {
		t0 = util_now_ns();
		hclient_round_trip(c, c->first_id + c->warmup + i);
		if (c->ns != NULL)
			c->ns[i] = util_now_ns() - t0;
	}
	close(c->fd);
	free(c->buf);
	free(c->req);
	free(c->body);
	return NULL;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scenario",	required_argument,	NULL, 's' },
		{ "count",	required_argument,	NULL, 'n' },
		{ "size",	required_argument,	NULL, 'b' },
		{ "conns",	required_argument,	NULL, 'c' },
		{ "warmup",	required_argument,	NULL, 'W' },
		{ "timeout",	required_argument,	NULL, 't' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct target		 t;
	struct hclient		*cl;
	struct bench_stats	 st;
	pthread_barrier_t	 start;
	pthread_t		*th;
	enum hscenario		 sc = HSCENARIO_LATENCY;
	size_t			 count = 0, size = HLOAD_SIZE;
	size_t			 conns = HLOAD_CONNS, warmup = HLOAD_WARMUP;
	size_t			 timeout = HLOAD_TIMEOUT, i, per;
	uint64_t		 sent = 0, received = 0, next_id = 1;
	int64_t			 t0, el;
	int			 ch, k;

	util_setprogname(argv[0]);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			for (k = 0; k < HSCENARIO_MAX; k++) {
				if (strcmp(optarg, hscenario_names[k]) == 0)
					break;
			}
			if (k == HSCENARIO_MAX)
				util_fatalx("unknown scenario \"%s\" (latency "
				    "or throughput)", optarg);
			sc = k;
			break;
		case 'n':
			count = util_parse_size("--count", optarg);
			break;
		case 'b':
			size = util_parse_size("--size", optarg);
			break;
		case 'c':
			conns = util_parse_size("--conns", optarg);
			break;
		case 'W':
			warmup = util_parse_size("--warmup", optarg);
			break;
		case 't':
			timeout = util_parse_size("--timeout", optarg);
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc)
		usage();
	if (size > BENCH_MSG_MAX)
		util_fatalx("--size %zu is over the limit of %zu", size,
		    BENCH_MSG_MAX);
	if (sc == HSCENARIO_LATENCY)
		conns = 1;
	if (conns == 0 || conns > HLOAD_CONNS_MAX)
		util_fatalx("--conns must be 1 to %d", HLOAD_CONNS_MAX);
	if (count == 0)
		count = sc == HSCENARIO_LATENCY ? HLOAD_LATENCY_COUNT :
		    HLOAD_THROUGHPUT_COUNT;
	if (count < conns)
		conns = count;
	signal(SIGPIPE, SIG_IGN);
	util_watchdog((unsigned int)timeout, sc == HSCENARIO_LATENCY ?
	    "HTTP latency" : "HTTP throughput");
	memset(&t, 0, sizeof t);
	target_parse(&t, argv[optind]);

	cl = calloc(conns, sizeof *cl);
	th = calloc(conns, sizeof *th);
	if (cl == NULL || th == NULL)
		util_fatalx("out of memory for %zu connections", conns);
	pthread_barrier_init(&start, NULL, (unsigned int)conns + 1);
	per = count / conns;
	for (i = 0; i < conns; i++) {
		cl[i].t = &t;
		cl[i].size = size;
		cl[i].fd = -1;
		cl[i].count = per + (i < count % conns ? 1 : 0);
		cl[i].warmup = sc == HSCENARIO_LATENCY ? warmup : 0;
		cl[i].first_id = next_id;
		next_id += cl[i].warmup + cl[i].count;
		cl[i].start = &start;
		if (sc == HSCENARIO_LATENCY)
			cl[i].ns = util_xmalloc(cl[i].count * sizeof *cl[i].ns);
		if (pthread_create(&th[i], NULL, hclient_main, &cl[i]) != 0)
			util_fatalx("cannot start a thread for connection %zu",
			    i);
	}
	/* Everyone is connected and warmed up: start the clock. */
	pthread_barrier_wait(&start);
	t0 = util_now_ns();
	for (i = 0; i < conns; i++) {
		pthread_join(th[i], NULL);
		sent += cl[i].sent;
		received += cl[i].received;
	}
	el = util_now_ns() - t0;

	if (sc == HSCENARIO_LATENCY) {
		util_stats(cl[0].ns, cl[0].count, &st);
		printf("scenario=http_latency count=%zu size=%zu warmup=%zu "
		    "sent=%llu received=%llu p50_us=%.1f p99_us=%.1f "
		    "mean_us=%.1f max_us=%.1f status=0\n", count, size, warmup,
		    (unsigned long long)sent, (unsigned long long)received,
		    st.p50_us, st.p99_us, st.mean_us, st.max_us);
		free(cl[0].ns);
	} else
		printf("scenario=http_throughput count=%zu size=%zu conns=%zu "
		    "sent=%llu received=%llu elapsed_s=%.3f msgs_per_s=%.0f "
		    "status=0\n", count, size, conns,
		    (unsigned long long)sent, (unsigned long long)received,
		    (double)el / 1e9, 2.0 * (double)received * 1e9 /
		    (double)el);
	fflush(stdout);
	pthread_barrier_destroy(&start);
	freeaddrinfo(t.ai);
	free(cl);
	free(th);
	return 0;
}
