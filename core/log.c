/*
 * Logging to stderr or a file, never stdout: stdout may be the MCP channel.
 * Messages start with "mcpreel: " so they stand out among a server's own
 * stderr lines, which we pass through.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/*
 * The most of a line printed, counted after redaction: a secret that
 * crosses it has been replaced already, so no part of one is printed.
 * (A line is one message; the longest of ours is a path or a URL.)
 */
#define LOG_LINE_MAX	1024

static enum log_level	 log_level = LOG_LEVEL_WARN;
/*
 * Set while this thread redacts a line: a failure inside redaction (out
 * of memory: xmalloc -> fatalx -> here) must not redact again.
 */
static __thread int	 log_busy;
static FILE		*log_file;
/*
 * What every line is redacted with (set before threads start): a
 * recorder's rules, else the built-in ones (made by log_init).
 */
static const struct redact	*log_rules;
static struct redact		*log_default;

/*
 * Redact every line logged from now on with r (the caller keeps it until
 * it sets NULL; then the built-in rules again): a line may name a URL, a
 * target, an argument or a header value, and whatever the call site, none
 * is printed with a secret.
 */
void
log_set_redact(const struct redact *r)
{
	log_rules = r;
}

/*
 * Print "mcpreel: TEXT\n" to f, TEXT (fmt with ap, then suffix when not
 * NULL) redacted whole and only then cut at LOG_LINE_MAX.  When it cannot
 * be redacted (no memory, or a failure while redacting) only fmt itself
 * is printed: the format has no variable part, so no secret.
 */
static void
log_put(FILE *f, const char *suffix, const char *fmt, va_list ap)
{
	char			*text = NULL, *full = NULL, *red;
	size_t			 rlen;
	const struct redact	*r = log_rules != NULL ? log_rules : log_default;

	if (log_busy || vasprintf(&text, fmt, ap) < 0) {
		fprintf(f, "mcpreel: %s (details withheld)\n", fmt);
		return;
	}
	if (suffix != NULL) {
		if (asprintf(&full, "%s: %s", text, suffix) < 0) {
			free(text);
			fprintf(f, "mcpreel: %s (details withheld)\n", fmt);
			return;
		}
		free(text);
		text = full;
	}
	log_busy = 1;
	if (r != NULL && redact_text(r, text, strlen(text), &red, &rlen) != 0) {
		free(text);
		text = red;
	}
	log_busy = 0;
	fprintf(f, "mcpreel: %.*s\n", LOG_LINE_MAX, text);
	free(text);
}

/* Log at level and below to path, or to stderr when path is NULL. */
void
log_init(enum log_level level, const char *path)
{
	log_level = level;
	if (log_default == NULL)
		log_default = redact_new(1);
	if (path != NULL) {
		log_file = fopen(path, "ae");
		if (log_file == NULL)
			fatal("cannot open log file %s", path);
		setvbuf(log_file, NULL, _IOLBF, 0);
	}
}

void
log_close(void)
{
	if (log_file != NULL)
		fclose(log_file);
	log_file = NULL;
}

void
log_vwrite(enum log_level level, const char *fmt, va_list ap)
{
	FILE	*f = (log_file != NULL) ? log_file : stderr;

	if (level > log_level)
		return;
	log_put(f, NULL, fmt, ap);
	fflush(f);
}

static void
log_with_errno(enum log_level level, int saved, const char *fmt, va_list ap)
{
	if (level > log_level)
		return;
	log_put(log_file != NULL ? log_file : stderr, strerror(saved), fmt,
	    ap);
}

/* A warning with the current errno's text. */
void
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	log_with_errno(LOG_LEVEL_WARN, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_DEBUG, fmt, ap);
	va_end(ap);
}

/* A start-up failure or broken invariant, with errno's text: exit 2. */
void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	log_with_errno(LOG_LEVEL_WARN, saved, fmt, ap);
	va_end(ap);
	exit(2);
}

/* As fatal(), without errno. */
void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, fmt, ap);
	va_end(ap);
	exit(2);
}
