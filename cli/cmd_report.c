/*
 * mcpreel report: one recorded session as a single HTML file that opens
 * offline.  The page is cli/report.html (compiled in as report_html); the
 * session goes into it as JSON, streamed row by row from the store, at the
 * marker REPORT_MARKER inside a <script type="application/json"> block.
 * The page's script builds everything from that JSON with textContent.
 *
 * The JSON (the page's script reads exactly this):
 *   {"session": {id, name, transport, target, started, duration_ns,
 *                end_reason, exit_status, exit_signal, messages, bytes,
 *                lost, generated, version, max_bytes, max_big (1: the
 *                default for a session of over REPORT_BIG_MESSAGES)},
 *    "items": [ message or event, ... in the order they happened ],
 *    "findings": [ {seq (0: the session), sev ("error", "warning",
 *                  "note"), rule, text, path, spec}, ... in seq order ],
 *    "counts": {error, warning, note}, "unlisted": N}
 * (the findings are mcpreel check's; past CHECK_OUT_MAX only counted)
 * a message: {"k":"m", seq, dir, t (ns since the first item), kind,
 *             method, id (the id's JSON text), re (the seq of the request
 *             it answers), lat (ns), size, err (1: an error, or a tool
 *             result with isError true), fault (the fault injected it
 *             belongs to) and role ("original", "injected", "delayed")
 *             when it is a fault's, text, bin, cut}
 * an event:  {"k":"e", kind, t, text, bin, cut}; a fault injected by
 *            --fault is one of kind "fault", its text a sentence
 * text is the first max_bytes of the bytes; bin 1 means they were not
 * UTF-8 and text shows each stray byte as \xNN (and a backslash as \\);
 * cut 1 means text holds only the first bytes.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "protocol.h"
#include "store.h"

/* The page, from cli/report.html by cmake/embed.cmake. */
extern const char report_html[];

/* Where in the page the session's JSON goes. */
#define REPORT_MARKER "@MCPREEL_DATA@"

/*
 * Bytes of each message put in the page unless --max-bytes says otherwise:
 * enough for any ordinary message, while a session with a few huge ones
 * (a 64 MiB blob) still gives a page a browser opens.
 */
#define REPORT_MAX_BYTES_DEFAULT (1024 * 1024)

/*
 * Past REPORT_BIG_MESSAGES messages, the default is REPORT_MAX_BYTES_BIG:
 * the page holds every message's text, and a browser must parse it whole
 * (a million messages of a few KiB each would be GiBs).  256 bytes keep a
 * row's preview and most requests whole; --max-bytes says otherwise.
 */
#define REPORT_BIG_MESSAGES	100000
#define REPORT_MAX_BYTES_BIG	256

/*
 * A response is parsed (to find a tool result's isError) only up to this
 * size: the parse holds the whole message as a tree for a moment.
 */
#define REPORT_PARSE_MAX (16 * 1024 * 1024)

/* stdio buffer for the page: fewer, larger writes. */
#define REPORT_BUFSIZE (64 * 1024)

struct report {
	FILE	*f;
	size_t	 max_bytes;	/* 0: no limit */
	int	 max_given;	/* --max-bytes was given */
	int	 max_big;	/* max_bytes is the big session's default */
	int64_t	 first_mono;	/* the first item's monotonic time */
	int	 started;	/* an item has been written */
	int64_t	 messages;
	int64_t	 events;
};

