/*
 * The writer thread: it owns the SQLite connection once started and turns
 * queued messages into rows, one transaction a batch (batch.c writes it).
 * The forwarding loop only appends to the queue; it never waits for the
 * disk.
 *
 * Waking a thread for every message costs more than recording it, so the
 * writer sleeps on a short timer while messages trickle in and is signalled
 * only when a batch is full, when it went idle on an empty queue, when a
 * session's row or an event is queued (writer_wakes), or when it must
 * stop.  The queue is bounded in bytes and messages: past the high mark
 * writer_message() tells the caller to stop reading, and the drain
 * callback says when the queue is back under the low mark.
 */

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/* A batch is written when WRITER_BATCH items wait, or after this. */
#define WRITER_TICK_MS		5
/* Empty ticks before the writer sleeps until signalled (~100 ms). */
#define WRITER_IDLE_TICKS	20
/* Past either high mark the producer is asked to pause reading. */
#define WRITER_HIGH_BYTES	(32u * 1024 * 1024)
#define WRITER_HIGH_ITEMS	65536
/* Reading resumes under half of both. */
#define WRITER_LOW_BYTES	(WRITER_HIGH_BYTES / 2)
#define WRITER_LOW_ITEMS	(WRITER_HIGH_ITEMS / 2)
/*
 * And past this age of the oldest item not yet committed: so that a kill
 * of mcpreel loses at most the last ~WRITER_MAX_LAG_MS (plus one commit)
 * of traffic, however fast it comes (docs/reliability.md).  Reading
 * resumes once the queue's oldest item is under half of it.
 */
#define WRITER_MAX_LAG_MS	10
#define WRITER_MAX_LAG_NS	((int64_t)WRITER_MAX_LAG_MS * 1000000)
/*
 * The age of the oldest item is not enough: under ASan, or with the CPUs
 * taken by the peers, a flood queued 10 ms of traffic (and a read of up
 * to 1 MiB after a pause) that the writer then took 60-200 ms to write,
 * and a kill lost messages forwarded more than 100 ms before.  So reading
 * also pauses while the queue holds more than WRITER_MAX_WORK_NS of the
 * writer's work, at its pace in recent batches (writer_pace), and resumes
 * under half of it; and a read takes no more than the writer can write in
 * what is left of it (writer_read_max), but at least WRITER_READ_MIN, a
 * pipe's default size.  The pace is of the last WRITER_PACE_SPAN_NS of
 * writing or so.
 */
#define WRITER_MAX_WORK_NS	((int64_t)30 * 1000000)
#define WRITER_READ_MIN		(64 * 1024)
#define WRITER_PACE_SPAN_NS	(200 * 1000000)
/*
 * A batch's commit costs the same whatever its size: the pace is taken
 * from batches of WRITER_PACE_ITEMS or more, and the work alone pauses
 * no queue shorter than WRITER_WORK_ITEMS (else small batches would say
 * a slow pace, which would make the batches smaller still).
 */
#define WRITER_PACE_ITEMS	64
/* Batches that may try to start the checkpoint thread before giving up. */
#define WRITER_CKPT_TRIES	8
#define WRITER_WORK_ITEMS	(WRITER_BATCH / 2)
/*
 * The longest the writer waits for a paused producer's queue to empty
 * before it copies a WRITER_CKPT_BUSY WAL itself (writer_hold_end): a
 * batch or two, even under ASan.
 */
#define WRITER_HOLD_MAX_NS	((int64_t)100 * 1000000)
/*
 * The loop thread allocates each message and the writer frees it a batch
 * later: by default glibc gives the top of the heap back to the kernel
 * (brk) whenever 128 KiB of it are free, and every message of the next
 * batch faults a fresh page in again (35 000 page faults and ~45% of
 * mcpreel's CPU time for 200 000 round trips).  Keep up to twice the
 * queue's byte bound before trimming, and grow the heap 4 MiB at a time:
 * memory stays bounded by the queue's high mark, it is only not handed
 * back between batches.  Setting either also keeps glibc's mmap threshold
 * at 128 KiB (it no longer rises after a big block is freed): a bigger
 * message is mapped and unmapped on its own, never kept in the heap.
 * Process-wide: set once (writer_malloc_once).
 */
