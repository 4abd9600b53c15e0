/* mcpreel record: run an MCP server over stdio and record its traffic. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "proxy.h"
#include "store.h"

void
cmd_record_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel record [--db PATH] [--name NAME] [-v] -- CMD [ARGS...]\n"
	    "\n"
	    "Run CMD as an MCP server over stdio, in place of the server: the host\n"
	    "talks to mcpreel's stdin and stdout exactly as it would to CMD's.\n"
	    "Every line is forwarded unchanged as soon as it is complete and\n"
	    "recorded (direction, time, kind, method, id, exact bytes), and so is\n"
	    "CMD's stderr, which is also passed on to mcpreel's stderr.  mcpreel\n"
	    "exits with CMD's exit status (128+N if signal N killed it; 127 if CMD\n"
	    "was not found).  SIGINT, SIGTERM and SIGHUP are passed on to CMD.\n"
	    "\n"
	    "options:\n"
	    "  --db PATH     the database (default: $MCPREEL_DB, else\n"
	    "                ~/.local/share/mcpreel/mcpreel.db); created mode 0600\n"
	    "  --name NAME   a name for the session, to find it by later\n"
	    "  -v, -q        more or less on stderr\n"
	    "\n"
	    "example:\n"
	    "  mcpreel record --name everything -- npx -y "
	    "@modelcontextprotocol/server-everything\n");
}

/* The server's argv as a JSON array, for sessions.target. */
static char *
record_target(char **argv)
{
	json_t	*a = json_array(), *v;
	char	*s, *p;
	int	 i;

	for (i = 0; argv[i] != NULL; i++) {
		if ((v = json_string(argv[i])) == NULL) {
			/* Not UTF-8: keep its shape, lose its odd bytes. */
			s = xstrdup(argv[i]);
			for (p = s; *p != '\0'; p++) {
				if ((unsigned char)*p >= 0x80)
					*p = '?';
			}
			v = json_string(s);
			free(s);
		}
		json_array_append_new(a, v);
	}
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s != NULL ? s : xstrdup("[]");
}

int
cmd_record(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "log-file", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 }
	};
	struct record_result		 res;
	struct store			*st;
	struct writer			*w;
	struct wsession			*s;
	const char			*db = NULL, *name = NULL;
	char				*path, *cause = NULL, *target;
	int				 ch;
	uint64_t			 lost;

	while ((ch = getopt_long(argc, argv, "+hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'h':
			cmd_record_usage(stdout);
			return EXIT_OK;
		default:
			cmd_record_usage(stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		fprintf(stderr, "mcpreel record: no server command given "
		    "(mcpreel record [OPTIONS] -- CMD [ARGS...])\n");
		return EXIT_USAGE;
	}

	if ((path = dbpath_resolve(db, &cause)) == NULL ||
	    (st = store_open(path, STORE_CREATE, &cause)) == NULL) {
		fprintf(stderr, "mcpreel record: %s\n", cause);
		free(cause);
		free(path);
		return EXIT_USAGE;
	}
	if ((w = writer_start(st, &cause)) == NULL) {
		fprintf(stderr, "mcpreel record: %s\n", cause);
		store_close(st);
		free(cause);
		free(path);
		return EXIT_USAGE;
	}
	target = record_target(argv);
	s = writer_session_begin(w, name, "stdio", target);
	free(target);

	record_stdio(w, s, argv, &res);

	writer_session_end(w, s, res.exit_status, res.exit_signal,
	    res.reason);
	writer_stop(w);
	lost = writer_session_lost(s);
	if (lost != 0)
		log_warnx("session %lld in %s: %llu messages were forwarded "
		    "but could not be recorded",
		    (long long)writer_session_id(s), path,
		    (unsigned long long)lost);
	else
		log_info("recorded session %lld in %s",
		    (long long)writer_session_id(s), path);
	writer_session_free(s);
	free(res.reason);
	free(path);
	return res.exit_code;
}
