/*
 * The checkpointer: a thread with its own connection to the writer's
 * database that copies the WAL into the database file while the writer
 * goes on committing.
 *
 * Run in the writer's thread, a checkpoint (its copy and its two syncs)
 * held up every commit behind it: 16 MiB took ~100 ms under ASan and
 * longer on a slow disk.  Meanwhile the queue's oldest message aged past
 * WRITER_MAX_LAG_MS, so forwarding paused (a stall of tens of ms in the
 * middle of an exchange) and a kill lost every message that waited.
 * SQLite lets one connection checkpoint while another appends to the WAL:
 * a PASSIVE checkpoint copies the frames committed when it began and
 * waits for nobody, and the writer's commits (synchronous = NORMAL) never
 * sync.  The WAL starts again from its beginning at the first commit after
 * a checkpoint that copied all of it.
 */

#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/* The checkpoint thread's nice value: the lowest priority (ckpt_main). */
#define CKPT_NICE	19

struct ckpt {
	pthread_t	 thread;
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;		/* asked, or stopping */
	pthread_cond_t	 done;		/* a checkpoint ended */

	/* Under lock. */
	int		 asked;
	int		 running;
	int		 off;		/* no more checkpoints (ckpt_off) */
	int		 stopping;
	uint64_t	 runs;

	/* The checkpointer's thread only (and ckpt_stop once it ended). */
	sqlite3		*db;
	char		*path;
};

static void	*ckpt_main(void *);

/*
 * Read the journal mode, which also opens the WAL: until its connection
 * has read the database, a checkpoint does nothing (SQLite reports a WAL
 * of -1 frames).  -1, and why in cause, when the database is not in WAL
 * mode.
 */
static int
ckpt_wal(struct ckpt *c, char **cause)
{
	sqlite3_stmt	*stmt;
	const char	*mode;
	int		 ret = -1;

	if (sqlite3_prepare_v2(c->db, "PRAGMA journal_mode", -1, &stmt,
	    NULL) != SQLITE_OK) {
		xasprintf(cause, "cannot read the journal mode of %s: %s",
		    c->path, sqlite3_errmsg(c->db));
		return -1;
	}
	if (sqlite3_step(stmt) != SQLITE_ROW)
		xasprintf(cause, "cannot read the journal mode of %s: %s",
		    c->path, sqlite3_errmsg(c->db));
	else if ((mode = (const char *)sqlite3_column_text(stmt, 0)) !=
	    NULL && strcmp(mode, "wal") == 0)
		ret = 0;
	else
		xasprintf(cause, "%s is not in WAL mode", c->path);
	sqlite3_finalize(stmt);
	return ret;
}

/*
 * Open a second connection to the database at path and start the thread
 * that checkpoints through it; NULL, and why in cause, when either fails
 * (the writer then checkpoints in its own thread).
 */
struct ckpt *
ckpt_start(const char *path, char **cause)
{
	struct ckpt	*c = xcalloc(1, sizeof *c);
	int		 rc;

	c->path = xstrdup(path);
	rc = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		xasprintf(cause, "cannot open %s for checkpoints: %s", path,
		    c->db != NULL ? sqlite3_errmsg(c->db) :
		    sqlite3_errstr(rc));
		goto fail;
	}
	/*
	 * No busy timeout: the writer's thread opens this connection, and a
	 * database another process holds is tried again at a later batch;
	 * a PASSIVE checkpoint waits on no lock anyway.
	 */
	if (ckpt_wal(c, cause) != 0)
		goto fail;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	pthread_cond_init(&c->done, NULL);
	if ((errno = pthread_create(&c->thread, NULL, ckpt_main, c)) != 0) {
		xasprintf(cause, "cannot start the checkpoint thread: %s",
		    strerror(errno));
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->cond);
		pthread_cond_destroy(&c->done);
		goto fail;
	}
	return c;
fail:
	sqlite3_close(c->db);
	free(c->path);
	free(c);
	return NULL;
}

/*
 * Ask for a checkpoint; returns at once.  Asked while one runs, another
 * follows it (the frames committed meanwhile).
 */
void
ckpt_ask(struct ckpt *c)
{
	pthread_mutex_lock(&c->lock);
	if (!c->off && !c->asked) {
		c->asked = 1;
		pthread_cond_signal(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
}

/*
 * No more checkpoints: wait for one that runs to end.  Recording stopped
 * (a full disk): what room is left is for the sessions' last rows.
 */
void
ckpt_off(struct ckpt *c)
{
	pthread_mutex_lock(&c->lock);
	c->off = 1;
	c->asked = 0;
	while (c->running)
		pthread_cond_wait(&c->done, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

/*
 * Stop the thread (a checkpoint that runs ends first) and close its
 * connection, before the writer closes its own: the last connection to
 * close copies what is left and removes the WAL.
 */
void
ckpt_stop(struct ckpt *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = 1;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	log_debug("checkpoint thread: %llu checkpoints of %s",
	    (unsigned long long)c->runs, c->path);
	sqlite3_close(c->db);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	pthread_cond_destroy(&c->done);
	free(c->path);
	free(c);
}

/* The thread: one PASSIVE checkpoint each time it is asked. */
static void *
ckpt_main(void *arg)
{
	struct ckpt	*c = arg;
	sigset_t	 sigs;
	int		 rc;

	pthread_setname_np(pthread_self(), "mcpreel-ckpt");
	/*
	 * Behind the forwarding and writer threads for a CPU (Linux: a
	 * thread's own nice value): HTTP one request at a time, p99 went from
	 * ~650 to ~1 150 us through mcpreel while a checkpoint took a CPU
	 * from the loop thread, and back with CKPT_NICE; the stdio flood kept
	 * its pace (340 000 msgs/s either way).
	 */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CKPT_NICE);
	/* The stop signals are the main thread's to take (or to block). */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->asked && !c->stopping)
			pthread_cond_wait(&c->cond, &c->lock);
		if (c->stopping)
			break;
		c->asked = 0;
		c->running = 1;
		pthread_mutex_unlock(&c->lock);
		rc = sqlite3_wal_checkpoint_v2(c->db, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		if (rc != SQLITE_OK && rc != SQLITE_BUSY)
			log_debug("checkpoint of %s: %s", c->path,
			    sqlite3_errmsg(c->db));
		pthread_mutex_lock(&c->lock);
		c->running = 0;
		c->runs++;
		pthread_cond_broadcast(&c->done);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}