#define WRITER_TRIM_BYTES	(2 * WRITER_HIGH_BYTES)
#define WRITER_TOP_PAD_BYTES	(4u * 1024 * 1024)
/*
 * Message items the writer keeps for reuse, so that neither thread calls
 * malloc or free for them: two batches' worth (~0.5 MiB) covers the one
 * being written and the one being queued (a deeper queue allocates the
 * rest, freed once written).  An item is a fixed size (its
 * message is freed before it is kept), so this bounds their bytes too.
 */
#define WRITER_SPARE_MAX	(2 * WRITER_BATCH)

static void	*writer_main(void *);

static pthread_once_t	 writer_malloc_set = PTHREAD_ONCE_INIT;

/*
 * glibc's heap settings for a producer that allocates and a writer that
 * frees (WRITER_TRIM_BYTES): process-wide, so once however many writers
 * the process starts.
 */
static void
writer_malloc_once(void)
{
#ifdef __GLIBC__
	(void)mallopt(M_TRIM_THRESHOLD, WRITER_TRIM_BYTES);
	(void)mallopt(M_TOP_PAD, WRITER_TOP_PAD_BYTES);
#endif
}

/*
 * SQLite's busy handler on the writer's connection: another process holds
 * the lock.  Wait for it up to STORE_BUSY_TIMEOUT_MS as busy_timeout would,
 * and meanwhile let the queue grow past WRITER_MAX_LAG_MS: forwarding goes
 * on while we wait, up to the queue's byte and item bounds.
 */
static int
writer_busy_cb(void *arg, int count)
{
	struct writer	*w = arg;
	int64_t		 now = clock_mono_ns();

	if (count == 0) {
		w->busy_since = now;
		w->waited = 1;
		pthread_mutex_lock(&w->lock);
		w->locked_out = 1;
		/*
		 * A pause for lag alone (the queue is small) would last the
		 * whole wait, as no batch ends meanwhile: lift it.
		 */
		if (w->paused && w->items < WRITER_LOW_ITEMS &&
		    w->bytes < WRITER_LOW_BYTES) {
			w->paused = 0;
			if (w->drain_cb != NULL)
				w->drain_cb(w->drain_arg);
		}
		pthread_mutex_unlock(&w->lock);
	}
	if (now - w->busy_since >= (int64_t)STORE_BUSY_TIMEOUT_MS * 1000000)
		return 0;
	usleep(count < 20 ? 1000 : 10000);
	return 1;
}

/* The lock wait (if any) is over: lag pauses the producer again. */
void
writer_unblocked(struct writer *w)
{
	pthread_mutex_lock(&w->lock);
	w->locked_out = 0;
	pthread_mutex_unlock(&w->lock);
}

/*
 * Start the writer thread; from here on it owns st, and writer_stop()
 * closes it.
 */
struct writer *
writer_start(struct store *st, char **cause)
{
	struct writer	*w = xcalloc(1, sizeof *w);

	w->st = st;
	pthread_once(&writer_malloc_set, writer_malloc_once);
	sqlite3_wal_autocheckpoint(st->db, 0);
	/*
	 * Every reference the writer stores is to a row it wrote itself
	 * (its session, the request a response answers, the exchange a
	 * message came in): checking each one costs ~8% of the rows per
	 * second.  Other connections (deleting sessions) keep the checks.
	 */
	if (store_exec(st, "PRAGMA foreign_keys = OFF", cause) != 0)
		goto fail;
	if (batch_lock_check(st, cause) != 0)
		goto fail;
	if (rows_init(w, cause) != 0)
		goto fail;

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->synced, NULL);
	sqlite3_busy_handler(st->db, writer_busy_cb, w);
	store_reserve(st);
	if ((errno = pthread_create(&w->thread, NULL, writer_main, w)) != 0) {
		xasprintf(cause, "cannot start the writer thread: %s",
		    strerror(errno));
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		pthread_cond_destroy(&w->synced);
		goto fail;
	}
	return w;
