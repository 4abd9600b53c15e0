/* mcpreel diff: compare two recorded sessions, with no server. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "replay.h"
#include "store.h"

/* --json and --junit, short for --report json and --report junit -o. */
#define DIFF_OPT_JSON	0x200
#define DIFF_OPT_JUNIT	0x201

void
cmd_diff_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel diff [--db PATH] A B [OPTIONS]\n"
	    "\n"
	    "Compare two recorded sessions exchange by exchange, with no server:\n"
	    "the same client against two versions of a server, or yesterday's run\n"
	    "against today's.  A and B are ids, names or 'last' (both in the same\n"
	    "database), or cassettes: files that 'mcpreel export' wrote (JSONL),\n"
	    "read with nothing written.  A word that names a session and a file\n"
	    "is the session.\n"
	    CLI_SESSION_WORDS
	    "\n"
	    "B's requests are paired with A's as mock matches them (method and\n"
	    "params, _meta aside, repeats in order).  The report lists requests\n"
	    "only in A, only in B, and answers that differ (the structural diff\n"
	    "replay makes, with the same rules), and the tools, prompts, resources\n"
	    "and resource templates each side listed: added, removed, and changed\n"
	    "(which fields: description, inputSchema, outputSchema, annotations,\n"
	    "title, ...), with the differences.  The answers to the list methods\n"
	    "are compared that way, not as answers.\n"
	    "\n"
	    "examples:\n"
	    "  mcpreel diff yesterday today --rules examples/everything-rules.json\n"
	    "  mcpreel diff v1.jsonl v2.jsonl --json\n"
	    "\n"
	    "options:\n"
	    "  --ignore PATH          do not compare PATH in answers (repeatable),\n"
	    "                         a JSONPath subset as replay takes; in the\n"
	    "                         request it leaves PATH out of the pairing\n"
	    "  --for KEY=GLOB         after --ignore: only for a tool, prompt,\n"
	    "                         resource or method (as replay)\n"
	    "  --ignore-method M      do not compare the answers to method M\n"
	    "  --ignore-tool NAME     ... to tools/call of tool NAME\n"
	    "  --ignore-prompt NAME   ... to prompts/get of prompt NAME\n"
	    "  --ignore-resource URI  ... to resources/read of URI (all globs)\n"
	    "  --rules FILE           the same in a JSON file, as replay takes it\n"
	    "  --report text|json|junit   the report's form (default text)\n"
	    "  -o FILE                write the report to FILE, not stdout (with\n"
	    "                         json or junit, the text report still goes\n"
	    "                         to stdout)\n"
	    "  --json                 the same as --report json\n"
	    "  --junit FILE           the same as --report junit -o FILE\n"
	    "  --include-faults       keep the messages of faults injected when\n"
	    "                         recording (left out by default, as replay)\n"
	    "\n"
	    "Exit status: 0 the same, 1 any difference (a request only on one side,\n"
	    "an answer that differs or that B lacks, a definition added, removed\n"
	    "or changed, a kind of definition only one side listed), 2 could not\n"
	    "run.\n");
}

/* What each side is: its session (database or cassette) and name. */
struct diff_side {
	int64_t		 id;
	char		*name;
};

int
cmd_diff(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "ignore", required_argument, NULL, 'i' },
		{ "for", required_argument, NULL, 'f' },
		{ "ignore-method", required_argument, NULL, 'm' },
		{ "ignore-tool", required_argument, NULL, 'T' },
		{ "ignore-prompt", required_argument, NULL, 'P' },
		{ "ignore-resource", required_argument, NULL, 'U' },
		{ "rules", required_argument, NULL, 'R' },
		{ "report", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, DIFF_OPT_JSON },
		{ "junit", required_argument, NULL, DIFF_OPT_JUNIT },
		CLI_INCLUDE_FAULTS_LONGOPT,
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct diff_rules		 rules;
	struct diff_side		 a, b;
	struct plan			 pa, pb;
	struct sdiff_report		 rep;
	const char			*db = NULL, *report = "text";
	const char			*out_path = NULL;
	char				*cause = NULL;
	int				 ch, rc = EXIT_USAGE, scopable = 0;
	int				 include_faults = 0;
	FILE				*out = stdout;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	memset(&pa, 0, sizeof pa);
	memset(&pb, 0, sizeof pb);
	memset(&rep, 0, sizeof rep);
	rules_init(&rules);

	while ((ch = getopt_long(argc, argv, "hvqo:", longopts, NULL)) !=
	    -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (rules_opts_take(&rules, &scopable, ch, optarg,
		    &cause)) {
		case 0:
			continue;
		case -1:
			goto bad;
		}
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'r':
			if (strcmp(optarg, "text") != 0 &&
			    strcmp(optarg, "json") != 0 &&
			    strcmp(optarg, "junit") != 0) {
				fprintf(stderr, "mcpreel diff: --report takes "
				    "text, json or junit\n");
				goto out;
			}
			report = optarg;
			break;
		case DIFF_OPT_JSON:
			report = "json";
			break;
		case DIFF_OPT_JUNIT:
			report = "junit";
			out_path = optarg;
			break;
		case 'o':
			out_path = optarg;
			break;
		case CLI_OPT_INCLUDE_FAULTS:
			include_faults = 1;
			break;
		case 'h':
			cmd_diff_usage(stdout);
			rc = EXIT_OK;
			goto out;
		default:
			opterr_report("diff", argc, argv, "hvqo:", longopts);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2) {
		fprintf(stderr, "mcpreel diff: give two sessions, A and B (ids, "
		    "names, 'last' or cassette files): mcpreel diff A B\n");
		goto out;
	}

	/* Each side the way replay and mock take their session. */
	if (session_arg_plan(db, argv[0], include_faults, "diff", &pa, &a.id,
	    &a.name, NULL, &cause) != 0 ||
	    session_arg_plan(db, argv[1], include_faults, "diff", &pb, &b.id,
	    &b.name, NULL, &cause) != 0)
		goto bad;

	rep.ex.session = a.id;
	rep.ex.session_name = a.name != NULL ? xstrdup(a.name) : NULL;
	rep.session_b = b.id;
	rep.session_name_b = b.name != NULL ? xstrdup(b.name) : NULL;
	sdiff_run(&pa, &pb, &rules, &rep);

	if (out_path != NULL && (out = fopen(out_path, "we")) == NULL) {
		fprintf(stderr, "mcpreel diff: cannot write %s: %m\n",
		    out_path);
		out = stdout;
		goto out;
	}
	if (strcmp(report, "json") == 0)
		sdiff_out_json(out, &rep);
	else if (strcmp(report, "junit") == 0)
		sdiff_out_junit(out, &rep);
	else
		sdiff_out_text(out, &rep, out == stdout &&
		    isatty(STDOUT_FILENO));
	if (out != stdout && strcmp(report, "text") != 0)
		sdiff_out_text(stdout, &rep, isatty(STDOUT_FILENO));
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "mcpreel diff: cannot write the report: %m\n");
		goto out;
	}
	rc = sdiff_exit_status(&rep);
	goto out;

bad:
	fprintf(stderr, "mcpreel diff: %s\n", cause);
	rc = EXIT_USAGE;
out:
	if (out != stdout)
		fclose(out);
	sdiff_clear(&rep);
	plan_clear(&pa);
	plan_clear(&pb);
	rules_clear(&rules);
	free(a.name);
	free(b.name);
	free(cause);
	return rc;
}