/* What --help prints. */
void
cmd_report_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel report [--db PATH] [-o FILE] [--max-bytes N] "
	    "SESSION\n"
	    "\n"
	    "Write a recorded session as one HTML file that opens in a browser\n"
	    "from disk, offline: no scripts, fonts or styles from elsewhere.\n"
	    "SESSION is its id, its name (the newest session of that name) or\n"
	    "'last'.\n" CLI_SESSION_WORDS CLI_SESSION_CASSETTE
	    "\n"
	    "The page shows the session's facts; a timeline with lanes for the\n"
	    "host, mcpreel and the server, each message an arrow in its\n"
	    "direction, responses linked to their requests with the latency as a\n"
	    "bar, errors (and tool results with isError) in red, the server's\n"
	    "stderr and exit; a click on a message shows its JSON, pretty-printed\n"
	    "(bytes that are not UTF-8 as \\xNN); and a filter.  Rows are drawn\n"
	    "500 at a time, with previous/next and a jump to a page or a\n"
	    "message (#seq), so a session of a million messages stays usable;\n"
	    "the filter looks in every message and its results are paged.\n"
	    "The session is checked as 'mcpreel check' does: its findings are\n"
	    "counted and listed at the top, each linking to its message, and\n"
	    "marked on the messages (the text on hover and in the message's\n"
	    "detail).\n"
	    "\n"
	    "options:\n"
	    "  -o, --output FILE  write the page to FILE (default:\n"
	    "                     mcpreel-ID.html in the current directory, ID\n"
	    "                     the session's id); '-' for stdout.  The file is\n"
	    "                     readable by you only (mode 0600), as the\n"
	    "                     database is: it holds the recorded traffic\n"
	    "      --max-bytes N  put at most the first N bytes of each message\n"
	    "                     in the page (default %d, 1 MiB, and %d for a\n"
	    "                     session of over %d messages, so a browser\n"
	    "                     can open it; 0: all); the page says where a\n"
	    "                     message was cut\n"
	    "      --db PATH      the database (see 'mcpreel --help')\n"
	    "\n"
	    "example:\n"
	    "  mcpreel report last -o report.html\n",
	    REPORT_MAX_BYTES_DEFAULT, REPORT_MAX_BYTES_BIG, REPORT_BIG_MESSAGES);
}

/* Whether bytes are all UTF-8. */
static int
html_utf8(const unsigned char *p, size_t len)
{
	size_t	i, n;

	for (i = 0; i < len; i += n) {
		n = 1;
		if (p[i] >= 0x80 && (n = scan_utf8_len(p + i, p + len)) == 0)
			return 0;
	}
	return 1;
}

/* How many of len bytes to show: max_bytes, backed off to a character. */
static size_t
html_cut(const unsigned char *p, size_t len, size_t max)
{
	size_t	n = len, back;

	if (max == 0 || len <= max)
		return len;
	n = max;
	/* Step back over continuation bytes to the start of a character. */
	for (back = 0; back < 3 && n > 0 && (p[n] & 0xc0) == 0x80; back++)
		n--;
	return n;
}

/*
 * Write bytes as a JSON string that is also safe inside a <script>
 * element: '<', '>' and '&' are \u escapes, so neither "</script>" nor
 * "<!--" can appear in the page from a message.  When bin is set, bytes
 * that are not UTF-8 are written as the text \xNN (and a backslash as \\)
 * for a person to read.
 */
static void
html_string(FILE *f, const void *raw, size_t len, int bin)
{
	const unsigned char	*p = raw;
	size_t			 i, n;

	fputc('"', f);
	for (i = 0; i < len; i += n) {
		n = 1;
		switch (p[i]) {
		case '"':
			fputs("\\\"", f);
			continue;
		case '\\':
			fputs(bin ? "\\\\\\\\" : "\\\\", f);
			continue;
		case '\n':
			fputs("\\n", f);
			continue;
		case '\r':
			fputs("\\r", f);
			continue;
		case '\t':
			fputs("\\t", f);
			continue;
		case '<':
		case '>':
		case '&':
			fprintf(f, "\\u%04x", p[i]);
			continue;
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			fprintf(f, "\\u%04x", p[i]);
			continue;
		}
		if (p[i] < 0x80) {
			fputc(p[i], f);
			continue;
		}
		if ((n = scan_utf8_len(p + i, p + len)) == 0) {
			/* Not UTF-8 (bin is set for message text). */
			fprintf(f, "\\\\x%02x", p[i]);
			n = 1;
			continue;
		}
		/* U+2028 and U+2029 end a line in older JavaScript. */
		if (n == 3 && p[i] == 0xe2 && p[i + 1] == 0x80 &&
		    (p[i + 2] == 0xa8 || p[i + 2] == 0xa9))
			fprintf(f, "\\u202%c", p[i + 2] == 0xa8 ? '8' : '9');
		else
			fwrite(p + i, 1, n, f);
	}
	fputc('"', f);
}

