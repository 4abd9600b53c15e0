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
 * session the tap sees, in order, dropped or not.  Each session seen has
 * a record for the run (struct lc_sess); a bounded number have a checker
 * (struct lc_chk), which the least recently active gives up first.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy.h"
#include "check_session.h"

/*
 * Messages waiting for the checker, at most, and their bytes: a checker
 * behind by this much is behind for good.  16 MiB of copies is what the
 * queue may cost on top of recording.
 */
#define LIVECHECK_QUEUE_MAX	4096
#define LIVECHECK_QUEUE_BYTES	(16 * 1024 * 1024)

/*
 * A message longer than this is not copied for the checker: only its
 * identity (kind, method, id, as the scanner reads them) is, and checked
 * as a cut message's is.  'mcpreel check' reads it whole afterwards.
 */
#define LIVECHECK_MSG_MAX	(4 * 1024 * 1024)

/*
 * The most values ('{', '[', ',', ':') a message may hold to be parsed
 * live: a parsed value costs about 80 bytes, so this bounds the one parse
 * tree the checker holds at a time to ~5 MiB (plus the message's strings,
 * at most LIVECHECK_MSG_MAX).  A message with more is checked by its
 * identity only.  Lower than check's own CHECK_PARSE_VALUES_MAX: this
 * runs beside the traffic, on every message a peer chooses to send.
 */
#define LIVECHECK_PARSE_VALUES_MAX	(64 * 1024)

/*
 * Sessions with a checker at once (record --listen may have many, and
 * most clients never end theirs): each holds a checker's state (pending
 * requests, tools, ...).  A new session past this takes the checker of
 * the least recently active one, which is then checked no more (a gap:
 * never restarted mid-stream), and a line says so.
 */
#define LIVECHECK_SESSIONS_MAX	256

/*
 * Sessions remembered in one run (a seq, whether checked, ended): twice
 * the HTTP proxy's HTTP_SESSIONS_MAX, past which it records sessions in
 * one default session.  Past this a new session is not checked live, and
 * a line says so once.
 */
#define LIVECHECK_RECORDS_MAX	2048
#define LIVECHECK_INDEX		4096	/* a power of two > RECORDS_MAX */

/*
 * How long the checker waits for the writer to give a session its row id
 * before a line that names the session: the writer may be behind (a lock
 * held by another process), and a line that says only "a new session"
 * tells nothing.  Waited for once in a run at most: a writer that could
 * not write the row in that time may never do so (the lines then say "a
 * new session").  The wait stalls only the checker, never the traffic.
 */
#define LIVECHECK_NAME_WAIT_MS	30000
#define LIVECHECK_NAME_POLL_MS	10

/* What live checking does with a session's messages. */
enum lc_state {
	LC_CHECKED,		/* checked: c is its checker */
	LC_OFF,			/* checked no more: a gap (dropped, evicted) */
	LC_ENDED,		/* its end is queued: later messages ignored */
	LC_STATE_MAX
};

/*
 * A session's checker.  Made by the loop, freed by the checker thread
 * with the session's end item (or at livecheck_stop).
 */
struct lc_chk {
	struct check		*chk;		/* the checker thread's only */
	struct livecheck	*lc;
	const struct wsession	*ws;		/* named: alive until the
						   checker thread stops */
	int64_t			 sid;		/* the session's row id, once
						   the checker knows it */
	int			 named;		/* name the session in lines */
};

/* What the loop knows of a session for the whole run (under mu). */
struct lc_sess {
	const struct wsession	*ws;
	int64_t			 seq;		/* messages seen */
	enum lc_state		 state;
	struct lc_chk		*c;		/* LC_CHECKED: its checker */
	uint64_t		 active;	/* lc->tick at its last message */
};

