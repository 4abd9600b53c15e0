/*
 * The OTLP exporter: the event loop's thread turns each message into
 * facts and pushes them on a bounded queue (a mutex held for a list
 * push); a thread of the exporter's own feeds them to each session's
 * span builder, batches the spans (512, or 1 s after the first unsent
 * one), encodes and POSTs them to the collector, retrying as OTLP/HTTP
 * says.  When the queue is full or the collector keeps failing, spans are
 * dropped and counted against their session: forwarding and recording
 * never wait for a collector.
 */

#include <sys/resource.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "formats.h"

/* A batch is sent at this many spans, or this many bytes (payloads
   counted; the JSON encoder builds a request's whole tree), or this long
   after its first.  The bytes are an estimate (otlp_export_span_bytes), so
   a request can be noticeably larger: the cap bounds it, not exactly. */
#define OTLP_BATCH_SPANS	512
#define OTLP_BATCH_BYTES	((size_t)4 * 1024 * 1024)
#define OTLP_BATCH_DELAY_NS	((int64_t)1000000000)
/*
 * The producer does not wake the exporter for each message (a futex wake
 * and a context switch per message on the loop thread): the exporter
 * takes the queue on a tick while anything is queued or batched, and is
 * woken when the queue passes a threshold, when it was idle, at a
 * session's end and at the stop.
 */
#define OTLP_TICK_NS		((int64_t)200000000)
#define OTLP_WAKE_ITEMS		((size_t)512)
#define OTLP_WAKE_BYTES		((size_t)1024 * 1024)
/* Retry backoff: from 1 s, doubling, at most 30 s (Retry-After too). */
#define OTLP_BACKOFF_FIRST_NS	((int64_t)1000000000)
#define OTLP_BACKOFF_MAX_NS	((int64_t)30 * 1000000000)
/* Answers dropped while their session's next item waits: past this
   many the session is lossy (its unanswered spans are dropped, not sent). */
#define OTLP_FORGET_MAX		64
/* Why a batch went unsent when the stop's deadline came first. */
#define OTLP_TIME_RAN_OUT	"time ran out before it could be sent"

/* A request whose answer was dropped: the builder forgets it. */
struct otlp_forget {
	enum dir		 dir;		/* the request's */
	char			*id;		/* NULL: a null id */
};

/*
 * A session: its builder lives until its end is processed (then only
 * this small struct stays, for otlp_session_dropped, until otlp_free).
 */
struct otlp_sess {
	struct otlp_builder	*b;		/* the exporter thread's */
	atomic_uint_least64_t	 dropped;
	int			 end_queued;	/* the loop thread's */
	int			 ended;		/* the exporter thread's */
	/* Under mtx: answers dropped since the session's last item. */
	struct otlp_forget	*forget;
	size_t			 nforget;
	int			 lossy;		/* more than OTLP_FORGET_MAX */
	int			 lost;		/* the exporter thread's lossy */
	struct otlp_sess	*next;		/* every session */
};

enum otlp_item_type {
	OTLP_ITEM_FACTS,	/* one message's facts */
	OTLP_ITEM_END,		/* the session ended at end_ns */
};

struct otlp_item {
	enum otlp_item_type	 type;
	struct otlp_sess	*sess;
	struct otlp_fact	*facts;
	int			 copy;		/* m is a copy (its raw after the
						   item); the exporter thread
						   makes the facts */
	struct msg		 m;
	int64_t			 end_ns;
	size_t			 size;		/* in the queue's bytes */
	uint64_t		 nspans;	/* spans its facts start */
	struct otlp_forget	*forget;	/* requests to forget first */
	size_t			 nforget;
	int			 lossy;		/* the session lost answers */
	struct otlp_item	*next;
};

/* A run of a batch's spans that belong to one session. */
struct otlp_run {
	struct otlp_sess	*sess;
	size_t			 n;
};

struct otlp {
	struct otlp_config	 cfg;		/* a copy */
	struct otlp_resource	 res;
	char			*where;		/* the collector, printable */
	struct otlp_http	*http;

	pthread_t		 thread;
	pthread_mutex_t		 mtx;
	pthread_cond_t		 work;		/* the exporter waits */
	pthread_cond_t		 room;		/* block: the producer waits */
	/* Under mtx: */
	struct otlp_item	*head, **tailp;
	size_t			 count;		/* items queued or in hand */
	size_t			 bytes;
	int			 stopping;
	int64_t			 stop_deadline;	/* clock_mono_ns */
	int			 idle;		/* the exporter waits for a
						   wake, no tick */
	int			 kicked;	/* woken: take the queue now */
	struct otlp_sess	*sessions;
	int			 stopped;	/* otlp_stop ran */

	atomic_uint_least64_t	 sent;
	atomic_uint_least64_t	 dropped;
	atomic_int		 warned;	/* the first failure was said */
	_Atomic int64_t		 limit;		/* the stop deadline, for the
						   HTTP client's waits */