/* A string that may be NULL, as JSON. */
static void
html_string_or_null(FILE *f, const char *s)
{
	if (s == NULL)
		fputs("null", f);
	else
		html_string(f, s, strlen(s), 0);
}

/* Write text, bin and cut members for bytes. */
static void
html_text(struct report *rp, const void *raw, size_t len)
{
	size_t	n = html_cut(raw, len, rp->max_bytes);
	int	bin = !html_utf8(raw, n);

	fputs(",\"text\":", rp->f);
	html_string(rp->f, raw, n, bin);
	fprintf(rp->f, ",\"bin\":%d,\"cut\":%d", bin, n < len);
}

/* Whether a response is a tool result with "isError": true. */
static int
html_tool_error(const struct message_row *m)
{
	json_t	*v, *res;
	int	 yes;

	if (m->kind != KIND_RESPONSE || m->len > REPORT_PARSE_MAX ||
	    memmem(m->raw, m->len, "\"isError\"", 9) == NULL)
		return 0;
	if ((v = json_loadb(m->raw, m->len, 0, NULL)) == NULL)
		return 0;
	res = json_object_get(v, "result");
	yes = json_is_true(json_object_get(res, "isError"));
	json_decref(v);
	return yes;
}

/* Write the session's facts, and open the list of items. */
static int
html_session_cb(const struct session_row *r, void *arg)
{
	struct report	*rp = arg;
	FILE		*f = rp->f;
	char		 when[32], now[32], *target;

	target = fmt_target(r->target);
	fprintf(f, "{\"session\":{\"id\":%lld,\"name\":", (long long)r->id);
	html_string_or_null(f, r->name);
	fputs(",\"transport\":", f);
	html_string_or_null(f, r->transport);
	fputs(",\"target\":", f);
	html_string_or_null(f, target);
	fputs(",\"started\":", f);
	html_string_or_null(f, fmt_time(r->started_ns, when, sizeof when));
	if (r->ended_ns != 0)
		fprintf(f, ",\"duration_ns\":%lld",
		    (long long)clock_sub(r->ended_ns, r->started_ns));
	else
		fputs(",\"duration_ns\":null", f);
	fputs(",\"end_reason\":", f);
	html_string_or_null(f, r->end_reason);
	if (r->has_exit)
		fprintf(f, ",\"exit_status\":%d", r->exit_status);
	else
		fputs(",\"exit_status\":null", f);
	if (r->exit_signal != 0)
		fprintf(f, ",\"exit_signal\":%d", r->exit_signal);
	else
		fputs(",\"exit_signal\":null", f);
	fprintf(f, ",\"messages\":%lld,\"bytes\":%lld,\"lost\":%lld",
	    (long long)r->messages, (long long)r->bytes,
	    (long long)r->messages_lost);
	fputs(",\"generated\":", f);
	html_string_or_null(f, fmt_time(clock_wall_ns(), now, sizeof now));
	if (!rp->max_given && r->messages > REPORT_BIG_MESSAGES) {
		rp->max_bytes = REPORT_MAX_BYTES_BIG;
		rp->max_big = 1;
	}
	fprintf(f, ",\"version\":\"%s\",\"max_bytes\":%zu,\"max_big\":%d},"
	    "\n\"items\":[", MCPREEL_VERSION, rp->max_bytes, rp->max_big);
	free(target);
	return 0;
}

