/*
 * Cassettes: a recorded session as a file of JSON lines (what 'mcpreel
 * export' writes), kept beside the tests that use it.  Every command that
 * takes a SESSION takes a cassette too: the file is read into a temporary
 * store of the command's own and the command runs on that, so a cassette
 * goes through the same readers as a session of the database.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "formats.h"
#include "replay.h"
#include "proxy.h"

/* The files SQLite and the store may make beside a database. */
static const char *cassette_suffixes[] = {
	"", "-wal", "-shm", "-journal", "-reserve."	/* and our pid */
};
#define CASSETTE_NFILES	(sizeof cassette_suffixes / sizeof cassette_suffixes[0])

struct cassette {
	char	*dir;		/* the private temporary directory */
	char	*db;		/* the store in it */
	int64_t	 id;		/* the session read, 0 for none */
	/* Made in advance: a signal handler may only unlink them. */
	char	*files[CASSETTE_NFILES];
	int	 slot;		/* in cassette_slots, -1 if none */
};

/*
 * Temporary stores not removed yet, for the exit and signal handlers: a
 * fixed table, since a handler can walk it without locks or allocation.
 * A process reads a few cassettes at most; beyond the table, only exit
 * and free remove them.
 */
#define CASSETTE_SLOTS	8
static struct cassette *volatile cassette_slots[CASSETTE_SLOTS];

/* Remove a temporary store's files and its directory (signal-safe). */
static void
cassette_unlink(struct cassette *c)
{
	size_t	i;

	for (i = 0; i < CASSETTE_NFILES; i++) {
		if (c->files[i] != NULL)
			unlink(c->files[i]);
	}
	rmdir(c->dir);
}

static void
cassette_atexit(void)
{
	int	i;

	for (i = 0; i < CASSETTE_SLOTS; i++) {
		if (cassette_slots[i] != NULL)
			cassette_unlink(cassette_slots[i]);
	}
}

/*
 * A signal that would end the process where it stands (none of mcpreel's
 * own handlers is set for it): remove the temporary stores, then die of
 * it as before.
 */
