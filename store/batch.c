/*
 * The writer thread's side of SQLite for a batch: the items the queue
 * handed over go into one transaction, in queue order, and are freed.
 * When recording stopped (or the database stayed locked) a message is
 * counted as lost instead, and a session's first and last rows are still
 * tried on their own.  Also the first lock check before recording starts.
 */

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/*
 * Take the write lock once before recording starts: a database another
 * process holds locked is waited for (STORE_BUSY_TIMEOUT_MS), then
 * reported, before a server is started whose traffic could not be kept.
 */
int
batch_lock_check(struct store *st, char **cause)
{
	int	rc;

	rc = sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return store_exec(st, "COMMIT", cause);
	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		xasprintf(cause, "database %s is locked by another process "
		    "(waited %d s); try again when it is done, or record into "
		    "another file with --db", st->path,
		    STORE_BUSY_TIMEOUT_MS / 1000);
	else
		xasprintf(cause, "cannot write to database %s: %s", st->path,
		    sqlite3_errmsg(st->db));
	return -1;
}

/*
 * How long the writer works on a batch before it offers its CPU to a
 * thread waiting for it.  A batch takes up to a few ms (one request at a
 * time over HTTP: ~1 ms for a tick's few hundred rows), and the scheduler
 * lets the thread that is running finish its slice before a thread it
 * woke on the same CPU runs, even with the other CPU idle: the forwarding
 * thread or a peer woken there waited out the batch.  Through mcpreel, one
 * HTTP request at a time, the p99 was 804-1 062 us against direct's
 * 58-73 us; yielding every 50 us, 349-441 us (five runs each, alternating;
 * over stdio it went from 98-139 to 118-192 us).  The commit, one SQLite
 * call, is the longest stretch left.
 */
#define BATCH_YIELD_NS	((int64_t)50 * 1000)
/*
 * And when a batch stops yielding.  A thread it woke to forward a message
 * runs for tens of us; a yield that takes longer gave the CPU to a busy
 * thread (a build, a peer in a flood), a scheduler slice at a time: on
 * the loaded 2-CPU machine, 1 ms of work yielding every 50 us took 43 ms
 * (2-3.5 ms without them; 126 ms against a busy loop on its CPU), which
 * aged the queue past WRITER_MAX_LAG_MS and paused the producer.  So one
 * yield longer than BATCH_YIELD_LONG_NS ends the yielding for the batch,
 * and so do BATCH_YIELD_SPENT_MAX_NS spent in them.  (A budget of 200 us
 * alone bounded the loaded case as well, 3.9 ms, but cut the short
 * yields of an idle machine: the p99 one request at a time was about
 * 115 us higher than with these, five runs each.)
 */
#define BATCH_YIELD_LONG_NS		((int64_t)200 * 1000)
#define BATCH_YIELD_SPENT_MAX_NS	((int64_t)1000 * 1000)

/*
 * Let a thread waiting for this CPU run, once BATCH_YIELD_NS passed since
 * the last yield (*since; 0 once one took longer than BATCH_YIELD_LONG_NS)
 * and while they took less than BATCH_YIELD_SPENT_MAX_NS in all (adding
 * to *spent).  Not in a full batch (spent is NULL), where the writer is
 * what the peers wait for: there yielding only slowed the stdio flood
 * (2-4% in three runs).
 */
static void
batch_yield(int64_t *since, int64_t *spent)
{
	int64_t	now, took;

	if (spent == NULL || *since == 0 || *spent >= BATCH_YIELD_SPENT_MAX_NS)
		return;
	now = clock_mono_ns();
	if (now - *since < BATCH_YIELD_NS)
		return;
	sched_yield();
	*since = clock_mono_ns();
	took = *since - now;
	*spent += took;
	if (took > BATCH_YIELD_LONG_NS)
		*since = 0;
}

/* Free an item and what it owns. */
static void
batch_item_free(struct item *it)
{
	msg_free(it->msg);
	free(it->kind);
	free(it->reason);
	free(it->info.method);
	free(it->info.path);
	free(it->info.headers);
	faults_free(it->fault);
	free(it);
}

/*
 * An item that cannot go into a transaction (recording stopped, or the
 * database stayed locked): a message or a fault is counted as not
 * recorded, and a session's first and last rows are still tried on their
 * own.
 */
static void
batch_skip(struct writer *w, struct item *it)
{
	switch (it->type) {
	case ITEM_MESSAGE:
		it->session->seq++;
		it->session->lost++;
		break;
	case ITEM_FAULT:
		it->session->faults_lost++;
		break;
	case ITEM_SESSION_BEGIN:
		if (w->broken == NULL)
			rows_begin(w, it->session);
		break;
	case ITEM_SESSION_END:
		rows_end(w, it);
		break;
	case ITEM_SESSION_OTLP:
	case ITEM_SESSION_CLIENT:
	case ITEM_SESSION_TRANSPORT:
		rows_otlp(w, it);
		break;
	case ITEM_EXCHANGE_END:
		free(it->x);
		break;
	default:
		break;
	}
}

