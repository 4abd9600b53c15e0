/*
 * mcpreel unwrap: put the entries mcpreel wrap changed back, byte for
 * byte when the file still reads as wrap left it (the state files.c
 * keeps); the options, the gathering of files and the run are
 * cmd_wrap.c's.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hosts.h"
#include "cmd_wrap_int.h"

/* The --help of unwrap. */
void
cmd_unwrap_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel unwrap [--host ID] [--config FILE [--format F]\n"
	    "                      [--layout ID]] [--project DIR] [--dry-run]\n"
	    "                      [SERVER...]\n"
	    "\n"
	    "Put back every entry 'mcpreel wrap' changed (or the SERVERs named).\n"
	    "A file nothing else changed since wrap wrote it is restored from\n"
	    "its backup byte for byte, and its backup removed.  Otherwise only\n"
	    "the wrapped entries are put back, each to the exact text it had\n"
	    "(or, if it was edited since, to its command and arguments without\n"
	    "mcpreel's), and the rest of the file is kept as it is now.\n"
	    "\n"
	    WRAP_HOST_HELP
	    "  --config FILE    only this file (its host told from its name, or\n"
	    "                   by --host; --format and --layout as for wrap)\n"
	    "  --project DIR    the project whose files to take (default: the\n"
	    "                   current directory)\n"
	    "  --dry-run        print the change as a unified diff, write nothing\n"
	    "  SERVER...        only the servers of these names\n"
	    "\n"
	    "Exit status: as for wrap.\n"
	    "\n"
	    "examples:\n"
	    "  mcpreel unwrap --dry-run\n"
	    "  mcpreel unwrap --host cursor\n"
	    "See docs/hosts.md.\n");
}

/* Count the wrapped entries of a file (of names; NULL: all). */
static size_t
unwrap_count_wrapped(const struct hcfg *cfg, const char *const *names)
{
	size_t	i, n = 0;

	for (i = 0; i < cfg->nentries; i++)
		n += cfg->entries[i].wrapped &&
		    wrap_chosen(names, cfg->entries[i].name);
	return n;
}

/*
 * Say the entries put back (those of changes) and, on err, the wrapped
 * ones unwrap could not put back; how many of those there were.
 */
static size_t
unwrap_say(FILE *out, const struct wrap_opts *o, const struct hostfile *f,
    const char *const *names, const struct hcfg_changes *changes, int whole)
{
	const struct hcfg_entry	*e;
	struct idmap		*set = wrap_changed_set(changes);
	size_t			 i, n = 0;

	if (changes->n > 0 || whole) {
		fprintf(out, "%s %s: %s ", f->host->id, f->shown,
		    o->dry_run ? "would unwrap" : "unwrapped");
		for (i = 0; i < f->cfg.nentries; i++) {
			e = &f->cfg.entries[i];
			if (!e->wrapped || !wrap_chosen(names, e->name) ||
			    (!whole && !wrap_changed(set, e)))
				continue;
			if (n++ > 0)
				fputs(", ", out);
			wrap_say_name(out, e->container, e->name);
		}
		if (whole)
			fputs(" (the whole file, from its backup, byte for "
			    "byte)", out);
		fputc('\n', out);
	}
	n = 0;
	for (i = 0; !whole && i < f->cfg.nentries; i++) {
		e = &f->cfg.entries[i];
		if (!e->wrapped || !wrap_chosen(names, e->name) ||
		    wrap_changed(set, e))
			continue;
		fprintf(stderr, "mcpreel %s: %s: ", o->cmd, f->shown);
		wrap_say_name(stderr, e->container, e->name);
		fputs(": cannot tell the command or url it ran before "
		    "mcpreel; left as it is (edit it by hand)\n", stderr);
		n++;
	}
	idmap_free(set);
	return n;
}

/*
 * When nothing is left wrapped in the file, remove its state (ledger
 * and backup, whether or not the ledger is there); else save the ledger.
 */
static int
unwrap_state(const struct wrap_opts *o, const struct hostfile *f,
    struct files_state *st, int left)
{
	char	*cause = NULL;

	if ((left ? (st->exists ? files_state_save(st, &cause) : 0) :
	    files_state_remove(st, &cause)) != 0)
		return wrap_failed(o, f, cause);
	return EXIT_OK;
}