	/* The exporter thread's: */
	struct otlp_span	*batch, **batch_tail;
	size_t			 nbatch;
	size_t			 batch_bytes;	/* otlp_export_span_bytes() */
	int64_t			 tick;		/* mono: the next take */
	int64_t			 batch_first;	/* mono, of its first span */
	struct otlp_run		*runs;
	size_t			 nruns, runs_cap;
	struct obuf		 body;
	uint64_t		 rng;
	char			*last_cause;	/* read after the join */
};

/* Spans the facts of one message start (its requests, notifications). */
static uint64_t
otlp_export_nspans(const struct otlp_fact *f)
{
	uint64_t	n = 0;

	for (; f != NULL; f = f->next)
		if (f->kind == KIND_REQUEST || f->kind == KIND_NOTIFICATION)
			n++;
	return n;
}

/* Count n spans of s as dropped. */
static void
otlp_export_drop(struct otlp *o, struct otlp_sess *s, uint64_t n)
{
	if (n == 0)
		return;
	if (s != NULL)
		atomic_fetch_add(&s->dropped, n);
	atomic_fetch_add(&o->dropped, n);
}

/* Say the first failure, once for the exporter's life. */
static void
otlp_export_warn_once(struct otlp *o, const char *why)
{
	if (atomic_exchange(&o->warned, 1) != 0)
		return;
	log_warnx("OpenTelemetry collector at %s: %s; spans are dropped "
	    "while it fails (counted in the session)", o->where, why);
}

/* A number from 0 to 1 (excluded), for jitter. */
static double
otlp_export_random(struct otlp *o)
{
	o->rng ^= o->rng << 13;
	o->rng ^= o->rng >> 7;
	o->rng ^= o->rng << 17;
	return (double)(o->rng >> 11) / (double)(1ULL << 53);
}

/* The time t (clock_mono_ns) as an absolute timespec for the conds. */
static struct timespec
otlp_export_ts(int64_t t)
{
	struct timespec	ts;

	ts.tv_sec = (time_t)(t / 1000000000);
	ts.tv_nsec = (long)(t % 1000000000);
	return ts;
}

/*
 * About the bytes span sp takes in a request (its texts and payloads).
 * An estimate, low: JSON escaping (a payload carried as a string has each
 * quote escaped, a control character takes six bytes), the hex ids and the
 * resource's attributes are not counted.
 */
static size_t
otlp_export_span_bytes(const struct otlp_span *sp)
{
	const char	*k;
	json_t		*v;
	size_t		 n = 64;

	if (sp->name != NULL)
		n += strlen(sp->name);
	if (sp->status_message != NULL)
		n += strlen(sp->status_message);
	if (sp->trace_state != NULL)
		n += strlen(sp->trace_state);
	if (sp->attrs == NULL)
		return n;
	json_object_foreach(sp->attrs, k, v) {
		n += strlen(k) + 8;
		if (json_is_string(v))
			n += json_string_length(v);
		else if (json_is_object(v) || json_is_array(v))
			n += json_dumpb(v, NULL, 0, JSON_COMPACT);
	}
	return n;
}

/* Append spans of s to the batch. */
static void
otlp_export_batch_add(struct otlp *o, struct otlp_sess *s,
    struct otlp_span *spans)
{
	size_t	n = 0;

	if (spans == NULL)
		return;
	if (o->nbatch == 0)
		o->batch_first = clock_mono_ns();
	*o->batch_tail = spans;
	for (; spans != NULL; spans = spans->next) {
		n++;
		o->batch_bytes += otlp_export_span_bytes(spans);
		o->batch_tail = &spans->next;
	}
	o->nbatch += n;
	if (o->nruns > 0 && o->runs[o->nruns - 1].sess == s) {
		o->runs[o->nruns - 1].n += n;
		return;
	}
	if (o->nruns == o->runs_cap) {
		o->runs_cap = o->runs_cap == 0 ? 16 : o->runs_cap * 2;
		o->runs = xreallocarray(o->runs, o->runs_cap, sizeof *o->runs);
	}
	o->runs[o->nruns].sess = s;
	o->runs[o->nruns++].n = n;
}

/*
 * Take the first n spans (bytes of them) off the batch (a list of their
 * own, returned), and the runs that say whose they are into *taken
 * (*ntaken of them).
 */
static struct otlp_span *
otlp_export_batch_take(struct otlp *o, size_t n, size_t bytes,
    struct otlp_run **taken, size_t *ntaken)
{
	struct otlp_span	*first = o->batch, **pp = &o->batch;
	size_t			 i, k, left = n;

