/*
 * What the bench tools share: error reporting under the tool's own name,
 * allocation that exits on failure, the clock, pipes, the message format
 * and latency statistics.
 */

#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* How far into a message the id is looked for before scanning it all. */
#define UTIL_ID_NEAR		256

static const char	*util_progname = "bench";
static char		 util_watchdog_msg[256];
static volatile pid_t	 util_watchdog_pid = -1;

/* Set the name errors are reported under. */
void
util_setprogname(const char *argv0)
{
	const char	*slash = strrchr(argv0, '/');

	util_progname = (slash != NULL) ? slash + 1 : argv0;
}

/* Print an error with the tool's name and errno's text, then exit 1. */
void
util_fatal(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	fprintf(stderr, "%s: ", util_progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(saved));
	exit(1);
}

/* Print an error with the tool's name, then exit 1. */
void
util_fatalx(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "%s: ", util_progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Print a warning with the tool's name. */
void
util_warnx(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "%s: ", util_progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Allocate or exit with a message saying how much could not be had. */
void *
util_xmalloc(size_t size)
{
	void	*p;

	if ((p = malloc(size == 0 ? 1 : size)) == NULL)
		util_fatalx("out of memory allocating %zu bytes", size);
	return p;
}

/* Resize or exit with a message saying how much could not be had. */
void *
util_xrealloc(void *old, size_t size)
{
	void	*p;

	if ((p = realloc(old, size == 0 ? 1 : size)) == NULL)
		util_fatalx("out of memory growing a buffer to %zu bytes", size);
	return p;
}

/* The monotonic clock in nanoseconds. */
int64_t
util_now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Ask for a big pipe buffer so that big messages move in few steps; where
 * fd is no pipe or the size is not allowed, leave it as it is.
 */
void
util_pipe_size(int fd)
{
	(void)fcntl(fd, F_SETPIPE_SZ, BENCH_PIPE_SIZE);
}

/* Set or clear O_NONBLOCK on fd. */
int
util_set_nonblock(int fd, int on)
{
	int	fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return -1;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl);
}

/* Parse a count or a size with an optional k, M or G (powers of 1024). */
size_t
util_parse_size(const char *what, const char *s)
{
	char			*end;
	unsigned long long	 v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *s == '-')
		util_fatalx("%s: \"%s\" is not a number", what, s);
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024 * 1024 * 1024; end++; break;
	}
	if (*end != '\0')
		util_fatalx("%s: \"%s\" is not a number (k, M or G may follow)",
		    what, s);
	return (size_t)v;
}

