/*
 * The OpenTelemetry options record, mock and export share: --otlp URL
 * (or env), --otlp-payloads, --otlp-side, --otlp-protocol and
 * --otlp-header, taken as getopt gives them and turned into the
 * exporter's configuration with the OTEL_* environment under them.
 */

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "formats.h"

/*
 * At most this many --otlp-header options: a collector refuses a head
 * of more long before, and the count bounds what one command line costs.
 */
#define OTLP_OPTS_HEADERS_MAX	64

/* The names --otlp-side and --otlp-protocol take, by enum value. */
static const char *otlp_opts_sides[OTLP_SIDE_MAX] = { "server", "client" };
static const char *otlp_opts_protocols[OTLP_PROTOCOL_MAX] = {
	"http/protobuf", "http/json"
};

/* Whether s is "Name: value" with Name an HTTP token (RFC 9110 5.6.2). */
static int
otlp_opts_header_ok(const char *s)
{
	const char	*p;

	for (p = s; *p != '\0' && *p != ':'; p++) {
		if (!isalnum((unsigned char)*p) &&
		    strchr("!#$%&'*+-.^_`|~", *p) == NULL)
			return 0;
	}
	if (p == s || *p != ':')
		return 0;
	/* No line break may smuggle a second header in. */
	return strpbrk(p, "\r\n") == NULL;
}

/*
 * Take option ch with arg when it is one of ours: 0 taken, 1 not ours,
 * -1 with *cause when arg is bad (a header's value is never in it).
 */
int
otlp_opts_option(struct otlp_opts *o, int ch, const char *arg, char **cause)
{
	int	i;

	switch (ch) {
	case OTLP_OPT_URL:
		o->url = arg;
		return 0;
	case OTLP_OPT_PAYLOADS:
		o->payloads = 1;
		o->extra = "--otlp-payloads";
		return 0;
	case OTLP_OPT_SIDE:
		for (i = 0; i < OTLP_SIDE_MAX; i++) {
			if (strcmp(arg, otlp_opts_sides[i]) == 0)
				break;
		}
		if (i == OTLP_SIDE_MAX) {
			xasprintf(cause, "--otlp-side takes server or client, "
			    "not '%s'", arg);
			return -1;
		}
		o->side = (enum otlp_side)i;
		o->has_side = 1;
		o->extra = "--otlp-side";
		return 0;
	case OTLP_OPT_PROTOCOL:
		for (i = 0; i < OTLP_PROTOCOL_MAX; i++) {
			if (strcmp(arg, otlp_opts_protocols[i]) == 0)
				break;
		}
		if (i == OTLP_PROTOCOL_MAX) {
			xasprintf(cause, "--otlp-protocol takes http/protobuf "
			    "or http/json, not '%s'%s", arg, strcmp(arg,
			    "grpc") == 0 ? " (grpc is not supported: use "
			    "http/protobuf, port 4318)" : "");
			return -1;
		}
		o->protocol = (enum otlp_protocol)i;
		o->has_protocol = 1;
		o->extra = "--otlp-protocol";
		return 0;
	case OTLP_OPT_HEADER:
		if (!otlp_opts_header_ok(arg)) {
			xasprintf(cause, "--otlp-header takes 'Name: value' "
			    "(a header name, a colon, its value on one line)");
			return -1;
		}
		if (o->nheaders == OTLP_OPTS_HEADERS_MAX) {
			xasprintf(cause, "--otlp-header: at most %d",
			    OTLP_OPTS_HEADERS_MAX);
			return -1;
		}
		o->headers = xreallocarray(o->headers, o->nheaders + 1,
		    sizeof *o->headers);
		o->headers[o->nheaders++] = arg;
		o->extra = "--otlp-header";
		return 0;
	}
	return 1;
}

/*
 * The exporter's configuration in c from the options and the
 * environment: 0 when exporting, 1 when no --otlp was given (c left
 * empty), -1 with *cause when something is wrong (an --otlp-* option
 * without --otlp, a bad URL or variable).
 */
int
otlp_opts_config(const struct otlp_opts *o, struct otlp_config *c,
    char **cause)
{
	size_t	i;

	memset(c, 0, sizeof *c);
	if (o->url == NULL) {
		if (o->extra == NULL)
			return 1;
		xasprintf(cause, "%s goes with --otlp URL (or --otlp env)",
		    o->extra);
		return -1;
	}
	if (otlp_config_env(c, o->url, cause) != 0)
		return -1;
	if (o->payloads)
		c->payloads = 1;
	if (o->has_side)
		c->side = o->side;
	if (o->has_protocol)
		c->protocol = o->protocol;
	for (i = 0; i < o->nheaders; i++) {
		if (otlp_config_header(c, o->headers[i], cause) != 0)
			return -1;
	}
	return 0;
}

/*
 * The configuration of spans written to a file (export --format otlp
 * without --otlp): the side and payloads of the options, the service and
 * resource of the environment as a live export has them; no collector.
 * -1 with *cause for an option that only a collector takes.
 */
int
otlp_opts_file_config(const struct otlp_opts *o, struct otlp_config *c,
    char **cause)
{
	const char	*v;
	char		*why = NULL;

	memset(c, 0, sizeof *c);
	if (o->nheaders > 0 || o->has_protocol) {
		xasprintf(cause, "%s is for a collector: it goes with --otlp "
		    "URL", o->nheaders > 0 ? "--otlp-header" :
		    "--otlp-protocol");
		return -1;
	}
	/* Read as for a collector (any will do), only for the resource. */
	if (otlp_config_env(c, "http://127.0.0.1:4318", &why) != 0) {
		free(why);
		memset(c, 0, sizeof *c);
		v = getenv("OTEL_SERVICE_NAME");
		c->service_name = xstrdup(v != NULL && *v != '\0' ? v :
		    "mcpreel");
	}
	c->side = o->has_side ? o->side : OTLP_SIDE_SERVER;
	c->payloads = o->payloads;
	return 0;
}

/*
 * Whether the options and environment make a configuration (-1: why);
 * with file, one for a file when no --otlp is given (export).
 */
int
otlp_opts_check(const struct otlp_opts *o, int file, char **cause)
{
	struct otlp_config	 c;
	int			 rc;

	if (file && o->url == NULL)
		rc = otlp_opts_file_config(o, &c, cause);
	else
		rc = otlp_opts_config(o, &c, cause);
	otlp_config_clear(&c);
	return rc < 0 ? -1 : 0;
}

/*
 * Start exporting as the options say: *op the exporter, or NULL when no
 * --otlp was given.  -1 with *cause (prefixed by nothing) on failure.
 */
int
otlp_opts_start(const struct otlp_opts *o, int block, struct otlp **op,
    char **cause)
{
	struct otlp_config	 c;
	int			 rc;

	*op = NULL;
	if ((rc = otlp_opts_config(o, &c, cause)) != 0) {
		if (rc < 0)
			otlp_config_clear(&c);
		return rc < 0 ? -1 : 0;
	}
	c.block = block;
	*op = otlp_start(&c, cause);
	otlp_config_clear(&c);
	return *op != NULL ? 0 : -1;
}

void
otlp_opts_clear(struct otlp_opts *o)
{
	free(o->headers);
	memset(o, 0, sizeof *o);
}