fail:
	rows_finalize(w);
	store_release(st);
	free(w);
	return NULL;
}

/*
 * Set what the writer thread calls when the queue drained after the
 * producer was told to pause.  The callback runs on the writer thread with
 * the queue locked: it must only hand the news on (event_active), never
 * queue anything itself.
 */
void
writer_set_drain_cb(struct writer *w, void (*cb)(void *), void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->drain_cb = cb;
	w->drain_arg = arg;
	pthread_mutex_unlock(&w->lock);
}

/*
 * The items that wake the writer of their own: a session's rows (its
 * first, its last and its later columns) and an event, which are rare.
 * A message, a fault and an HTTP exchange's rows go with the messages
 * at the next tick: a busy writer ticks anyway, an idle one is woken
 * (w->idle), and waking for each would cost a thread switch per message
 * or exchange.  Stopping wakes it in writer_stop().
 */
static const int writer_wakes[] = {
	[ITEM_SESSION_BEGIN] = 1,
	[ITEM_EVENT] = 1,
	[ITEM_SESSION_END] = 1,
	[ITEM_SESSION_OTLP] = 1,
	[ITEM_SESSION_CLIENT] = 1,
	[ITEM_SESSION_TRANSPORT] = 1,
	[ITEM_TYPE_MAX] = 0
};

/* Whether queueing it should wake the writer (writer_wakes). */
static int
writer_item_wakes(const struct item *it)
{
	return writer_wakes[it->type];
}

/*
 * How long the writer will take over what is queued, at its recent pace
 * per item or per byte, whichever says longer (0 before its first
 * batch).  The queue is locked.
 */
static int64_t
writer_work(const struct writer *w)
{
	int64_t	by_items = (int64_t)w->items * w->item_ns;
	int64_t	by_bytes = (int64_t)(w->bytes / 1024) * w->kib_ns;

	return by_items > by_bytes ? by_items : by_bytes;
}

/*
 * Note a batch of items and bytes written in ns, and publish the pace of
 * the recent ones (WRITER_PACE_SPAN_NS): not of one that waited for
 * another process's lock, which says nothing of the writer's pace.  The
 * queue is locked.
 */
static void
writer_pace(struct writer *w, size_t items, size_t bytes, int64_t ns)
{
	if (w->waited || items < WRITER_PACE_ITEMS)
		return;
	w->pace_ns += ns;
	w->pace_items += (int64_t)items;
	w->pace_bytes += (int64_t)bytes;
	if (w->pace_ns > WRITER_PACE_SPAN_NS) {
		w->pace_ns /= 2;
		w->pace_items = (w->pace_items + 1) / 2;
		w->pace_bytes = (w->pace_bytes + 1) / 2;
	}
	w->item_ns = w->pace_ns / w->pace_items;
	w->kib_ns = w->pace_bytes > 0 ? w->pace_ns * 1024 / w->pace_bytes : 0;
}

/*
 * How many bytes the producer may read now, at most most: what the writer
 * can write in what is left of WRITER_MAX_WORK_NS after the queue, but at
 * least WRITER_READ_MIN.
 */
size_t
writer_read_max(struct writer *w, size_t most)
{
	int64_t	left, n;

	pthread_mutex_lock(&w->lock);
	left = WRITER_MAX_WORK_NS - writer_work(w);
	n = (w->kib_ns > 0) ? (left > 0 ? left / w->kib_ns * 1024 : 0) :
	    (int64_t)most;
	pthread_mutex_unlock(&w->lock);
	if (n < WRITER_READ_MIN)
		n = WRITER_READ_MIN;
	return (size_t)n < most ? (size_t)n : most;
}

/*
 * Queue an item with the queue locked; returns 1 when the producer should
 * pause reading.
 */
