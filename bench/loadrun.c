/*
 * What the HTTP load clients (http_load, mcp_load) share around their
 * round trips: the command line every one of them takes (scenario, count,
 * size, connections, warm-up, time limit, URL), the connections, and a
 * run: one thread per connection, each warmed up, then all started
 * together and timed, the latencies of the first kept.  The tool gives
 * its round trip as a callback; any failure in it is fatal, as everywhere
 * in the bench.
 */

#include <sys/resource.h>
#include <sys/time.h>

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Connections at most: each is a thread. */
#define LOADRUN_CONNS_MAX	256

static const char *loadrun_scenario_names[LOADRUN_MAX] = {
	"latency", "throughput"
};

/* One connection's part of a run. */
struct loadrun_conn {
	const struct loadrun_ops	*ops;
	const struct htarget		*t;
	void				*arg;
	uint64_t			 first_id;
	size_t				 count;		/* requests to time */
	size_t				 warmup;	/* before those */
	int64_t				*ns;		/* latency: to the answer */
	int64_t				*head_ns;	/* latency: to its head */
	pthread_barrier_t		*start;
	uint64_t			 sent;		/* requests written */
	uint64_t			 received;	/* answers read whole */
};

static void	*loadrun_main_cb(void *);

/* Set r to the defaults: latency, SIZE bytes, CONNS, WARMUP, TIMEOUT. */
void
loadrun_init(struct loadrun *r, size_t size, size_t conns, size_t warmup,
    size_t timeout)
{
	memset(r, 0, sizeof *r);
	r->sc = LOADRUN_LATENCY;
	r->size = size;
	r->conns = conns;
	r->warmup = warmup;
	r->timeout = timeout;
}

/* Take one of the shared options (LOADRUN_LONGOPTS); -1 if not one. */
int
loadrun_option(struct loadrun *r, int ch, const char *arg)
{
	int	k;

	switch (ch) {
	case 's':
		for (k = 0; k < LOADRUN_MAX; k++) {
			if (strcmp(arg, loadrun_scenario_names[k]) == 0)
				break;
		}
		if (k == LOADRUN_MAX)
			util_fatalx("unknown scenario \"%s\" (latency or "
			    "throughput)", arg);
		r->sc = k;
		return 0;
	case 'n':
		r->count = util_parse_size("--count", arg);
		return 0;
	case 'b':
		r->size = util_parse_size("--size", arg);
		return 0;
	case 'c':
		r->conns = util_parse_size("--conns", arg);
		return 0;
	case 'W':
		r->warmup = util_parse_size("--warmup", arg);
		return 0;
	case 't':
		r->timeout = util_parse_size("--timeout", arg);
		return 0;
	}
	return -1;
}

/*
 * Check what was parsed, take the URL (the one argument left: -1 if
 * there is not exactly one), pick the count when none was given and arm
 * the watchdog named after what (e.g. "HTTP").
 */
int
loadrun_finish(struct loadrun *r, int argc, char **argv, size_t lcount,
    size_t tcount, const char *what)
{
	char	name[64];

	if (optind + 1 != argc)
		return -1;
	r->url = argv[optind];
	if (r->size > BENCH_MSG_MAX)
		util_fatalx("--size %zu is over the limit of %zu", r->size,
		    BENCH_MSG_MAX);
	if (r->sc == LOADRUN_LATENCY)
		r->conns = 1;
	if (r->conns == 0 || r->conns > LOADRUN_CONNS_MAX)
		util_fatalx("--conns must be 1 to %d", LOADRUN_CONNS_MAX);
	if (r->count == 0)
		r->count = r->sc == LOADRUN_LATENCY ? lcount : tcount;
	if (r->count < r->conns)
		r->conns = r->count;
	signal(SIGPIPE, SIG_IGN);
	snprintf(name, sizeof name, "%s %s", what,
	    loadrun_scenario_names[r->sc]);
	util_watchdog((unsigned int)r->timeout, name);
	return 0;
}

/* Open a connection to t for a tool whose shared state is arg. */
struct loadconn *
loadrun_open(const struct htarget *t, void *arg)
{
	struct loadconn	*c;

	c = util_xmalloc(sizeof *c);
	memset(c, 0, sizeof *c);
	c->arg = arg;
	hlink_open(&c->hc, t);
	return c;
}

