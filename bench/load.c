/*
 * load: the host side of the stdio benchmarks.  It spawns CMD (the echo
 * server, or mcpreel recording it) with pipes for its stdin and stdout,
 * runs one scenario and prints one line of key=value results:
 *
 *   latency     one request at a time, N round trips: p50, p99, mean
 *   throughput  N requests pipelined (at most --window in flight):
 *               messages per second, both directions counted
 *   large       one request of SIZE bytes and its answer: MB/s
 *
 * and, for every scenario, CMD's peak RSS from wait4() (the direct child:
 * mcpreel itself when CMD is mcpreel) and its exit status.  Every answer
 * is checked (the id, in order, and the length) so a proxy that loses,
 * reorders or mangles a message fails the run instead of looking fast.
 */

#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

/* Defaults of the three scenarios, from issue 6. */
#define LOAD_LATENCY_COUNT	20000
#define LOAD_THROUGHPUT_COUNT	300000
#define LOAD_SMALL_SIZE		200
#define LOAD_LARGE_SIZE		((size_t)64 * 1024 * 1024)
/* Round trips before the latency count starts: warm caches and pipes. */
#define LOAD_WARMUP		1000
/*
 * Requests in flight in the throughput scenario: enough to keep every
 * pipe on the way busy, few enough that no buffer grows without bound.
 */
#define LOAD_WINDOW		4096
/* The whole run's limit: a stuck peer fails the run with a reason. */
#define LOAD_TIMEOUT		120
/* How much of each answer is kept to check its id. */
#define LOAD_HEAD_KEEP		64

enum scenario {
	SCENARIO_LATENCY,
	SCENARIO_THROUGHPUT,
	SCENARIO_LARGE,
	SCENARIO_MAX
};

static const char *scenario_names[SCENARIO_MAX] = {
	"latency", "throughput", "large"
};

struct load {
	enum scenario	 scenario;
	size_t		 count;
	size_t		 size;
	size_t		 window;
	size_t		 warmup;
	char		**argv;		/* CMD */
	pid_t		 pid;
	int		 to_fd;		/* CMD's stdin */
	int		 from_fd;	/* CMD's stdout */

	uint64_t	 first_id;	/* requests are numbered from here */
	uint64_t	 sent;		/* requests written whole */
	uint64_t	 received;	/* answers read whole and checked */
	uint64_t	 bytes_out;
	uint64_t	 bytes_in;

	/* The answer being read: its length so far and its first bytes. */
	size_t		 cur_len;
	char		 head[LOAD_HEAD_KEEP];
	size_t		 head_len;

	char		*rbuf;		/* BENCH_IO_SIZE */
	char		*wbuf;		/* BENCH_IO_SIZE: requests to write */
	const char	*pend;		/* what is left to write */
	size_t		 pend_len;

	/* Large: when the request was written whole, when the answer began. */
	int64_t		 t_written;
	int64_t		 t_first_in;
};

static __dead void	usage(void);
static void		load_spawn(struct load *);
static void		load_answer(struct load *);
static void		load_feed(struct load *, const char *, size_t);
static int		load_read(struct load *, int);
static void		load_write_all(struct load *, const char *, size_t);
static void		load_latency(struct load *);
static void		load_refill(struct load *);
static void		load_pump(struct load *, uint64_t);
static void		load_throughput(struct load *);
static void		load_large(struct load *);
static int		load_finish(struct load *, long *);

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr,
	    "usage: load [--scenario latency|throughput|large] [--count N] "
	    "[--size BYTES]\n"
	    "            [--window N] [--warmup N] [--timeout SEC] "
	    "-- CMD [ARGS...]\n"
	    "Spawn CMD as a stdio MCP server, run the scenario against it and "
	    "print one line\nof key=value results.  Defaults: latency %d round "
	    "trips, throughput %d\nrequests, both %d bytes; large one request "
	    "of 64M.\n", LOAD_LATENCY_COUNT, LOAD_THROUGHPUT_COUNT,
	    LOAD_SMALL_SIZE);
	exit(2);
}