/* Write one message or event of the timeline as an item. */
static int
html_row_cb(const struct timeline_row *r, void *arg)
{
	struct report			*rp = arg;
	const struct message_row	*m = &r->m;
	FILE				*f = rp->f;
	int64_t				 mono = r->is_event ? r->e.mono_ns :
					     m->mono_ns;

	if (!rp->started) {
		rp->first_mono = mono;
		rp->started = 1;
	} else
		fputs(",", f);
	fputs("\n", f);
	if (r->is_event) {
		fputs("{\"k\":\"e\",\"kind\":", f);
		html_string_or_null(f, r->e.kind);
		fprintf(f, ",\"t\":%lld", (long long)clock_sub(mono, rp->first_mono));
		html_text(rp, r->e.text, r->e.len);
		fputs("}", f);
		rp->events++;
		return ferror(f) ? -1 : 0;
	}
	fprintf(f, "{\"k\":\"m\",\"seq\":%lld,\"dir\":\"%s\",\"t\":%lld,"
	    "\"kind\":\"%s\",\"method\":", (long long)m->seq,
	    dir_name(m->dir), (long long)clock_sub(mono, rp->first_mono),
	    kind_name(m->kind));
	html_string_or_null(f, m->method);
	fputs(",\"id\":", f);
	html_string_or_null(f, m->rpc_id);
	if (m->reply_seq != 0)
		fprintf(f, ",\"re\":%lld", (long long)m->reply_seq);
	if (m->latency_ns >= 0 && m->reply_seq != 0)
		fprintf(f, ",\"lat\":%lld", (long long)m->latency_ns);
	fprintf(f, ",\"size\":%zu,\"err\":%d", m->len,
	    m->kind == KIND_ERROR || html_tool_error(m));
	if (fault_role_name(m->fault_role) != NULL)
		fprintf(f, ",\"fault\":%lld,\"role\":\"%s\"",
		    (long long)m->fault, fault_role_name(m->fault_role));
	html_text(rp, m->raw, m->len);
	fputs("}", f);
	rp->messages++;
	/* A full disk shows here: stop rather than read on for nothing. */
	return ferror(f) ? -1 : 0;
}

/* Check the session and write its findings and counts. */
static int
html_findings(struct store *st, int64_t id, FILE *f, char **cause)
{
	struct check_out	 o;
	const struct check_item	*it;
	size_t			 i;

	memset(&o, 0, sizeof o);
	if (cmd_check_run(st, id, QUERY_UNFAULTED, &o, cause) != 0) {
		check_out_free(&o);
		return -1;
	}
	fputs(",\n\"findings\":[", f);
	for (i = 0; i < o.n; i++) {
		it = &o.items[i];
		fprintf(f, "%s\n{\"seq\":%lld,\"sev\":\"%s\",\"rule\":",
		    i > 0 ? "," : "", (long long)it->seq,
		    proto_severity_name(it->severity));
		html_string_or_null(f, it->rule);
		fputs(",\"text\":", f);
		html_string_or_null(f, it->text);
		fputs(",\"path\":", f);
		html_string_or_null(f, it->path);
		fputs(",\"spec\":", f);
		html_string_or_null(f, it->spec);
		fputs("}", f);
	}
	fprintf(f, "\n],\"counts\":{\"error\":%zu,\"warning\":%zu,"
	    "\"note\":%zu},\"unlisted\":%zu", o.counts[PROTO_ERROR],
	    o.counts[PROTO_WARNING], o.counts[PROTO_NOTE], o.dropped);
	check_out_free(&o);
	return 0;
}

/* Write the page for session id to rp->f. */
static int
html_write(struct store *st, int64_t id, struct report *rp, char **cause)
{
	const char	*mark = strstr(report_html, REPORT_MARKER);

	if (mark == NULL)
		fatalx("report template has no %s", REPORT_MARKER);
	fwrite(report_html, 1, (size_t)(mark - report_html), rp->f);
	if (query_sessions(st, id, html_session_cb, rp, cause) != 0 ||
	    query_timeline(st, id, QUERY_EVENTS, html_row_cb, rp, cause) != 0)
		return -1;
	fputs("\n]", rp->f);
	if (html_findings(st, id, rp->f, cause) != 0)
		return -1;
	fputs("}", rp->f);
	fputs(mark + strlen(REPORT_MARKER), rp->f);
	return 0;
}

/*
 * Open where the page goes: stdout for "-", else a temporary file beside
 * path (mode 0600), renamed over path once it is whole.
 */
