/*
 * finding.c: findings, handed to a callback or kept in a list.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol.h"

/* "error", "warning", "note". */
const char *
proto_severity_name(int severity)
{
	static const char *const names[PROTO_SEVERITY_MAX] = {
		[PROTO_ERROR] = "error",
		[PROTO_WARNING] = "warning",
		[PROTO_NOTE] = "note",
	};

	if (severity < 0 || severity >= PROTO_SEVERITY_MAX)
		return ("unknown");
	return (names[severity]);
}

/*
 * Hand one finding to cb: the text is formatted here and freed once cb
 * returns, so cb copies what it keeps.  path may be NULL for "$".
 */
void
proto_report(proto_finding_cb *cb, void *arg, const char *rule, int severity,
    const char *path, const char *spec, const char *fmt, ...)
{
	struct proto_finding	 f;
	va_list			 ap;
	char			*text;

	if (cb == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) == -1)
		fatalx("out of memory formatting a finding");
	va_end(ap);
	f.rule = rule;
	f.severity = severity;
	f.path = (char *)(path != NULL ? path : "$");
	f.text = text;
	f.spec = spec != NULL ? spec : "";
	cb(&f, arg);
	free(text);
}

/* An empty list. */
void
proto_findings_init(struct proto_findings *l)
{
	l->v = NULL;
	l->n = l->alloc = l->dropped = 0;
}

/* A proto_finding_cb that keeps a copy of each finding in the list arg. */
void
proto_findings_add_cb(const struct proto_finding *f, void *arg)
{
	struct proto_findings	*l = arg;
	struct proto_finding	*c;

	if (l->n >= PROTO_FINDINGS_MAX) {
		l->dropped++;
		return;
	}
	if (l->n == l->alloc) {
		l->alloc = l->alloc == 0 ? 8 : l->alloc * 2;
		l->v = xreallocarray(l->v, l->alloc, sizeof *l->v);
	}
	c = &l->v[l->n++];
	*c = *f;
	c->path = xstrdup(f->path);
	c->text = xstrdup(f->text);
}

/* Free what the list holds and leave it empty, ready for reuse. */
void
proto_findings_clear(struct proto_findings *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].text);
	}
	free(l->v);
	proto_findings_init(l);
}