/* Close a connection and free it. */
void
loadrun_close(struct loadconn *c)
{
	hlink_close(&c->hc);
	free(c->req);
	free(c);
}

/* The connection's request buffer, at least len bytes. */
char *
loadrun_req(struct loadconn *c, size_t len)
{
	if (c->req_cap < len) {
		c->req = util_xrealloc(c->req, len);
		c->req_cap = len;
	}
	return c->req;
}

/* Run one connection's requests, timing them if asked. */
static void *
loadrun_main_cb(void *arg)
{
	struct loadrun_conn	*lc = arg;
	struct loadconn		*c;
	int64_t			 t0, th = 0;
	size_t			 i;

	c = loadrun_open(lc->t, lc->arg);
	for (i = 0; i < lc->warmup; i++)
		lc->ops->round_trip(c, lc->first_id + i, NULL);
	pthread_barrier_wait(lc->start);
	for (i = 0; i < lc->count; i++) {
		t0 = util_now_ns();
		lc->ops->round_trip(c, lc->first_id + lc->warmup + i,
		    lc->head_ns != NULL ? &th : NULL);
		if (lc->ns != NULL)
			lc->ns[i] = util_now_ns() - t0;
		if (lc->head_ns != NULL)
			lc->head_ns[i] = th - t0;
	}
	lc->sent = c->hc.sent;
	lc->received = c->hc.received;
	loadrun_close(c);
	return NULL;
}

/*
 * Run r: r->conns connections to t, each doing ops's round trips (arg in
 * their struct loadconn), ids from 1 up, warm-up only for latency.
 * Fills the results in r: the requests written and the answers read
 * whole, as the connections counted them (warm-up included), the timed
 * part's elapsed time, the latencies of connection 0 and the process's
 * CPU time.
 */
void
loadrun_run(struct loadrun *r, const struct loadrun_ops *ops,
    const struct htarget *t, void *arg)
{
	struct loadrun_conn	*cl;
	struct rusage		 ru;
	pthread_barrier_t	 start;
	pthread_t		*th;
	uint64_t		 next_id = 1;
	int64_t			 t0;
	size_t			 i, per;

	cl = calloc(r->conns, sizeof *cl);
	th = calloc(r->conns, sizeof *th);
	if (cl == NULL || th == NULL)
		util_fatalx("out of memory for %zu connections", r->conns);
	pthread_barrier_init(&start, NULL, (unsigned int)r->conns + 1);
	per = r->count / r->conns;
	for (i = 0; i < r->conns; i++) {
		cl[i].ops = ops;
		cl[i].t = t;
		cl[i].arg = arg;
		cl[i].count = per + (i < r->count % r->conns ? 1 : 0);
		cl[i].warmup = r->sc == LOADRUN_LATENCY ? r->warmup : 0;
		cl[i].first_id = next_id;
		next_id += cl[i].warmup + cl[i].count;
		cl[i].start = &start;
		if (r->sc == LOADRUN_LATENCY) {
			cl[i].ns = util_xmalloc(cl[i].count * sizeof *cl[i].ns);
			if (ops->heads)
				cl[i].head_ns = util_xmalloc(cl[i].count *
				    sizeof *cl[i].head_ns);
		}
		if (pthread_create(&th[i], NULL, loadrun_main_cb, &cl[i]) != 0)
			util_fatalx("cannot start a thread for connection %zu",
			    i);
	}
	/* Everyone is connected and warmed up: start the clock. */
	pthread_barrier_wait(&start);
	t0 = util_now_ns();
	for (i = 0; i < r->conns; i++) {
		pthread_join(th[i], NULL);
		r->sent += cl[i].sent;
		r->received += cl[i].received;
	}
	r->elapsed_ns = util_now_ns() - t0;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		r->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
		    ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) /
		    1e6;
	if (r->sc == LOADRUN_LATENCY) {
		util_stats(cl[0].ns, cl[0].count, &r->st);
		if (ops->heads)
			util_stats(cl[0].head_ns, cl[0].count, &r->head);
	}
	for (i = 0; i < r->conns; i++) {
		free(cl[i].ns);
		free(cl[i].head_ns);
	}
	pthread_barrier_destroy(&start);
	free(cl);
	free(th);
}

/* Messages per second of a throughput run, both directions counted. */
double
loadrun_msgs_per_s(const struct loadrun *r)
{
	return 2.0 * (double)r->received * 1e9 / (double)r->elapsed_ns;
}
