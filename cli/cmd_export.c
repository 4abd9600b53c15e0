/*
 * mcpreel export: write one recorded session out, as JSON lines that
 * 'mcpreel import' reads back byte for byte, as an HTTP Archive, or as
 * OpenTelemetry spans (formats/jsonl_export.c, formats/har.c,
 * formats/otlp_file.c).
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
	    "usage: mcpreel export [--db PATH] [--format jsonl|har|otlp] "
	    "[-o FILE] SESSION\n"
	    "       mcpreel export [--db PATH] --format otlp --otlp URL|env\n"
	    "                      [OTLP OPTIONS] SESSION\n"
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
	    "  --format otlp   the session's requests and notifications as\n"
	    "                  OpenTelemetry spans, the same as record --otlp\n"
	    "                  sends live (the same trace id): OTLP/JSON, one\n"
	    "                  ExportTraceServiceRequest of at most 512 spans a\n"
	    "                  line (the Collector's file exporter format), or\n"
	    "                  with --otlp to a collector, waiting for it rather\n"
	    "                  than dropping (exit 1 if it did not take them\n"
	    "                  all).  --otlp-side and --otlp-payloads as for\n"
	    "                  record; every message recorded is read\n"
	    "  -o, --output F  write to F (created private, mode 0600; replaced\n"
	    "                  only once the export is complete), not stdout.\n"
	    "\n"
	    "OTLP options (--format otlp):\n"
	    OTLP_OPTS_HELP);
}

/*
 * export --format otlp: the session's spans to output, or with --otlp to
 * a collector; the exit code.
 */
static int
export_otlp(struct store *st, int64_t id, const struct otlp_opts *oo,
    const char *output)
{
	struct otlp_config	 c;
	struct formats_file	 ff;
	FILE			*out = NULL;
	char			*cause = NULL;
	uint64_t		 spans, dropped;
	int			 rc;

	memset(&c, 0, sizeof c);
	rc = oo->url != NULL ? otlp_opts_config(oo, &c, &cause) :
	    otlp_opts_file_config(oo, &c, &cause);
	if (rc == 0 && oo->url == NULL && (out = formats_open(&ff, output, 0,
	    &cause)) == NULL)
		rc = -1;
	if (rc == 0 && (rc = otlp_file_session(st, id, &c, out, &spans,
	    &dropped, &cause)) != 0 && out != NULL)
		formats_close(&ff, 1, NULL);
	else if (rc == 0 && out != NULL)
		rc = formats_close(&ff, 0, &cause);
	otlp_config_clear(&c);
	if (rc != 0) {
		fprintf(stderr, "mcpreel export: %s\n", cause);
		free(cause);
		return EXIT_USAGE;
	}
	if (oo->url != NULL && dropped > 0) {
		fprintf(stderr, "mcpreel export: the collector did not take "
		    "%llu of %llu spans\n", (unsigned long long)dropped,
		    (unsigned long long)(spans + dropped));
		return EXIT_FAIL;
	}
	log_info("export: %llu spans", (unsigned long long)spans);
	return EXIT_OK;
}

int
cmd_export(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		OTLP_OPTS_LONGOPTS,
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct session_arg		 sa;
	const char			*db = NULL, *format = "jsonl";
	const char			*output = NULL;
	char				*cause = NULL;
	int				 ch, rc;
	struct otlp_opts		 oo;

	memset(&sa, 0, sizeof sa);
	memset(&oo, 0, sizeof oo);
	while ((ch = getopt_long(argc, argv, "ho:vq", longopts, NULL)) !=
	    -1) {
		if (cli_common_option(ch, optarg))
			continue;
		if ((rc = otlp_opts_option(&oo, ch, optarg, &cause)) <= 0) {
			if (rc == 0)
				continue;
			fprintf(stderr, "mcpreel export: %s\n", cause);
			free(cause);
			otlp_opts_clear(&oo);
			return EXIT_USAGE;
		}
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
			otlp_opts_clear(&oo);
			return EXIT_OK;
		default:
			opterr_report("export", argc, argv, "ho:vq",
			    longopts);
			otlp_opts_clear(&oo);
			return EXIT_USAGE;
		}
	}
	if (strcmp(format, "jsonl") != 0 && strcmp(format, "har") != 0 &&
	    strcmp(format, "otlp") != 0) {
		fprintf(stderr, "mcpreel export: unknown format '%s': give "
		    "--format jsonl, har or otlp\n", format);
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (strcmp(format, "otlp") != 0 && (oo.url != NULL ||
	    oo.extra != NULL)) {
		fprintf(stderr, "mcpreel export: %s goes with --format otlp\n",
		    oo.url != NULL ? "--otlp" : oo.extra);
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (strcmp(format, "otlp") == 0 && otlp_opts_check(&oo, 1,
	    &cause) != 0) {
		fprintf(stderr, "mcpreel export: %s\n", cause);
		free(cause);
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (oo.url != NULL && output != NULL) {
		fprintf(stderr, "mcpreel export: give either --otlp URL or "
		    "-o FILE, not both\n");
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "mcpreel export: give one SESSION (an id, a "
		    "name or 'last'; see 'mcpreel sessions')\n");
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (session_arg_open(db, argv[optind], 0, &sa, &cause) != 0)
		goto fail;
	if (strcmp(format, "otlp") == 0) {
		rc = export_otlp(sa.st, sa.id, &oo, output);
		otlp_opts_clear(&oo);
		session_arg_close(&sa);
		return rc;
	}
	if (formats_export(sa.st, sa.id, strcmp(format, "har") == 0 ?
	    FORMATS_HAR : FORMATS_JSONL, output, &cause) != 0)
		goto fail;
	session_arg_close(&sa);
	return EXIT_OK;
fail:
	fprintf(stderr, "mcpreel export: %s\n", cause);
	free(cause);
	otlp_opts_clear(&oo);
	session_arg_close(&sa);
	return EXIT_USAGE;
}
