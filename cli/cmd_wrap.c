/*
 * mcpreel wrap and unwrap: rewrite MCP hosts' configuration files so
 * that each chosen server runs through `mcpreel record`, and put every
 * entry back (cmd_unwrap.c).  The edits are hosts/'s (cfg.c and the
 * format editors); this file picks the files, says what it did, and keeps
 * the state that makes unwrap byte-exact (files.c).
 */

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hosts.h"
#include "cmd_wrap_int.h"

/*
 * The process names of hosts that rewrite their own file while they run
 * (Claude Code keeps its state in ~/.claude.json), looked for in
 * /proc/PID/comm before that file is written.
 */
static const struct {
	const char	*host;
	const char	*comm;
} wrap_live_hosts[] = {
	{ "claude-code", "claude" },
};

/* The longest project key shown beside a server's name. */
#define WRAP_PROJECT_MAX	4096

/* The hosts' ids, for --help and errors. */
#define WRAP_HOST_IDS \
	"claude-desktop, claude-code, cursor, vscode, windsurf, gemini, codex"

/* The --help of wrap. */
void
cmd_wrap_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel wrap [--host ID] [--config FILE [--format F]\n"
	    "                    [--layout ID]] [--project DIR] [--db FILE]\n"
	    "                    [--no-bridge] [--mcpreel PATH] [--dry-run]\n"
	    "                    [SERVER...]\n"
	    "\n"
	    "Rewrite MCP hosts' configuration files so that each server runs\n"
	    "through mcpreel and every session is recorded: an entry\n"
	    "  \"command\": C, \"args\": [A...]\n"
	    "becomes\n"
	    "  \"command\": \"/abs/mcpreel\", \"args\": [\"record\", \"--name\", "
	    "NAME,\n"
	    "              \"--\", C, A...]\n"
	    "with everything else in it (env, cwd, type, ...) and in the file\n"
	    "(keys, order, comments, indentation, ${VAR}s) kept byte for byte.\n"
	    "A remote entry (a url) becomes 'mcpreel record --connect URL' where\n"
	    "the host can start a command and its headers can be carried (in\n"
	    "its env, as MCPREEL_HEADERS: never on the command line); it is\n"
	    "left, with the reason said, otherwise.  Entries already wrapped are\n"
	    "left: wrapping twice changes nothing.\n"
	    "\n"
	    "Without --host or --config, every host's files that are here (as\n"
	    "'mcpreel hosts' lists them).  Before the first change the file is\n"
	    "backed up under $XDG_STATE_HOME/mcpreel/hosts (~/.local/state/...),\n"
	    "never beside it; 'mcpreel unwrap' puts it back.  Restart the host\n"
	    "(or reload its servers) afterwards.\n"
	    "\n"
	    WRAP_HOST_HELP
	    "  --config FILE    only this file; its host is told from its name,\n"
	    "                   or by --host\n"
	    "  --format F       with --config: json, jsonc or toml\n"
	    "  --layout ID      with --config: read it as host ID's file\n"
	    "  --project DIR    the project whose files (.mcp.json,\n"
	    "                   .vscode/mcp.json, ...) to take (default: the\n"
	    "                   current directory)\n"
	    "  --db FILE        the database the wrapped servers record into\n"
	    "                   (written as an absolute path; default: record's)\n"
	    "  --no-bridge      leave remote (url) entries as they are\n"
	    "  --mcpreel PATH   the mcpreel command written (default: this\n"
	    "                   binary's absolute path)\n"
	    "  --dry-run        print the change as a unified diff, write nothing\n"
	    "  SERVER...        only the servers of these names\n"
	    "\n"
	    "Exit status: 0 done (or nothing to do), 1 a file could not be read\n"
	    "or written (the others are still done; each is said), 2 usage (a\n"
	    "SERVER in none of the files: nothing is written).\n"
	    "\n"
	    "examples:\n"
	    "  mcpreel wrap --dry-run\n"
	    "  mcpreel wrap --host claude-code --db ~/mcp.db\n"
	    "  mcpreel wrap --config .vscode/mcp.json github\n"
	    "See docs/hosts.md.\n");
}