struct lc_item {
	struct lc_item	*next;
	struct lc_chk	*c;
	struct check_http *http;	/* its exchange's heads, or NULL */
	int		 end;		/* the session ended: no message */
	int		 gap;		/* with end: messages were dropped */
	const char	*why;		/* gap: why, said by the checker */
	int64_t		 from;		/* gap: the first seq not checked */
	int		 ident;		/* raw is only the identity below */
	enum msg_kind	 kind;		/* ident: as scanned */
	int		 has_method;	/* ident: raw starts with the method, */
	int		 has_id;	/* then the id, each NUL-terminated */
	int64_t		 seq;
	enum dir	 dir;
	int64_t		 ts_ns;
	size_t		 cost;		/* bytes against LIVECHECK_QUEUE_BYTES */
	size_t		 len;
	char		 raw[];
};

struct livecheck {
	pthread_t	 thread;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct lc_item	*head, **tail;
	size_t		 n, bytes;
	int		 stopping;	/* atomic: the writer has stopped */
	int		 gave_up;	/* the checker's: waited in vain for
					   a row id (LIVECHECK_NAME_WAIT_MS) */
	int		 named;		/* sessions named in lines (--listen) */
	struct lc_sess	 sess[LIVECHECK_RECORDS_MAX];
	size_t		 nsess;
	uint16_t	 index[LIVECHECK_INDEX];	/* sess + 1; 0: empty */
	size_t		 live;		/* sessions LC_CHECKED */
	uint64_t	 tick;		/* messages seen, all sessions */
	uint64_t	 dropped;	/* messages not checked */
	uint64_t	 unchecked;	/* messages past RECORDS_MAX sessions */
	uint64_t	 late;		/* messages after their session's end */
};

/*
 * A session's name in a line: "session 12 " over --listen, else "" (on
 * the checker thread).  Its row id is the writer's to give, which may be
 * behind the checker: waited for (LIVECHECK_NAME_WAIT_MS), so that a
 * line names its session however far behind the writer is.  After the
 * writer has stopped, the id is final.
 */
static void
livecheck_label(struct lc_chk *c, char *buf, size_t size)
{
	struct timespec	 ts = { 0, LIVECHECK_NAME_POLL_MS * 1000000L };
	int		 waited = 0, done;

	if (!c->named) {
		buf[0] = '\0';
		return;
	}
	for (;;) {
		done = __atomic_load_n(&c->lc->stopping, __ATOMIC_ACQUIRE);
		if ((c->sid = writer_session_id_now(c->ws)) != 0 || done ||
		    c->lc->gave_up)
			break;
		if (waited >= LIVECHECK_NAME_WAIT_MS) {
			c->lc->gave_up = 1;
			break;
		}
		nanosleep(&ts, NULL);
		waited += LIVECHECK_NAME_POLL_MS;
	}
	if (c->sid > 0)
		snprintf(buf, size, "session %lld ", (long long)c->sid);
	else
		snprintf(buf, size, "a new session ");
}

