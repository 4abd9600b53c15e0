/* mcpreel prune and rm: delete recorded sessions and reclaim their space. */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "store.h"

/*
 * How much later than the session's start its recorder may seem to have
 * started: the boot time in /proc/stat is whole seconds, and a process
 * starts before it writes its session's row.
 */
#define PRUNE_START_SLACK_NS	(2LL * 1000000000)

/* The longest /proc/PID/stat read: the name is at most 16 bytes. */
#define PRUNE_STAT_MAX		1024

/*
 * VACUUM rewrites the whole file, so by default it runs only when the
 * free pages are at least this fraction (1/N) of it: deleting a little of
 * a large database is not worth a rewrite of all of it.
 */
#define PRUNE_VACUUM_FRACTION	4

/* Whether to VACUUM after deleting. */
enum prune_vacuum {
	PRUNE_VACUUM_AUTO,	/* when the free pages are worth it */
	PRUNE_VACUUM_ALWAYS,	/* --vacuum */
	PRUNE_VACUUM_NEVER,	/* --no-vacuum */
	PRUNE_VACUUM_MAX
};

/* What is known of one session while choosing what to delete. */
struct prune_session {
	int64_t		 id;
	char		*name;		/* NULL if none */
	int64_t		 started_ns;
	int64_t		 messages;
	int64_t		 bytes;
	int		 recording;	/* not ended, its recorder alive */
	int64_t		 pid;
	int		 chosen;
};

struct prune {
	const char		*cmd;	/* "prune" or "rm", for messages */
	struct store		*st;
	char			*path;
	struct prune_session	*s;
	size_t			 n;
	int			 select;	/* sessions were asked for */
	int			 dry_run;
	int			 force;
	enum prune_vacuum	 vacuum;
};

void
cmd_prune_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel prune [--db PATH] [--older-than DAYS] [--keep N]\n"
	    "                     [--dry-run] [--force] [--vacuum | --no-vacuum]\n"
	    "\n"
	    "Delete recorded sessions, with their messages, events and HTTP\n"
	    "exchanges, and say which:\n"
	    "  --older-than DAYS  sessions that started more than DAYS days ago\n"
	    "                     (a decimal number: 0.5 is twelve hours)\n"
	    "  --keep N           all but the N newest sessions\n"
	    "With both, a session goes when both say so: older than DAYS and not\n"
	    "one of the N newest.\n"
	    "\n"
	    "  --dry-run     say what would be deleted, delete nothing\n"
	    "  --force       delete sessions still being recorded too (the\n"
	    "                mcpreel recording them still running, and the\n"
	    "                session not ended, or over stdio, whose end is\n"
	    "                written early; what it records after belongs to no\n"
	    "                session); they are kept otherwise\n"
	    "  --vacuum      always rewrite the database afterwards (VACUUM), so\n"
	    "                the file shrinks; by default only when a quarter of\n"
	    "                it or more is free.  Alone, it only does that\n"
	    "  --no-vacuum   never: the free space is reused by new recordings\n"
	    "\n"
	    "VACUUM is not run while any session of the database is being\n"
	    "recorded: it would hold the recorder up.\n");
}

void
cmd_rm_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel rm [--db PATH] [--dry-run] [--force]\n"
	    "                  [--vacuum | --no-vacuum] SESSION...\n"
	    "\n"
	    "Delete the sessions given (each an id, a name -- the newest session\n"
	    "of that name -- or 'last'), with their messages, events and HTTP\n"
	    "exchanges.  A session still being recorded is refused (nothing is\n"
	    "deleted) unless --force.  --dry-run, --vacuum and --no-vacuum are\n"
	    "as for 'mcpreel prune'.\n" CLI_SESSION_WORDS);
}

/*
 * When process pid started, in ns since the epoch, from /proc: its start
 * in clock ticks since boot (field 22 of /proc/PID/stat) and the boot
 * time (btime in /proc/stat).  -1 when it cannot be told.
 */