/* An entry's name as said, with its project when it has one. */
void
wrap_say_name(FILE *out, const char *container, const char *name)
{
	char		 buf[WRAP_PROJECT_MAX];
	struct hcfg_entry e;
	const char	*proj;

	memset(&e, 0, sizeof e);
	e.container = (char *)container;
	fputs(name, out);
	if ((proj = hostfiles_project_of(&e, buf, sizeof buf)) != NULL)
		fprintf(out, " (project %s)", proj);
}

/* An entry's key in a set of changed entries: container, '\x1e', name. */
static char *
wrap_key(const char *container, const char *name, size_t *len)
{
	char	*k;

	*len = (size_t)xasprintf(&k, "%s\x1e%s", container, name);
	return k;
}

/* The set of the entries changes has (built once: files are big). */
struct idmap *
wrap_changed_set(const struct hcfg_changes *c)
{
	struct idmap	*m = idmap_new();
	char		*k;
	size_t		 i, n;

	for (i = 0; i < c->n; i++) {
		k = wrap_key(c->v[i].container, c->v[i].name, &n);
		idmap_put(m, k, n, 0, NULL);
		free(k);
	}
	return m;
}

/* Whether the set of changed entries has this entry. */
int
wrap_changed(struct idmap *set, const struct hcfg_entry *e)
{
	char	*k;
	size_t	 n;
	int64_t	 v;
	int	 found;

	k = wrap_key(e->container, e->name, &n);
	found = idmap_get(set, k, n, &v) == 0;
	free(k);
	return found;
}

/* Whether names (NULL-terminated; NULL: all) has this name. */
int
wrap_chosen(const char *const *names, const char *name)
{
	if (names == NULL)
		return 1;
	for (; *names != NULL; names++) {
		if (strcmp(*names, name) == 0)
			return 1;
	}
	return 0;
}

/* Why wrap left an entry it did not change. */
static const char *
wrap_why_left(const struct wrap_opts *o, const struct hostfile *f,
    const struct hcfg_entry *e)
{
	if (e->note != NULL)
		return e->note;
	switch (e->kind) {
	case HCFG_REMOTE:
		if (!f->layout.can_bridge)
			return "remote; this host's entry cannot become a "
			    "command";
		return o->no_bridge ? "remote; --no-bridge" : "remote";
	case HCFG_OTHER:
		return "neither a command nor a url";
	default:
		return "unchanged";
	}
}

/*
 * Say what wrap did (or would do) to a file, on out: "claude-code
 * ~/.claude.json: wrapped a, b; left c (why); already wrapped d".
 */
static void
wrap_say(FILE *out, const struct wrap_opts *o, const struct hostfile *f,
    const char *const *names, const struct hcfg_changes *changes)
{
	const struct hcfg_entry	*e;
	struct idmap		*set = wrap_changed_set(changes);
	size_t			 i, k;
	int			 first;

	fprintf(out, "%s %s: ", f->host->id, f->shown);
	if (changes->n == 0)
		fputs("nothing to wrap", out);
	else {
		fputs(o->dry_run ? "would wrap " : "wrapped ", out);
		for (i = 0; i < changes->n; i++) {
			if (i > 0)
				fputs(", ", out);
			wrap_say_name(out, changes->v[i].container,
			    changes->v[i].name);
		}
	}
	for (k = 0; k < 2; k++) {
		first = 1;
		for (i = 0; i < f->cfg.nentries; i++) {
			e = &f->cfg.entries[i];
			if (!wrap_chosen(names, e->name) ||
			    wrap_changed(set, e) || (k == 0) != !e->wrapped)
				continue;
			fputs(first ? (k == 0 ? "; left " :
			    "; already wrapped ") : ", ", out);
			first = 0;
			wrap_say_name(out, e->container, e->name);
			if (k == 0)
				fprintf(out, " (%s)", wrap_why_left(o, f, e));
		}
	}
	fputc('\n', out);
	idmap_free(set);
}

/* The mcpreel written into entries: --mcpreel, else this binary. */
static char *
wrap_self(const struct wrap_opts *o)
{
	char	*p;

	if (o->mcpreel != NULL)
		return xstrdup(o->mcpreel);
	if ((p = realpath("/proc/self/exe", NULL)) == NULL)
		fprintf(stderr, "mcpreel %s: cannot tell where this mcpreel "
		    "is (/proc/self/exe: %s); give --mcpreel PATH\n", o->cmd,
		    strerror(errno));
	return p;
}

