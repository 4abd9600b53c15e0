/*
 * sqlite_floor: what SQLite itself can insert on this machine with
 * mcpreel's schema, the floor under `mcpreel record`'s throughput.
 *
 * It opens a fresh database through store_open() (schema.sql, its page
 * size, WAL, synchronous=NORMAL: the connection the writer would get),
 * sets what writer_start() sets (no foreign-key checks, no automatic
 * checkpoint; a PASSIVE one once the WAL holds WRITER_CKPT_BUSY), and
 * inserts the rows the stdio throughput scenario makes: N requests of
 * SIZE bytes and their answers of the same size, in the order a proxy
 * sees them with WINDOW in flight, each answer paired with its request
 * (reply_to, method), with the writer's own INSERT, bound column by
 * column, WRITER_BATCH rows a transaction.  One thread, nothing else.
 *
 * The time counted is that of the transactions and checkpoints only: a
 * batch's bytes and timestamps are made before its BEGIN, so that the
 * figure is SQLite's, not this program's.  Prints one key=value line:
 * rows_per_s over the wall-clock time of the transactions, and
 * rows_per_cpu_s over their CPU time (steadier on a shared machine;
 * cpu_s is the whole program's).
 * Usage: sqlite_floor [--count N] [--size B] [--window W] [--batch K] DB
 */

#include <sys/resource.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "bench.h"
#include "store.h"

/* The stdio throughput scenario's defaults (bench/load.c). */
#define FLOOR_COUNT	300000
#define FLOOR_SIZE	200
#define FLOOR_WINDOW	4096
/*
 * The longest message the floor builds: a row of the throughput scenario
 * is 200 bytes; a floor of huge rows would measure the disk instead.
 */
#define FLOOR_SIZE_MAX	(64 * 1024)

/* One row of a batch, made before the batch is timed. */
struct floor_row {
	int		 c2s;		/* a request, else its answer */
	uint64_t	 id;
	char		 idtext[24];
	int		 idlen;
	int64_t		 ts_ns;
	int64_t		 mono_ns;
	char		*raw;		/* FLOOR_SIZE_MAX + 2 bytes of room */
	size_t		 len;
};

struct floor {
	struct store	*st;
	sqlite3		*db;
	sqlite3_stmt	*ins;
	sqlite3_stmt	*begin;
	sqlite3_stmt	*commit;
	int64_t		*req_rowid;	/* by id % window: the request's row */
	size_t		 window;
	size_t		 size;
	int		 wal_pages;
	int		 ckpt_pages;
	int64_t		 seq;
	int64_t		 session;
};

static __dead void
usage(void)
{
	fprintf(stderr, "usage: sqlite_floor [--count N] [--size B] "
	    "[--window W] [--batch K] DB\n"
	    "Insert N request rows of B bytes and their answers into a new "
	    "database DB\nwith mcpreel's schema and writer settings, K rows a "
	    "transaction (default %d),\nand print rows per second.\n",
	    WRITER_BATCH);
	exit(2);
}

/* After each commit: how big the WAL is, as the writer keeps it. */
static int
floor_wal_cb(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct floor	*f = arg;

	(void)db;
	(void)name;
	f->wal_pages = pages;
	return SQLITE_OK;
}

static void
floor_check(struct floor *f, int rc, int want, const char *what)
{
	if (rc != want)
		util_fatalx("%s: %s", what, sqlite3_errmsg(f->db));
}

