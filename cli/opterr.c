/*
 * What a mistyped command line gets: one line saying what was wrong, the
 * nearest right spelling when there is one close enough, and where help
 * is.  Never the whole --help, which buries the one line that matters.
 * getopt's own messages are off (opterr = 0, set in main()); each
 * command's getopt loop calls opterr_report() for its '?'.
 */

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Most names listed at once in a suggestion or an ambiguity. */
#define OPTERR_LIST_MAX		4
/* Most long options one command has (its table is cut there). */
#define OPTERR_NAMES_MAX	64
/*
 * Most bytes of a mistyped option name quoted back: longer than any name
 * (nothing that long is near one) and a line still fits a terminal.
 */
#define OPTERR_TYPED_MAX	80

/* Print "'--a'", "'--a' or '--b'", "'--a', '--b' or '--c'". */
static void
opterr_list(const char *dashes, const char *const *names, const size_t *idx,
    size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			fputs(i + 1 == n ? " or " : ", ", stderr);
		fprintf(stderr, "'%s%s'", dashes, names[idx[i]]);
	}
}

/* The long option names of a getopt table into names; returns how many. */
static size_t
opterr_names(const struct option *longopts, const char **names)
{
	size_t	n = 0;

	while (longopts[n].name != NULL && n < OPTERR_NAMES_MAX) {
		names[n] = longopts[n].name;
		n++;
	}
	return n;
}

/* "; did you mean '--x'?" and the end of the line. */
static void
opterr_suggest(const char *dashes, const char *typed,
    const char *const *names, size_t n)
{
	size_t	idx[OPTERR_LIST_MAX], found;

	found = nearest_find(typed, names, n, idx, OPTERR_LIST_MAX);
	if (found > 0) {
		fputs("; did you mean ", stderr);
		opterr_list(dashes, names, idx, found);
		fputc('?', stderr);
	}
	fputc('\n', stderr);
}

/* A long option that getopt refused: el is the argument as typed. */
static void
opterr_long(const char *who, const char *el, const struct option *longopts)
{
	const char	*names[OPTERR_NAMES_MAX];
	char		 typed[OPTERR_TYPED_MAX + 1];
	size_t		 n, i, len, idx[OPTERR_LIST_MAX], found = 0;
	const char	*eq;
	int		 exact = -1;

	n = opterr_names(longopts, names);
	eq = strchr(el, '=');
	len = (eq != NULL) ? (size_t)(eq - el) : strlen(el);
	if (len >= sizeof typed)
		len = sizeof typed - 1;
	memcpy(typed, el, len);
	typed[len] = '\0';

	for (i = 0; i < n; i++) {
		if (strncmp(names[i], typed, len) != 0)
			continue;
		if (names[i][len] == '\0') {
			exact = (int)i;
			break;
		}
		if (found < OPTERR_LIST_MAX)
			idx[found] = i;
		found++;
	}
	if (exact == -1 && found == 1)
		exact = (int)idx[0];
	if (exact != -1) {
		/* Known: getopt refused its value, or its lack of one. */
		fprintf(stderr, "%s: option '--%s' %s\n", who, names[exact],
		    longopts[exact].has_arg == no_argument ? "takes no value" :
		    "needs a value");
		return;
	}
	if (found > 1) {
		fprintf(stderr, "%s: option '--%s' is ambiguous; it could be ",
		    who, typed);
		opterr_list("--", names, idx, found > OPTERR_LIST_MAX ?
		    OPTERR_LIST_MAX : found);
		fputs(found > OPTERR_LIST_MAX ? ", ...\n" : "\n", stderr);
		return;
	}
	fprintf(stderr, "%s: unknown option '--%s'", who, typed);
	opterr_suggest("--", typed, names, n);
}

/*
 * A short option that getopt refused: the letter is optopt, in el (a
 * cluster such as -vx, or a long option typed with one dash, -listen).
 */
static void
opterr_short(const char *who, const char *el, const char *shortopts,
    const struct option *longopts)
{
	const char	*names[OPTERR_NAMES_MAX], *p;
	size_t		 n;
	char		 other[2] = { 0, 0 };

	p = strchr(shortopts, optopt);
	if (p != NULL && optopt != ':' && optopt != '+' && p[1] == ':') {
		fprintf(stderr, "%s: option '-%c' needs a value\n", who,
		    optopt);
		return;
	}
	n = opterr_names(longopts, names);
	if (optopt <= ' ' || optopt > '~') {
		/* A byte of a UTF-8 character: quote the argument whole. */
		fprintf(stderr, "%s: unknown option '%.*s'\n", who,
		    OPTERR_TYPED_MAX, el != NULL ? el : "?");
		return;
	}
	if (el != NULL && el[0] == '-' && el[1] != '-' && strlen(el) > 2) {
		/* -listen: one dash for two. */
		fprintf(stderr, "%s: unknown option '-%c' in '%.*s'", who,
		    optopt, OPTERR_TYPED_MAX, el);
		opterr_suggest("--", el + 1, names, n);
		return;
	}
	fprintf(stderr, "%s: unknown option '-%c'", who, optopt);
	/* -O for -o, or -V for -v: the case is the typo. */
	if (optopt >= 'a' && optopt <= 'z')
		other[0] = (char)(optopt - 'a' + 'A');
	else if (optopt >= 'A' && optopt <= 'Z')
		other[0] = (char)(optopt - 'A' + 'a');
	if (other[0] != 0 && strchr(shortopts, other[0]) != NULL)
		fprintf(stderr, "; did you mean '-%s'?", other);
	fputc('\n', stderr);
}

/*
 * Say what was wrong with the option getopt_long just refused (returned
 * '?' for), for command cmd (NULL: mcpreel itself), whose getopt_long
 * call took shortopts and longopts.
 */
void
opterr_report(const char *cmd, int argc, char **argv, const char *shortopts,
    const struct option *longopts)
{
	char		 who[64];
	const char	*el = NULL, *cur;

	snprintf(who, sizeof who, "mcpreel%s%s", cmd != NULL ? " " : "",
	    cmd != NULL ? cmd : "");
	if (optind > 0 && optind <= argc)
		el = argv[optind - 1];
	/*
	 * A long option moves optind past itself; a short one only at the
	 * end of its cluster, so a refused letter inside -xv leaves optind
	 * on the cluster.
	 */
	if (optopt != 0 && optind < argc &&
	    !(el != NULL && strncmp(el, "--", 2) == 0 && strchr(el, '=') !=
	    NULL)) {
		cur = argv[optind];
		/* Not its last letter: getopt would have moved past that. */
		if (cur[0] == '-' && cur[1] != '-' && cur[1] != '\0' &&
		    memchr(cur + 1, optopt, strlen(cur + 1) - 1) != NULL)
			el = cur;
	}
	if (el != NULL && strncmp(el, "--", 2) == 0 && el[2] != '\0')
		opterr_long(who, el + 2, longopts);
	else
		opterr_short(who, el, shortopts, longopts);
	fprintf(stderr, "Try '%s --help'.\n", who);
}

/* A command name that is none of ours. */
void
opterr_command(const char *typed)
{
	const char	*names[OPTERR_NAMES_MAX];
	size_t		 n;

	for (n = 0; cmd_table[n].name != NULL && n < OPTERR_NAMES_MAX; n++)
		names[n] = cmd_table[n].name;
	fprintf(stderr, "mcpreel: unknown command '%.*s'", OPTERR_TYPED_MAX,
	    typed);
	opterr_suggest("", typed, names, n);
	fprintf(stderr, "Try 'mcpreel --help'.\n");
}