/* Compare two int64_t for qsort. */
static int
util_cmp_i64(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Sort n durations (ns) and take their percentiles (nearest rank) and mean. */
void
util_stats(int64_t *ns, size_t n, struct bench_stats *st)
{
	double	sum = 0;
	size_t	i, r50, r99;

	memset(st, 0, sizeof *st);
	if (n == 0)
		return;
	qsort(ns, n, sizeof *ns, util_cmp_i64);
	for (i = 0; i < n; i++)
		sum += (double)ns[i];
	r50 = (n * 50 + 99) / 100;
	r99 = (n * 99 + 99) / 100;
	st->p50_us = (double)ns[r50 - 1] / 1e3;
	st->p99_us = (double)ns[r99 - 1] / 1e3;
	st->mean_us = sum / (double)n / 1e3;
	st->max_us = (double)ns[n - 1] / 1e3;
}

/* Find the end of the JSON value (number, string, literal) at p. */
static size_t
util_value_len(const char *p, size_t len)
{
	size_t	i;

	if (len > 0 && p[0] == '"') {
		for (i = 1; i < len; i++) {
			if (p[i] == '\\')
				i++;
			else if (p[i] == '"')
				return i + 1;
		}
		return 0;
	}
	for (i = 0; i < len; i++) {
		if (strchr(",}] \t\r\n", p[i]) != NULL)
			break;
	}
	return i;
}

/*
 * Find the "id" member's value in a message by a plain scan: the load
 * clients put it first, so it is found within a few bytes; a message from
 * someone else is scanned to its end.  No JSON parsing: this is the echo
 * servers' hot path.
 */
int
util_find_id(const char *msg, size_t len, size_t *off, size_t *idlen)
{
	static const char	 key[] = "\"id\":";
	const char		*p;
	size_t			 near = len < UTIL_ID_NEAR ? len : UTIL_ID_NEAR;

	p = memmem(msg, near, key, sizeof key - 1);
	if (p == NULL && near < len)
		p = memmem(msg, len, key, sizeof key - 1);
	if (p == NULL)
		return -1;
	p += sizeof key - 1;
	while (p < msg + len && (*p == ' ' || *p == '\t'))
		p++;
	*off = (size_t)(p - msg);
	*idlen = util_value_len(p, len - *off);
	return *idlen == 0 ? -1 : 0;
}

/* The pad that makes an answer as long as a request of reqlen bytes. */
size_t
util_echo_pad(size_t reqlen, size_t idlen)
{
	size_t	fixed = sizeof BENCH_RESP_HEAD - 1 + idlen +
		    sizeof BENCH_RESP_MID - 1 + sizeof BENCH_RESP_TAIL - 1;

	return reqlen > fixed ? reqlen - fixed : 0;
}

/* The length of request id sized size, its newline included. */
size_t
util_request_len(uint64_t id, size_t size)
{
	char	num[32];
	size_t	fixed;

	fixed = sizeof BENCH_REQ_HEAD - 1 + (size_t)snprintf(num, sizeof num,
	    "%llu", (unsigned long long)id) + sizeof BENCH_REQ_MID - 1 +
	    sizeof BENCH_REQ_TAIL - 1;
	return (size > fixed ? size : fixed) + 1;
}

/*
 * Write request id into dst (util_request_len bytes): size bytes long when
 * that is enough for the fixed parts, then a newline.
 */
void
util_request_fill(char *dst, uint64_t id, size_t size)
{
	size_t	total = util_request_len(id, size), pad;
	int	hl;

	hl = sprintf(dst, "%s%llu%s", BENCH_REQ_HEAD, (unsigned long long)id,
	    BENCH_REQ_MID);
	pad = total - 1 - (size_t)hl - (sizeof BENCH_REQ_TAIL - 1);
	memset(dst + hl, 'x', pad);
	memcpy(dst + hl + pad, BENCH_REQ_TAIL "\n", sizeof BENCH_REQ_TAIL);
}

/* Allocate and fill request id (see util_request_fill); the caller frees. */
char *
util_request(uint64_t id, size_t size, size_t *len)
{
	char	*buf;

	*len = util_request_len(id, size);
	buf = util_xmalloc(*len);
	util_request_fill(buf, id, size);
	return buf;
}

/* On SIGALRM: say what took too long, kill the child if any, exit 1. */
static void
util_watchdog_cb(int sig)
{
	(void)sig;
	if (write(STDERR_FILENO, util_watchdog_msg,
	    strlen(util_watchdog_msg)) == -1) {
		/* Nothing more to be done in a signal handler. */
	}
	if (util_watchdog_pid > 0)
		kill(util_watchdog_pid, SIGKILL);
	_exit(1);
}

/*
 * Give the whole run seconds to finish: a stuck peer must fail the run
 * with a reason, not hang the harness.
 */
void
util_watchdog(unsigned int seconds, const char *what)
{
	struct sigaction	sa;

	snprintf(util_watchdog_msg, sizeof util_watchdog_msg,
	    "%s: timed out after %u s (%s); raise --timeout if the machine "
	    "is just slow\n", util_progname, seconds, what);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = util_watchdog_cb;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

/* Name the child the watchdog kills when it fires. */
void
util_watchdog_child(int pid)
{
	util_watchdog_pid = pid;
}

/* A port argument of the option name: 0 (any free port) to 65535. */
int
util_parse_port(const char *name, const char *arg)
{
	size_t	port;

	port = util_parse_size(name, arg);
	if (port > 65535)
		util_fatalx("%s %zu is not a port", name, port);
	return (int)port;
}

/* Fill sin with 127.0.0.1:port. */
void
util_loopback(struct sockaddr_in *sin, int port)
{
	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons((uint16_t)port);
}

/*
 * Listen on 127.0.0.1:port (0: any free port) with backlog, non-blocking
 * when asked; the socket, and the port it got in *bound.
 */
int
util_listen(int port, int backlog, int nonblock, int *bound)
{
	struct sockaddr_in	sin;
	socklen_t		slen = sizeof sin;
	int			fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC |
	    (nonblock ? SOCK_NONBLOCK : 0), 0)) == -1)
		util_fatal("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	util_loopback(&sin, port);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0)
		util_fatal("binding 127.0.0.1:%d", port);
	if (listen(fd, backlog) != 0)
		util_fatal("listen");
	if (getsockname(fd, (struct sockaddr *)&sin, &slen) != 0)
		util_fatal("getsockname");
	*bound = ntohs(sin.sin_port);
	return fd;
}