static int
writer_enqueue_locked(struct writer *w, struct item *it, size_t bytes)
{
	int	wake, pause;
	int64_t	oldest;

	it->next = NULL;
	it->bytes = bytes;
	it->queued_ns = clock_mono_ns();
	oldest = (w->batch_ns != 0) ? w->batch_ns : (w->head != NULL ?
	    w->head->queued_ns : it->queued_ns);
	if (w->tail != NULL)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
	w->items++;
	w->bytes += bytes;
	w->enqueued++;
	wake = w->idle || w->items == WRITER_BATCH || writer_item_wakes(it);
	/*
	 * What was queued before this item decides: one huge message does
	 * not stop forwarding while it is written (the answer to it can go
	 * through meanwhile), and the queue stays under the high mark plus
	 * the newest message.
	 */
	pause = (w->hold_since != 0 && !w->locked_out) ||
	    w->items >= WRITER_HIGH_ITEMS ||
	    w->bytes - bytes >= WRITER_HIGH_BYTES ||
	    (!w->locked_out && (it->queued_ns - oldest > WRITER_MAX_LAG_NS ||
	    (w->items >= WRITER_WORK_ITEMS &&
	    writer_work(w) > WRITER_MAX_WORK_NS)));
	/* A producer told to pause waits for the writer: no tick for it. */
	if (pause && !w->paused)
		wake = 1;
	if (pause)
		w->paused = 1;
	if (wake) {
		w->idle = 0;
		pthread_cond_signal(&w->cond);
	}
	return pause;
}

/* Queue an item; returns 1 when the producer should pause reading. */
int
writer_enqueue(struct writer *w, struct item *it, size_t bytes)
{
	int	pause;

	pthread_mutex_lock(&w->lock);
	pause = writer_enqueue_locked(w, it, bytes);
	pthread_mutex_unlock(&w->lock);
	return pause;
}

/*
 * A message item, zeroed: one the writer gave back (writer_spare_give)
 * when there is one, else a new one.  The queue is locked.
 */
static struct item *
writer_spare_take(struct writer *w)
{
	struct item	*it = w->spare;

	if (it == NULL)
		return xcalloc(1, sizeof *it);
	w->spare = it->next;
	w->nspare--;
	memset(it, 0, sizeof *it);
	return it;
}

/*
 * Give the message items of a written batch (a list, their messages
 * freed) back for writer_spare_take(), up to WRITER_SPARE_MAX; frees the
 * rest.  The writer thread, with the queue unlocked.
 */
static void
writer_spare_give(struct writer *w, struct item *list)
{
	struct item	*next;

	pthread_mutex_lock(&w->lock);
	for (; list != NULL && w->nspare < WRITER_SPARE_MAX; list = next) {
		next = list->next;
		list->next = w->spare;
		w->spare = list;
		w->nspare++;
	}
	pthread_mutex_unlock(&w->lock);
	for (; list != NULL; list = next) {
		next = list->next;
		free(list);
	}
}

/*
 * Wait until everything queued so far is committed (or given up: recording
 * stopped).  For --durable, where a message is forwarded only once it is
 * on disk.
 */
void
writer_sync(struct writer *w)
{
	uint64_t	target;

	pthread_mutex_lock(&w->lock);
	target = w->enqueued;
	w->syncing = 1;
	w->idle = 0;
	pthread_cond_signal(&w->cond);
	while (w->committed < target)
		pthread_cond_wait(&w->synced, &w->lock);
	w->syncing = 0;
	pthread_mutex_unlock(&w->lock);
}

/* A copy of s, or NULL for NULL. */
char *
writer_strdup(const char *s)
{
	return (s != NULL) ? xstrdup(s) : NULL;
}

/*
 * Begin a session at started_ns made by origin, or one recorded elsewhere
 * when meta is not NULL (see writer_session_import).  Everything is set
 * before the item is queued: the writer thread may take it at once.
 */