/* Print a finding: errors always, warnings with -v, notes never. */
static void
livecheck_finding_cb(const struct check_finding *cf, void *arg)
{
	struct lc_chk	*c = arg;
	char		 label[64], where[128];

	if (cf->f->severity != PROTO_ERROR && cf->f->severity !=
	    PROTO_WARNING)
		return;
	livecheck_label(c, label, sizeof label);
	if (cf->seq > 0)
		snprintf(where, sizeof where, "%sseq %lld %s", label,
		    (long long)cf->seq, dir_name(cf->dir));
	else if (c->named)
		snprintf(where, sizeof where, "%.*s", (int)strlen(label) - 1,
		    label);
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

static char *
livecheck_dup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

static void
livecheck_item_free(struct lc_item *it)
{
	if (it == NULL)
		return;
	if (it->http != NULL) {
		free((char *)it->http->method);
		free((char *)it->http->path);
		free((char *)it->http->request_headers);
		free((char *)it->http->response_headers);
		free(it->http);
	}
	free(it);
}

/*
 * Check one message item (on the checker thread, without the lock).  One
 * with too many values to parse here is checked by its identity, as a
 * cut one is.
 */
static void
livecheck_item(struct lc_chk *c, const struct lc_item *it)
{
	struct check_msg	 m;
	struct scan		 sc;
	char			*method = NULL, *id = NULL;

	if (c->chk == NULL)
		c->chk = check_new(livecheck_finding_cb, c);
	memset(&m, 0, sizeof m);
	m.seq = it->seq;
	m.dir = it->dir;
	m.ts_ns = it->ts_ns;
	m.raw = it->raw;
	m.len = it->len;
	m.kind = KIND_INVALID;
	m.http = it->http;
	if (it->ident) {
		m.truncated = 1;
		m.kind = it->kind;
		m.method = it->has_method ? it->raw : NULL;
		m.rpc_id = it->has_id ? it->raw + (it->has_method ?
		    strlen(it->raw) + 1 : 0) : NULL;
	} else if (check_values(it->raw, it->len,
	    LIVECHECK_PARSE_VALUES_MAX) > LIVECHECK_PARSE_VALUES_MAX) {
		scan_message(it->raw, it->len, &sc);
		m.truncated = 1;
		m.kind = sc.kind;
		m.method = method = scan_method_dup(it->raw, &sc);
		m.rpc_id = id = scan_id_dup(it->raw, &sc);
	}
	check_message(c->chk, &m);
	free(method);
	free(id);
}

/*
 * A session's end (on the checker thread): its checker goes.  After a
 * gap, the line says from where it was not checked and why: said here,
 * after the findings on what was checked, and with the session's name.
 */
static void
livecheck_item_end(struct lc_chk *c, const struct lc_item *it)
{
	char	label[64];

	if (it->gap) {
		livecheck_label(c, label, sizeof label);
		log_warnx("check: %snot checked as it comes from seq %lld on: "
		    "%s; it is recorded: 'mcpreel check' reads the whole "
		    "session", label, (long long)it->from, it->why);
	}
	if (c->chk != NULL) {
		/* After a gap, its end would tell of requests (or answers)
		   it never saw. */
		if (!it->gap)
			check_end(c->chk, CHECK_END_CLEAN);
		check_free(c->chk);
	}
	free((char *)it->why);
	free(c);
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
		lc->bytes -= it->cost;
		pthread_mutex_unlock(&lc->mu);
		if (it->end)
			livecheck_item_end(it->c, it);
		else
			livecheck_item(it->c, it);
		livecheck_item_free(it);
		pthread_mutex_lock(&lc->mu);
	}
	pthread_mutex_unlock(&lc->mu);
	return NULL;
}

/*
 * Start the checker thread; NULL (and *cause) if it cannot start.  named:
 * more than one session may be recorded (--listen), so each line names
 * its session.
 */
struct livecheck *
livecheck_start(int named, char **cause)
{
	struct livecheck	*lc = xcalloc(1, sizeof *lc);

	pthread_mutex_init(&lc->mu, NULL);
	pthread_cond_init(&lc->cv, NULL);
	lc->tail = &lc->head;
	lc->named = named;
	if (pthread_create(&lc->thread, NULL, livecheck_main, lc) != 0) {
		xasprintf(cause, "cannot start the checker's thread (--check)");
		pthread_mutex_destroy(&lc->mu);
		pthread_cond_destroy(&lc->cv);
		free(lc);
		return NULL;
	}
	return lc;
}

static void
livecheck_queue(struct livecheck *lc, struct lc_item *it)
{
	*lc->tail = it;
	lc->tail = &it->next;
	lc->n++;
	lc->bytes += it->cost;
	pthread_cond_signal(&lc->cv);
}

/*
 * Queue session s's end for its checker, which then goes (under mu).
 * why: after a gap from seq from on, why (its checker says so).
 */
static void
livecheck_close(struct livecheck *lc, struct lc_sess *s, const char *why,
    int64_t from)
{
	struct lc_item	*it;

	if (s->state != LC_CHECKED)
		return;
	it = xcalloc(1, sizeof *it);
	it->c = s->c;
	it->end = 1;
	if (why != NULL) {
		it->gap = 1;
		it->why = xstrdup(why);
		it->from = from;
	}
	livecheck_queue(lc, it);
	s->c = NULL;
	lc->live--;
}

/*
 * Check session s no more from seq from on (a gap), saying why once (its
 * checker does, under mu here).
 */
static void
livecheck_off(struct livecheck *lc, struct lc_sess *s, int64_t from,
    const char *why)
{
	livecheck_close(lc, s, why, from);
	s->state = LC_OFF;
}