static int64_t
prune_pid_start_ns(pid_t pid)
{
	char		 path[64], buf[PRUNE_STAT_MAX], *p, *end;
	FILE		*f;
	size_t		 n;
	long long	 btime = -1, ticks;
	long		 hz = sysconf(_SC_CLK_TCK);
	int		 field;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (hz <= 0 || (f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The name (field 2) may hold spaces and ')': skip to the last. */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL)
		return -1;
	errno = 0;
	ticks = strtoll(p + 1, &end, 10);
	if (errno != 0 || end == p + 1 || ticks < 0)
		return -1;

	if ((f = fopen("/proc/stat", "re")) == NULL)
		return -1;
	while (fgets(buf, sizeof buf, f) != NULL) {
		if (sscanf(buf, "btime %lld", &btime) == 1)
			break;
	}
	fclose(f);
	if (btime < 0 || btime > INT64_MAX / 1000000000 - 1 ||
	    ticks / hz > INT64_MAX / 1000000000 - btime - 1)
		return -1;
	return btime * 1000000000 + ticks / hz * 1000000000 +
	    ticks % hz * 1000000000 / hz;
}

/*
 * Whether the recorder (process pid) of the session that started at
 * started_ns (ns since the epoch) still runs: a process of that pid
 * exists (EPERM: as another user's) and started no later than the
 * session did.  One that started after it has only been given the same
 * pid (a recorder killed, its pid reused: soon, in a container, where
 * mcpreel always has the same pid).  Where /proc cannot tell when it
 * started, a process that exists is taken for the recorder.  sessions,
 * stats and show ("recorder gone"), show --follow, prune and rm ask this.
 */
int
prune_recorder_alive(int64_t pid, int64_t started_ns)
{
	int64_t	start;

	if (pid <= 0 || (int64_t)(pid_t)pid != pid)
		return 0;
	if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
		return 0;
	if ((start = prune_pid_start_ns((pid_t)pid)) < 0)
		return 1;
	return started_ns > INT64_MAX - PRUNE_START_SLACK_NS ||
	    start <= started_ns + PRUNE_START_SLACK_NS;
}

/* Bytes as people read them: 950 B, 12.3 KB, 4.5 MB, 1.2 GB. */
static const char *
prune_bytes(int64_t n, char *buf, size_t len)
{
	if (n < 1000)
		snprintf(buf, len, "%lld B", (long long)n);
	else if (n < 1000 * 1000)
		snprintf(buf, len, "%.1f KB", (double)n / 1e3);
	else if (n < 1000LL * 1000 * 1000)
		snprintf(buf, len, "%.1f MB", (double)n / 1e6);
	else
		snprintf(buf, len, "%.1f GB", (double)n / 1e9);
	return buf;
}

static int
prune_collect_cb(const struct session_row *r, void *arg)
{
	struct prune		*p = arg;
	struct prune_session	*s;

	p->s = xreallocarray(p->s, p->n + 1, sizeof *p->s);
	s = &p->s[p->n++];
	memset(s, 0, sizeof *s);
	s->id = r->id;
	s->name = r->name != NULL ? xstrdup(r->name) : NULL;
	s->started_ns = r->started_ns;
	s->messages = r->messages;
	s->bytes = r->bytes;
	s->pid = r->recorder_pid;
	/*
	 * A stdio recorder writes the end as soon as it is told to stop
	 * (SIGINT, SIGTERM, its stdin closed) and records what the server
	 * still says after, for as long as the server goes on (one that
	 * ignores SIGTERM, a grandchild holding its pipes): recording until
	 * it exits, however long ago that end was written.  An HTTP
	 * recorder records many sessions, each over at its end.
	 */
	s->recording = (r->ended_ns == 0 || strcmp(r->transport, "stdio") ==
	    0) && prune_recorder_alive(r->recorder_pid, r->started_ns);
	return 0;
}

/* Open the database and read its sessions, oldest first. */
static int
prune_open(struct prune *p, const char *db, char **cause)
{
	if ((p->path = dbpath_resolve(db, cause)) == NULL ||
	    (p->st = store_open(p->path, 0, cause)) == NULL)
		return -1;
	return query_sessions(p->st, 0, prune_collect_cb, p, cause);
}

static void
prune_close(struct prune *p)
{
	size_t	i;

	for (i = 0; i < p->n; i++)
		free(p->s[i].name);
	free(p->s);
	store_close(p->st);
	free(p->path);
}

/* The size of path and its -wal file, 0 for what is missing. */
static int64_t
prune_file_size(const char *path)
{
	struct stat	 sb;
	char		*wal;
	int64_t		 size = 0;

	if (stat(path, &sb) == 0)
		size += sb.st_size;
	xasprintf(&wal, "%s-wal", path);
	if (stat(wal, &sb) == 0)
		size += sb.st_size;
	free(wal);
	return size;
}

/* VACUUM if asked or worth it and nothing is being recorded. */
static int
prune_vacuum(struct prune *p, char **cause)
{
	int64_t	size, free_bytes, before, after;
	char	b1[32], b2[32], b3[32];
	size_t	i;

	if (p->vacuum == PRUNE_VACUUM_NEVER || p->dry_run)
		return 0;
	if (maint_space(p->st, &size, &free_bytes, cause) != 0)
		return -1;
	if (p->vacuum == PRUNE_VACUUM_AUTO && (free_bytes == 0 ||
	    free_bytes < size / PRUNE_VACUUM_FRACTION)) {
		if (free_bytes != 0)
			printf("not vacuuming: %s of %s free, reused by new "
			    "recordings (--vacuum to shrink the file anyway)\n",
			    prune_bytes(free_bytes, b1, sizeof b1),
			    prune_bytes(size, b2, sizeof b2));
		return 0;
	}
	for (i = 0; i < p->n; i++) {
		if (p->s[i].recording) {
			printf("not vacuuming: session %lld is being recorded "
			    "(pid %lld); run 'mcpreel prune --vacuum' when it "
			    "has ended\n", (long long)p->s[i].id,
			    (long long)p->s[i].pid);
			return 0;
		}
	}
	before = prune_file_size(p->path);
	if (maint_vacuum(p->st, cause) != 0)
		return -1;
	after = prune_file_size(p->path);
	printf("vacuumed %s: %s -> %s (%s of free pages)\n", p->path,
	    prune_bytes(before, b1, sizeof b1), prune_bytes(after, b2,
	    sizeof b2), prune_bytes(free_bytes, b3, sizeof b3));
	return 0;
}

/* Delete the chosen sessions, saying which, then reclaim the space. */
static int
prune_run(struct prune *p, char **cause)
{
	int64_t	*ids = xcalloc(p->n + 1, sizeof *ids), msgs = 0, bytes = 0;
	size_t	 i, n = 0;
	char	 when[32], b[32];

	for (i = 0; i < p->n; i++) {
		if (!p->s[i].chosen)
			continue;
		ids[n++] = p->s[i].id;
		msgs += p->s[i].messages;
		bytes += p->s[i].bytes;
		printf("%s session %lld%s%s%s (started %s, %lld messages, "
		    "%s)%s\n",
		    p->dry_run ? "would delete" : "deleting",
		    (long long)p->s[i].id, p->s[i].name != NULL ? " \"" : "",
		    p->s[i].name != NULL ? p->s[i].name : "",
		    p->s[i].name != NULL ? "\"" : "",
		    fmt_time(p->s[i].started_ns, when, sizeof when),
		    (long long)p->s[i].messages, prune_bytes(p->s[i].bytes, b,
		    sizeof b), p->s[i].recording ? " -- being recorded" : "");
	}
	if (n == 0 && p->select)
		printf("no sessions to delete\n");
	else if (!p->dry_run && maint_delete_sessions(p->st, ids, n,
	    cause) != 0) {
		free(ids);
		return -1;
	}
	if (n != 0)
		printf("%s %zu session%s: %lld messages, %s\n", p->dry_run ?
		    "would delete" : "deleted", n, n == 1 ? "" : "s",
		    (long long)msgs, prune_bytes(bytes, b, sizeof b));
	free(ids);
	return prune_vacuum(p, cause);
}

/* The options prune and rm share; 1 if ch was one. */
static int
prune_option(struct prune *p, int ch)
{
	switch (ch) {
	case 'n':
		p->dry_run = 1;
		return 1;
	case 'f':
		p->force = 1;
		return 1;
	case 'V':
		p->vacuum = PRUNE_VACUUM_ALWAYS;
		return 1;
	case 'N':
		p->vacuum = PRUNE_VACUUM_NEVER;
		return 1;
	}
	return 0;
}

#define PRUNE_LONGOPTS \
	{ "db", required_argument, NULL, 'd' }, \
	{ "dry-run", no_argument, NULL, 'n' }, \
	{ "force", no_argument, NULL, 'f' }, \
	{ "vacuum", no_argument, NULL, 'V' }, \
	{ "no-vacuum", no_argument, NULL, 'N' }, \
	CLI_COMMON_LONGOPTS

/* Say what failed and give the exit status for it. */
static int
prune_fail(struct prune *p, char *cause)
{
	fprintf(stderr, "mcpreel %s: %s\n", p->cmd, cause);
	free(cause);
	return EXIT_USAGE;
}

int
cmd_prune(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		PRUNE_LONGOPTS,
		{ "older-than", required_argument, NULL, 'o' },
		{ "keep", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	struct prune			 p;
	const char			*db = NULL;
	char				*end, *cause = NULL;
	double				 days = -1;
	long long			 keep = -1;
	int64_t				 cutoff = 0;
	size_t				 i;
	int				 ch, rc;

	memset(&p, 0, sizeof p);
	p.cmd = "prune";
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg) || prune_option(&p, ch))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'o':
			errno = 0;
			days = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || errno != 0 ||
			    !isfinite(days) || days < 0 || days > 100000) {
				fprintf(stderr, "mcpreel prune: --older-than "
				    "'%s': give a number of days up to 100000, "
				    "such as 30 or 0.5\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'k':
			errno = 0;
			keep = strtoll(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || errno != 0 ||
			    keep < 0) {
				fprintf(stderr, "mcpreel prune: --keep '%s': "
				    "give how many of the newest sessions to "
				    "keep, such as 10\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			cmd_prune_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("prune", argc, argv, "hvq",
			    longopts);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "mcpreel prune: unexpected argument '%s' (to "
		    "delete sessions by name or id, use 'mcpreel rm')\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if (days < 0 && keep < 0 && p.vacuum != PRUNE_VACUUM_ALWAYS) {
		fprintf(stderr, "mcpreel prune: say what to delete: "
		    "--older-than DAYS, --keep N, or both (see 'mcpreel prune "
		    "--help')\n");
		return EXIT_USAGE;
	}
	if (prune_open(&p, db, &cause) != 0) {
		rc = prune_fail(&p, cause);
		prune_close(&p);
		return rc;
	}
	p.select = days >= 0 || keep >= 0;
	if (days >= 0)
		cutoff = clock_wall_ns() - (int64_t)(days * 86400.0 * 1e9);
	for (i = 0; i < p.n && (days >= 0 || keep >= 0); i++) {
		if ((days >= 0 && p.s[i].started_ns >= cutoff) ||
		    (keep >= 0 && (long long)(p.n - i) <= keep))
			continue;
		if (p.s[i].recording && !p.force) {
			printf("keeping session %lld: it is being recorded "
			    "(pid %lld; --force deletes it anyway)\n",
			    (long long)p.s[i].id, (long long)p.s[i].pid);
			continue;
		}
		p.s[i].chosen = 1;
	}
	rc = EXIT_OK;
	if (prune_run(&p, &cause) != 0)
		rc = prune_fail(&p, cause);
	prune_close(&p);
	return rc;
}

int
cmd_rm(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		PRUNE_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct prune			 p;
	const char			*db = NULL;
	char				*cause = NULL;
	int64_t				 id;
	size_t				 i;
	int				 ch, a, rc = EXIT_OK;

	memset(&p, 0, sizeof p);
	p.cmd = "rm";
	p.select = 1;
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg) || prune_option(&p, ch))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'h':
			cmd_rm_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("rm", argc, argv, "hvq",
			    longopts);
			return EXIT_USAGE;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "mcpreel rm: give the SESSIONs to delete (ids, "
		    "names or 'last'; see 'mcpreel sessions')\n");
		return EXIT_USAGE;
	}
	if (prune_open(&p, db, &cause) != 0) {
		rc = prune_fail(&p, cause);
		prune_close(&p);
		return rc;
	}
	for (a = optind; a < argc; a++) {
		if (query_find_session(p.st, argv[a], &id, &cause) != 0) {
			rc = prune_fail(&p, cause);
			fprintf(stderr, "mcpreel rm: nothing was deleted\n");
			goto out;
		}
		for (i = 0; i < p.n && p.s[i].id != id; i++)
			;
		if (i == p.n)
			continue;	/* recorded since we listed them */
		if (p.s[i].recording && !p.force) {
			fprintf(stderr, "mcpreel rm: session %lld is being "
			    "recorded (pid %lld): nothing was deleted (--force "
			    "deletes it anyway)\n", (long long)id,
			    (long long)p.s[i].pid);
			rc = EXIT_FAIL;
			goto out;
		}
		p.s[i].chosen = 1;
	}
	if (prune_run(&p, &cause) != 0)
		rc = prune_fail(&p, cause);
out:
	prune_close(&p);
	return rc;
}
