/* Formatting shared by the commands that print recordings for people. */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "store.h"

#include "cli.h"

/* Wall-clock ns as local "YYYY-MM-DD HH:MM:SS" into buf. */
const char *
fmt_time(int64_t ns, char *buf, size_t len)
{
	time_t		t = (time_t)(ns / 1000000000);
	struct tm	tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, "?");
	return buf;
}

/* A duration in ns as people read it: 850us, 12.3ms, 4.20s, 3m05s. */
const char *
fmt_duration(int64_t ns, char *buf, size_t len)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else if (ns < 1000000)
		snprintf(buf, len, "%lldus", (long long)(ns / 1000));
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1fms", (double)ns / 1e6);
	else if (ns < 60LL * 1000000000)
		snprintf(buf, len, "%.2fs", (double)ns / 1e9);
	else
		snprintf(buf, len, "%lldm%02llds",
		    (long long)(ns / 60000000000LL),
		    (long long)(ns / 1000000000 % 60));
	return buf;
}

/*
 * The first bytes of raw on one line, for a terminal: control bytes and
 * bytes that are not UTF-8 shown as \xNN, cut with "..." past max columns.
 */
void
fmt_preview(FILE *f, const void *raw, size_t len, size_t max)
{
	const unsigned char	*p = raw;
	size_t			 i, n, col = 0;

	for (i = 0; i < len; i += n) {
		n = 1;
		if (col >= max) {
			fputs("...", f);
			return;
		}
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			fputc(p[i], f);
			col++;
		} else if (p[i] >= 0x80 &&
		    (n = scan_utf8_len(p + i, p + len)) != 0) {
			/* Well-formed UTF-8 stays whole: terminals show it. */
			fwrite(p + i, 1, n, f);
			col++;
		} else {
			n = 1;
			fprintf(f, "\\x%02x", p[i]);
			col += 4;
		}
	}
}

/*
 * Bytes as a JSON value for --json output: the parsed JSON when they are
 * JSON, else NULL (the caller then uses fjson_bytes).
 */
json_t *
fmt_json_value(const void *raw, size_t len)
{
	if (raw == NULL || len == 0)
		return NULL;
	return json_loadb(raw, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

/* The target for a person: a JSON argv array joined by spaces. */
char *
fmt_target(const char *target)
{
	json_t	*a = json_loads(target, 0, NULL), *v;
	char	*out = NULL, *tmp;
	size_t	 i;

	if (a == NULL || !json_is_array(a)) {
		json_decref(a);
		return xstrdup(target);
	}
	json_array_foreach(a, i, v) {
		xasprintf(&tmp, "%s%s%s", out != NULL ? out : "",
		    out != NULL ? " " : "", json_string_value(v) != NULL ?
		    json_string_value(v) : "?");
		free(out);
		out = tmp;
	}
	json_decref(a);
	return out != NULL ? out : xstrdup("");
}

/* Print obj compactly on one line of stdout. */
void
fmt_json_line(json_t *obj)
{
	json_dumpf(obj, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}

/*
 * Where a session stands: "ended", "open" (its recorder still runs) or
 * "recorder gone" (never ended, and the process that recorded it is no
 * more: killed, or its machine restarted; the record stops where it
 * stopped).  An imported session without an end is "open".
 */
const char *
fmt_session_state(const struct session_row *r)
{
	if (r->ended_ns != 0)
		return "ended";
	if (r->recorder_pid > 0 &&
	    !prune_recorder_alive(r->recorder_pid, r->started_ns))
		return "recorder gone";
	return "open";
}