static FILE *
html_open(const char *path, char **tmp, char **cause)
{
	FILE	*f;
	int	 fd;

	*tmp = NULL;
	if (strcmp(path, "-") == 0)
		return stdout;
	xasprintf(tmp, "%s.XXXXXX", path);
	if ((fd = mkostemp(*tmp, O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot create %s: %s (is the directory there "
		    "and writable?)", path, strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	if ((f = fdopen(fd, "w")) == NULL) {
		xasprintf(cause, "cannot write %s: %s", *tmp, strerror(errno));
		close(fd);
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
	}
	return f;
}

/* Finish the page: flush, close, and move it into place. */
static int
html_close(FILE *f, const char *path, char *tmp, int ok, char **cause)
{
	int	failed = fflush(f) != 0 || ferror(f);
	int	saved = errno;

	if (f == stdout) {
		if (failed && ok)
			xasprintf(cause, "cannot write the page to stdout: %s",
			    strerror(saved));
		return (failed || !ok) ? -1 : 0;
	}
	if (fclose(f) != 0 && !failed) {
		failed = 1;
		saved = errno;
	}
	if (ok && !failed && rename(tmp, path) == 0) {
		free(tmp);
		return 0;
	}
	if (ok && !failed)
		saved = errno;
	if (ok)
		xasprintf(cause, "cannot write %s: %s", path, strerror(saved));
	unlink(tmp);
	free(tmp);
	return -1;
}

/* --max-bytes: a count of bytes, 0 for no limit. */
static int
html_parse_max(const char *arg, size_t *out)
{
	char			*end;
	unsigned long long	 n;

	errno = 0;
	n = strtoull(arg, &end, 10);
	/* A digit first: strtoull takes " -1" and wraps it. */
	if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 ||
	    n > SIZE_MAX)
		return -1;
	*out = (size_t)n;
	return 0;
}

/* mcpreel report [--db PATH] [-o FILE] [--max-bytes N] SESSION */
int
cmd_report(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "max-bytes", required_argument, NULL, 'm' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct report			 rp;
	struct session_arg		 sa;
	struct store			*st = NULL;
	const char			*db = NULL, *out = NULL;
	char				*dflt = NULL;
	char				*tmp = NULL, *cause = NULL;
	int64_t				 id;
	int				 ch, ok, rc = EXIT_USAGE;

	memset(&rp, 0, sizeof rp);
	memset(&sa, 0, sizeof sa);
	rp.max_bytes = REPORT_MAX_BYTES_DEFAULT;
	while ((ch = getopt_long(argc, argv, "ho:vq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'm':
			rp.max_given = 1;
			if (html_parse_max(optarg, &rp.max_bytes) != 0) {
				fprintf(stderr, "mcpreel report: --max-bytes "
				    "takes a number of bytes (0 for no limit), "
				    "not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			cmd_report_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("report", argc, argv, "ho:vq",
			    longopts);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "mcpreel report: give one SESSION (an id, a "
		    "name or 'last'; see 'mcpreel sessions')\n");
		return EXIT_USAGE;
	}
	if (session_arg_open(db, argv[optind], 0, &sa, &cause) != 0)
		goto fail;
	st = sa.st;
	id = sa.id;
	if (out == NULL) {
		xasprintf(&dflt, "mcpreel-%lld.html", (long long)id);
		out = dflt;
	}
	if ((rp.f = html_open(out, &tmp, &cause)) == NULL)
		goto fail;
	setvbuf(rp.f, NULL, _IOFBF, REPORT_BUFSIZE);
	ok = html_write(st, id, &rp, &cause) == 0;
	if (!ok && cause == NULL)
		xasprintf(&cause, "cannot write %s: %s", out, strerror(errno));
	if (html_close(rp.f, out, tmp, ok, &cause) != 0)
		goto fail;
	if (strcmp(out, "-") != 0)
		log_info("wrote %s: session %lld, %lld messages, %lld events",
		    out, (long long)id, (long long)rp.messages,
		    (long long)rp.events);
	rc = EXIT_OK;
	goto out;

fail:
	fprintf(stderr, "mcpreel report: %s\n", cause);
out:
	session_arg_close(&sa);
	free(cause);
	free(dflt);
	return rc;
}