/* Start CMD with its stdin and stdout on pipes to us. */
static void
load_spawn(struct load *l)
{
	posix_spawn_file_actions_t	fa;
	int				in[2], out[2], error;

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		util_fatal("creating pipes for %s", l->argv[0]);
	util_pipe_size(in[1]);
	util_pipe_size(out[0]);

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	error = posix_spawnp(&l->pid, l->argv[0], &fa, NULL, l->argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (error != 0) {
		errno = error;
		util_fatal("cannot run %s", l->argv[0]);
	}
	util_watchdog_child(l->pid);
	close(in[0]);
	close(out[1]);
	l->to_fd = in[1];
	l->from_fd = out[0];
}

/* Check the answer just completed: the next id, as long as its request. */
static void
load_answer(struct load *l)
{
	uint64_t	 want = l->first_id + l->received;
	size_t		 off, idlen, reqlen;
	char		 num[32];
	int		 nl;

	nl = snprintf(num, sizeof num, "%llu", (unsigned long long)want);
	if (util_find_id(l->head, l->head_len, &off, &idlen) != 0)
		util_fatalx("answer %llu has no id: %.*s...",
		    (unsigned long long)l->received, (int)l->head_len, l->head);
	if (idlen != (size_t)nl || memcmp(l->head + off, num, idlen) != 0)
		util_fatalx("answer %llu has id %.*s, expected %s (lost or "
		    "reordered messages)", (unsigned long long)l->received,
		    (int)idlen, l->head + off, num);
	reqlen = util_request_len(want, l->size) - 1;
	if (l->cur_len != reqlen)
		util_fatalx("answer to request %s is %zu bytes, expected %zu",
		    num, l->cur_len, reqlen);
	l->received++;
	l->cur_len = 0;
	l->head_len = 0;
}

/* Take bytes read from CMD: split them into answers, never holding one. */
static void
load_feed(struct load *l, const char *p, size_t len)
{
	const char	*nl;
	size_t		 k, keep;

	l->bytes_in += len;
	while (len > 0) {
		nl = memchr(p, '\n', len);
		k = (nl != NULL) ? (size_t)(nl - p) : len;
		if (l->head_len < LOAD_HEAD_KEEP) {
			keep = LOAD_HEAD_KEEP - l->head_len;
			if (keep > k)
				keep = k;
			memcpy(l->head + l->head_len, p, keep);
			l->head_len += keep;
		}
		l->cur_len += k;
		if (nl == NULL)
			break;
		if (l->received >= l->sent)
			util_fatalx("an answer came before its request was "
			    "written whole: %.*s", (int)l->head_len, l->head);
		load_answer(l);
		p += k + 1;
		len -= k + 1;
	}
}

/*
 * Read once from CMD's stdout into the answers.  Returns 1 if something
 * was read, 0 if nothing was there (non-blocking); end of file is fatal,
 * as we only read while answers are due.
 */
static int
load_read(struct load *l, int nonblock)
{
	ssize_t	n;

	for (;;) {
		n = read(l->from_fd, l->rbuf, BENCH_IO_SIZE);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && nonblock && errno == EAGAIN)
			return 0;
		if (n == -1)
			util_fatal("reading from %s", l->argv[0]);
		break;
	}
	if (n == 0)
		util_fatalx("%s closed its stdout after %llu of %llu answers",
		    l->argv[0], (unsigned long long)l->received,
		    (unsigned long long)l->sent);
	if (l->t_first_in == 0)
		l->t_first_in = util_now_ns();
	load_feed(l, l->rbuf, (size_t)n);
	return 1;
}

/* Write a whole buffer to CMD's stdin, blocking. */
static void
load_write_all(struct load *l, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = write(l->to_fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			util_fatal("writing to %s", l->argv[0]);
		p += n;
		len -= (size_t)n;
		l->bytes_out += (size_t)n;
	}
}

/* One request at a time: time each round trip. */
static void
load_latency(struct load *l)
{
	struct bench_stats	 st;
	int64_t			*ns, t0;
	size_t			 i, total = l->warmup + l->count, len;
	uint64_t		 id;

	ns = util_xmalloc(l->count * sizeof *ns);
	for (i = 0; i < total; i++) {
		id = l->first_id + i;
		len = util_request_len(id, l->size);
		util_request_fill(l->wbuf, id, l->size);
		t0 = util_now_ns();
		load_write_all(l, l->wbuf, len);
		l->sent++;
		while (l->received < l->sent)
			load_read(l, 0);
		if (i >= l->warmup)
			ns[i - l->warmup] = util_now_ns() - t0;
	}
	util_stats(ns, l->count, &st);
	printf("scenario=latency count=%zu size=%zu warmup=%zu sent=%llu "
	    "received=%llu p50_us=%.1f p99_us=%.1f mean_us=%.1f max_us=%.1f",
	    l->count, l->size, l->warmup, (unsigned long long)l->sent,
	    (unsigned long long)l->received, st.p50_us, st.p99_us, st.mean_us,
	    st.max_us);
	free(ns);
}

