/*
 * echo_server: a stdio MCP server for benchmarks.  It reads
 * newline-delimited JSON-RPC requests on stdin and answers each on stdout
 * with {"jsonrpc":"2.0","id":ID,"result":{"echo":"xxx"}}, as long as the
 * request, the id's text copied as written.  Messages without an id
 * (notifications) get no answer.
 *
 * It is built to cost as little as possible so that what the harness
 * measures is the proxy: no JSON parsing (a short scan finds the id),
 * reads and writes of a megabyte, 1 MiB pipes where the kernel allows.
 * A request is never held whole: only its head (where the id is) is kept
 * and the rest counted as it streams by, so a 64 MiB request costs no
 * more memory than a small one and no page faults; the answer's pad is
 * generated in the output buffer, never held whole either.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* How much of a request's start is kept to find its id in. */
#define ECHO_HEAD_MAX		(64 * 1024)

struct echo {
	char	 in[BENCH_IO_SIZE];
	char	 head[ECHO_HEAD_MAX];	/* the start of the line being read */
	size_t	 head_len;
	size_t	 line_len;		/* its length so far */
	char	 last;			/* its last byte so far */
	char	 out[BENCH_IO_SIZE];
	size_t	 out_len;
	uint64_t answered;
};

static __dead void	usage(void);
static void		echo_flush(struct echo *);
static void		echo_put(struct echo *, const void *, size_t);
static void		echo_pad(struct echo *, size_t);
static void		echo_line(struct echo *);
static void		echo_feed(struct echo *, const char *, size_t);

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr, "usage: echo_server\n"
	    "Answer each JSON-RPC request line on stdin with a response of the "
	    "same size on stdout.\n");
	exit(2);
}

/* Write out everything buffered for stdout. */
static void
echo_flush(struct echo *e)
{
	size_t	off = 0;
	ssize_t	n;

	while (off < e->out_len) {
		n = write(STDOUT_FILENO, e->out + off, e->out_len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			util_fatal("writing an answer to stdout");
		off += (size_t)n;
	}
	e->out_len = 0;
}

/* Append bytes to the output buffer, flushing when it fills. */
static void
echo_put(struct echo *e, const void *p, size_t len)
{
	size_t	k;

	while (len > 0) {
		if (e->out_len == sizeof e->out)
			echo_flush(e);
		k = sizeof e->out - e->out_len;
		if (k > len)
			k = len;
		memcpy(e->out + e->out_len, p, k);
		e->out_len += k;
		p = (const char *)p + k;
		len -= k;
	}
}

/* Append len bytes of pad, a buffer at a time. */
static void
echo_pad(struct echo *e, size_t len)
{
	size_t	k;

	while (len > 0) {
		if (e->out_len == sizeof e->out)
			echo_flush(e);
		k = sizeof e->out - e->out_len;
		if (k > len)
			k = len;
		memset(e->out + e->out_len, 'x', k);
		e->out_len += k;
		len -= k;
	}
}

/* Answer the line just ended (its head kept, its length counted). */
static void
echo_line(struct echo *e)
{
	size_t	off, idlen, len = e->line_len;

	if (len > 0 && e->last == '\r')
		len--;
	if (e->head_len > len)
		e->head_len = len;
	if (len == 0 || util_find_id(e->head, e->head_len, &off, &idlen) != 0)
		return;
	if (off + idlen >= e->head_len && e->head_len < len)
		util_fatalx("a request whose id is not within its first %d "
		    "bytes", ECHO_HEAD_MAX);
	echo_put(e, BENCH_RESP_HEAD, sizeof BENCH_RESP_HEAD - 1);
	echo_put(e, e->head + off, idlen);
	echo_put(e, BENCH_RESP_MID, sizeof BENCH_RESP_MID - 1);
	echo_pad(e, util_echo_pad(len, idlen));
	echo_put(e, BENCH_RESP_TAIL "\n", sizeof BENCH_RESP_TAIL);
	e->answered++;
}

/* Take len bytes of input: keep each line's head, answer each line. */
static void
echo_feed(struct echo *e, const char *p, size_t len)
{
	const char	*nl;
	size_t		 k, keep;

	while (len > 0) {
		nl = memchr(p, '\n', len);
		k = (nl != NULL) ? (size_t)(nl - p) : len;
		if (e->head_len < ECHO_HEAD_MAX) {
			keep = ECHO_HEAD_MAX - e->head_len;
			if (keep > k)
				keep = k;
			memcpy(e->head + e->head_len, p, keep);
			e->head_len += keep;
		}
		if (k > 0) {
			e->line_len += k;
			e->last = p[k - 1];
		}
		if (nl == NULL)
			break;
		echo_line(e);
		e->head_len = e->line_len = 0;
		e->last = 0;
		p += k + 1;
		len -= k + 1;
	}
}

int
main(int argc, char **argv)
{
	struct echo	*e;
	ssize_t		 n;

	util_setprogname(argv[0]);
	if (argc > 1)
		usage();
	signal(SIGPIPE, SIG_IGN);
	util_pipe_size(STDIN_FILENO);
	util_pipe_size(STDOUT_FILENO);

	e = util_xmalloc(sizeof *e);
	memset(e, 0, sizeof *e);
	for (;;) {
		n = read(STDIN_FILENO, e->in, sizeof e->in);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			util_fatal("reading stdin");
		if (n == 0)
			break;
		echo_feed(e, e->in, (size_t)n);
		/* Nothing complete is left: answer before waiting for more. */
		echo_flush(e);
	}
	if (e->line_len > 0)
		util_warnx("%zu bytes without a newline at end of input ignored",
		    e->line_len);
	echo_flush(e);
	free(e);
	return 0;
}