/* A path made absolute against the current directory (not resolved). */
static char *
wrap_absolute(const char *path)
{
	char	*cwd, *out;

	if (path[0] == '/' || (cwd = getcwd(NULL, 0)) == NULL)
		return xstrdup(path);
	xasprintf(&out, "%s/%s", cwd, path);
	free(cwd);
	return out;
}

/*
 * The files of a run, loaded, and SERVER... checked against them: each
 * must name a server of at least one file.  EXIT_OK, or the status.
 */
static int
wrap_gather(struct wrap_opts *o, struct hostfiles *hf)
{
	const struct host	*layout_host = NULL;
	char			*project, *cause = NULL;
	size_t			 i, j, k;
	int			 found, rc;

	if ((o->format != NULL || o->layout != NULL) && o->config == NULL) {
		fprintf(stderr, "mcpreel %s: --format and --layout go with "
		    "--config FILE\n", o->cmd);
		return EXIT_USAGE;
	}
	if (o->layout != NULL && (layout_host = hosts_find(o->layout)) ==
	    NULL) {
		fprintf(stderr, "mcpreel %s: --layout %s: no such host; "
		    "give one of " WRAP_HOST_IDS "\n", o->cmd, o->layout);
		return EXIT_USAGE;
	}
	if ((project = hosts_project_dir(o->cmd, o->project)) == NULL)
		return EXIT_USAGE;
	if (o->config != NULL)
		rc = hostfiles_config(hf, o->config, layout_host != NULL ?
		    layout_host : o->host, o->format, &cause);
	else
		rc = hostfiles_find(hf, o->host, project, 0, &cause);
	free(project);
	if (rc != 0) {
		fprintf(stderr, "mcpreel %s: %s\n", o->cmd, cause);
		free(cause);
		return EXIT_USAGE;
	}
	for (i = 0; i < hf->n; i++)
		hostfiles_load(&hf->v[i]);
	for (i = 0; i < o->nnames; i++) {
		for (j = 0, found = 0; j < hf->n && !found; j++)
			found = hostfiles_has(&hf->v[j], o->names[i]);
		if (found)
			continue;
		fprintf(stderr, "mcpreel %s: no server named '%s' in ",
		    o->cmd, o->names[i]);
		if (hf->n == 0)
			fputs("any file (none was found; see 'mcpreel "
			    "hosts')", stderr);
		for (j = 0; j < hf->n; j++)
			fprintf(stderr, "%s%s", j > 0 ? ", " : "",
			    hf->v[j].shown);
		for (j = 0, found = 0; j < hf->n; j++) {
			for (k = 0; k < hf->v[j].cfg.nentries; k++)
				fprintf(stderr, "%s%s", found++ == 0 ?
				    "; its servers: " : ", ",
				    hf->v[j].cfg.entries[k].name);
		}
		fputs("; nothing was changed\n", stderr);
		return EXIT_USAGE;
	}
	if (hf->n == 0)
		printf("no host configuration file found%s (see 'mcpreel "
		    "hosts')\n", o->host != NULL ? " for that host" : "");
	return EXIT_OK;
}

/* Say a file that could not be read, and give the status for it. */
int
wrap_unreadable(const struct wrap_opts *o, const struct hostfile *f)
{
	fprintf(stderr, "mcpreel %s: %s; nothing was changed\n", o->cmd,
	    f->error);
	return EXIT_FAIL;
}

/* Say a failure, free its cause, give the status for it. */
int
wrap_failed(const struct wrap_opts *o, const struct hostfile *f, char *cause)
{
	fprintf(stderr, "mcpreel %s: %s: %s\n", o->cmd, f->shown,
	    cause != NULL ? cause : "failed");
	free(cause);
	return EXIT_FAIL;
}

/*
 * Warn when a host that rewrites the file is running: its next write
 * could undo ours, or race it (files_write() refuses then).
 */
