/*
 * livecheck.c: record --check, the session rules (check/) run on the
 * traffic as it is recorded, their findings printed to stderr as they
 * happen.  Off the forwarding path: the tap hands each message over (a
 * copy, after the forward) to a queue that a thread of its own reads.  The
 * queue is bounded; when it is full the message is dropped from checking
 * (never from forwarding or recording), and its session is checked no
 * more, since rules that pair requests with responses would misjudge what
 * follows a gap.  What was dropped is said at the end.
 *
 * Seqs are counted here as the writer counts them: every message of a
 * session the tap sees, in order, dropped or not.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "check_session.h"

/*
 * Messages waiting for the checker, at most, and their bytes: a checker
 * behind by this much is behind for good; a few MiB of copies is what
 * --check may cost on top of recording.
 */
#define LIVECHECK_QUEUE_MAX	4096
#define LIVECHECK_QUEUE_BYTES	(16 * 1024 * 1024)

/*
 * A message longer than this is not checked live (nor, after it, its
 * session): the checker parses it into a tree several times its size.
 * 'mcpreel check' reads such a session afterwards.
 */
#define LIVECHECK_MSG_MAX	(4 * 1024 * 1024)

/*
 * Sessions checked at once (record --listen may have many): a slot is
 * taken back when its session has ended and its messages are checked.
 * Past this, a new session is not checked, and that is counted.
 */
#define LIVECHECK_SESSIONS_MAX	256

struct lc_sess {
	const struct wsession	*ws;		/* NULL: the slot is free */
	int64_t			 seq;		/* messages seen (loop side) */
	size_t			 queued;	/* items queued for it */
	int			 ended;		/* its end is queued */
	int			 off;		/* checked no more: a gap */
	int			 done;		/* its end was checked */
	struct check		*chk;		/* the checker thread's only */
};

struct lc_item {
	struct lc_item	*next;
	struct lc_sess	*sess;
	int		 end;		/* the session ended: no message */
	int		 gap;		/* with end: messages were dropped */
	int64_t		 seq;
	enum dir	 dir;
	int64_t		 ts_ns;
	size_t		 len;
	char		 raw[];
};

struct livecheck {
	pthread_t	 thread;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct lc_item	*head, **tail;
	size_t		 n, bytes;
	int		 stopping;
	struct lc_sess	 sess[LIVECHECK_SESSIONS_MAX];
	uint64_t	 dropped;	/* messages not checked */
	uint64_t	 unchecked;	/* sessions not checked (no slot) */
};

/* Print a finding: errors always, warnings with -v, notes never. */
static void
livecheck_finding_cb(const struct check_finding *cf, void *arg)
{
	char	where[64];

	if (cf->f->severity != PROTO_ERROR && cf->f->severity !=
	    PROTO_WARNING)
		return;
	if (cf->seq > 0)
		snprintf(where, sizeof where, "seq %lld %s", (long long)cf->seq,
		    dir_name(cf->dir));
	else
		snprintf(where, sizeof where, "session");
	if (cf->f->severity == PROTO_ERROR)
		log_warnx("check: %s%s%s: %s %s: %s", where,
		    cf->method != NULL ? " " : "", cf->method != NULL ?
		    cf->method : "", proto_severity_name(cf->f->severity),
		    cf->f->rule, cf->f->text);
	else
		log_debug("check: %s%s%s: %s %s: %s", where,
		    cf->method != NULL ? " " : "", cf->method != NULL ?
		    cf->method : "", proto_severity_name(cf->f->severity),
		    cf->f->rule, cf->f->text);
}

/* Check one item (on the checker thread, without the lock). */
static void
livecheck_item(struct lc_sess *s, const struct lc_item *it)
{
	struct check_msg	m;

	if (it->end) {
		if (s->chk != NULL) {
			/* After a gap, its end would tell of requests (or
			   answers) it never saw. */
			if (!it->gap)
				check_end(s->chk, CHECK_END_CLEAN);
			check_free(s->chk);
			s->chk = NULL;
		}
		return;
	}
	if (s->chk == NULL)
		s->chk = check_new(livecheck_finding_cb, NULL);
	memset(&m, 0, sizeof m);
	m.seq = it->seq;
	m.dir = it->dir;
	m.ts_ns = it->ts_ns;
	m.raw = it->raw;
	m.len = it->len;
	check_message(s->chk, &m);
}

static void *
livecheck_main(void *arg)
{
	struct livecheck	*lc = arg;
	struct lc_item		*it;

	pthread_mutex_lock(&lc->mu);
	for (;;) {
		while (lc->head == NULL && !lc->stopping)
			pthread_cond_wait(&lc->cv, &lc->mu);
		if ((it = lc->head) == NULL)
			break;
		if ((lc->head = it->next) == NULL)
			lc->tail = &lc->head;
		lc->n--;
		lc->bytes -= it->len;
		pthread_mutex_unlock(&lc->mu);
		livecheck_item(it->sess, it);
		pthread_mutex_lock(&lc->mu);
		it->sess->queued--;
		if (it->end)
			it->sess->done = 1;
		free(it);
	}
	pthread_mutex_unlock(&lc->mu);
	return NULL;
}

