/*
 * Where OTLP spans go and how: --otlp URL and the OpenTelemetry SDK
 * environment variables (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES) read as the SDKs read them.  A header's value
 * may be a credential: no message here ever quotes one.
 */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

/* The most headers taken, and the longest value: a bound on a request. */
#define OTLP_HEADERS_MAX	64
#define OTLP_HEADER_VALUE_MAX	8192
/* The longest timeout taken: one hour (the default is 10 s). */
#define OTLP_TIMEOUT_MAX	3600000
#define OTLP_TIMEOUT_DEFAULT	10000
/* The most resource attributes taken from OTEL_RESOURCE_ATTRIBUTES. */
#define OTLP_RESOURCE_MAX	128

/* An environment variable's value, or NULL when unset or empty (as the
   OpenTelemetry specification says: empty is unset). */
static const char *
otlp_config_getenv(const char *name)
{
	const char	*v = getenv(name);

	return (v != NULL && *v != '\0') ? v : NULL;
}

/* The traces variable of a setting, else the general one; *used says
   which was taken. */
static const char *
otlp_config_pick(const char *traces, const char *general, const char **used)
{
	const char	*v;

	if ((v = otlp_config_getenv(traces)) != NULL) {
		*used = traces;
		return v;
	}
	*used = general;
	return otlp_config_getenv(general);
}

/* Free what u holds. */
void
otlp_url_clear(struct otlp_url *u)
{
	free(u->host);
	free(u->port);
	free(u->hostport);
	free(u->path);
	memset(u, 0, sizeof *u);
}

/*
 * Split an http or https URL into u (path with its query, "" when none);
 * what is wrong is said without quoting the URL (its query or userinfo
 * may hold a key).
 */
int
otlp_url_parse(const char *s, struct otlp_url *u, char **cause)
{
	const char	*p, *path, *hend, *q;
	char		*end;
	long		 port;

	memset(u, 0, sizeof *u);
	if (strncasecmp(s, "http://", 7) == 0) {
		p = s + 7;
	} else if (strncasecmp(s, "https://", 8) == 0) {
		u->tls = 1;
		p = s + 8;
	} else {
		xasprintf(cause, "it must start with http:// or https://");
		return -1;
	}
	for (q = s; *q != '\0'; q++)
		if ((unsigned char)*q < 0x21 || *q == 0x7f)
			break;
	if (*q != '\0' || strchr(s, '#') != NULL) {
		xasprintf(cause, "it has a space, a control character or a "
		    "fragment ('#')");
		return -1;
	}
	path = p + strcspn(p, "/?");
	if (memchr(p, '@', (size_t)(path - p)) != NULL) {
		xasprintf(cause, "user:password@ in the URL is not taken: give "
		    "credentials as a header (--otlp-header or "
		    "OTEL_EXPORTER_OTLP_HEADERS)");
		return -1;
	}
	u->hostport = xstrndup(p, (size_t)(path - p));
	if (u->hostport[0] == '[') {
		if ((hend = strchr(u->hostport, ']')) == NULL)
			goto bad;
		u->host = xstrndup(u->hostport + 1,
		    (size_t)(hend - u->hostport - 1));
		hend++;
	} else {
		hend = u->hostport + strcspn(u->hostport, ":");
		u->host = xstrndup(u->hostport, (size_t)(hend - u->hostport));
	}
	if (*u->host == '\0')
		goto bad;
	if (*hend == ':') {
		if (hend[1] == '\0' ||
		    hend[1 + strspn(hend + 1, "0123456789")] != '\0')
			goto bad;
		errno = 0;
		port = strtol(hend + 1, &end, 10);
		if (errno != 0 || port < 1 || port > 65535)
			goto bad;
		u->port = xstrdup(hend + 1);
	} else if (*hend != '\0')
		goto bad;
	else
		u->port = xstrdup(u->tls ? "443" : "80");
	u->path = xstrdup(path);
	return 0;
bad:
	otlp_url_clear(u);
	xasprintf(cause, "its host or port is not valid");
	return -1;
}

/*
 * The traces URL of s: with append, "/v1/traces" after its path (one
 * slash between, as OTEL_EXPORTER_OTLP_ENDPOINT is read); else when its
 * path is empty or "/" (so --otlp http://host:4318 works).
 */