static struct wsession *
writer_session_new(struct writer *w, const char *name, const char *transport,
    const char *target, int64_t started_ns, const char *origin,
    const struct wsession_meta *meta)
{
	struct wsession	*s = xcalloc(1, sizeof *s);
	struct item	*it = xcalloc(1, sizeof *it);

	s->name = writer_strdup(name);
	s->transport = xstrdup(transport);
	s->target = xstrdup(target);
	s->started_ns = started_ns;
	s->origin = origin;
	s->pending = idmap_new();
	if (meta != NULL) {
		s->imp = xmalloc(sizeof *s->imp);
		*s->imp = *meta;
		s->imp->version = writer_strdup(meta->version);
		s->imp->imported_from = writer_strdup(meta->imported_from);
		s->imp->store_error = writer_strdup(meta->store_error);
		s->started_ns = meta->started_ns;
	}
	it->type = ITEM_SESSION_BEGIN;
	it->session = s;
	writer_enqueue(w, it, 0);
	return s;
}

/* Begin a recording session; its row is written in queue order. */
struct wsession *
writer_session_begin(struct writer *w, const char *name,
    const char *transport, const char *target)
{
	return writer_session_new(w, name, transport, target, clock_wall_ns(),
	    ORIGIN_RECORD, NULL);
}

/*
 * Begin a recording session that began at started_ns (wall clock), before
 * it could be told apart: over HTTP, when its first request came.
 */
struct wsession *
writer_session_begin_at(struct writer *w, const char *name,
    const char *transport, const char *target, int64_t started_ns)
{
	return writer_session_new(w, name, transport, target, started_ns,
	    ORIGIN_RECORD, NULL);
}

/*
 * Begin a session that records what a command other than record saw
 * (origin ORIGIN_REPLAY or ORIGIN_MOCK), so that 'last' passes over it.
 */
struct wsession *
writer_session_as(struct writer *w, const char *name, const char *transport,
    const char *target, const char *origin)
{
	return writer_session_new(w, name, transport, target, clock_wall_ns(),
	    origin, NULL);
}

/*
 * Begin a session recorded elsewhere (mcpreel import) when meta is not
 * NULL: its row takes the start, recorder and origin from meta, and says
 * WRITER_IMPORTING as its end until writer_session_end_at() writes its
 * end.  A row left so is an import that did not finish.
 */
struct wsession *
writer_session_import(struct writer *w, const char *name,
    const char *transport, const char *target,
    const struct wsession_meta *meta)
{
	return writer_session_new(w, name, transport, target, clock_wall_ns(),
	    (meta != NULL) ? ORIGIN_IMPORT : ORIGIN_RECORD, meta);
}

/*
 * Record a message (the writer takes it), part of HTTP exchange x when not
 * NULL.  Returns 1 when the queue is over its high mark: the caller should
 * stop reading until the drain callback.
 */
int
writer_message(struct writer *w, struct wsession *s, struct wexchange *x,
    struct msg *m)
{
	return writer_message_scanned(w, s, x, m, NULL);
}

/*
 * writer_message() of a message the caller already classified with
 * writer_scan() (sc), or NULL: then the writer thread scans it.
 */
int
writer_message_scanned(struct writer *w, struct wsession *s,
    struct wexchange *x, struct msg *m, const struct scan *sc)
{
	struct item	*it;
	int		 pause;

	pthread_mutex_lock(&w->lock);
	it = writer_spare_take(w);
	it->type = ITEM_MESSAGE;
	it->session = s;
	it->x = x;
	it->msg = m;
	if (sc != NULL) {
		it->sc = *sc;
		it->scanned = 1;
	}
	pause = writer_enqueue_locked(w, it, m->len + sizeof *it + sizeof *m);
	pthread_mutex_unlock(&w->lock);
	return pause;
}

/*
 * Classify m as its row says it: from its identity when it was cut at
 * the record cap (line.c, hcap.c: the prefix may hold no id), else from
 * its bytes.  Offsets in sc are into ident or raw.  Pure: any
 * thread may call it.
 */
void
writer_scan(const struct msg *m, struct scan *sc)
{
	if (m->ident != NULL)
		scan_message(m->ident, m->ident_len, sc);
	else
		scan_message(m->raw, m->len, sc);
}