void
wrap_warn_live(const struct wrap_opts *o, const struct hostfile *f)
{
	DIR		*d;
	struct dirent	*de;
	FILE		*c;
	char		 path[64], comm[32];
	size_t		 i;
	int		 n;

	if (strcmp(f->scope, "user") != 0)
		return;
	for (i = 0; i < sizeof wrap_live_hosts / sizeof wrap_live_hosts[0];
	    i++) {
		if (strcmp(f->host->id, wrap_live_hosts[i].host) != 0 ||
		    (d = opendir("/proc")) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			n = snprintf(path, sizeof path, "/proc/%s/comm",
			    de->d_name);
			if (n < 0 || (size_t)n >= sizeof path ||
			    (c = fopen(path, "re")) == NULL)
				continue;
			if (fgets(comm, sizeof comm, c) != NULL) {
				comm[strcspn(comm, "\n")] = '\0';
				if (strcmp(comm, wrap_live_hosts[i].comm) == 0) {
					fprintf(stderr, "mcpreel %s: %s is "
					    "running (pid %s) and rewrites %s: "
					    "quit it first, or it may undo "
					    "this\n", o->cmd, f->host->name,
					    de->d_name, f->shown);
					fclose(c);
					break;
				}
			}
			fclose(c);
		}
		closedir(d);
	}
}

/* Whether buf is the backup's bytes. */
static int
wrap_is_backup(const struct files_state *st, const char *buf, size_t len)
{
	char	*b, *cause = NULL;
	size_t	 blen;
	int	 same;

	if (files_read(st->backup, &b, &blen, &cause) != 0) {
		free(cause);
		return 0;
	}
	same = blen == len && memcmp(b, buf, len) == 0;
	free(b);
	return same;
}

/* Wrap one loaded file. */
static int
wrap_file(const struct wrap_opts *o, struct hostfile *f, const char *self,
    const char *db)
{
	struct hcfg_wrap	 w;
	struct hcfg_changes	 changes;
	struct files_state	 st;
	struct stat		 sb;
	const char		**names;
	char			*out = NULL, *cause = NULL, *to, *shown;
	size_t			 outlen = 0;
	int			 none, whole, rc = EXIT_OK, had_backup;
	int			 existed;

	if (!f->ok)
		return wrap_unreadable(o, f);
	if ((names = hostfiles_names(f, o->names, o->nnames, &none)) !=
	    NULL && none) {
		free(names);
		return EXIT_OK;
	}
	memset(&w, 0, sizeof w);
	w.mcpreel = self;
	w.db = db;
	w.names = names;
	w.bridge = !o->no_bridge;
	memset(&changes, 0, sizeof changes);
	if (hcfg_wrap(f->buf, f->len, &f->layout, &w, &out, &outlen,
	    &changes, &cause) != 0) {
		fprintf(stderr, "mcpreel wrap: %s%s%s; nothing was changed\n",
		    f->shown, cause != NULL && strncmp(cause, "line ", 5) ==
		    0 ? " " : ": ", cause != NULL ? cause : "cannot wrap");
		free(cause);
		free(names);
		return EXIT_FAIL;
	}
	if (changes.n == 0 || (outlen == f->len &&
	    memcmp(out, f->buf, outlen) == 0)) {
		wrap_say(o->dry_run ? stderr : stdout, o, f, names, &changes);
		goto out;
	}
	if (o->dry_run) {
		xasprintf(&to, "%s (wrapped)", f->shown);
		files_diff(stdout, f->shown, to, f->buf, f->len, out, outlen);
		free(to);
		wrap_say(stderr, o, f, names, &changes);
		goto out;
	}

	wrap_warn_live(o, f);
	if (files_state_load(f->real, &st, &cause) != 0) {
		rc = wrap_failed(o, f, cause);
		files_state_clear(&st);
		goto out;
	}
	/*
	 * The backup restores the whole file only while nothing but wrap
	 * changed it: the first wrap, or the file as wrap last left it.
	 */
	if (!st.exists)
		whole = -1;	/* decided once the backup is there */
	else {
		char	*sha = files_sha256(f->buf, f->len);

		whole = st.sha256 != NULL && strcmp(sha, st.sha256) == 0;
		free(sha);
	}
	had_backup = stat(st.backup, &sb) == 0;
	if (files_state_backup(&st, f->buf, f->len, &cause) != 0) {
		rc = wrap_failed(o, f, cause);
		files_state_clear(&st);
		goto out;
	}
	if (whole == -1)
		whole = wrap_is_backup(&st, f->buf, f->len);
	/*
	 * A ledger whose backup was gone: the backup just made holds
	 * wrapped bytes, so it never restores the whole file.
	 */
	if (st.exists && !had_backup)
		whole = 0;
	existed = st.exists;
	files_state_merge(&st, &changes);
	free(st.sha256);
	st.sha256 = whole ? files_sha256(out, outlen) : NULL;
	/*
	 * The ledger goes first: killed between the two, the file is
	 * unchanged and the ledger's entries match nothing in it.
	 */
	if (files_state_save(&st, &cause) != 0) {
		rc = wrap_failed(o, f, cause);
		files_state_clear(&st);
		goto out;
	}
	if (files_write(f->path, f->buf, f->len, out, outlen, &cause) != 0) {
		rc = wrap_failed(o, f, cause);
		if (!existed && files_state_remove(&st, &cause) != 0)
			wrap_failed(o, f, cause);
		files_state_clear(&st);
		goto out;
	}
	wrap_say(stdout, o, f, names, &changes);
	shown = files_display(st.backup);
	printf("  backup: %s\n", shown);
	free(shown);
	files_state_clear(&st);
out:
	hcfg_changes_clear(&changes);
	free(out);
	free(names);
	return rc;
}