	for (i = 0; i < n && *pp != NULL; i++)
		pp = &(*pp)->next;
	o->batch_bytes -= bytes < o->batch_bytes ? bytes : o->batch_bytes;
	o->batch = *pp;
	*pp = NULL;
	if (o->batch == NULL) {
		o->batch_tail = &o->batch;
		o->batch_bytes = 0;
	}
	o->nbatch -= n;
	/* What is left keeps its batch_first: it is due as soon. */
	*taken = xreallocarray(NULL, o->nruns > 0 ? o->nruns : 1,
	    sizeof **taken);
	*ntaken = 0;
	for (i = 0; i < o->nruns && left > 0; i++) {
		k = o->runs[i].n < left ? o->runs[i].n : left;
		(*taken)[*ntaken].sess = o->runs[i].sess;
		(*taken)[(*ntaken)++].n = k;
		o->runs[i].n -= k;
		left -= k;
	}
	for (i = 0; i < o->nruns && o->runs[i].n == 0; i++)
		;
	memmove(o->runs, o->runs + i, (o->nruns - i) * sizeof *o->runs);
	o->nruns -= i;
	return first;
}

/*
 * Wait until t (clock_mono_ns) or a stop that brings the deadline before
 * it; the new deadline when stopping, else INT64_MAX.
 */
static int64_t
otlp_export_sleep(struct otlp *o, int64_t t)
{
	struct timespec	ts = otlp_export_ts(t);
	int64_t		stop = INT64_MAX;

	pthread_mutex_lock(&o->mtx);
	while (clock_mono_ns() < t) {
		if (o->stopping && o->stop_deadline < t)
			break;
		pthread_cond_timedwait(&o->work, &o->mtx, &ts);
	}
	if (o->stopping)
		stop = o->stop_deadline;
	pthread_mutex_unlock(&o->mtx);
	return stop;
}

/* The stop deadline when stopping, else INT64_MAX. */
static int64_t
otlp_export_stop_deadline(struct otlp *o)
{
	int64_t	stop = INT64_MAX;

	pthread_mutex_lock(&o->mtx);
	if (o->stopping)
		stop = o->stop_deadline;
	pthread_mutex_unlock(&o->mtx);
	return stop;
}

/* What to do about an HTTP status (text to append to it). */
static const char *
otlp_export_advice(int status)
{
	switch (status) {
	case 401:
	case 403:
		return " (check the headers: --otlp-header or "
		    "OTEL_EXPORTER_OTLP_HEADERS)";
	case 404:
		return " (check the URL's path: a collector takes /v1/traces)";
	case 413:
		return " (the collector refuses a batch this large)";
	case 415:
		return " (check --otlp-protocol or OTEL_EXPORTER_OTLP_PROTOCOL)";
	default:
		return "";
	}
}

/* Whether an OTLP/HTTP answer (or none: 0) is worth trying again. */
static int
otlp_export_retryable(int status)
{
	return status == 0 || status == 429 || status == 502 ||
	    status == 503 || status == 504;
}

/* Count k of the taken runs' spans as dropped, from the first run on
   (which spans a collector rejected it does not say). */
static void
otlp_export_drop_taken(struct otlp *o, const struct otlp_run *taken,
    size_t ntaken, size_t k)
{
	size_t	i, m;

	for (i = 0; i < ntaken && k > 0; i++) {
		m = taken[i].n < k ? taken[i].n : k;
		otlp_export_drop(o, taken[i].sess, m);
		k -= m;
	}
}

/*
 * Send up to OTLP_BATCH_SPANS spans of the batch: encode, POST, retry
 * with backoff while the batch is younger than the timeout (and before a
 * stop's deadline); counted as sent or as dropped.
 */