/* Record an event of kind ("stderr", "exit", ...) with text. */
void
writer_event(struct writer *w, struct wsession *s, const char *kind,
    const void *text, size_t len)
{
	writer_event_msg(w, s, kind, msg_new(DIR_S2C, text, len));
}

/*
 * Record an event whose text and times are those of m (the writer takes
 * it): for an event that happened elsewhere (an import).
 */
void
writer_event_msg(struct writer *w, struct wsession *s, const char *kind,
    struct msg *m)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_EVENT;
	it->session = s;
	it->kind = xstrdup(kind);
	it->msg = m;
	writer_enqueue(w, it, m->len + sizeof *it);
}

/* End a session now: exit_status -1 when there is none to record. */
void
writer_session_end(struct writer *w, struct wsession *s, int exit_status,
    int exit_signal, const char *reason)
{
	writer_session_end_at(w, s, clock_wall_ns(), exit_status, exit_signal,
	    reason);
}

/*
 * End a session at ended_ns (ns since the epoch), or with no end time
 * when it is WRITER_NO_TIME: for an imported session.
 */
void
writer_session_end_at(struct writer *w, struct wsession *s,
    int64_t ended_ns, int exit_status, int exit_signal, const char *reason)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_SESSION_END;
	it->session = s;
	it->info.ts_ns = ended_ns;
	it->exit_status = exit_status;
	it->exit_signal = exit_signal;
	it->reason = (reason != NULL) ? xstrdup(reason) : NULL;
	writer_enqueue(w, it, 0);
}

/*
 * Set session s's otlp_dropped to n: the spans OpenTelemetry export did
 * not deliver (0: all were).  Queued as a session item, like its end.
 */
void
writer_session_otlp_dropped(struct writer *w, struct wsession *s, int64_t n)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_SESSION_OTLP;
	it->session = s;
	it->count = n;
	writer_enqueue(w, it, 0);
}

/*
 * The client that began session s over HTTP: its address and port (0:
 * unknown), so that an export names it as the live spans did.
 */
void
writer_session_client(struct writer *w, struct wsession *s,
    const char *address, int port)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_SESSION_CLIENT;
	it->session = s;
	it->reason = xstrdup(address);
	it->count = port;
	writer_enqueue(w, it, 0);
}

/*
 * Set session s's transport ("sse": record --connect's auto found a
 * legacy server after the row was written).  Queued like its end.
 */
void
writer_session_transport(struct writer *w, struct wsession *s,
    const char *transport)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_SESSION_TRANSPORT;
	it->session = s;
	it->reason = xstrdup(transport);
	writer_enqueue(w, it, 0);
}

/*
 * Hand session s back before the writer stops (the producer touches it no
 * more): the writer thread frees it after every item queued before this
 * one, and adds its row id to ids (may be NULL), which the producer reads
 * once the writer has stopped.  Even when recording stopped, it is freed
 * once: the writer drains its queue before it stops.
 */
void
writer_session_release(struct writer *w, struct wsession *s,
    struct writer_ids *ids)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_SESSION_FREE;
	it->session = s;
	it->ids = ids;
	writer_enqueue(w, it, 0);
}

/* Hang p on session s (the producer's own: the writer never reads it). */
void
writer_session_set_tag(struct wsession *s, void *p)
{
	s->tag = p;
}

void *
writer_session_tag(const struct wsession *s)
{
	return s->tag;
}

/* The session's row id; valid after writer_stop(). */
int64_t
writer_session_id(const struct wsession *s)
{
	return s->id;
}

/*
 * The session's row id as far as the writer's thread has got: 0 until its
 * row is written.  Safe from any thread while s lives (record --check
 * names sessions by it as they are recorded).
 */
int64_t
writer_session_id_now(const struct wsession *s)
{
	return __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
}

/* Messages forwarded but not recorded; valid after writer_stop(). */
uint64_t
writer_session_lost(const struct wsession *s)
{
	return s->lost;
}