/*
 * Take one option common to wrap and unwrap: 1 if it was one, 0 if not,
 * -1 (said) if its value is wrong.
 */
int
wrap_option(struct wrap_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case WRAP_OPT_HOST:
		if ((o->host = hosts_find(arg)) == NULL) {
			fprintf(stderr, "mcpreel %s: --host %s: no such host; "
			    "give one of " WRAP_HOST_IDS "\n", o->cmd, arg);
			return -1;
		}
		return 1;
	case WRAP_OPT_CONFIG:
		o->config = arg;
		return 1;
	case WRAP_OPT_FORMAT:
		o->format = arg;
		return 1;
	case WRAP_OPT_LAYOUT:
		o->layout = arg;
		return 1;
	case WRAP_OPT_PROJECT:
		o->project = arg;
		return 1;
	case WRAP_OPT_DRY_RUN:
		o->dry_run = 1;
		return 1;
	}
	return 0;
}

/* Run wrap or unwrap over the files gathered. */
int
wrap_run(struct wrap_opts *o, int unwrap)
{
	struct hostfiles	 hf;
	char			*self = NULL, *db = NULL;
	size_t			 i;
	int			 rc, r;

	memset(&hf, 0, sizeof hf);
	if ((rc = wrap_gather(o, &hf)) != EXIT_OK || hf.n == 0) {
		hostfiles_clear(&hf);
		return rc;
	}
	if (!unwrap) {
		if ((self = wrap_self(o)) == NULL) {
			hostfiles_clear(&hf);
			return EXIT_USAGE;
		}
		if (o->db != NULL)
			db = wrap_absolute(o->db);
	}
	for (i = 0; i < hf.n; i++) {
		r = unwrap ? unwrap_file(o, &hf.v[i]) :
		    wrap_file(o, &hf.v[i], self, db);
		if (r != EXIT_OK)
			rc = r;
	}
	free(self);
	free(db);
	hostfiles_clear(&hf);
	return rc;
}

/* mcpreel wrap: make hosts run their servers through mcpreel record. */
int
cmd_wrap(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		WRAP_LONGOPTS,
		{ "db", required_argument, NULL, WRAP_OPT_DB },
		{ "no-bridge", no_argument, NULL, WRAP_OPT_NO_BRIDGE },
		{ "mcpreel", required_argument, NULL, WRAP_OPT_MCPREEL },
		{ NULL, 0, NULL, 0 }
	};
	struct wrap_opts		 o;
	int				 ch, r;

	memset(&o, 0, sizeof o);
	o.cmd = "wrap";
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		if ((r = wrap_option(&o, ch, optarg)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			continue;
		}
		switch (ch) {
		case WRAP_OPT_DB:
			o.db = optarg;
			break;
		case WRAP_OPT_NO_BRIDGE:
			o.no_bridge = 1;
			break;
		case WRAP_OPT_MCPREEL:
			o.mcpreel = optarg;
			break;
		case 'h':
			cmd_wrap_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("wrap", argc, argv, "hvq", longopts);
			return EXIT_USAGE;
		}
	}
	o.names = argv + optind;
	o.nnames = (size_t)(argc - optind);
	return wrap_run(&o, 0);
}