static void
cassette_signal(int sig)
{
	cassette_atexit();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Catch the signals that end a process, where nothing else catches them. */
static void
cassette_catch(void)
{
	static const int	 sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction	 sa, old;
	size_t			 i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = cassette_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
}

/*
 * Whether a SESSION argument can only be a cassette: it looks like a path
 * (a '/' in it, or a name ending in .jsonl), so a missing file is said to
 * be missing rather than looked for among the sessions.  Another word is
 * a cassette only when no session has it (session_arg_open()).
 */
int
cassette_is(const char *arg)
{
	size_t	len = strlen(arg);

	return strchr(arg, '/') != NULL || (len > 6 &&
	    strcmp(arg + len - 6, ".jsonl") == 0);
}

/* An empty temporary store, private to this process. */
struct cassette *
cassette_temp(char **cause)
{
	static int	 registered;
	struct cassette	*c = xcalloc(1, sizeof *c);
	const char	*tmpdir = getenv("TMPDIR");
	size_t		 i;

	if (tmpdir == NULL || *tmpdir == '\0')
		tmpdir = "/tmp";
	xasprintf(&c->dir, "%s/mcpreel-XXXXXX", tmpdir);
	if (mkdtemp(c->dir) == NULL) {
		xasprintf(cause, "cannot make a temporary directory in %s: %s "
		    "(set TMPDIR to a writable directory)", tmpdir,
		    strerror(errno));
		free(c->dir);
		free(c);
		return NULL;
	}
	xasprintf(&c->db, "%s/session.sqlite", c->dir);
	for (i = 0; i < CASSETTE_NFILES; i++)
		xasprintf(&c->files[i], "%s%s", c->db, cassette_suffixes[i]);
	/* store_reserve() names its file after the process. */
	free(c->files[CASSETTE_NFILES - 1]);
	xasprintf(&c->files[CASSETTE_NFILES - 1], "%s-reserve.%ld", c->db,
	    (long)getpid());
	if (!registered) {
		atexit(cassette_atexit);
		cassette_catch();
		registered = 1;
	}
	c->slot = -1;
	for (i = 0; i < CASSETTE_SLOTS; i++) {
		if (cassette_slots[i] == NULL) {
			cassette_slots[i] = c;
			c->slot = (int)i;
			break;
		}
	}
	return c;
}

/*
 * Read the cassette at path into a new temporary store.  A file that is
 * not whole and well-formed is refused with the line it failed at, and
 * nothing is kept.
 */
struct cassette *
cassette_load(const char *path, char **cause)
{
	struct import_opts	 imp;
	struct import_result	 r;
	struct cassette		*c;

	memset(&imp, 0, sizeof imp);
	if ((imp.file = fopen(path, "re")) == NULL) {
		xasprintf(cause, "cannot open the cassette %s: %s", path,
		    strerror(errno));
		return NULL;
	}
	if ((c = cassette_temp(cause)) == NULL) {
		fclose(imp.file);
		return NULL;
	}
	imp.path = path;
	imp.format = IMPORT_JSONL;
	imp.keep = 1;
	imp.scratch = 1;
	imp.max_record = RECORD_MAX_RECORD;
	if (import_file(&imp, c->db, &r) != 0) {
		*cause = r.cause;
		r.cause = NULL;
		import_result_clear(&r);
		fclose(imp.file);
		cassette_free(c);
		return NULL;
	}
	fclose(imp.file);
	c->id = r.id;
	import_result_clear(&r);
	return c;
}

/* The path of the temporary store. */
const char *
cassette_db(const struct cassette *c)
{
	return c->db;
}

/* The session the cassette held, as the store numbers it. */
int64_t
cassette_session(const struct cassette *c)
{
	return c->id;
}

/* Free the cassette, removing its temporary store unless keep. */
static void
cassette_release(struct cassette *c, int keep)
{
	size_t	i;

	if (c == NULL)
		return;
	if (c->slot != -1)
		cassette_slots[c->slot] = NULL;
	if (!keep)
		cassette_unlink(c);
	for (i = 0; i < CASSETTE_NFILES; i++)
		free(c->files[i]);
	free(c->dir);
	free(c->db);
	free(c);
}

/* Remove the temporary store and free the cassette. */
void
cassette_free(struct cassette *c)
{
	cassette_release(c, 0);
}

/*
 * Keep the temporary store's files past the process (a recording whose
 * cassette could not be written), and free the cassette.
 */
void
cassette_keep(struct cassette *c)
{
	cassette_release(c, 1);
}

/* Write session id of st to path as a cassette, whole or not at all. */
int
cassette_save(struct store *st, int64_t id, const char *path, char **cause)
{
	return formats_export(st, id, FORMATS_JSONL, path, cause);
}

/* What cassette_plan() reads the messages into. */
struct cassette_sink {
	struct plan	*plan;
	int		 include_faults;
	int64_t		 left_out;	/* messages of faults left out */
	int		 sorted;	/* added in (mono_ns, seq) order */
};

/*
 * Whether a message is one QUERY_UNFAULTED keeps (FAULTS_KEPT): what
 * passed between mcpreel and the server.
 */
static int
cassette_kept(const struct msg *m)
{
	return m->fault_role == FAULT_ROLE_NONE ||
	    m->fault_role == FAULT_ROLE_DELAYED ||
	    (m->fault_role == FAULT_ROLE_INJECTED && m->dir == DIR_C2S) ||
	    (m->fault_role == FAULT_ROLE_ORIGINAL && m->dir == DIR_S2C);
}

/* A message of the cassette into the plan, as cli_load_plan() adds one. */
static void
cassette_sink_cb(struct msg *m, int64_t seq, void *arg)
{
	struct cassette_sink	*cs = arg;
	struct plan		*p = cs->plan;
	struct rmsg		*r;
	char			*method, *id;

	if (!cs->include_faults && !cassette_kept(m)) {
		cs->left_out++;
		msg_free(m);
		return;
	}
	if (p->n > 0 && (p->m[p->n - 1].mono_ns > m->mono_ns))
		cs->sorted = 0;
	plan_add(p, seq, m->dir, m->mono_ns, m->raw, m->len);
	if (m->flags & MSG_TRUNCATED) {
		/* As the writer classifies it: from the bytes it has. */
		r = &p->m[p->n - 1];
		method = r->method != NULL ? xstrdup(r->method) : NULL;
		id = r->id != NULL ? xstrdup(r->id) : NULL;
		plan_set_truncated(p, r->kind, method, id);
		free(method);
		free(id);
	}
	msg_free(m);
}

static int
cassette_rmsg_cmp(const void *a, const void *b)
{
	const struct rmsg	*x = a, *y = b;

	if (x->mono_ns != y->mono_ns)
		return (x->mono_ns > y->mono_ns) - (x->mono_ns < y->mono_ns);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * Read the cassette at path with no store, each message to sink(m, seq,
 * arg) as import_sink() gives it; the file is checked as cassette_load()
 * checks it, with the same errors.  *r is the import's result (the
 * caller clears it) when it was read whole, else cleared.
 */
static int
cassette_read(const char *path, void (*sink)(struct msg *, int64_t, void *),
    void *arg, struct import_result *r, char **cause)
{
	struct import_opts	 imp;
	int			 rc;

	memset(&imp, 0, sizeof imp);
	if ((imp.file = fopen(path, "re")) == NULL) {
		memset(r, 0, sizeof *r);
		xasprintf(cause, "cannot open the cassette %s: %s", path,
		    strerror(errno));
		return -1;
	}
	imp.path = path;
	imp.format = IMPORT_JSONL;
	imp.keep = 1;
	imp.max_record = RECORD_MAX_RECORD;	/* as cassette_load() */
	imp.sink = sink;
	imp.sink_arg = arg;
	rc = import_sink(&imp, r);
	fclose(imp.file);
	if (rc != 0) {
		*cause = r->cause;
		r->cause = NULL;
		import_result_clear(r);
		return -1;
	}
	return 0;
}

/*
 * Read the cassette at path straight into p and build the plan, with no
 * store: the messages cli_load_plan() would load from the session the
 * cassette imports as, in the same order, the same faults' messages left
 * out (unless include_faults; cmd says how many on stderr).  The file is
 * checked as cassette_load() checks it, with the same errors; p is only
 * filled when all of it was read.  *id and *name (either may be NULL)
 * get the session's id and name (NULL for none).
 */
int
cassette_plan(const char *path, int include_faults, const char *cmd,
    struct plan *p, int64_t *id, char **name, char **cause)
{
	struct import_result	 r;
	struct cassette_sink	 cs;

	memset(&cs, 0, sizeof cs);
	cs.plan = p;
	cs.include_faults = include_faults;
	cs.sorted = 1;
	if (cassette_read(path, cassette_sink_cb, &cs, &r, cause) != 0) {
		plan_clear(p);
		return -1;
	}
	/* The store's order: by monotonic time, then seq. */
	if (!cs.sorted)
		qsort(p->m, p->n, sizeof *p->m, cassette_rmsg_cmp);
	if (id != NULL)
		*id = r.id != 0 ? r.id : 1;
	if (name != NULL) {
		*name = r.name;
		r.name = NULL;
	}
	import_result_clear(&r);
	cli_faults_say(cmd, cs.left_out);
	plan_build(p);
	return 0;
}

/* What cassette_mdisk() reads the messages into. */
struct cassette_stream {
	struct mdisk	*md;
	int		 include_faults;
	int64_t		 left_out;	/* messages of faults left out */
	int		 sorted;	/* so far in (mono_ns, seq) order */
	int64_t		 n;		/* messages kept */
	int64_t		 mono_ns;	/* the last one's */
	int64_t		 seq;
};

/*
 * A message of the cassette into the mock's index on disk, as
 * cmd_mock_load_cb() adds one from the store, while they come in the
 * store's order.
 */
static void
cassette_stream_cb(struct msg *m, int64_t seq, void *arg)
{
	struct cassette_stream	*cs = arg;
	struct scan		 sc;
	const char		*raw = m->raw != NULL ? m->raw : "";
	char			*method = NULL, *id = NULL;
	int			 cut = (m->flags & MSG_TRUNCATED) != 0;

	if (!cs->include_faults && !cassette_kept(m)) {
		cs->left_out++;
		msg_free(m);
		return;
	}
	if (cs->n > 0 && (m->mono_ns < cs->mono_ns ||
	    (m->mono_ns == cs->mono_ns && seq < cs->seq)))
		cs->sorted = 0;
	if (cs->sorted) {
		sc.kind = KIND_INVALID;
		if (cut) {
			/* As the writer classifies it: from the bytes it has. */
			scan_message(raw, m->len, &sc);
			method = scan_method_dup(raw, &sc);
			id = scan_id_dup(raw, &sc);
		}
		mdisk_add(cs->md, seq, m->dir, m->mono_ns, raw, m->len, cut,
		    sc.kind, method, id);
		free(method);
		free(id);
	}
	cs->n++;
	cs->mono_ns = m->mono_ns;
	cs->seq = seq;
	msg_free(m);
}

/*
 * Read the cassette at path straight into md (mdisk_add()), with no
 * store: the messages cmd reads from the session the cassette imports
 * as, the same faults' messages left out (unless include_faults).  The
 * file is checked as cassette_load() checks it, with the same errors.
 * *sorted is 0 when its messages are not in the store's order (by
 * monotonic time, then seq; mcpreel writes them so): md then holds only
 * those before the first out of order, to be emptied and read through a
 * store.  *id (may be NULL) gets the session's id.
 */
int
cassette_mdisk(const char *path, int include_faults, const char *cmd,
    struct mdisk *md, int64_t *id, int *sorted, char **cause)
{
	struct import_result	 r;
	struct cassette_stream	 cs;

	memset(&cs, 0, sizeof cs);
	cs.md = md;
	cs.include_faults = include_faults;
	cs.sorted = 1;
	if (cassette_read(path, cassette_stream_cb, &cs, &r, cause) != 0)
		return -1;
	if (id != NULL)
		*id = r.id != 0 ? r.id : 1;
	import_result_clear(&r);
	*sorted = cs.sorted;
	if (cs.sorted)
		cli_faults_say(cmd, cs.left_out);
	return 0;
}

/*
 * The store a command records its run on a cassette in: the database db
 * names (created if need be), or *st NULL when db is NULL.
 */
int
cassette_recorder(const char *db, struct store **st, char **cause)
{
	char	*path;

	*st = NULL;
	if (db == NULL)
		return 0;
	if ((path = dbpath_resolve(db, cause)) == NULL)
		return -1;
	*st = store_open(path, STORE_CREATE | STORE_PRIVATE, cause);
	free(path);
	return *st == NULL ? -1 : 0;
}
