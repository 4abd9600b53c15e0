/*
 * mcpreel export: write one recorded session out, as JSON lines that
 * 'mcpreel import' reads back byte for byte, or as an HTTP Archive
 * (formats/jsonl_export.c, formats/har.c).
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "formats.h"

void
cmd_export_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel export [--db PATH] [--format jsonl|har] [-o FILE] "
	    "SESSION\n"
	    "\n"
	    "Write one recorded session out.  SESSION is its id, its name (the\n"
	    "newest session of that name) or 'last'.\n" CLI_SESSION_WORDS
	    CLI_SESSION_CASSETTE
	    "\n"
	    "  --format jsonl  (the default) one JSON object a line: first the\n"
	    "                  session (\"format\": \"" JSONL_FORMAT "\", name,\n"
	    "                  transport, target, times, how it ended), then each\n"
	    "                  HTTP request of an HTTP session (\"type\":\n"
	    "                  \"http_exchange\"), then every message (\"type\":\n"
	    "                  \"message\") in the order recorded, with the\n"
	    "                  server's stderr lines and other events (\"type\":\n"
	    "                  \"event\") and the faults --fault injected\n"
	    "                  (\"type\": \"fault\") among them by time.  A message is\n"
	    "                  \"message\" (its JSON exactly as recorded), \"raw\"\n"
	    "                  (other text) or \"raw_base64\" (bytes that are not\n"
	    "                  UTF-8): 'mcpreel import' gives back the same bytes.\n"
	    "  --format har    HTTP Archive 1.2 of an HTTP session, for HAR\n"
	    "                  viewers: one entry per HTTP request, its headers,\n"
	    "                  the JSON-RPC body posted, the response with its\n"
	    "                  JSON or its SSE events, and timings.\n"
	    "  -o, --output F  write to F (created private, mode 0600; replaced\n"
	    "                  only once the export is complete), not stdout.\n");
}

int
cmd_export(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct session_arg		 sa;
	const char			*db = NULL, *format = "jsonl";
	const char			*output = NULL;
	char				*cause = NULL;
	int				 ch;

	memset(&sa, 0, sizeof sa);
	while ((ch = getopt_long(argc, argv, "ho:vq", longopts, NULL)) !=
	    -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			cmd_export_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("export", argc, argv, "ho:vq",
			    longopts);
			return EXIT_USAGE;
		}
	}
	if (strcmp(format, "jsonl") != 0 && strcmp(format, "har") != 0) {
		fprintf(stderr, "mcpreel export: unknown format '%s': give "
		    "--format jsonl or --format har\n", format);
		return EXIT_USAGE;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "mcpreel export: give one SESSION (an id, a "
		    "name or 'last'; see 'mcpreel sessions')\n");
		return EXIT_USAGE;
	}
	if (session_arg_open(db, argv[optind], 0, &sa, &cause) != 0)
		goto fail;
	if (formats_export(sa.st, sa.id, strcmp(format, "har") == 0 ?
	    FORMATS_HAR : FORMATS_JSONL, output, &cause) != 0)
		goto fail;
	session_arg_close(&sa);
	return EXIT_OK;
fail:
	fprintf(stderr, "mcpreel export: %s\n", cause);
	free(cause);
	session_arg_close(&sa);
	return EXIT_USAGE;
}