static int64_t
floor_clock(clockid_t id)
{
	struct timespec	ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU seconds of this process so far. */
static double
floor_cpu(void)
{
	struct rusage	ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Fill r with request or answer id: the bytes the scenario forwards. */
static void
floor_fill(struct floor *f, struct floor_row *r, int c2s, uint64_t id)
{
	size_t	len, pad;
	int	n;

	r->c2s = c2s;
	r->id = id;
	r->idlen = snprintf(r->idtext, sizeof r->idtext, "%llu",
	    (unsigned long long)id);
	/* The stored bytes are without the newline that framed them. */
	len = util_request_len(id, f->size) - 1;
	if (c2s)
		util_request_fill(r->raw, id, f->size);
	else {
		pad = util_echo_pad(len, (size_t)r->idlen);
		n = sprintf(r->raw, "%s%s%s", BENCH_RESP_HEAD, r->idtext,
		    BENCH_RESP_MID);
		memset(r->raw + n, 'x', pad);
		memcpy(r->raw + n + pad, BENCH_RESP_TAIL,
		    sizeof BENCH_RESP_TAIL - 1);
		len = (size_t)n + pad + sizeof BENCH_RESP_TAIL - 1;
	}
	r->len = len;
	r->ts_ns = floor_clock(CLOCK_REALTIME);
	r->mono_ns = floor_clock(CLOCK_MONOTONIC);
}

/* Insert one row as the writer does, every column bound. */
static void
floor_insert(struct floor *f, struct floor_row *r)
{
	sqlite3_stmt	*st = f->ins;
	int		 i;

	sqlite3_bind_int64(st, 1, f->session);
	sqlite3_bind_int64(st, 2, ++f->seq);
	sqlite3_bind_text(st, 3, r->c2s ? "c2s" : "s2c", 3, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, r->ts_ns);
	sqlite3_bind_int64(st, 5, r->mono_ns);
	sqlite3_bind_text(st, 6, r->c2s ? "request" : "response", -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 7, "bench/echo", 10, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, r->idtext, r->idlen, SQLITE_STATIC);
	if (r->c2s)
		sqlite3_bind_null(st, 9);
	else
		sqlite3_bind_int64(st, 9, f->req_rowid[r->id % f->window]);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)r->len);
	sqlite3_bind_blob64(st, 11, r->raw, r->len, SQLITE_STATIC);
	for (i = 12; i <= 15; i++)
		sqlite3_bind_null(st, i);
	sqlite3_bind_int(st, 16, 0);
	sqlite3_bind_int(st, 17, 0);
	sqlite3_bind_null(st, 18);
	sqlite3_bind_null(st, 19);
	floor_check(f, sqlite3_step(st), SQLITE_DONE, "insert");
	sqlite3_reset(st);
	if (r->c2s)
		f->req_rowid[r->id % f->window] = sqlite3_last_insert_rowid(
		    f->db);
}

