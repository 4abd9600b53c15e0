/*
 * The fault injection options record and mock share: --fault RULE
 * (repeatable), --faults FILE (JSON, re-read on SIGHUP) and --seed N.
 */

#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fault.h"

/* Read the --faults file whole, at most FAULT_FILE_MAX bytes. */
static char *
fault_opts_read(const char *path, size_t *lenp, char **cause)
{
	struct stat	 sb;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		xasprintf(cause, "--faults %s: cannot open it: %s", path,
		    strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		xasprintf(cause, "--faults %s: not a regular file", path);
		goto fail;
	}
	/* One byte past the cap tells a file that is too long. */
	buf = xmalloc(FAULT_FILE_MAX + 2);
	for (;;) {
		n = read(fd, buf + len, FAULT_FILE_MAX + 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			xasprintf(cause, "--faults %s: cannot read it: %s",
			    path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > FAULT_FILE_MAX) {
			xasprintf(cause, "--faults %s: longer than %d bytes",
			    path, FAULT_FILE_MAX);
			goto fail;
		}
	}
	buf[len] = '\0';
	close(fd);
	*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

/*
 * The rules as given (--fault in order, then the file's) in a new set
 * seeded 0; the file's seed, if any, in *seed with *has_seed 1.
 */
static struct fault_set *
fault_opts_rules(const struct fault_opts *opts, int http, uint64_t *seed,
    int *has_seed, char **cause)
{
	struct fault_set	*set;
	char			*buf = NULL, *why;
	size_t			 i, len;

	*has_seed = 0;
	set = fault_set_new(0);
	for (i = 0; i < opts->nrules; i++) {
		/* The parser's message names the rule. */
		if (fault_set_add_text(set, opts->rules[i], cause) != 0)
			goto fail;
	}
	if (opts->file != NULL) {
		if ((buf = fault_opts_read(opts->file, &len, cause)) == NULL)
			goto fail;
		if (fault_set_add_json(set, opts->file, buf, len, seed,
		    has_seed, &why) != 0) {
			xasprintf(cause, "--faults %s: %s", opts->file, why);
			free(why);
			goto fail;
		}
		free(buf);
		buf = NULL;
	}
	if (fault_set_check_transport(set, http, &why) != 0) {
		xasprintf(cause, "%s", why);
		free(why);
		goto fail;
	}
	return set;
fail:
	free(buf);
	fault_set_free(set);
	return NULL;
}

/*
 * Take one option: name is "fault", "faults" or "seed"; -1 with *cause
 * when the value is bad.
 */
int
fault_opts_set(struct fault_opts *opts, const char *name, const char *value,
    char **cause)
{
	unsigned long long	 v;
	char			*end;

	if (strcmp(name, "fault") == 0) {
		if (strlen(value) > FAULT_RULE_TEXT_MAX) {
			xasprintf(cause, "--fault: a rule is at most %d "
			    "bytes", FAULT_RULE_TEXT_MAX);
			return -1;
		}
		if (opts->nrules >= FAULT_RULES_MAX) {
			xasprintf(cause, "--fault: at most %d rules",
			    FAULT_RULES_MAX);
			return -1;
		}
		opts->rules = xreallocarray(opts->rules, opts->nrules + 1,
		    sizeof *opts->rules);
		opts->rules[opts->nrules++] = xstrdup(value);
		return 0;
	}
	if (strcmp(name, "faults") == 0) {
		if (opts->file != NULL) {
			xasprintf(cause, "--faults: give one file (it may "
			    "hold up to %d rules)", FAULT_RULES_MAX);
			return -1;
		}
		opts->file = xstrdup(value);
		return 0;
	}
	if (strcmp(name, "seed") == 0) {
		errno = 0;
		v = strtoull(value, &end, 10);
		if (value[0] < '0' || value[0] > '9' || errno != 0 ||
		    *end != '\0') {
			xasprintf(cause, "--seed takes a whole number, 0 to "
			    "%" PRIu64 ": %s", UINT64_MAX, value);
			return -1;
		}
		opts->seed = (uint64_t)v;
		opts->has_seed = 1;
		return 0;
	}
	xasprintf(cause, "unknown fault option --%s", name);
	return -1;
}

/* Whether any rule was asked for (--fault or --faults). */
int
fault_opts_any(const struct fault_opts *opts)
{
	return opts->nrules != 0 || opts->file != NULL;
}

/*
 * The rule set: --fault rules then the file's, checked for the transport
 * (http: 1 over HTTP).  The seed used (--seed, else the file's, else
 * drawn from getrandom) is left in opts->seed and logged at -v.
 */
struct fault_set *
fault_opts_load(struct fault_opts *opts, int http, char **cause)
{
	struct fault_set	*scratch, *set;
	uint64_t		 file_seed = 0;
	int			 file_has_seed;
	ssize_t			 n;

	scratch = fault_opts_rules(opts, http, &file_seed, &file_has_seed,
	    cause);
	if (scratch == NULL)
		return NULL;
	if (!opts->has_seed && file_has_seed) {
		opts->seed = file_seed;
		opts->has_seed = 1;
	}
	if (!opts->has_seed) {
		do
			n = getrandom(&opts->seed, sizeof opts->seed, 0);
		while (n == -1 && errno == EINTR);
		if (n != (ssize_t)sizeof opts->seed) {
			xasprintf(cause, "cannot draw a seed (getrandom: %s): "
			    "give --seed N", n == -1 ? strerror(errno) :
			    "short read");
			fault_set_free(scratch);
			return NULL;
		}
		/* Printed and recorded: a whole number the user can type. */
		opts->has_seed = 1;
	}
	set = fault_set_new(opts->seed);
	fault_set_take_rules(set, scratch);
	log_info("fault rules: %zu; seed %" PRIu64 " (--seed %" PRIu64
	    " repeats this run)", fault_set_count(set), opts->seed,
	    opts->seed);
	return set;
}

/*
 * SIGHUP: the rules again (--fault, and the file re-read) into set, whose
 * PRNG goes on; on a bad file -1 with *cause and set unchanged.
 */
int
fault_opts_reload(struct fault_opts *opts, struct fault_set *set, int http,
    char **cause)
{
	struct fault_set	*scratch;
	uint64_t		 file_seed;
	int			 file_has_seed;

	scratch = fault_opts_rules(opts, http, &file_seed, &file_has_seed,
	    cause);
	if (scratch == NULL)
		return -1;
	fault_set_take_rules(set, scratch);
	log_info("fault rules reloaded: %zu", fault_set_count(set));
	return 0;
}

/* The note event a recording gets: "fault rules: N; seed S" (free it). */
char *
fault_opts_note(const struct fault_opts *opts, const struct fault_set *set)
{
	char	*s;

	xasprintf(&s, "fault rules: %zu; seed %" PRIu64,
	    fault_set_count(set), opts->seed);
	return s;
}

/* Free what fault_opts_set kept. */
void
fault_opts_clear(struct fault_opts *opts)
{
	size_t	i;

	for (i = 0; i < opts->nrules; i++)
		free(opts->rules[i]);
	free(opts->rules);
	free(opts->file);
	memset(opts, 0, sizeof *opts);
}