/* Where ws's record is or goes in the index. */
static size_t
livecheck_slot(const struct livecheck *lc, const struct wsession *ws)
{
	size_t	h;

	h = (size_t)(((uintptr_t)ws >> 4) * 0x9E3779B97F4A7C15ULL);
	h &= LIVECHECK_INDEX - 1;
	while (lc->index[h] != 0 && lc->sess[lc->index[h] - 1].ws != ws)
		h = (h + 1) & (LIVECHECK_INDEX - 1);
	return h;
}

/*
 * The record of session ws, made on its first message (with a checker,
 * taken from the least recently active session when all are in use);
 * NULL past LIVECHECK_RECORDS_MAX sessions (under mu).
 */
static struct lc_sess *
livecheck_sess(struct livecheck *lc, const struct wsession *ws)
{
	struct lc_sess	*s, *lru;
	size_t		 h, i;
	char		 why[128];

	h = livecheck_slot(lc, ws);
	if (lc->index[h] != 0)
		return &lc->sess[lc->index[h] - 1];
	if (lc->nsess == LIVECHECK_RECORDS_MAX) {
		if (lc->unchecked++ == 0)
			log_warnx("check: more than %d sessions in this run: "
			    "the rest are not checked as they come; they are "
			    "recorded: 'mcpreel check' reads them",
			    LIVECHECK_RECORDS_MAX);
		return NULL;
	}
	if (lc->live == LIVECHECK_SESSIONS_MAX) {
		for (i = 0, lru = NULL; i < lc->nsess; i++) {
			s = &lc->sess[i];
			if (s->state == LC_CHECKED && (lru == NULL ||
			    s->active < lru->active))
				lru = s;
		}
		snprintf(why, sizeof why, "%d sessions are checked at once, "
		    "and it was the least recently active",
		    LIVECHECK_SESSIONS_MAX);
		/* Its messages so far are queued: unchecked from the
		   next on. */
		livecheck_off(lc, lru, lru->seq + 1, why);
	}
	s = &lc->sess[lc->nsess];
	lc->index[h] = (uint16_t)++lc->nsess;
	memset(s, 0, sizeof *s);
	s->ws = ws;
	s->state = LC_CHECKED;
	s->c = xcalloc(1, sizeof *s->c);
	s->c->named = lc->named;
	s->c->lc = lc;
	s->c->ws = ws;
	lc->live++;
	return s;
}

/*
 * The item for message m: a copy, or only its identity when it is cut
 * (its ident, else what its stored start says, as the writer reads it)
 * or longer than LIVECHECK_MSG_MAX.  Made before the lock is taken.
 */
static struct lc_item *
livecheck_item_new(const struct msg *m)
{
	struct lc_item	*it;
	struct scan	 sc;
	const char	*buf;
	char		*method, *id;
	size_t		 len, ml, il;

	if ((m->flags & MSG_TRUNCATED) == 0 && m->len <= LIVECHECK_MSG_MAX) {
		it = xmalloc(sizeof *it + m->len);
		memset(it, 0, sizeof *it);
		it->len = it->cost = m->len;
		memcpy(it->raw, m->raw, m->len);
		return it;
	}
	if ((m->flags & MSG_TRUNCATED) != 0 && m->ident != NULL) {
		buf = m->ident;
		len = m->ident_len;
	} else {
		buf = m->raw;
		len = m->len;
	}
	scan_message(buf, len, &sc);
	method = scan_method_dup(buf, &sc);
	id = scan_id_dup(buf, &sc);
	ml = method != NULL ? strlen(method) + 1 : 0;
	il = id != NULL ? strlen(id) + 1 : 0;
	it = xcalloc(1, sizeof *it + ml + il);
	it->ident = 1;
	it->kind = sc.kind;
	it->has_method = method != NULL;
	it->has_id = id != NULL;
	it->len = it->cost = ml + il;
	if (method != NULL)
		memcpy(it->raw, method, ml);
	if (id != NULL)
		memcpy(it->raw + ml, id, il);
	free(method);
	free(id);
	return it;
}