/* Write rows[0..n) in one transaction, and checkpoint as the writer. */
static void
floor_batch(struct floor *f, struct floor_row *rows, size_t n)
{
	size_t	i;

	floor_check(f, sqlite3_step(f->begin), SQLITE_DONE, "BEGIN");
	sqlite3_reset(f->begin);
	for (i = 0; i < n; i++)
		floor_insert(f, &rows[i]);
	floor_check(f, sqlite3_step(f->commit), SQLITE_DONE, "COMMIT");
	sqlite3_reset(f->commit);
	if (f->wal_pages >= f->ckpt_pages) {
		sqlite3_wal_checkpoint_v2(f->db, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		f->wal_pages = 0;
	}
}

/* Open path fresh the way record does, and prepare the statements. */
static void
floor_open(struct floor *f, const char *path)
{
	sqlite3_stmt	*stmt;
	char		*cause = NULL;
	int		 page = 4096;

	unlink(path);
	if ((f->st = store_open(path, STORE_CREATE | STORE_PRIVATE,
	    &cause)) == NULL)
		util_fatalx("%s", cause);
	if (store_exec(f->st, "PRAGMA foreign_keys = OFF", &cause) != 0)
		util_fatalx("%s", cause);
	f->db = store_sqlite(f->st);
	sqlite3_wal_autocheckpoint(f->db, 0);
	if (sqlite3_prepare_v2(f->db, "PRAGMA page_size", -1, &stmt,
	    NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
		page = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	f->ckpt_pages = WRITER_CKPT_BUSY / page;
	sqlite3_wal_hook(f->db, floor_wal_cb, f);
	if (store_exec(f->st, "INSERT INTO sessions (name, transport, target, "
	    "started_ns, origin) VALUES ('sqlite_floor', 'stdio', '[]', 0, "
	    "'record')", &cause) != 0)
		util_fatalx("%s", cause);
	f->session = sqlite3_last_insert_rowid(f->db);
	floor_check(f, sqlite3_prepare_v3(f->db, WRITER_INSERT_MESSAGE, -1,
	    SQLITE_PREPARE_PERSISTENT, &f->ins, NULL), SQLITE_OK, "prepare");
	floor_check(f, sqlite3_prepare_v2(f->db, "BEGIN IMMEDIATE", -1,
	    &f->begin, NULL), SQLITE_OK, "prepare");
	floor_check(f, sqlite3_prepare_v2(f->db, "COMMIT", -1, &f->commit,
	    NULL), SQLITE_OK, "prepare");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count",	required_argument,	NULL, 'n' },
		{ "size",	required_argument,	NULL, 's' },
		{ "window",	required_argument,	NULL, 'w' },
		{ "batch",	required_argument,	NULL, 'b' },
		{ NULL,		0,			NULL, 0 }
	};
	struct floor		 f;
	struct floor_row	*rows;
	size_t			 count = FLOOR_COUNT, batch = WRITER_BATCH, i, n;
	uint64_t		 next_req = 0, next_resp = 0;
	int64_t			 t0, t_sql = 0, c0, c_sql = 0, wall;
	double			 cpu;
	int			 ch;

	util_setprogname("sqlite_floor");
	memset(&f, 0, sizeof f);
	f.size = FLOOR_SIZE;
	f.window = FLOOR_WINDOW;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			count = util_parse_size("--count", optarg);
			break;
		case 's':
			f.size = util_parse_size("--size", optarg);
			break;
		case 'w':
			f.window = util_parse_size("--window", optarg);
			break;
		case 'b':
			batch = util_parse_size("--batch", optarg);
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc || count == 0 || f.window == 0 || batch == 0 ||
	    f.size > FLOOR_SIZE_MAX || batch > 1024 * 1024)
		usage();
	floor_open(&f, argv[optind]);
	f.req_rowid = util_xmalloc(f.window * sizeof *f.req_rowid);
	rows = util_xmalloc(batch * sizeof *rows);
	for (i = 0; i < batch; i++)
		rows[i].raw = util_xmalloc(FLOOR_SIZE_MAX + 2);

	wall = floor_clock(CLOCK_MONOTONIC);
	cpu = floor_cpu();
	while (next_resp < count) {
		/*
		 * The order a proxy sees: requests until WINDOW are in
		 * flight, then an answer and a request in turn.
		 */
		for (n = 0; n < batch && next_resp < count; n++) {
			if (next_req < count &&
			    next_req - next_resp < f.window)
				floor_fill(&f, &rows[n], 1, next_req++);
			else
				floor_fill(&f, &rows[n], 0, next_resp++);
		}
		t0 = floor_clock(CLOCK_MONOTONIC);
		c0 = floor_clock(CLOCK_THREAD_CPUTIME_ID);
		floor_batch(&f, rows, n);
		c_sql += floor_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
		t_sql += floor_clock(CLOCK_MONOTONIC) - t0;
	}
	wall = floor_clock(CLOCK_MONOTONIC) - wall;
	cpu = floor_cpu() - cpu;

	printf("rows=%lld batch=%zu size=%zu window=%zu sqlite_s=%.3f "
	    "sqlite_cpu_s=%.3f elapsed_s=%.3f cpu_s=%.3f rows_per_s=%.0f "
	    "rows_per_cpu_s=%.0f\n", (long long)f.seq, batch, f.size,
	    f.window, (double)t_sql / 1e9, (double)c_sql / 1e9,
	    (double)wall / 1e9, cpu, (double)f.seq * 1e9 / (double)t_sql,
	    (double)f.seq * 1e9 / (double)c_sql);
	sqlite3_finalize(f.ins);
	sqlite3_finalize(f.begin);
	sqlite3_finalize(f.commit);
	store_close(f.st);
	for (i = 0; i < batch; i++)
		free(rows[i].raw);
	free(rows);
	free(f.req_rowid);
	return 0;
}
