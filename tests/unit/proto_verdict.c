/*
 * proto_verdict: the protocol module's verdict on one message per line,
 * for the differential test against the SDK's schemas
 * (tests/e2e/protocol_sdk_diff.test.mjs).  Each input line is
 *
 *   {"version": "2025-11-25", "message": {...}, "request_method": "tools/call"}
 *
 * (request_method: the method a response answers, or null) and gives one
 * output line, in order:
 *
 *   valid
 *   warning RULE[,RULE...]<TAB>PATH: TEXT
 *   invalid RULE[,RULE...]<TAB>PATH: TEXT
 *
 * "invalid" when a finding is an error, "warning" when all are warnings;
 * the rules are those of every finding (in order, repeats left out), the
 * path and text those of the first error (or the first warning).  A line
 * that cannot be read gives "bad-input<TAB>reason", so the output keeps
 * one line per input line.
 *
 *   proto_verdict < IN.jsonl > OUT.txt
 *
 * Exit status: 0 when every line was read, 2 when some could not be.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol.h"

/*
 * The rule ids printed per message: a message past this many distinct
 * rules still says "invalid", the rest are left out (there are far fewer
 * rules than this).
 */
#define VERDICT_RULES_MAX	32
/* The first finding's path and text, cut here: enough to tell it. */
#define VERDICT_TEXT_MAX	600

/* What the findings of one message add up to. */
struct verdict {
	const char	*rules[VERDICT_RULES_MAX];
	size_t		 nrules;
	int		 errors;
	int		 warnings;
	int		 have_error_text;
	char		 text[VERDICT_TEXT_MAX];
};

/* Count one finding and keep its rule, and its text if it is the first. */
static void
verdict_cb(const struct proto_finding *f, void *arg)
{
	struct verdict	*v = arg;
	size_t		 i;

	for (i = 0; i < v->nrules; i++) {
		if (strcmp(v->rules[i], f->rule) == 0)
			break;
	}
	if (i == v->nrules && v->nrules < VERDICT_RULES_MAX)
		v->rules[v->nrules++] = f->rule;
	if (f->severity == PROTO_ERROR) {
		if (!v->have_error_text)
			snprintf(v->text, sizeof v->text, "%s: %s", f->path,
			    f->text);
		v->have_error_text = 1;
		v->errors++;
	} else {
		if (v->errors == 0 && v->warnings == 0)
			snprintf(v->text, sizeof v->text, "%s: %s", f->path,
			    f->text);
		v->warnings++;
	}
}

/* Print the verdict line of one message, its text on one line. */
static void
verdict_print(const struct verdict *v)
{
	const char	*p;
	size_t		 i;

	if (v->errors == 0 && v->warnings == 0) {
		puts("valid");
		return;
	}
	fputs(v->errors != 0 ? "invalid " : "warning ", stdout);
	for (i = 0; i < v->nrules; i++)
		printf("%s%s", i == 0 ? "" : ",", v->rules[i]);
	putchar('\t');
	for (p = v->text; *p != '\0'; p++)
		putchar(*p == '\n' || *p == '\t' ? ' ' : *p);
	putchar('\n');
}

/* The verdict on one input line; -1 (and a bad-input line) if unreadable. */
static int
verdict_line(const char *buf, size_t len)
{
	struct verdict		 v;
	json_t			*line, *msg, *ver, *rm;
	json_error_t		 err;
	enum proto_version	 pv;

	line = json_loadb(buf, len, JSON_ALLOW_NUL, &err);
	if (line == NULL) {
		printf("bad-input\tline is no JSON: %s\n", err.text);
		return (-1);
	}
	ver = json_object_get(line, "version");
	msg = json_object_get(line, "message");
	rm = json_object_get(line, "request_method");
	if (!json_is_string(ver) || msg == NULL) {
		puts("bad-input\tline needs \"version\" (a string) and "
		    "\"message\"");
		json_decref(line);
		return (-1);
	}
	pv = proto_version_parse(json_string_value(ver));
	memset(&v, 0, sizeof v);
	proto_check_message(pv, msg, json_is_string(rm) ?
	    json_string_value(rm) : NULL, verdict_cb, &v);
	verdict_print(&v);
	json_decref(line);
	return (0);
}

int
main(int argc, char **argv)
{
	char	*buf = NULL;
	size_t	 cap = 0;
	ssize_t	 len;
	int	 bad = 0;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: proto_verdict < IN.jsonl (one "
		    "{\"version\", \"message\", \"request_method\"} a line)\n");
		return (2);
	}
	while ((len = getline(&buf, &cap, stdin)) != -1) {
		if (len > 0 && buf[len - 1] == '\n')
			len--;
		if (verdict_line(buf, (size_t)len) == -1)
			bad = 1;
	}
	free(buf);
	if (fflush(stdout) != 0) {
		perror("proto_verdict: stdout");
		return (2);
	}
	return (bad ? 2 : 0);
}