static void
otlp_export_send(struct otlp *o)
{
	struct otlp_span	*spans, *sp;
	size_t			 n = 0, bytes = 0, b;
	int64_t			 deadline, stop, now, wait, backoff;
	int			 status, retry_after, r;
	int64_t			 rej;
	char			*why = NULL, *plain;
	struct otlp_run		*taken;
	size_t			 ntaken, i;

	/* At most OTLP_BATCH_SPANS, and OTLP_BATCH_BYTES but for one. */
	for (sp = o->batch; sp != NULL && n < OTLP_BATCH_SPANS; sp = sp->next) {
		b = otlp_export_span_bytes(sp);
		if (n > 0 && bytes + b > OTLP_BATCH_BYTES)
			break;
		bytes += b;
		n++;
	}
	if (n == 0)
		return;
	deadline = clock_mono_ns() + (int64_t)o->cfg.timeout_ms * 1000000;
	stop = otlp_export_stop_deadline(o);
	if (stop < deadline)
		deadline = stop;
	spans = otlp_export_batch_take(o, n, bytes, &taken, &ntaken);
	if (clock_mono_ns() >= deadline) {
		why = xstrdup(OTLP_TIME_RAN_OUT);
		goto drop;
	}
	obuf_reset(&o->body);
	if (o->cfg.protocol == OTLP_HTTP_JSON)
		otlp_json_traces(&o->res, spans, &o->body);
	else
		otlp_pb_traces(&o->res, spans, &o->body);
	backoff = OTLP_BACKOFF_FIRST_NS;
	for (;;) {
		free(why);
		why = NULL;
		r = otlp_http_post(o->http, o->body.p, o->body.len, deadline,
		    &status, &retry_after, &why);
		if (r == 0 && status >= 200 && status < 300) {
			/* The collector took them, but for those it said it
			   rejected. */
			rej = otlp_http_rejected(o->http);
			if (rej > (int64_t)n)
				rej = (int64_t)n;
			atomic_fetch_add(&o->sent, n - (size_t)rej);
			otlp_export_drop_taken(o, taken, ntaken, (size_t)rej);
			break;
		}
		if (r == 0)
			xasprintf(&why, "HTTP %d%s", status,
			    otlp_export_advice(status));
		else if (r == -1 && (strncmp(why, "connect:", 8) == 0 ||
		    strcmp(why, "timed out") == 0)) {
			plain = why;
			xasprintf(&why, "%s; is a collector listening there?",
			    plain);
			free(plain);
		}
		if (r == -2 || !otlp_export_retryable(r == 0 ? status : 0))
			goto drop;
		/* The backoff is a floor: Retry-After 0 is no busy loop. */
		wait = backoff + (int64_t)((double)backoff * 0.4 *
		    (otlp_export_random(o) - 0.5));
		if (retry_after >= 0 &&
		    (int64_t)retry_after * 1000000000 > wait)
			wait = (int64_t)retry_after * 1000000000;
		backoff *= 2;
		if (backoff > OTLP_BACKOFF_MAX_NS)
			backoff = OTLP_BACKOFF_MAX_NS;
		if (wait > OTLP_BACKOFF_MAX_NS)
			wait = OTLP_BACKOFF_MAX_NS;
		now = clock_mono_ns();
		if (now + wait >= deadline)
			goto drop;
		log_debug("OpenTelemetry collector: %s; again in %lld ms", why,
		    (long long)(wait / 1000000));
		stop = otlp_export_sleep(o, now + wait);
		if (stop < deadline)
			deadline = stop;
		if (clock_mono_ns() >= deadline)
			goto drop;
	}
	free(why);
	free(taken);
	otlp_span_free(spans);
	return;
drop:
	for (i = 0; i < ntaken; i++)
		otlp_export_drop(o, taken[i].sess, taken[i].n);
	free(taken);
	otlp_export_warn_once(o, why);
	/* What the collector did says more than a deadline passed after. */
	if (o->last_cause == NULL || strcmp(why, OTLP_TIME_RAN_OUT) != 0) {
		free(o->last_cause);
		o->last_cause = why;
	} else
		free(why);
	otlp_span_free(spans);
}

/* Free n forget entries at f. */
static void
otlp_export_forget_free(struct otlp_forget *f, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(f[i].id);
	free(f);
}

/*
 * Session s lost the answers of n requests f (freed here): its builder
 * forgets them, each counted as a dropped span; lossy: more were lost.
 */
static void
otlp_export_forget(struct otlp *o, struct otlp_sess *s,
    struct otlp_forget *f, size_t n, int lossy)
{
	size_t	i;

	if (lossy)
		s->lost = 1;
	for (i = 0; i < n && s->b != NULL; i++)
		if (otlp_builder_forget(s->b, f[i].dir, f[i].id))
			otlp_export_drop(o, s, 1);
	otlp_export_forget_free(f, n);
}

/*
 * Session s ends at end_ns: its waiting requests end unanswered (counted
 * as dropped, not sent, when it lost answers) and its builder is freed.
 */
static void
otlp_export_end(struct otlp *o, struct otlp_sess *s, int64_t end_ns)
{
	struct otlp_span	*spans = NULL, *sp;
	uint64_t		 n = 0;

	otlp_builder_end(s->b, end_ns, &spans);
	if (s->lost) {
		for (sp = spans; sp != NULL; sp = sp->next)
			n++;
		otlp_export_drop(o, s, n);
		otlp_span_free(spans);
	} else
		otlp_export_batch_add(o, s, spans);
	otlp_builder_free(s->b);
	s->b = NULL;
	s->ended = 1;
}

/*
 * Feed one item to its session's builder; completed spans to the batch.
 * Stopping and past the deadline, its spans are only counted as dropped.
 */
static void
otlp_export_item(struct otlp *o, struct otlp_item *it, int stopping)
{
	struct otlp_fact	*f, *next;
	struct otlp_span	*spans;
	struct scan		 sc;
	int			 late;

	late = stopping && it->type == OTLP_ITEM_FACTS &&
	    clock_mono_ns() >= o->stop_deadline;
	if (it->copy && late) {
		/* Only counted: a scan for its kind, not a parse. */
		scan_message(it->m.raw, it->m.len, &sc);
		if (sc.kind == KIND_REQUEST || sc.kind == KIND_NOTIFICATION)
			it->nspans = 1;
	} else if (it->copy) {
		it->facts = otlp_fact_new(&it->m, o->cfg.payloads);
		for (f = it->facts; f != NULL; f = f->next)
			f->sess = it->sess;
		it->nspans = otlp_export_nspans(it->facts);
	}
	otlp_export_forget(o, it->sess, it->forget, it->nforget, it->lossy);
	it->forget = NULL;
	it->nforget = 0;
	if (late) {
		otlp_export_drop(o, it->sess, it->nspans);
		otlp_fact_free(it->facts);
		it->facts = NULL;
		return;
	}

	if (it->type == OTLP_ITEM_END) {
		if (!it->sess->ended)
			otlp_export_end(o, it->sess, it->end_ns);
		return;
	}
	for (f = it->facts; f != NULL; f = next) {
		next = f->next;
		f->next = NULL;
		if (it->sess->ended) {
			otlp_fact_free(f);
			continue;
		}
		spans = NULL;
		otlp_builder_fact(it->sess->b, f, &spans);
		otlp_export_batch_add(o, it->sess, spans);
	}
	it->facts = NULL;
}

