/*
 * jschema_check: the JSON Schema validator (check/jsonschema.c) from the
 * command line, for the differential test against ajv.
 *
 *	jschema_check [-7] [-f] [-m] FILE
 *
 * FILE holds one case per line: {"schema": S, "instance": I}.  For each,
 * one line of JSON on stdout: {"valid": true|false, "errors": [...],
 * "notes": [...]}, or {"unusable": "why"} when the schema is refused.
 * -7 reads a schema without "$schema" as draft-07 (else 2020-12), -f
 * makes "format" an assertion, -m prints the peak RSS (VmHWM) on stderr
 * at the end as "peak_rss_kib N".
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"

/* Append one error of the validation to the JSON array arg. */
static void
jschema_check_error_cb(void *arg, const char *ipath, const char *spath,
    const char *text)
{
	json_array_append_new(arg, json_pack("{s:s, s:s, s:s}", "path", ipath,
	    "schema", spath, "text", text));
}

/* Validate each case of FILE, one line of JSON out per case. */
int
main(int argc, char **argv)
{
	struct jschema	*s;
	json_t		*line, *out, *errs, *notes;
	json_error_t	 jerr;
	FILE		*f;
	char		*buf = NULL, *cause = NULL, *text;
	size_t		 cap = 0, i;
	ssize_t		 n;
	int		 ch, flags = 0, errc, rss = 0;

	while ((ch = getopt(argc, argv, "7fm")) != -1) {
		switch (ch) {
		case '7':
			flags |= JSCHEMA_DRAFT07;
			break;
		case 'f':
			flags |= JSCHEMA_FORMAT_ASSERT;
			break;
		case 'm':
			rss = 1;
			break;
		default:
			goto usage;
		}
	}
	if (optind + 1 != argc)
		goto usage;
	if ((f = fopen(argv[optind], "r")) == NULL) {
		perror(argv[optind]);
		return 1;
	}
	while ((n = getline(&buf, &cap, f)) > 0) {
		if ((line = json_loadb(buf, (size_t)n, 0, &jerr)) == NULL) {
			fprintf(stderr, "jschema_check: a line is no JSON: %s\n",
			    jerr.text);
			return 1;
		}
		s = jschema_compile(json_object_get(line, "schema"), flags,
		    &cause);
		if (s == NULL) {
			out = json_pack("{s:s}", "unusable", cause);
			free(cause);
			cause = NULL;
		} else {
			errs = json_array();
			notes = json_array();
			errc = jschema_validate(s, json_object_get(line,
			    "instance"), jschema_check_error_cb, errs);
			for (i = 0; i < jschema_nnotes(s); i++)
				json_array_append_new(notes, json_string(
				    jschema_note(s, i)));
			out = json_pack("{s:b, s:i, s:o, s:o}", "valid",
			    errc == 0, "count", errc, "errors", errs, "notes",
			    notes);
			jschema_free(s);
		}
		text = json_dumps(out, JSON_COMPACT);
		printf("%s\n", text);
		free(text);
		json_decref(out);
		json_decref(line);
	}
	free(buf);
	buf = NULL;
	cap = 0;
	fclose(f);
	if (rss && (f = fopen("/proc/self/status", "r")) != NULL) {
		while ((n = getline(&buf, &cap, f)) > 0) {
			if (strncmp(buf, "VmHWM:", 6) == 0)
				fprintf(stderr, "peak_rss_kib %ld\n",
				    strtol(buf + 6, NULL, 10));
		}
		free(buf);
		fclose(f);
	}
	return 0;
usage:
	fprintf(stderr, "usage: jschema_check [-7] [-f] [-m] FILE (one "
	    "{\"schema\": ..., \"instance\": ...} per line)\n");
	return 2;
}
