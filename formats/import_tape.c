/*
 * mcp-tape traces, for mcpreel import.  mcp-tape (a stdio recorder for
 * MCP) documents its trace as JSON lines: a first line {"v": 1, "type":
 * "meta", "startedAt": ISO 8601, "label", "command": argv,
 * "mcpTapVersion"}, one line per message {"t": ISO 8601 with milliseconds,
 * "dir": "in" (what the proxy read on its stdin: host to server) or "out"
 * (from the server's stdout), "raw": the message as parsed JSON, after its
 * redaction}, and a last line {"t", "type": "end", "exitCode",
 * "durationMs"}.  It logs only lines that parse as JSON, and writes "raw"
 * back with JSON.stringify: the bytes of a message here are the text of
 * "raw" as the file has it, which is the original line when the host and
 * server wrote compact JSON.  Times have milliseconds; the trace has no
 * monotonic clock, so mono_ns is the wall-clock time too.
 */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "formats_int.h"

/* The mcp-tape trace version this reads ("v" of the meta line). */
#define TAPE_VERSION	1

/*
 * A full ISO 8601 time with its zone (mcp-tape writes ...Z) as ns since
 * the epoch; the parsing is clock_parse_iso()'s, which also takes local
 * times that a trace has no business holding.
 */
static int
tape_iso8601(const char *s, int64_t *ns)
{
	size_t	n = strlen(s);

	if (n < 20 || (s[10] != 'T' && s[10] != 't') || (s[n - 1] != 'Z' &&
	    s[n - 1] != 'z' && strpbrk(s + 19, "+-") == NULL))
		return -1;
	return clock_parse_iso(s, ns);
}

/* A time member (an ISO 8601 string) as ns since the epoch. */
static int
tape_time(struct import *imp, enum field k, const char *name, int64_t *ns)
{
	char	*s;
	int	 rc;

	if (import_str(imp, k, &s) != 0)
		return -1;
	if (s == NULL)
		return import_bad(imp, "no \"%s\"", name);
	/*
	 * A time nanoseconds cannot hold (year 9999, 1000) is refused, not
	 * clamped: the trace's times would no longer say when things were.
	 */
	rc = tape_iso8601(s, ns);
	if (rc == CLOCK_ERANGE)
		import_bad(imp, "\"%s\" is a " CLOCK_RANGE_TEXT ": '%s'",
		    name, s);
	else if (rc != 0)
		import_bad(imp, "\"%s\" is not an ISO 8601 time like "
		    "2026-05-12T23:00:00.123Z: '%s'", name, s);
	free(s);
	return rc != 0 ? -1 : 0;
}

/* The session, from the meta line (NULL: there was none). */
static int
tape_begin(struct import *imp, int64_t started_ns, const char *name,
    const char *target)
{
	struct wsession_meta	 meta;

	memset(&meta, 0, sizeof meta);
	meta.started_ns = started_ns;
	imp->ended_ns = WRITER_NO_TIME;
	imp->exit_status = -1;
	return import_begin(imp, name, "stdio", target != NULL ? target :
	    "(imported)", &meta);
}

static int
tape_meta(struct import *imp)
{
	json_t	*cmd = NULL, *v;
	char	*label = NULL, *target = NULL;
	int64_t	 version = TAPE_VERSION, started;
	size_t	 i;
	int	 rc = -1;

	if (imp->records != 0 || imp->header_seen)
		return import_bad(imp, "a \"meta\" line after the first line");
	imp->header_seen = 1;
	if (import_int(imp, F_V, 0, &version) != 0)
		return -1;
	if (version != TAPE_VERSION)
		return import_bad(imp, "mcp-tape trace version %lld: this "
		    "mcpreel reads version %d", (long long)version,
		    TAPE_VERSION);
	if (tape_time(imp, F_STARTED_AT, "startedAt", &started) != 0 ||
	    import_str(imp, F_LABEL, &label) != 0)
		goto out;
	/* The command as the file writes it: a JSON array of strings. */
	if (import_present(imp, F_COMMAND)) {
		cmd = json_loadb(imp->line + imp->f[F_COMMAND].off,
		    imp->f[F_COMMAND].len, 0, NULL);
		json_array_foreach(cmd, i, v) {
			if (!json_is_string(v))
				break;
		}
		if (!json_is_array(cmd) || i != json_array_size(cmd)) {
			import_bad(imp, "\"command\" is not an array of "
			    "strings");
			goto out;
		}
		target = xstrndup(imp->line + imp->f[F_COMMAND].off,
		    imp->f[F_COMMAND].len);
	}
	rc = tape_begin(imp, started, label, target);
out:
	json_decref(cmd);
	free(label);
	free(target);
	return rc;
}

static int
tape_end(struct import *imp)
{
	int64_t	 code = -1;

	if (imp->ended)
		return import_bad(imp, "a second \"end\" line");
	if (tape_time(imp, F_T, "t", &imp->ended_ns) != 0 ||
	    import_int(imp, F_EXIT_CODE, 0, &code) != 0)
		return -1;
	if (code < -1 || code > INT_MAX)
		return import_bad(imp, "\"exitCode\" is out of range");
	if (!imp->begun && tape_begin(imp, imp->ended_ns, NULL, NULL) != 0)
		return -1;
	imp->ended = 1;
	imp->exit_status = (int)code;
	if (code >= 0)
		xasprintf(&imp->end_reason, "server exited with status %lld "
		    "(mcp-tape trace)", (long long)code);
	else
		imp->end_reason = xstrdup("mcp-tape trace ended");
	return 0;
}

static int
tape_message(struct import *imp)
{
	struct msg	*m;
	char		*dir = NULL;
	int64_t		 ts;
	enum dir	 d;

	if (imp->ended)
		return import_bad(imp, "a message after the \"end\" line");
	if (tape_time(imp, F_T, "t", &ts) != 0 ||
	    import_str(imp, F_DIR, &dir) != 0)
		return -1;
	if (dir == NULL || (strcmp(dir, "in") != 0 &&
	    strcmp(dir, "out") != 0)) {
		free(dir);
		return import_bad(imp, "\"dir\" is not \"in\" or \"out\"");
	}
	d = (strcmp(dir, "in") == 0) ? DIR_C2S : DIR_S2C;
	free(dir);
	if (!imp->f[F_RAW].set)
		return import_bad(imp, "no \"raw\"");
	if (!imp->begun && tape_begin(imp, ts, NULL, NULL) != 0)
		return -1;
	m = import_msg_member(imp, F_RAW, d);
	m->ts_ns = ts;
	m->mono_ns = ts;
	import_message(imp, m, NULL);
	return 0;
}

/* One line of an mcp-tape trace. */
int
import_tape_line(struct import *imp)
{
	char	*type = NULL;
	int	 rc;

	if (import_str(imp, F_TYPE, &type) != 0)
		return -1;
	if (type == NULL) {
		imp->records++;
		return tape_message(imp);
	}
	if (strcmp(type, "meta") == 0)
		rc = tape_meta(imp);
	else if (strcmp(type, "end") == 0) {
		imp->records++;
		rc = tape_end(imp);
	} else {
		log_warnx("%s line %zu: skipped an mcp-tape line of type '%s' "
		    "(not a message, not known here)", imp->o.path, imp->lineno,
		    type);
		rc = 0;
	}
	free(type);
	return rc;
}
