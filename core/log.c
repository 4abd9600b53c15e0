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

static enum log_level	 log_level = LOG_LEVEL_WARN;
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

/* Print "mcpreel: TEXT\n" to f, the text redacted. */
static void
log_put(FILE *f, const char *text)
{
	char			*red;
	size_t			 rlen;
	const struct redact	*r = log_rules != NULL ? log_rules : log_default;

	if (r != NULL && redact_text(r, text, strlen(text), &red, &rlen) != 0) {
		fprintf(f, "mcpreel: %s\n", red);
		free(red);
	} else
		fprintf(f, "mcpreel: %s\n", text);
}

/* Log at level and below to path, or to stderr when path is NULL. */
void
log_init(enum log_level level, const char *path)
{
	log_level = level;
	if (log_default == NULL)
		log_default = redact_new(1);
	if (path != NULL) {
		log_file = fopen(path, "a");
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
	char	 line[1024];

	if (level > log_level)
		return;
	vsnprintf(line, sizeof line, fmt, ap);
	log_put(f, line);
	fflush(f);
}

static void
log_with_errno(enum log_level level, int saved, const char *fmt, va_list ap)
{
	char	msg[900], line[1024];

	vsnprintf(msg, sizeof msg, fmt, ap);
	if (level > log_level)
		return;
	snprintf(line, sizeof line, "%s: %s", msg, strerror(saved));
	log_put(log_file != NULL ? log_file : stderr, line);
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