/* Unwrap one loaded file. */
int
unwrap_file(const struct wrap_opts *o, struct hostfile *f)
{
	struct hcfg_changes	 changes;
	struct files_state	 st;
	struct hcfg		 after;
	const char		**names;
	char			*out = NULL, *cause = NULL, *to, *sha;
	size_t			 outlen = 0;
	int			 none, whole = 0, rc = EXIT_OK, left;

	memset(&changes, 0, sizeof changes);
	if (!f->ok)
		return wrap_unreadable(o, f);
	if ((names = hostfiles_names(f, o->names, o->nnames, &none)) !=
	    NULL && none) {
		free(names);
		return EXIT_OK;
	}
	if (files_state_load(f->real, &st, &cause) != 0) {
		files_state_clear(&st);
		free(names);
		return wrap_failed(o, f, cause);
	}
	if (unwrap_count_wrapped(&f->cfg, names) == 0) {
		fprintf(o->dry_run ? stderr : stdout, "%s %s: nothing to "
		    "unwrap\n", f->host->id, f->shown);
		if (!o->dry_run && unwrap_count_wrapped(&f->cfg, NULL) == 0)
			rc = unwrap_state(o, f, &st, 0);
		goto out;
	}
	if (names == NULL && st.exists && st.sha256 != NULL) {
		sha = files_sha256(f->buf, f->len);
		whole = strcmp(sha, st.sha256) == 0 &&
		    files_read(st.backup, &out, &outlen, &cause) == 0;
		free(sha);
		free(cause);
		cause = NULL;
	}
	if (!whole) {
		free(out);
		out = NULL;
		if (hcfg_unwrap(f->buf, f->len, &f->layout, names,
		    &st.changes, &out, &outlen, &changes, &cause) != 0) {
			fprintf(stderr, "mcpreel unwrap: %s%s%s; nothing was "
			    "changed\n", f->shown, cause != NULL &&
			    strncmp(cause, "line ", 5) == 0 ? " " : ": ",
			    cause != NULL ? cause : "cannot unwrap");
			free(cause);
			rc = EXIT_FAIL;
			goto out;
		}
	}
	if (o->dry_run) {
		if (outlen != f->len || memcmp(out, f->buf, outlen) != 0) {
			xasprintf(&to, "%s (unwrapped)", f->shown);
			files_diff(stdout, f->shown, to, f->buf, f->len, out,
			    outlen);
			free(to);
		}
		if (unwrap_say(stderr, o, f, names, &changes, whole) > 0)
			rc = EXIT_FAIL;
		goto out;
	}
	if (outlen != f->len || memcmp(out, f->buf, outlen) != 0) {
		wrap_warn_live(o, f);
		if (files_write(f->path, f->buf, f->len, out, outlen,
		    &cause) != 0) {
			rc = wrap_failed(o, f, cause);
			goto out;
		}
	}
	if (unwrap_say(stdout, o, f, names, &changes, whole) > 0)
		rc = EXIT_FAIL;
	if (whole) {
		if (files_state_remove(&st, &cause) != 0)
			rc = wrap_failed(o, f, cause);
		goto out;
	}
	/* The state stays for the entries still wrapped, if any. */
	memset(&after, 0, sizeof after);
	left = 1;
	if (hcfg_read(out, outlen, &f->layout, &after, &cause) == 0) {
		left = unwrap_count_wrapped(&after, NULL) > 0;
		hcfg_clear(&after);
	}
	free(cause);
	cause = NULL;
	files_state_drop(&st, &changes);
	free(st.sha256);
	st.sha256 = NULL;
	if (unwrap_state(o, f, &st, left) != EXIT_OK)
		rc = EXIT_FAIL;
out:
	files_state_clear(&st);
	hcfg_changes_clear(&changes);
	free(out);
	free(names);
	return rc;
}

/* mcpreel unwrap: put wrapped entries back. */
int
cmd_unwrap(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		WRAP_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct wrap_opts		 o;
	int				 ch, r;

	memset(&o, 0, sizeof o);
	o.cmd = "unwrap";
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		if ((r = wrap_option(&o, ch, optarg)) != 0) {
			if (r < 0)
				return EXIT_USAGE;
			continue;
		}
		switch (ch) {
		case 'h':
			cmd_unwrap_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("unwrap", argc, argv, "hvq", longopts);
			return EXIT_USAGE;
		}
	}
	o.names = argv + optind;
	o.nnames = (size_t)(argc - optind);
	return wrap_run(&o, 1);
}