/* n items of bytes taken from the queue are done: room for the producer. */
static void
otlp_export_done(struct otlp *o, size_t n, size_t bytes)
{
	if (n == 0)
		return;
	pthread_mutex_lock(&o->mtx);
	o->count -= n;
	o->bytes -= bytes;
	pthread_cond_broadcast(&o->room);
	pthread_mutex_unlock(&o->mtx);
}

/*
 * The exporter runs at the lowest CPU priority (Linux gives each thread a
 * nice value of its own): on a busy machine the event loop and the
 * writer come first, and spans wait in the queue, or are dropped and
 * counted when it fills, rather than the traffic waiting for them.
 */
static void
otlp_export_nice(void)
{
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 19) != 0)
		log_debug("otlp: the exporter keeps the normal priority: %s",
		    strerror(errno));
}

/* The exporter thread: take the queue, build, batch, send; until stop. */
static void *
otlp_export_main(void *arg)
{
	struct otlp		*o = arg;
	struct otlp_item	*list, *it, *next;
	struct otlp_sess	*s;
	struct otlp_forget	*fl;
	struct timespec		 ts;
	size_t			 n, bytes, nf;
	int			 stopping, lossy;
	int64_t			 now, t;

	otlp_export_nice();
	for (;;) {
		/*
		 * Take the queue when woken or at the tick; send the batch
		 * when due.  Idle (nothing queued or batched for a tick):
		 * wait for the producer's wake.
		 */
		pthread_mutex_lock(&o->mtx);
		for (;;) {
			if (o->stopping)
				break;
			now = clock_mono_ns();
			if (o->head != NULL && (o->kicked || now >= o->tick))
				break;
			if (o->nbatch > 0 && now >= o->batch_first +
			    OTLP_BATCH_DELAY_NS)
				break;
			if (o->head == NULL && o->nbatch == 0 &&
			    now >= o->tick) {
				o->idle = 1;
				pthread_cond_wait(&o->work, &o->mtx);
				o->idle = 0;
				continue;
			}
			if (now >= o->tick)
				o->tick = now + OTLP_TICK_NS;
			t = o->tick;
			if (o->nbatch > 0 && o->batch_first +
			    OTLP_BATCH_DELAY_NS < t)
				t = o->batch_first + OTLP_BATCH_DELAY_NS;
			ts = otlp_export_ts(t);
			pthread_cond_timedwait(&o->work, &o->mtx, &ts);
		}
		list = o->head;
		o->head = NULL;
		o->tailp = &o->head;
		o->kicked = 0;
		o->tick = clock_mono_ns() + OTLP_TICK_NS;
		stopping = o->stopping;
		pthread_mutex_unlock(&o->mtx);

		n = bytes = 0;
		for (it = list; it != NULL; it = next) {
			next = it->next;
			otlp_export_item(o, it, stopping);
			n++;
			bytes += it->size;
			free(it);
			/* An item can end thousands: the batch stays small.
			   The items done leave the queue's bounds first. */
			if (o->nbatch >= OTLP_BATCH_SPANS ||
			    o->batch_bytes >= OTLP_BATCH_BYTES) {
				otlp_export_done(o, n, bytes);
				n = bytes = 0;
			}
			while (o->nbatch >= OTLP_BATCH_SPANS ||
			    o->batch_bytes >= OTLP_BATCH_BYTES)
				otlp_export_send(o);
		}
		otlp_export_done(o, n, bytes);
		if (stopping)
			break;
		while (o->nbatch > 0 && clock_mono_ns() >= o->batch_first +
		    OTLP_BATCH_DELAY_NS)
			otlp_export_send(o);
	}

	/*
	 * Stopping: what came after the last take, then every session's
	 * waiting requests (they end now, unanswered), then send by the
	 * deadline; what is left past it is dropped and counted.
	 */
	pthread_mutex_lock(&o->mtx);
	list = o->head;
	o->head = NULL;
	o->tailp = &o->head;
	o->count = o->bytes = 0;
	pthread_cond_broadcast(&o->room);
	pthread_mutex_unlock(&o->mtx);
	for (it = list; it != NULL; it = next) {
		next = it->next;
		otlp_export_item(o, it, 1);
		free(it);
	}
	for (s = o->sessions; s != NULL; s = s->next) {
		/* Answers dropped after the session's last item. */
		pthread_mutex_lock(&o->mtx);
		fl = s->forget;
		nf = s->nforget;
		lossy = s->lossy;
		s->forget = NULL;
		s->nforget = 0;
		pthread_mutex_unlock(&o->mtx);
		if (s->ended) {
			otlp_export_forget_free(fl, nf);
			continue;
		}
		otlp_export_forget(o, s, fl, nf, lossy);
		otlp_export_end(o, s, clock_wall_ns());
	}
	while (o->nbatch > 0)
		otlp_export_send(o);
	return NULL;
}

