/*
 * The options that bound what a peer may take, parsed the same way for
 * every command that has them: sizes (--max-record-size), and the limits
 * of a listener's clients (--max-connections, --head-timeout,
 * --idle-timeout) shared by record --listen and mock --listen.
 */

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The most a --*-timeout takes, in seconds: a day. */
#define LIMITS_TIMEOUT_MAX	86400
/* The most --max-connections takes: more would only be fds we lack. */
#define LIMITS_CONNECTIONS_MAX	1000000

/* A size in bytes, with an optional K, M or G (binary) suffix. */
int
limits_parse_size(const char *arg, size_t *size)
{
	unsigned long long	 n;
	char			*end;
	int			 shift = 0;

	errno = 0;
	n = strtoull(arg, &end, 10);
	/* A digit first: strtoull takes " -1" and wraps it. */
	if (errno != 0 || end == arg || *arg < '0' || *arg > '9')
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		return -1;
	}
	if (*end != '\0' && end[1] != '\0' && strcmp(end + 1, "iB") != 0 &&
	    strcmp(end + 1, "B") != 0)
		return -1;
	if (n > (SIZE_MAX >> shift))
		return -1;
	*size = (size_t)n << shift;
	return 0;
}

/* A whole number from min to max, or -1 (said on stderr for cmd --name). */
int
limits_number(const char *cmd, const char *name, const char *arg, long min,
    long max, const char *what, long *out)
{
	char	*end;
	long	 n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || n < min || n > max) {
		fprintf(stderr, "mcpreel %s: --%s takes %s to %ld: %s\n", cmd,
		    name, what, max, arg);
		return -1;
	}
	*out = n;
	return 0;
}

/* A --*-timeout argument: whole seconds, 0 for no limit. */
int
limits_seconds(const char *cmd, const char *name, const char *arg, int *out)
{
	long	n;

	if (limits_number(cmd, name, arg, 0, LIMITS_TIMEOUT_MAX,
	    "whole seconds, 0 (no limit)", &n) != 0)
		return -1;
	*out = (int)n;
	return 0;
}

/*
 * One of the listener options (LIMITS_LONGOPTS) into lim: 1 if ch was
 * one and it was good, -1 if it was one and bad (said on stderr), 0 if
 * ch is not one of them.
 */
int
limits_listen_option(const char *cmd, int ch, const char *arg,
    struct listen_limits *lim)
{
	long	n;

	switch (ch) {
	case LIMITS_OPT_HEAD:
		return limits_seconds(cmd, "head-timeout", arg,
		    &lim->head_timeout) == 0 ? 1 : -1;
	case LIMITS_OPT_IDLE:
		return limits_seconds(cmd, "idle-timeout", arg,
		    &lim->idle_timeout) == 0 ? 1 : -1;
	case LIMITS_OPT_CONNS:
		if (limits_number(cmd, "max-connections", arg, 0,
		    LIMITS_CONNECTIONS_MAX, "a count of connections, 0 (the "
		    "default, from ulimit -n)", &n) != 0)
			return -1;
		lim->max_connections = (unsigned)n;
		return 1;
	default:
		return 0;
	}
}

/* The defaults of the listener options. */
void
limits_listen_defaults(struct listen_limits *lim)
{
	memset(lim, 0, sizeof *lim);
	lim->head_timeout = HTTP_HEAD_TIMEOUT;
	lim->idle_timeout = HTTP_IDLE_TIMEOUT;
}