/* Put the next requests in the write buffer, as many as the window allows. */
static void
load_refill(struct load *l)
{
	size_t		used = 0, len;
	uint64_t	id, total = l->count;

	while (l->sent < total && l->sent - l->received < l->window) {
		id = l->first_id + l->sent;
		len = util_request_len(id, l->size);
		if (used + len > BENCH_IO_SIZE)
			break;
		util_request_fill(l->wbuf + used, id, l->size);
		used += len;
		l->sent++;
	}
	l->pend = l->wbuf;
	l->pend_len = used;
}

/*
 * Write what is pending (refilling through the scenario) and read answers
 * at the same time until total answers are in; wait in poll() only when
 * neither way can move.
 */
static void
load_pump(struct load *l, uint64_t total)
{
	struct pollfd	pfd[2];
	ssize_t		n;
	int		moved;

	util_set_nonblock(l->to_fd, 1);
	util_set_nonblock(l->from_fd, 1);
	while (l->received < total) {
		moved = 0;
		if (l->pend_len == 0 && l->scenario == SCENARIO_THROUGHPUT)
			load_refill(l);
		if (l->pend_len > 0) {
			n = write(l->to_fd, l->pend, l->pend_len);
			if (n == -1 && errno != EAGAIN && errno != EINTR)
				util_fatal("writing to %s", l->argv[0]);
			if (n > 0) {
				l->pend += n;
				l->pend_len -= (size_t)n;
				l->bytes_out += (size_t)n;
				moved = 1;
				if (l->pend_len == 0 && l->t_written == 0)
					l->t_written = util_now_ns();
			}
		}
		if (load_read(l, 1))
			moved = 1;
		if (moved)
			continue;
		pfd[0].fd = l->from_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = l->to_fd;
		pfd[1].events = l->pend_len > 0 ? POLLOUT : 0;
		if (poll(pfd, 2, -1) == -1 && errno != EINTR)
			util_fatal("poll");
	}
	util_set_nonblock(l->to_fd, 0);
	util_set_nonblock(l->from_fd, 0);
}

/* N requests pipelined: messages per second, both directions counted. */
static void
load_throughput(struct load *l)
{
	int64_t	t0, el;

	t0 = util_now_ns();
	load_pump(l, l->count);
	el = util_now_ns() - t0;
	printf("scenario=throughput count=%zu size=%zu window=%zu sent=%llu "
	    "received=%llu elapsed_s=%.3f msgs_per_s=%.0f bytes_out=%llu "
	    "bytes_in=%llu", l->count, l->size, l->window,
	    (unsigned long long)l->sent, (unsigned long long)l->received,
	    (double)el / 1e9, 2.0 * (double)l->received * 1e9 / (double)el,
	    (unsigned long long)l->bytes_out, (unsigned long long)l->bytes_in);
}

/* One big request and its answer: MB/s over the round trip. */
static void
load_large(struct load *l)
{
	char	*req;
	size_t	 len;
	int64_t	 t0, el;

	/* Built before the clock starts: only the round trip is timed. */
	req = util_request(l->first_id, l->size, &len);
	l->pend = req;
	l->pend_len = len;
	l->sent = 1;
	t0 = util_now_ns();
	load_pump(l, 1);
	el = util_now_ns() - t0;
	printf("scenario=large count=1 size=%zu sent=1 received=%llu "
	    "elapsed_s=%.4f bytes=%llu mb_per_s=%.1f write_s=%.4f "
	    "wait_s=%.4f read_s=%.4f",
	    len - 1, (unsigned long long)l->received, (double)el / 1e9,
	    (unsigned long long)(l->bytes_out + l->bytes_in),
	    (double)(l->bytes_out + l->bytes_in) * 1e3 / (double)el,
	    (double)(l->t_written - t0) / 1e9,
	    (double)(l->t_first_in - l->t_written) / 1e9,
	    (double)(t0 + el - l->t_first_in) / 1e9);
	free(req);
}

/*
 * Close CMD's stdin, read what it still says (nothing is expected), wait
 * for it and take its peak RSS in KiB.  Returns its exit status, 128+N if
 * signal N killed it.
 */