static int
otlp_config_endpoint(const char *s, int append, char **out, char **cause)
{
	struct otlp_url	 u;
	const char	*q;
	size_t		 plen, hlen;

	if (otlp_url_parse(s, &u, cause) != 0)
		return -1;
	q = strchr(u.path, '?');
	plen = q != NULL ? (size_t)(q - u.path) : strlen(u.path);
	hlen = strlen(s) - strlen(u.path);
	if (append || plen == 0 || (plen == 1 && u.path[0] == '/')) {
		while (plen > 0 && u.path[plen - 1] == '/')
			plen--;
		xasprintf(out, "%.*s%.*s/v1/traces%s", (int)hlen, s, (int)plen,
		    u.path, q != NULL ? q : "");
	} else
		*out = xstrdup(s);
	otlp_url_clear(&u);
	return 0;
}

/* Whether c may be in an HTTP field name (RFC 9110 tchar). */
static int
otlp_config_tchar(int c)
{
	return isalnum(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* s[0..n) with spaces and tabs taken off both ends. */
static void
otlp_config_trim(const char **s, size_t *n)
{
	while (*n > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* s[0..n) percent-decoded into a new string, or NULL when a %XX is bad
   or the result holds a NUL. */
static char *
otlp_config_unpct(const char *s, size_t n)
{
	char	*out = xmalloc(n + 1), *o = out;
	size_t	 i;
	int	 hi, lo;

	for (i = 0; i < n; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= n)
			goto bad;
		hi = isxdigit((unsigned char)s[i + 1]) ?
		    (isdigit((unsigned char)s[i + 1]) ? s[i + 1] - '0' :
		    (tolower((unsigned char)s[i + 1]) - 'a' + 10)) : -1;
		lo = isxdigit((unsigned char)s[i + 2]) ?
		    (isdigit((unsigned char)s[i + 2]) ? s[i + 2] - '0' :
		    (tolower((unsigned char)s[i + 2]) - 'a' + 10)) : -1;
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			goto bad;
		*o++ = (char)(hi * 16 + lo);
		i += 2;
	}
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

/*
 * Each member of a W3C-baggage-like list "k1=v1,k2=v2" (values
 * percent-decoded, spaces around both trimmed, empty members skipped) to
 * cb; -1 with *cause naming var (never a value) when one is bad.
 */
static int
otlp_config_pairs(const char *list, const char *var,
    int (*cb)(void *, const char *, size_t, const char *, char **),
    void *arg, char **cause)
{
	const char	*p = list, *m, *eq, *k, *v;
	size_t		 mlen, klen, vlen, i, n = 0;
	char		*value, *why = NULL;

	while (*p != '\0') {
		m = p;
		mlen = strcspn(p, ",");
		p += mlen + (p[mlen] == ',');
		n++;
		otlp_config_trim(&m, &mlen);
		if (mlen == 0)
			continue;
		if ((eq = memchr(m, '=', mlen)) == NULL) {
			xasprintf(cause, "%s: member %zu has no '=' (the form "
			    "is key1=value1,key2=value2)", var, n);
			return -1;
		}
		k = m;
		klen = (size_t)(eq - m);
		v = eq + 1;
		vlen = mlen - klen - 1;
		otlp_config_trim(&k, &klen);
		otlp_config_trim(&v, &vlen);
		for (i = 0; i < klen; i++)
			if (!otlp_config_tchar((unsigned char)k[i]))
				break;
		if (klen == 0 || i < klen) {
			xasprintf(cause, "%s: member %zu has an empty key or "
			    "one with a character not allowed in a name", var,
			    n);
			return -1;
		}
		if ((value = otlp_config_unpct(v, vlen)) == NULL) {
			xasprintf(cause, "%s: the value of member %zu has a "
			    "bad percent escape (%%XX, not %%00)", var, n);
			return -1;
		}
		if (cb(arg, k, klen, value, &why) != 0) {
			xasprintf(cause, "%s: member %zu: %s", var, n, why);
			free(why);
			free(value);
			return -1;
		}
		free(value);
	}
	return 0;
}

/* The headers the HTTP client writes or that are hop-by-hop: a
   configured one would frame the request wrongly. */
static const char *const otlp_config_own_headers[] = {
	"Host", "Content-Length", "Content-Type", "Transfer-Encoding",
	"Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer",
	"Upgrade", "Expect",
};

/* Add header "k: value" to the config arg (a callback of pairs). */
static int
otlp_config_header_cb(void *arg, const char *k, size_t klen,
    const char *value, char **why)
{
	struct otlp_config	*c = arg;
	size_t			 i;

	for (i = 0; i < sizeof otlp_config_own_headers /
	    sizeof otlp_config_own_headers[0]; i++) {
		if (strlen(otlp_config_own_headers[i]) == klen &&
		    strncasecmp(k, otlp_config_own_headers[i], klen) == 0) {
			xasprintf(why, "%s cannot be set: mcpreel writes the "
			    "request's framing and hop-by-hop headers itself",
			    otlp_config_own_headers[i]);
			return -1;
		}
	}

	for (i = 0; value[i] != '\0'; i++) {
		if ((unsigned char)value[i] < 0x20 && value[i] != '\t') {
			xasprintf(why, "its value has a control character");
			return -1;
		}
		if (value[i] == 0x7f) {
			xasprintf(why, "its value has a control character");
			return -1;
		}
	}
	if (i > OTLP_HEADER_VALUE_MAX) {
		xasprintf(why, "its value is longer than %d bytes",
		    OTLP_HEADER_VALUE_MAX);
		return -1;
	}
	if (c->nheaders >= OTLP_HEADERS_MAX) {
		xasprintf(why, "more than %d headers", OTLP_HEADERS_MAX);
		return -1;
	}
	c->headers = xreallocarray(c->headers, c->nheaders + 1,
	    sizeof *c->headers);
	xasprintf(&c->headers[c->nheaders++], "%.*s: %s", (int)klen, k,
	    value);
	return 0;
}

/*
 * Add one header given as "Name: value" (--otlp-header) to c; -1 with
 * *cause (which never quotes the value) when it is not a header.
 */
int
otlp_config_header(struct otlp_config *c, const char *h, char **cause)
{
	const char	*colon = strchr(h, ':'), *v;
	size_t		 klen, vlen, i;
	char		*value, *why = NULL;

	if (colon == NULL || colon == h) {
		xasprintf(cause, "--otlp-header: the form is 'Name: value'");
		return -1;
	}
	klen = (size_t)(colon - h);
	for (i = 0; i < klen; i++)
		if (!otlp_config_tchar((unsigned char)h[i])) {
			xasprintf(cause, "--otlp-header: the name has a "
			    "character not allowed in a header name");
			return -1;
		}
	v = colon + 1;
	vlen = strlen(v);
	otlp_config_trim(&v, &vlen);
	value = xstrndup(v, vlen);
	if (otlp_config_header_cb(c, h, klen, value, &why) != 0) {
		xasprintf(cause, "--otlp-header: %s", why);
		free(why);
		free(value);
		return -1;
	}
	free(value);
	return 0;
}

/* Add resource attribute k = value to the object arg. */
static int
otlp_config_resource_cb(void *arg, const char *k, size_t klen,
    const char *value, char **why)
{
	json_t	*attrs = arg, *s;
	char	*key;

	if (json_object_size(attrs) >= OTLP_RESOURCE_MAX) {
		xasprintf(why, "more than %d attributes", OTLP_RESOURCE_MAX);
		return -1;
	}
	s = json_string(value);

	if (s == NULL) {
		xasprintf(why, "its value is not UTF-8");
		return -1;
	}
	key = xstrndup(k, klen);
	json_object_set_new(attrs, key, s);
	free(key);
	return 0;
}

/* Set c->endpoint from url or the environment. */
static int
otlp_config_url(struct otlp_config *c, const char *url, char **cause)
{
	const char	*v;
	char		*why = NULL;

	if (url != NULL && strcmp(url, "env") != 0) {
		if (otlp_config_endpoint(url, 0, &c->endpoint, &why) != 0) {
			xasprintf(cause, "bad --otlp URL: %s", why);
			free(why);
			return -1;
		}
		return 0;
	}
	if ((v = otlp_config_getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	    != NULL) {
		if (otlp_config_endpoint(v, 0, &c->endpoint, &why) != 0) {
			xasprintf(cause, "bad "
			    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: %s", why);
			free(why);
			return -1;
		}
		/* The traces endpoint is used as is, path and all. */
		free(c->endpoint);
		c->endpoint = xstrdup(v);
		return 0;
	}
	if ((v = otlp_config_getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != NULL) {
		if (otlp_config_endpoint(v, 1, &c->endpoint, &why) != 0) {
			xasprintf(cause, "bad OTEL_EXPORTER_OTLP_ENDPOINT: %s",
			    why);
			free(why);
			return -1;
		}
		return 0;
	}
	xasprintf(cause, "no OpenTelemetry collector named: give --otlp URL "
	    "(http://host:4318) or set OTEL_EXPORTER_OTLP_ENDPOINT");
	return -1;
}

/*
 * Fill c from url (--otlp URL; NULL or "env": the environment alone) and
 * the OpenTelemetry SDK variables; a URL given wins over the environment,
 * a traces variable over the general one.
 */
int
otlp_config_env(struct otlp_config *c, const char *url, char **cause)
{
	const char	*v, *var;
	char		*end;
	long		 ms;
	json_t		*sn;

	memset(c, 0, sizeof *c);
	c->protocol = OTLP_HTTP_PROTOBUF;
	c->timeout_ms = OTLP_TIMEOUT_DEFAULT;
	c->side = OTLP_SIDE_SERVER;
	if (otlp_config_url(c, url, cause) != 0)
		goto fail;

	v = otlp_config_pick("OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	    "OTEL_EXPORTER_OTLP_HEADERS", &var);
	if (v != NULL && otlp_config_pairs(v, var, otlp_config_header_cb, c,
	    cause) != 0)
		goto fail;

	v = otlp_config_pick("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	    "OTEL_EXPORTER_OTLP_PROTOCOL", &var);
	if (v == NULL || strcmp(v, "http/protobuf") == 0)
		c->protocol = OTLP_HTTP_PROTOBUF;
	else if (strcmp(v, "http/json") == 0)
		c->protocol = OTLP_HTTP_JSON;
	else if (strcmp(v, "grpc") == 0) {
		xasprintf(cause, "%s=grpc: grpc is not supported: use "
		    "http/protobuf (port 4318)", var);
		goto fail;
	} else {
		xasprintf(cause, "%s: '%.32s' is not a protocol: use "
		    "http/protobuf or http/json", var, v);
		goto fail;
	}

	v = otlp_config_pick("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
	    "OTEL_EXPORTER_OTLP_TIMEOUT", &var);
	if (v != NULL) {
		errno = 0;
		ms = strtol(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end != '\0' || errno != 0 ||
		    ms < 1 || ms > OTLP_TIMEOUT_MAX) {
			xasprintf(cause, "%s: the timeout is in milliseconds, "
			    "from 1 to %d", var, OTLP_TIMEOUT_MAX);
			goto fail;
		}
		c->timeout_ms = (int)ms;
	}

	c->cacert = otlp_config_pick("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
	    "OTEL_EXPORTER_OTLP_CERTIFICATE", &var);

	if ((v = otlp_config_getenv("OTEL_RESOURCE_ATTRIBUTES")) != NULL) {
		c->resource_attrs = json_object();
		if (otlp_config_pairs(v, "OTEL_RESOURCE_ATTRIBUTES",
		    otlp_config_resource_cb, c->resource_attrs, cause) != 0)
			goto fail;
	}
	/* OTEL_SERVICE_NAME wins over service.name in the attributes. */
	if ((v = otlp_config_getenv("OTEL_SERVICE_NAME")) != NULL)
		c->service_name = xstrdup(v);
	else if (c->resource_attrs != NULL && (sn = json_object_get(
	    c->resource_attrs, "service.name")) != NULL &&
	    json_string_length(sn) > 0)
		c->service_name = xstrdup(json_string_value(sn));
	else
		c->service_name = xstrdup("mcpreel");
	if (c->resource_attrs != NULL) {
		json_object_del(c->resource_attrs, "service.name");
		if (json_object_size(c->resource_attrs) == 0) {
			json_decref(c->resource_attrs);
			c->resource_attrs = NULL;
		}
	}
	return 0;
fail:
	otlp_config_clear(c);
	return -1;
}

/* Free what c holds (not cacert, which is borrowed). */
void
otlp_config_clear(struct otlp_config *c)
{
	size_t	i;

	free(c->endpoint);
	for (i = 0; i < c->nheaders; i++) {
		explicit_bzero(c->headers[i], strlen(c->headers[i]));
		free(c->headers[i]);
	}
	free(c->headers);
	free(c->service_name);
	if (c->resource_attrs != NULL)
		json_decref(c->resource_attrs);
	memset(c, 0, sizeof *c);
}
