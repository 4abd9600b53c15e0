/*
 * mcpreel import: record a session from a file (what 'mcpreel export
 * --format jsonl' writes, or an mcp-tape trace) through formats/import.c.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "formats.h"
#include "proxy.h"

void
cmd_import_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel import [--db PATH] [--name NAME] "
	    "[--format jsonl|mcp-tape]\n"
	    "                      [--max-record-size SIZE] FILE\n"
	    "\n"
	    "Record a session from FILE ('-' for stdin) into the database, as\n"
	    "if it had been recorded here: each message is classified and paired\n"
	    "with its request the way 'mcpreel record' does, and keeps its\n"
	    "direction, times and exact bytes.  The session's imported_from says\n"
	    "the file and its format.  It prints the new session's id.\n"
	    "\n"
	    "  --format jsonl     what 'mcpreel export --format jsonl' writes\n"
	    "  --format mcp-tape  an mcp-tape trace: a \"meta\" line, lines\n"
	    "                     {\"t\": ISO 8601 time, \"dir\": \"in\" (host to\n"
	    "                     server) or \"out\", \"raw\": the message}, an\n"
	    "                     \"end\" line.  A message is the text of \"raw\"\n"
	    "                     as the file has it; both clocks are \"t\".\n"
	    "  (neither)          told from the first line\n"
	    "  --name NAME        the session's name (else the file's, if any)\n"
	    "  --max-record-size SIZE\n"
	    "                     store at most SIZE bytes of one message, as\n"
	    "                     record does (default 128M; K, M, G suffixes;\n"
	    "                     0: no cap): a longer one is stored as its first\n"
	    "                     SIZE bytes with its full size and SHA-256,\n"
	    "                     marked truncated, with a warning; such a line\n"
	    "                     is read in memory about SIZE, not held whole\n"
	    "                     (its message must be JSON, not a \"raw\" string)\n"
	    "\n"
	    "A line that cannot be read stops the import with its line number,\n"
	    "and nothing of the file stays in the database.  Exit status: 0\n"
	    "imported, 1 the file was refused, 2 it could not run.\n");
}


int
cmd_import(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "max-record-size", required_argument, NULL, 'M' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct import_opts		 imp;
	struct import_result		 r;
	FILE				*f = NULL;
	const char			*db = NULL, *format = NULL;
	char				*path = NULL, *cause = NULL;
	int				 ch, rc, ex;

	memset(&imp, 0, sizeof imp);
	imp.max_record = RECORD_MAX_RECORD;
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'n':
			imp.name = optarg;
			break;
		case 'M':
			if (limits_parse_size(optarg, &imp.max_record) != 0) {
				fprintf(stderr, "mcpreel import: "
				    "--max-record-size takes bytes, with K, M "
				    "or G for KiB, MiB, GiB (0: no cap): %s\n",
				    optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			cmd_import_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("import", argc, argv, "hvq",
			    longopts);
			return EXIT_USAGE;
		}
	}
	if (format != NULL && strcmp(format, "jsonl") == 0)
		imp.format = IMPORT_JSONL;
	else if (format != NULL && strcmp(format, "mcp-tape") == 0)
		imp.format = IMPORT_TAPE;
	else if (format != NULL) {
		fprintf(stderr, "mcpreel import: unknown format '%s': give "
		    "--format jsonl or --format mcp-tape (or leave it out)\n",
		    format);
		return EXIT_USAGE;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "mcpreel import: give one FILE ('-' for "
		    "stdin)\n");
		return EXIT_USAGE;
	}
	imp.path = argv[optind];
	if (strcmp(imp.path, "-") == 0)
		f = stdin;
	else if ((f = fopen(imp.path, "re")) == NULL) {
		fprintf(stderr, "mcpreel import: cannot open %s: %s\n",
		    imp.path, strerror(errno));
		return EXIT_USAGE;
	}
	if ((path = dbpath_resolve(db, &cause)) == NULL) {
		fprintf(stderr, "mcpreel import: %s\n", cause);
		free(cause);
		if (f != stdin)
			fclose(f);
		return EXIT_USAGE;
	}
	imp.file = f;
	rc = import_file(&imp, path, &r);
	if (rc == 0) {
		printf("%lld\n", (long long)r.id);
		log_info("imported %s as session %lld: %lld messages, %lld "
		    "events, %zu HTTP exchanges, %lld faults", imp.path,
		    (long long)r.id, (long long)r.messages,
		    (long long)r.events, r.exchanges, (long long)r.faults);
	} else
		fprintf(stderr, "mcpreel import: %s\n", r.cause);
	ex = (rc == 0) ? EXIT_OK : r.store_failed ? EXIT_USAGE : EXIT_FAIL;
	import_result_clear(&r);
	free(path);
	if (f != stdin)
		fclose(f);
	return ex;
}