static int
load_finish(struct load *l, long *rss_kb)
{
	struct rusage	ru;
	int		status;
	size_t		extra = 0;
	ssize_t		n;

	close(l->to_fd);
	for (;;) {
		n = read(l->from_fd, l->rbuf, BENCH_IO_SIZE);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		extra += (size_t)n;
	}
	close(l->from_fd);
	if (extra > 0)
		util_warnx("%zu unexpected bytes from %s after the last answer",
		    extra, l->argv[0]);
	while (wait4(l->pid, &status, 0, &ru) == -1) {
		if (errno != EINTR)
			util_fatal("waiting for %s", l->argv[0]);
	}
	util_watchdog_child(-1);
	*rss_kb = ru.ru_maxrss;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scenario",	required_argument,	NULL, 's' },
		{ "count",	required_argument,	NULL, 'n' },
		{ "size",	required_argument,	NULL, 'b' },
		{ "window",	required_argument,	NULL, 'w' },
		{ "warmup",	required_argument,	NULL, 'W' },
		{ "timeout",	required_argument,	NULL, 't' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct load	 l;
	size_t		 timeout = LOAD_TIMEOUT, count = 0, size = 0;
	long		 rss_kb;
	int		 ch, i, status;
	char		 what[64];

	util_setprogname(argv[0]);
	memset(&l, 0, sizeof l);
	l.scenario = SCENARIO_LATENCY;
	l.window = LOAD_WINDOW;
	l.warmup = LOAD_WARMUP;
	l.first_id = 1;
	while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			for (i = 0; i < SCENARIO_MAX; i++) {
				if (strcmp(optarg, scenario_names[i]) == 0)
					break;
			}
			if (i == SCENARIO_MAX)
				util_fatalx("unknown scenario \"%s\" (latency, "
				    "throughput or large)", optarg);
			l.scenario = i;
			break;
		case 'n':
			count = util_parse_size("--count", optarg);
			break;
		case 'b':
			size = util_parse_size("--size", optarg);
			break;
		case 'w':
			l.window = util_parse_size("--window", optarg);
			break;
		case 'W':
			l.warmup = util_parse_size("--warmup", optarg);
			break;
		case 't':
			timeout = util_parse_size("--timeout", optarg);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0)
		usage();
	l.argv = argv;

	switch (l.scenario) {
	case SCENARIO_LATENCY:
		l.count = count != 0 ? count : LOAD_LATENCY_COUNT;
		l.size = size != 0 ? size : LOAD_SMALL_SIZE;
		break;
	case SCENARIO_THROUGHPUT:
		l.count = count != 0 ? count : LOAD_THROUGHPUT_COUNT;
		l.size = size != 0 ? size : LOAD_SMALL_SIZE;
		break;
	default:
		l.count = 1;
		l.size = size != 0 ? size : LOAD_LARGE_SIZE;
		break;
	}
	if (l.size > BENCH_MSG_MAX)
		util_fatalx("--size %zu is over the limit of %zu", l.size,
		    BENCH_MSG_MAX);
	if (l.scenario != SCENARIO_LARGE &&
	    util_request_len(l.first_id + l.warmup + l.count, l.size) >
	    BENCH_IO_SIZE)
		util_fatalx("--size %zu is too big for the %s scenario (use "
		    "large)", l.size, scenario_names[l.scenario]);
	if (l.window == 0)
		util_fatalx("--window must be at least 1");

	signal(SIGPIPE, SIG_IGN);
	snprintf(what, sizeof what, "scenario %s", scenario_names[l.scenario]);
	util_watchdog((unsigned int)timeout, what);
	l.rbuf = util_xmalloc(BENCH_IO_SIZE);
	l.wbuf = util_xmalloc(BENCH_IO_SIZE);
	load_spawn(&l);

	switch (l.scenario) {
	case SCENARIO_LATENCY:
		load_latency(&l);
		break;
	case SCENARIO_THROUGHPUT:
		load_throughput(&l);
		break;
	default:
		load_large(&l);
		break;
	}
	status = load_finish(&l, &rss_kb);
	printf(" rss_kb=%ld status=%d\n", rss_kb, status);
	fflush(stdout);
	free(l.rbuf);
	free(l.wbuf);
	if (status != 0) {
		util_warnx("%s exited with status %d", l.argv[0], status);
		return 1;
	}
	return 0;
}