/* Faults rows of session s not written; valid after writer_stop(). */
uint64_t
writer_session_faults_lost(const struct wsession *s)
{
	return s->faults_lost;
}

/* The CLOCK_REALTIME time ms from now, for pthread_cond_timedwait(). */
static void
writer_deadline(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += ms * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/*
 * After a batch: once the WAL holds WRITER_CKPT_QUIET, have the checkpoint
 * thread (ckpt.c, started the first time) copy it into the database while
 * this thread goes on committing.  Should it never catch up with a flood,
 * the WAL would not start again from its beginning and would grow: from
 * WRITER_CKPT_BUSY this thread copies the rest itself (little, the other
 * copied the bulk), once the producer paused (writer_hold_end).  Where
 * the thread cannot start, the quiet ticks of writer_main() checkpoint
 * here, as WRITER_CKPT_QUIET says.
 */
static void
writer_checkpoint(struct writer *w)
{
	char	*cause = NULL;

	if (w->broken != NULL || w->wal_pages < w->ckpt_quiet)
		return;
	if (w->wal_pages >= w->ckpt_busy) {
		pthread_mutex_lock(&w->lock);
		if (w->hold_since == 0)
			w->hold_since = clock_mono_ns();
		pthread_mutex_unlock(&w->lock);
		return;
	}
	if (w->ckpt_inline)
		return;
	if (w->ckpt == NULL &&
	    (w->ckpt = ckpt_start(w->st->path, &cause)) == NULL) {
		/* Another process's lock passes: try again a few times. */
		if (++w->ckpt_tries >= WRITER_CKPT_TRIES) {
			log_debug("%s; the writer checkpoints in its own "
			    "thread", cause);
			w->ckpt_inline = 1;
		}
		free(cause);
		return;
	}
	ckpt_ask(w->ckpt);
}

/*
 * The WAL reached WRITER_CKPT_BUSY (writer_checkpoint): copy the rest of
 * it in this thread, which stalls commits for the checkpoint's syncs and
 * the restarted WAL's header sync (~600 ms where a sync takes 150 ms).  So
 * first the producer pauses (writer_enqueue_locked) and what it forwarded
 * is committed: a kill during the stall then loses nothing forwarded
 * before it.  A producer that queues nothing is not waited for past a
 * quiet tick (quiet), one that was not told to pause (another process's
 * lock) past WRITER_MAX_LAG_MS, and a queue that does not empty (items no
 * pause stops) past WRITER_HOLD_MAX_NS.  The queue is locked (and
 * unlocked meanwhile).
 */
static void
writer_hold_end(struct writer *w, int quiet)
{
	int64_t	held;

	if (w->hold_since == 0)
		return;
	held = clock_mono_ns() - w->hold_since;
	if (!quiet && !(w->paused && w->items == 0) &&
	    !(!w->paused && held >= WRITER_MAX_LAG_NS) &&
	    held < WRITER_HOLD_MAX_NS)
		return;
	pthread_mutex_unlock(&w->lock);
	rows_checkpoint(w);
	pthread_mutex_lock(&w->lock);
	w->hold_since = 0;
}

static void *
writer_main(void *arg)
{
	struct writer	*w = arg;
	struct item	*batch, *it, *spare;
	struct timespec	 ts;
	size_t		 bytes, items;
	int64_t		 began, took, yielded;
	int		 stop, drained, quiet, light;
	sigset_t	 sigs;

	/* Named for top, perf and the benchmark (its CPU time). */
	pthread_setname_np(pthread_self(), "mcpreel-writer");
	/* The stop signals are the main thread's to take (or to block). */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		/*
		 * Between messages, keep ticking for a while: going idle
		 * would make the producer signal (a thread wake-up) for
		 * every message of request/response ping-pong.
		 */
		for (quiet = 0; w->items == 0 && !w->stopping; quiet++) {
			/*
			 * Quiet for a whole tick, not only between two
			 * batches of a burst: a checkpoint there (its syncs,
			 * its copy) stalled the writer every 4 MiB of WAL.
			 * But not past WRITER_CKPT_EMPTY: a longer stall.
			 */
			if (w->hold_since != 0 && quiet > 0) {
				writer_hold_end(w, 1);
				continue;
			}
			if (w->ckpt_inline && w->wal_pages >= (quiet > 0 ?
			    w->ckpt_quiet : w->ckpt_empty)) {
				pthread_mutex_unlock(&w->lock);
				rows_checkpoint(w);
				pthread_mutex_lock(&w->lock);
				continue;
			}
			if (quiet < WRITER_IDLE_TICKS) {
				writer_deadline(&ts, WRITER_TICK_MS);
				pthread_cond_timedwait(&w->cond, &w->lock,
				    &ts);
				continue;
			}
			w->idle = 1;
			pthread_cond_wait(&w->cond, &w->lock);
		}
		if (w->items < WRITER_BATCH && !w->stopping && !w->syncing) {
			writer_deadline(&ts, WRITER_TICK_MS);
			pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		}
		w->idle = 0;
		batch = w->head;
		items = w->items;
		w->head = w->tail = NULL;
		w->batch_ns = (batch != NULL) ? batch->queued_ns : 0;
		stop = w->stopping && batch == NULL;
		/*
		 * A light batch yields the CPU now and then (batch_write),
		 * but not one taken while a producer waits in writer_sync
		 * (--durable forwards nothing meanwhile) or writer_stop.
		 */
		light = items < WRITER_BATCH && !w->syncing && !w->stopping;
		pthread_mutex_unlock(&w->lock);
		if (stop)
			break;

		bytes = 0;
		for (it = batch; it != NULL; it = it->next)
			bytes += it->bytes;
		w->waited = 0;
		began = clock_mono_ns();
		yielded = 0;
		spare = batch_write(w, batch, light ? &yielded : NULL);
		/* The pace is the writer's: not the time others ran. */
		took = clock_mono_ns() - began - yielded;
		writer_spare_give(w, spare);
		writer_checkpoint(w);

		pthread_mutex_lock(&w->lock);
		w->items -= items;
		w->bytes -= bytes;
		w->committed += items;
		w->batch_ns = 0;
		writer_pace(w, items, bytes, took);
		if (w->syncing)
			pthread_cond_broadcast(&w->synced);
		writer_hold_end(w, 0);
		drained = w->paused && w->items < WRITER_LOW_ITEMS &&
		    w->bytes < WRITER_LOW_BYTES && (w->head == NULL ||
		    clock_mono_ns() - w->head->queued_ns <
		    WRITER_MAX_LAG_NS / 2) && writer_work(w) <
		    WRITER_MAX_WORK_NS / 2 && w->hold_since == 0;
		if (drained) {
			w->paused = 0;
			/* Under the lock, so a cleared callback stays so. */
			if (w->drain_cb != NULL)
				w->drain_cb(w->drain_arg);
		}
	}
	/* Its CPU time, for -v (the benchmark's writer rows per CPU s). */
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		w->cpu_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return NULL;
}

/* Write everything queued, stop the thread, close the store. */
void
writer_stop(struct writer *w)
{
	struct item	*it;

	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	log_debug("writer thread: %llu items, %.6f s of CPU",
	    (unsigned long long)w->committed, (double)w->cpu_ns / 1e9);

	ckpt_stop(w->ckpt);
	rows_finalize(w);
	while ((it = w->spare) != NULL) {
		w->spare = it->next;
		free(it);
	}
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_cond_destroy(&w->synced);
	store_release(w->st);
	store_close(w->st);
	free(w->broken);
	free(w);
}

/* Free a session once the writer that recorded it has stopped. */
void
writer_session_free(struct wsession *s)
{
	if (s == NULL)
		return;
	idmap_free(s->pending);
	if (s->imp != NULL) {
		free((char *)s->imp->version);
		free((char *)s->imp->imported_from);
		free((char *)s->imp->store_error);
		free(s->imp);
	}
	free(s->name);
	free(s->transport);
	free(s->target);
	free(s);
}