/*
 * A message of session ws as recorded (redacted as stored): queue a copy
 * for the checker, or drop it when the queue is full.  Never blocks on the
 * checker (only for the moment of the lock).
 */
void
livecheck_message(struct livecheck *lc, const struct wsession *ws,
    const struct msg *m, const struct check_http *h)
{
	struct lc_sess	*s;
	struct lc_item	*it;

	it = livecheck_item_new(m);
	if (h != NULL) {
		it->http = xcalloc(1, sizeof *it->http);
		*it->http = *h;
		it->http->method = livecheck_dup(h->method);
		it->http->path = livecheck_dup(h->path);
		it->http->request_headers = livecheck_dup(
		    h->request_headers);
		it->http->response_headers = livecheck_dup(
		    h->response_headers);
		/* Heads count against the queue's bytes too. */
		it->cost += (h->request_headers != NULL ?
		    strlen(h->request_headers) : 0) +
		    (h->response_headers != NULL ?
		    strlen(h->response_headers) : 0);
	}
	pthread_mutex_lock(&lc->mu);
	if ((s = livecheck_sess(lc, ws)) == NULL) {
		pthread_mutex_unlock(&lc->mu);
		livecheck_item_free(it);
		return;
	}
	if (s->state == LC_ENDED) {
		/* After its end (HTTP traffic may still name it): its
		   checker is gone.  'mcpreel check' reads these; counted
		   and said at the end. */
		lc->late++;
		pthread_mutex_unlock(&lc->mu);
		livecheck_item_free(it);
		return;
	}
	s->seq++;
	s->active = ++lc->tick;
	if (s->state == LC_OFF)
		goto drop;
	if (lc->n >= LIVECHECK_QUEUE_MAX ||
	    lc->bytes + it->cost > LIVECHECK_QUEUE_BYTES) {
		livecheck_off(lc, s, s->seq, "the checker fell behind");
		goto drop;
	}
	it->c = s->c;
	it->seq = s->seq;
	it->dir = m->dir;
	it->ts_ns = m->ts_ns;
	livecheck_queue(lc, it);
	pthread_mutex_unlock(&lc->mu);
	return;
drop:
	lc->dropped++;
	pthread_mutex_unlock(&lc->mu);
	livecheck_item_free(it);
}

/* Session ws has ended: check what only its end shows (once). */
void
livecheck_end(struct livecheck *lc, const struct wsession *ws)
{
	struct lc_sess	*s;
	size_t		 h;

	pthread_mutex_lock(&lc->mu);
	h = livecheck_slot(lc, ws);
	if (lc->index[h] != 0) {
		s = &lc->sess[lc->index[h] - 1];
		livecheck_close(lc, s, NULL, 0);
		s->state = LC_ENDED;
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
	/* The writer has stopped (its caller's order): row ids are final. */
	__atomic_store_n(&lc->stopping, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&lc->cv);
	pthread_mutex_unlock(&lc->mu);
	pthread_join(lc->thread, NULL);
	for (i = 0; i < lc->nsess; i++) {
		if (lc->sess[i].c == NULL)
			continue;
		if (lc->sess[i].c->chk != NULL)
			check_free(lc->sess[i].c->chk);	/* not ended */
		free(lc->sess[i].c);
	}
	if (lc->dropped > 0)
		log_warnx("check: %llu messages were not checked as they came; "
		    "they are recorded: 'mcpreel check' reads the whole "
		    "session", (unsigned long long)lc->dropped);
	if (lc->late > 0)
		log_warnx("check: %llu messages came after their session's "
		    "end, not checked as they came; they are recorded: "
		    "'mcpreel check' reads them", (unsigned long long)lc->late);
	if (lc->unchecked > 0)
		log_warnx("check: %llu messages came in sessions past the %d "
		    "of one run, not checked as they came: 'mcpreel check' "
		    "reads them", (unsigned long long)lc->unchecked,
		    LIVECHECK_RECORDS_MAX);
	pthread_mutex_destroy(&lc->mu);
	pthread_cond_destroy(&lc->cv);
	free(lc);
}