/* Start the checker thread; NULL (and *cause) if it cannot start. */
struct livecheck *
livecheck_start(char **cause)
{
	struct livecheck	*lc = xcalloc(1, sizeof *lc);

	pthread_mutex_init(&lc->mu, NULL);
	pthread_cond_init(&lc->cv, NULL);
	lc->tail = &lc->head;
	if (pthread_create(&lc->thread, NULL, livecheck_main, lc) != 0) {
		xasprintf(cause, "cannot start the checker's thread (--check)");
		pthread_mutex_destroy(&lc->mu);
		pthread_cond_destroy(&lc->cv);
		free(lc);
		return NULL;
	}
	return lc;
}

/* The slot of session ws, taken if new; NULL when none is free. */
static struct lc_sess *
livecheck_sess(struct livecheck *lc, const struct wsession *ws)
{
	struct lc_sess	*s, *free_slot = NULL;
	size_t		 i;

	for (i = 0; i < LIVECHECK_SESSIONS_MAX; i++) {
		s = &lc->sess[i];
		if (s->ws == ws)
			return s;
		/* An ended session checked to its end frees its slot. */
		if (free_slot == NULL && (s->ws == NULL || (s->done &&
		    s->queued == 0)))
			free_slot = s;
	}
	if (free_slot == NULL) {
		lc->unchecked++;
		return NULL;
	}
	memset(free_slot, 0, sizeof *free_slot);
	free_slot->ws = ws;
	return free_slot;
}

static void
livecheck_queue(struct livecheck *lc, struct lc_item *it)
{
	it->sess->queued++;
	*lc->tail = it;
	lc->tail = &it->next;
	lc->n++;
	lc->bytes += it->len;
	pthread_cond_signal(&lc->cv);
}

/*
 * A message of session ws as recorded (redacted as stored): queue a copy
 * for the checker, or drop it when the queue is full.  Never blocks on the
 * checker (only for the moment of the lock).
 */
void
livecheck_message(struct livecheck *lc, const struct wsession *ws,
    const struct msg *m)
{
	struct lc_sess	*s;
	struct lc_item	*it;

	pthread_mutex_lock(&lc->mu);
	if ((s = livecheck_sess(lc, ws)) == NULL || s->ended) {
		pthread_mutex_unlock(&lc->mu);
		return;
	}
	s->seq++;
	if (s->off)
		goto drop;
	if ((m->flags & MSG_TRUNCATED) != 0 || m->len > LIVECHECK_MSG_MAX ||
	    lc->n >= LIVECHECK_QUEUE_MAX ||
	    lc->bytes + m->len > LIVECHECK_QUEUE_BYTES) {
		s->off = 1;
		goto drop;
	}
	it = xmalloc(sizeof *it + m->len);
	memset(it, 0, sizeof *it);
	it->sess = s;
	it->seq = s->seq;
	it->dir = m->dir;
	it->ts_ns = m->ts_ns;
	it->len = m->len;
	memcpy(it->raw, m->raw, m->len);
	livecheck_queue(lc, it);
	pthread_mutex_unlock(&lc->mu);
	return;
drop:
	lc->dropped++;
	pthread_mutex_unlock(&lc->mu);
}

/* Session ws has ended: check what only its end shows (once). */
void
livecheck_end(struct livecheck *lc, const struct wsession *ws)
{
	struct lc_sess	*s;
	struct lc_item	*it;
	size_t		 i;

	pthread_mutex_lock(&lc->mu);
	for (i = 0, s = NULL; i < LIVECHECK_SESSIONS_MAX; i++)
		if (lc->sess[i].ws == ws)
			s = &lc->sess[i];
	if (s != NULL && !s->ended) {
		s->ended = 1;
		it = xcalloc(1, sizeof *it);
		it->sess = s;
		it->end = 1;
		it->gap = s->off;
		livecheck_queue(lc, it);
	}
	pthread_mutex_unlock(&lc->mu);
}

/*
 * Check what is queued, stop the thread and free everything; say what
 * was not checked.
 */
void
livecheck_stop(struct livecheck *lc)
{
	size_t	i;

	if (lc == NULL)
		return;
	pthread_mutex_lock(&lc->mu);
	lc->stopping = 1;
	pthread_cond_signal(&lc->cv);
	pthread_mutex_unlock(&lc->mu);
	pthread_join(lc->thread, NULL);
	for (i = 0; i < LIVECHECK_SESSIONS_MAX; i++)
		if (lc->sess[i].chk != NULL)
			check_free(lc->sess[i].chk);	/* not ended */
	if (lc->dropped > 0)
		log_warnx("check: %llu messages were not checked as they came "
		    "(the checker fell behind, or one was over %d MiB or cut "
		    "by --max-record-size); they are recorded: 'mcpreel check' "
		    "reads the whole session", (unsigned long long)lc->dropped,
		    LIVECHECK_MSG_MAX / (1024 * 1024));
	if (lc->unchecked > 0)
		log_warnx("check: %llu messages came in sessions past the %d "
		    "checked at once, not checked as they came: 'mcpreel "
		    "check' reads them", (unsigned long long)lc->unchecked,
		    LIVECHECK_SESSIONS_MAX);
	pthread_mutex_destroy(&lc->mu);
	pthread_cond_destroy(&lc->cv);
	free(lc);
}