/*
 * A written (or skipped) item done with: a message item goes on *spare,
 * its message freed, for the queue to reuse; any other is freed.
 */
static void
batch_item_done(struct item *it, struct item **spare)
{
	if (it->type != ITEM_MESSAGE) {
		batch_item_free(it);
		return;
	}
	msg_free(it->msg);
	it->next = *spare;
	*spare = it;
}

/*
 * Write one batch in one transaction, freeing its items but the message
 * items, which it returns (a list) for writer_spare_give().  A light
 * batch (the tick took it, not WRITER_BATCH items) passes yielded: it
 * yields the CPU now and then (batch_yield), and the time that took,
 * not the writer's work, is added there; NULL for none.
 */
struct item *
batch_write(struct writer *w, struct item *it, int64_t *yielded)
{
	struct item	*next, *ends = NULL, *spare = NULL, *frees = NULL;
	struct item	**freetail = &frees;
	int		 in_txn = 0, was_broken = (w->broken != NULL);
	int		 kept = 0;
	int64_t		 since = clock_mono_ns();

	/* IMMEDIATE: a lock held elsewhere is waited for here, once. */
	if (!was_broken) {
		if (rows_exec(w, "BEGIN IMMEDIATE") == 0)
			in_txn = 1;
		else
			rows_failed(w, "a batch");
		writer_unblocked(w);
	}
	for (; it != NULL; it = next) {
		next = it->next;
		batch_yield(&since, yielded);
		if (it->type == ITEM_SESSION_FREE) {
			/* After the ends below, in queue order. */
			it->next = NULL;
			*freetail = it;
			freetail = &it->next;
			continue;
		}
		if (!in_txn) {
			batch_skip(w, it);
			batch_item_done(it, &spare);
			continue;
		}
		switch (it->type) {
		case ITEM_SESSION_BEGIN:
			rows_begin(w, it->session);
			break;
		case ITEM_MESSAGE:
			rows_message(w, it->session, it->x, it->msg,
			    it->scanned ? &it->sc : NULL);
			break;
		case ITEM_EXCHANGE_BEGIN:
		case ITEM_EXCHANGE_RESPONSE:
		case ITEM_EXCHANGE_TRAILERS:
		case ITEM_EXCHANGE_END:
		case ITEM_EXCHANGE_FAULT:
			rows_exchange(w, it);
			break;
		case ITEM_FAULT:
			rows_fault(w, it->session, it->fault);
			break;
		case ITEM_EVENT:
			rows_event(w, it->session, it->kind, it->msg);
			break;
		case ITEM_SESSION_END:
			rows_end(w, it);
			break;
		case ITEM_SESSION_OTLP:
		case ITEM_SESSION_CLIENT:
		case ITEM_SESSION_TRANSPORT:
			rows_otlp(w, it);
			break;
		case ITEM_SESSION_FREE:
		case ITEM_TYPE_MAX:
			break;
		}
		if (it->type == ITEM_SESSION_END ||
		    it->type == ITEM_SESSION_OTLP ||
		    it->type == ITEM_SESSION_CLIENT ||
		    it->type == ITEM_SESSION_TRANSPORT) {
			/* Kept until the batch is known to be committed. */
			it->next = ends;
			ends = it;
		} else
			batch_item_done(it, &spare);
		if (w->broken != NULL) {
			rows_rollback(w);
			in_txn = 0;
		}
	}
	if (in_txn) {
		batch_yield(&since, yielded);
		if (rows_exec(w, "COMMIT") == 0) {
			rows_committed(w);
			kept = 1;
		} else {
			rows_failed(w, "a batch");
			rows_rollback(w);
		}
	}
	if (!was_broken && w->broken != NULL)
		rows_broken(w);
	/* A session's end rolled back with its batch is written alone. */
	for (; ends != NULL; ends = next) {
		next = ends->next;
		if (!kept && ends->type == ITEM_SESSION_END)
			rows_end(w, ends);
		else if (!kept)
			rows_otlp(w, ends);
		batch_item_free(ends);
	}
	/*
	 * Sessions handed back: not before their ends (kept above until
	 * the commit, and tried again alone), nor the commit's counts.
	 */
	for (; frees != NULL; frees = next) {
		next = frees->next;
		rows_release(w, frees);
		batch_item_free(frees);
	}
	return spare;
}