/* The collector's URL without its query (which may hold a key). */
static char *
otlp_export_where(const char *endpoint)
{
	return xstrndup(endpoint, strcspn(endpoint, "?"));
}

/* Whether host names this machine (a loopback address or localhost). */
static int
otlp_export_loopback(const char *host)
{
	return strcasecmp(host, "localhost") == 0 ||
	    strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0;
}

/* Say once when headers (often a key) would go in clear text to
   another machine. */
static void
otlp_export_cleartext(const struct otlp_config *c)
{
	static atomic_int	 said;
	struct otlp_url		 u;
	char			*why = NULL;

	if (c->nheaders == 0 || otlp_url_parse(c->endpoint, &u, &why) != 0) {
		free(why);
		return;
	}
	if (!u.tls && !otlp_export_loopback(u.host) &&
	    atomic_exchange(&said, 1) == 0)
		log_warnx("OpenTelemetry: the collector's URL is http://, not "
		    "https://: its headers (--otlp-header, "
		    "OTEL_EXPORTER_OTLP_HEADERS) go to %s in clear text",
		    u.host);
	otlp_url_clear(&u);
}

/* Start the exporter for config c; NULL with *cause when it cannot. */
struct otlp *
otlp_start(const struct otlp_config *c, char **cause)
{
	struct otlp		*o;
	pthread_condattr_t	 ca;
	sigset_t		 all, old;
	size_t			 i;
	int			 r;

	if (c->endpoint == NULL) {
		xasprintf(cause, "no OpenTelemetry collector named");
		return NULL;
	}
	o = xcalloc(1, sizeof *o);
	o->cfg = *c;
	o->cfg.endpoint = xstrdup(c->endpoint);
	o->cfg.headers = c->nheaders > 0 ? xreallocarray(NULL, c->nheaders,
	    sizeof *o->cfg.headers) : NULL;
	for (i = 0; i < c->nheaders; i++)
		o->cfg.headers[i] = xstrdup(c->headers[i]);
	o->cfg.service_name = xstrdup(c->service_name != NULL ?
	    c->service_name : "mcpreel");
	if (c->resource_attrs != NULL)
		o->cfg.resource_attrs = json_incref(c->resource_attrs);
	if (o->cfg.timeout_ms <= 0)
		o->cfg.timeout_ms = 10000;
	o->res.service_name = o->cfg.service_name;
	o->res.attrs = o->cfg.resource_attrs;
	o->where = otlp_export_where(c->endpoint);
	if ((o->http = otlp_http_new(&o->cfg, cause)) == NULL)
		goto fail;
	otlp_export_cleartext(&o->cfg);
	atomic_init(&o->limit, INT64_MAX);
	otlp_http_limit(o->http, &o->limit);
	o->tailp = &o->head;
	o->batch_tail = &o->batch;
	obuf_init(&o->body);
	o->rng = (uint64_t)clock_mono_ns() ^ ((uint64_t)getpid() << 32) ^
	    0x9e3779b97f4a7c15ULL;
	if (o->rng == 0)
		o->rng = 1;
	atomic_init(&o->sent, 0);
	atomic_init(&o->dropped, 0);
	atomic_init(&o->warned, 0);
	pthread_mutex_init(&o->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&o->work, &ca);
	pthread_cond_init(&o->room, NULL);
	pthread_condattr_destroy(&ca);
	/* The thread takes no signal: they stay the loop's (SIGPIPE too). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&o->thread, NULL, otlp_export_main, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		xasprintf(cause, "cannot start the OpenTelemetry exporter's "
		    "thread: %s", strerror(r));
		pthread_cond_destroy(&o->work);
		pthread_cond_destroy(&o->room);
		pthread_mutex_destroy(&o->mtx);
		obuf_free(&o->body);
		goto fail;
	}
	return o;
fail:
	otlp_http_free(o->http);
	free(o->where);
	o->cfg.cacert = NULL;
	otlp_config_clear(&o->cfg);
	free(o);
	return NULL;
}

/* A new session whose spans all say info; NULL when o is NULL. */
struct otlp_sess *
otlp_session(struct otlp *o, const struct otlp_sess_info *info)
{
	struct otlp_sess	*s;

	if (o == NULL)
		return NULL;
	s = xcalloc(1, sizeof *s);
	atomic_init(&s->dropped, 0);
	s->b = otlp_builder_new(info, o->cfg.side, o->cfg.payloads);
	pthread_mutex_lock(&o->mtx);
	s->next = o->sessions;
	o->sessions = s;
	if (o->stopping)
		s->ended = 1;	/* too late: nothing of it is exported */
	pthread_mutex_unlock(&o->mtx);
	return s;
}

/* Remember (under mtx) that session s lost the answer of dir with id
   (NULL: null), for its builder to forget; past OTLP_FORGET_MAX the
   session is lossy. */
static void
otlp_export_lost_one(struct otlp_sess *s, enum dir dir, const char *id,
    size_t len)
{
	if (s->nforget == OTLP_FORGET_MAX) {
		s->lossy = 1;
		return;
	}
	if (s->forget == NULL)
		s->forget = xreallocarray(NULL, OTLP_FORGET_MAX,
		    sizeof *s->forget);
	s->forget[s->nforget].dir = dir == DIR_C2S ? DIR_S2C : DIR_C2S;
	s->forget[s->nforget++].id = id != NULL ? xstrndup(id, len) : NULL;
}

/*
 * Item it is dropped: the requests its answers answer are remembered in
 * its session (under mtx, taken here), and it->nspans is set.  A copy is
 * only scanned (scan_message: its kind and id), not made into facts.
 */
static void
otlp_export_lost(struct otlp *o, struct otlp_item *it)
{
	struct otlp_fact	*f;
	struct scan		 sc;
	const char		*id = NULL;
	size_t			 len = 0;

	if (!it->copy) {
		pthread_mutex_lock(&o->mtx);
		for (f = it->facts; f != NULL; f = f->next)
			if (f->kind == KIND_RESPONSE || f->kind == KIND_ERROR)
				otlp_export_lost_one(it->sess, f->dir, f->id,
				    f->id != NULL ? strlen(f->id) : 0);
		pthread_mutex_unlock(&o->mtx);
		return;
	}
	scan_message(it->m.raw, it->m.len, &sc);
	if (sc.kind == KIND_REQUEST || sc.kind == KIND_NOTIFICATION)
		it->nspans = 1;
	if (sc.kind != KIND_RESPONSE && sc.kind != KIND_ERROR)
		return;
	/* As otlp_fact_new writes an id: its text, a null none. */
	if (sc.has_id && !(sc.id_len == 4 &&
	    memcmp(it->m.raw + sc.id_off, "null", 4) == 0)) {
		id = it->m.raw + sc.id_off;
		len = sc.id_len;
		if (len > OTLP_STRING_MAX)
			len = scan_utf8_trim(id, OTLP_STRING_MAX);
	}
	pthread_mutex_lock(&o->mtx);
	otlp_export_lost_one(it->sess, it->m.dir, id, len);
	pthread_mutex_unlock(&o->mtx);
}

/* Queue item it (whose facts would start nspans spans); drop it when full
   and not block, or when stopping. */
static void
otlp_export_push(struct otlp *o, struct otlp_item *it, int bounded)
{
	int	full;

	pthread_mutex_lock(&o->mtx);
	for (;;) {
		/* One item over the bytes alone goes when the queue is
		   empty: else block would wait for it forever. */
		full = bounded && (o->count >= OTLP_QUEUE_MAX ||
		    (o->count > 0 && o->bytes + it->size > OTLP_QUEUE_BYTES));
		if (!full || !o->cfg.block || o->stopping)
			break;
		pthread_cond_wait(&o->room, &o->mtx);
	}
	if (full || o->stopping) {
		pthread_mutex_unlock(&o->mtx);
		otlp_export_lost(o, it);
		otlp_export_drop(o, it->sess, it->nspans);
		if (full)
			otlp_export_warn_once(o, "the exporter's queue is full "
			    "(the collector is slower than the traffic)");
		otlp_fact_free(it->facts);
		free(it);
		return;
	}
	/* The answers dropped since the session's last item go first. */
	it->forget = it->sess->forget;
	it->nforget = it->sess->nforget;
	it->lossy = it->sess->lossy;
	it->sess->forget = NULL;
	it->sess->nforget = 0;
	*o->tailp = it;
	o->tailp = &it->next;
	o->count++;
	o->bytes += it->size;
	/* No wake per message: the exporter ticks (see OTLP_TICK_NS). */
	if (!o->kicked && (o->idle || it->type == OTLP_ITEM_END ||
	    o->count >= OTLP_WAKE_ITEMS || o->bytes >= OTLP_WAKE_BYTES)) {
		o->kicked = 1;
		pthread_cond_signal(&o->work);
	}
	pthread_mutex_unlock(&o->mtx);
}

/* Message m of session s passed: its facts to the exporter, or dropped. */
void
otlp_message(struct otlp *o, struct otlp_sess *s, const struct msg *m)
{
	struct otlp_fact	*facts, *f;
	struct otlp_item	*it;
	size_t			 i;

	if (o == NULL || s == NULL || s->end_queued)
		return;
	/*
	 * A message of one object up to OTLP_COPY_MAX: a copy of its bytes
	 * goes, and the exporter thread makes its facts (the loop thread
	 * is the proxy's).  A larger one, a batch or a truncated one: its
	 * facts are made here (they are smaller than its bytes).
	 */
	for (i = 0; i < m->len && (m->raw[i] == ' ' || m->raw[i] == '\t' ||
	    m->raw[i] == '\r' || m->raw[i] == '\n'); i++)
		;
	if (!(m->flags & MSG_TRUNCATED) && m->len <= OTLP_COPY_MAX &&
	    i < m->len && m->raw[i] == '{') {
		it = xcalloc(1, sizeof *it + m->len + 1);
		it->type = OTLP_ITEM_FACTS;
		it->sess = s;
		it->copy = 1;
		it->m.dir = m->dir;
		it->m.ts_ns = m->ts_ns;
		it->m.mono_ns = m->mono_ns;
		it->m.wire_size = -1;
		it->m.raw = (char *)(it + 1);
		memcpy(it->m.raw, m->raw, m->len);
		it->m.len = m->len;
		it->size = sizeof *it + m->len;
		otlp_export_push(o, it, 1);
		return;
	}
	if ((facts = otlp_fact_new(m, o->cfg.payloads)) == NULL)
		return;
	it = xcalloc(1, sizeof *it);
	it->type = OTLP_ITEM_FACTS;
	it->sess = s;
	it->facts = facts;
	it->size = sizeof *it;
	for (f = facts; f != NULL; f = f->next) {
		f->sess = s;
		it->size += f->size;
	}
	it->nspans = otlp_export_nspans(facts);
	otlp_export_push(o, it, 1);
}

/* Session s ended at end_ns: its waiting requests end as unanswered. */
void
otlp_session_end(struct otlp *o, struct otlp_sess *s, int64_t end_ns)
{
	struct otlp_item	*it;

	if (o == NULL || s == NULL || s->end_queued)
		return;
	s->end_queued = 1;
	it = xcalloc(1, sizeof *it);
	it->type = OTLP_ITEM_END;
	it->sess = s;
	it->end_ns = end_ns;
	/* Not bounded: one per session, and it frees what it ends. */
	otlp_export_push(o, it, 0);
}

/* Send what is queued, waiting at most deadline_ms; then say the drops. */
void
otlp_stop(struct otlp *o, int deadline_ms)
{
	uint64_t	sent, dropped;

	if (o == NULL || o->stopped)
		return;
	if (deadline_ms < 0)
		deadline_ms = 0;
	pthread_mutex_lock(&o->mtx);
	o->stopping = 1;
	o->stop_deadline = clock_mono_ns() + (int64_t)deadline_ms * 1000000;
	atomic_store(&o->limit, o->stop_deadline);
	pthread_cond_broadcast(&o->work);
	pthread_cond_broadcast(&o->room);
	pthread_mutex_unlock(&o->mtx);
	pthread_join(o->thread, NULL);
	o->stopped = 1;
	sent = atomic_load(&o->sent);
	dropped = atomic_load(&o->dropped);
	if (dropped > 0)
		log_warnx("OpenTelemetry: %llu of %llu spans were dropped, not "
		    "sent to the collector at %s (%s)",
		    (unsigned long long)dropped,
		    (unsigned long long)(sent + dropped), o->where,
		    o->last_cause != NULL ? o->last_cause :
		    "the exporter's queue was full or time ran out");
}

/* Spans of s dropped, final after otlp_stop. */
uint64_t
otlp_session_dropped(const struct otlp_sess *s)
{
	if (s == NULL)
		return 0;
	return atomic_load(&((struct otlp_sess *)s)->dropped);
}

/* Spans sent and dropped, final after otlp_stop. */
void
otlp_totals(const struct otlp *o, uint64_t *sent, uint64_t *dropped)
{
	struct otlp	*w = (struct otlp *)o;

	*sent = o != NULL ? atomic_load(&w->sent) : 0;
	*dropped = o != NULL ? atomic_load(&w->dropped) : 0;
}

/* Stop o (at once, when not stopped yet) and free it and its sessions. */
void
otlp_free(struct otlp *o)
{
	struct otlp_sess	*s, *next;

	if (o == NULL)
		return;
	otlp_stop(o, 0);
	for (s = o->sessions; s != NULL; s = next) {
		next = s->next;
		otlp_builder_free(s->b);
		otlp_export_forget_free(s->forget, s->nforget);
		free(s);
	}
	otlp_span_free(o->batch);
	free(o->runs);
	obuf_free(&o->body);
	otlp_http_free(o->http);
	free(o->where);
	free(o->last_cause);
	o->cfg.cacert = NULL;
	otlp_config_clear(&o->cfg);
	pthread_cond_destroy(&o->work);
	pthread_cond_destroy(&o->room);
	pthread_mutex_destroy(&o->mtx);
	free(o);
}
