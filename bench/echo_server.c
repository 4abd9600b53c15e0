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
 * A message is held whole once, so a 64 MiB request costs about 64 MiB;
 * the answer's pad is generated in the output buffer, never held whole.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* The input buffer's first size; it doubles up to BENCH_MSG_MAX. */
#define ECHO_IN_INITIAL		(4 * 1024 * 1024)

struct echo {
	char	*in;
	size_t	 in_len;	/* bytes held */
	size_t	 in_cap;
	size_t	 in_off;	/* start of the first unanswered line */
	size_t	 in_scan;	/* bytes before this hold no newline */
	char	 out[BENCH_IO_SIZE];
	size_t	 out_len;
	uint64_t answered;
};

static __dead void	usage(void);
static void		echo_flush(struct echo *);
static void		echo_put(struct echo *, const void *, size_t);
static void		echo_pad(struct echo *, size_t);
static void		echo_line(struct echo *, const char *, size_t);
static int		echo_read(struct echo *);

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

/* Answer one line (without its newline) if it is a request. */
static void
echo_line(struct echo *e, const char *line, size_t len)
{
	size_t	off, idlen;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0 || util_find_id(line, len, &off, &idlen) != 0)
		return;
	echo_put(e, BENCH_RESP_HEAD, sizeof BENCH_RESP_HEAD - 1);
	echo_put(e, line + off, idlen);
	echo_put(e, BENCH_RESP_MID, sizeof BENCH_RESP_MID - 1);
	echo_pad(e, util_echo_pad(len, idlen));
	echo_put(e, BENCH_RESP_TAIL "\n", sizeof BENCH_RESP_TAIL);
	e->answered++;
}

/* Read what stdin has into the buffer, making room; 0 at end of file. */
static int
echo_read(struct echo *e)
{
	ssize_t	n;
	size_t	ncap;

	if (e->in_off > 0) {
		memmove(e->in, e->in + e->in_off, e->in_len - e->in_off);
		e->in_len -= e->in_off;
		e->in_scan -= e->in_off;
		e->in_off = 0;
	}
	if (e->in_len == e->in_cap) {
		if (e->in_cap >= BENCH_MSG_MAX)
			util_fatalx("a line longer than %zu bytes on stdin; "
			    "is the client sending newline-delimited JSON?",
			    BENCH_MSG_MAX);
		ncap = e->in_cap * 2;
		e->in = util_xrealloc(e->in, ncap);
		e->in_cap = ncap;
	}
	for (;;) {
		n = read(STDIN_FILENO, e->in + e->in_len, e->in_cap - e->in_len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			util_fatal("reading stdin");
		break;
	}
	e->in_len += (size_t)n;
	return n > 0;
}

int
main(int argc, char **argv)
{
	struct echo	*e;
	char		*nl;

	util_setprogname(argv[0]);
	if (argc > 1)
		usage();
	signal(SIGPIPE, SIG_IGN);
	util_pipe_size(STDIN_FILENO);
	util_pipe_size(STDOUT_FILENO);

	e = util_xmalloc(sizeof *e);
	memset(e, 0, sizeof *e);
	e->in_cap = ECHO_IN_INITIAL;
	e->in = util_xmalloc(e->in_cap);

	while (echo_read(e)) {
		while ((nl = memchr(e->in + e->in_scan, '\n',
		    e->in_len - e->in_scan)) != NULL) {
			echo_line(e, e->in + e->in_off,
			    (size_t)(nl - (e->in + e->in_off)));
			e->in_off = e->in_scan = (size_t)(nl - e->in) + 1;
		}
		e->in_scan = e->in_len;
		/* Nothing complete is left: answer before waiting for more. */
		echo_flush(e);
	}
	if (e->in_len > e->in_off)
		util_warnx("%zu bytes without a newline at end of input ignored",
		    e->in_len - e->in_off);
	echo_flush(e);
	free(e->in);
	free(e);
	return 0;
}
