/*
 * mcpreel: a record/replay logging proxy for the Model Context Protocol.
 * main() picks the subcommand from a table and hands over.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fault.h"

const struct cmd cmd_table[] = {
	{ "record", "run an MCP server and record its traffic",
	    cmd_record, cmd_record_usage },
	{ "sessions", "list recorded sessions", cmd_sessions,
	    cmd_sessions_usage },
	{ "show", "print a recorded session", cmd_show, cmd_show_usage },
	{ "stats", "latency and errors per method, hung requests",
	    cmd_stats, cmd_stats_usage },
	{ "check", "say what breaks the protocol in a session, message by "
	    "message", cmd_check, cmd_check_usage },
	{ "prune", "delete old sessions and reclaim their space",
	    cmd_prune, cmd_prune_usage },
	{ "rm", "delete sessions", cmd_rm, cmd_rm_usage },
	{ "report", "write a recorded session as an HTML page",
	    cmd_report, cmd_report_usage },
	{ "replay", "re-send a recorded session to a server and diff",
	    cmd_replay, cmd_replay_usage },
	{ "mock", "serve a recorded session as the server, offline",
	    cmd_mock, cmd_mock_usage },
	{ "diff", "compare two recorded sessions, with no server",
	    cmd_diff, cmd_diff_usage },
	{ "export", "write a session out as JSON lines or a HAR",
	    cmd_export, cmd_export_usage },
	{ "import", "record a session from a JSON lines file or mcp-tape trace",
	    cmd_import, cmd_import_usage },
	{ "hosts", "list MCP hosts' config files here and their servers",
	    cmd_hosts, cmd_hosts_usage },
	{ "wrap", "make a host run its servers through mcpreel record",
	    cmd_wrap, cmd_wrap_usage },
	{ "unwrap", "put a host's wrapped servers back as they were",
	    cmd_unwrap, cmd_unwrap_usage },
	{ NULL, NULL, NULL, NULL }
};

/* Which of fds 0, 1 and 2 were closed when we started (bit fd). */
static int	closed_at_start;

/*
 * Put /dev/null on any of fds 0-2 that is closed, so nothing we open
 * (the database, a log file, a socket) lands there and gets what is
 * meant for stdout.  Read-only, so writing a closed stdout or stderr
 * still fails (EBADF) and is said as it was; a command that needs to
 * know asks cli_fd_was_closed().
 */
static void
reserve_stdio(void)
{
	int	fd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		closed_at_start |= 1 << fd;
		if (open("/dev/null", O_RDONLY) != fd)
			_exit(EXIT_USAGE);	/* nowhere to say it */
	}
}

/* Whether fd (0, 1 or 2) was closed when mcpreel started. */
int
cli_fd_was_closed(int fd)
{
	return fd >= 0 && fd <= 2 && (closed_at_start & (1 << fd)) != 0;
}

static void
usage(FILE *f)
{
	const struct cmd	*c;

	fprintf(f,
	    "usage: mcpreel [-v] [-q] [--log-file FILE] COMMAND [ARGS...]\n"
	    "\n"
	    "mcpreel sits between an MCP host and an MCP server, forwards every\n"
	    "message unchanged and records each one into SQLite.\n"
	    "\n"
	    "commands:\n");
	for (c = cmd_table; c->name != NULL; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f,
	    "\n"
	    "options (before or after the command):\n"
	    "  -v, --verbose     say more on stderr: the normal course too\n"
	    "  -q, --quiet       only warnings and errors\n"
	    "      --log-file F  write mcpreel's own messages to F, not stderr\n"
	    "  -h, --help        this help; 'mcpreel COMMAND --help' for one\n"
	    "      --version     print the version\n"
	    "\n"
	    "The database is --db PATH, else $MCPREEL_DB, else\n"
	    "$XDG_DATA_HOME/mcpreel/mcpreel.db (~/.local/share/mcpreel/mcpreel.db).\n"
	    "\n"
	    "example, in a host's MCP server config:\n"
	    "  \"command\": \"mcpreel\",\n"
	    "  \"args\": [\"record\", \"--name\", \"fs\", \"--\", \"npx\", "
	    "\"-y\", \"some-mcp-server\"]\n");
}

static enum log_level	level = LOG_LEVEL_INFO;
static const char	*log_path;

/*
 * Options every command takes: returns 1 if ch was one of them.  Commands
 * list "vq" and "log-file" in their getopt tables and call this.
 */
int
cli_common_option(int ch, const char *arg)
{
	switch (ch) {
	case 'v':
		if (level < LOG_LEVEL_DEBUG)
			level++;
		break;
	case 'q':
		level = LOG_LEVEL_WARN;
		break;
	case 'L':
		log_path = arg;
		break;
	default:
		return 0;
	}
	log_close();
	log_init(level, log_path);
	return 1;
}

/*
 * Say, when stdin is a terminal, that cmd (record or mock over stdio)
 * waits for an MCP host there: a person who typed it would otherwise see
 * nothing happen.  A host's pipe gets nothing.
 */
void
cli_stdio_notice(const char *cmd)
{
	if (!isatty(STDIN_FILENO))
		return;
	log_info("waiting for an MCP host on stdin: 'mcpreel %s' is meant to "
	    "be started by a host (put it in the host's MCP server config; "
	    "see 'mcpreel --help')", cmd);
}

static const struct cmd *
find_cmd(const char *name)
{
	const struct cmd	*c;

	for (c = cmd_table; c->name != NULL; c++) {
		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "log-file", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd		*c;
	int				 ch;

	reserve_stdio();
	/* A reader that went away must be an error we see, not our death. */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * A SIGCHLD ignored by whoever started us survives the exec and
	 * makes the kernel reap our children itself: waitpid then fails
	 * with ECHILD and a server's or --before command's exit status is
	 * lost.  We wait for every child we start.
	 */
	signal(SIGCHLD, SIG_DFL);
	log_init(level, NULL);
	opterr = 0;	/* opterr_report() says what was wrong, once */

	while ((ch = getopt_long(argc, argv, "+vqhV", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("mcpreel %s\n", MCPREEL_VERSION);
			return EXIT_OK;
		default:
			opterr_report(NULL, argc, argv, "+vqhV", longopts);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[0], "help") == 0) {
		/* The fault rules' short reference (docs/faults.md in full). */
		if (argc > 1 && strcmp(argv[1], "faults") == 0) {
			fputs(fault_usage(), stdout);
			return EXIT_OK;
		}
		if (argc > 1 && (c = find_cmd(argv[1])) != NULL) {
			c->usage(stdout);
			return EXIT_OK;
		}
		if (argc > 1 && strcmp(argv[1], "help") != 0 &&
		    argv[1][0] != '-') {
			opterr_command(argv[1]);
			return EXIT_USAGE;
		}
		usage(stdout);
		return EXIT_OK;
	}
	if ((c = find_cmd(argv[0])) == NULL) {
		opterr_command(argv[0]);
		return EXIT_USAGE;
	}
	optind = 0;	/* 0: glibc re-reads the option string (ordering) */
	return c->run(argc, argv);
}
