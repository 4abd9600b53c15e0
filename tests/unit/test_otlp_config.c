/*
 * otlp_config_env(): --otlp URL and the OpenTelemetry SDK variables, as
 * tables of environments and what they give.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "formats.h"

static const char *const otlp_vars[] = {
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
	"OTEL_EXPORTER_OTLP_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
	"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", NULL
};

/* Unset every variable the config reads (each test runs in a process of
   its own, so the environment of one never reaches another). */
static void
otlp_env_clear(void)
{
	size_t	i;

	for (i = 0; otlp_vars[i] != NULL; i++)
		unsetenv(otlp_vars[i]);
}

/* Set "NAME=value" pairs of env (NULL-terminated). */
static void
otlp_env_set(const char *const *env)
{
	char	name[128];
	size_t	i, n;

	otlp_env_clear();
	for (i = 0; env[i] != NULL; i++) {
		n = strcspn(env[i], "=");
		cr_assert(n < sizeof name);
		memcpy(name, env[i], n);
		name[n] = '\0';
		setenv(name, env[i] + n + 1, 1);
	}
}

struct url_case {
	const char	*url;		/* --otlp, or NULL */
	const char	*env[4];
	const char	*endpoint;	/* expected, or NULL: refused */
	const char	*cause;		/* part of the refusal */
};

static const struct url_case url_cases[] = {
	{ "http://localhost:4318", { NULL },
	  "http://localhost:4318/v1/traces", NULL },
	{ "http://localhost:4318/", { NULL },
	  "http://localhost:4318/v1/traces", NULL },
	{ "https://c.example:443/custom/path", { NULL },
	  "https://c.example:443/custom/path", NULL },
	{ "http://[::1]:4318", { NULL }, "http://[::1]:4318/v1/traces", NULL },
	{ "http://h:4318?x=1", { NULL }, "http://h:4318/v1/traces?x=1", NULL },
	/* A URL given wins over the environment. */
	{ "http://a:1", { "OTEL_EXPORTER_OTLP_ENDPOINT=http://b:2", NULL },
	  "http://a:1/v1/traces", NULL },
	{ "env", { "OTEL_EXPORTER_OTLP_ENDPOINT=http://b:2", NULL },
	  "http://b:2/v1/traces", NULL },
	/* The general endpoint always gets /v1/traces after its path. */
	{ NULL, { "OTEL_EXPORTER_OTLP_ENDPOINT=http://b:2/base/", NULL },
	  "http://b:2/base/v1/traces", NULL },
	{ NULL, { "OTEL_EXPORTER_OTLP_ENDPOINT=http://b:2/base", NULL },
	  "http://b:2/base/v1/traces", NULL },
	/* The traces endpoint is used as is, and wins. */
	{ "env", { "OTEL_EXPORTER_OTLP_ENDPOINT=http://b:2",
	  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://t:3/x", NULL },
	  "http://t:3/x", NULL },
	{ "env", { "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://t:3", NULL },
	  "http://t:3", NULL },
	/* Empty is unset. */
	{ "env", { "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=",
	  "OTEL_EXPORTER_OTLP_ENDPOINT=http://b:2", NULL },
	  "http://b:2/v1/traces", NULL },
	{ "env", { NULL }, NULL, "no OpenTelemetry collector" },
	{ NULL, { NULL }, NULL, "no OpenTelemetry collector" },
	{ "ftp://x", { NULL }, NULL, "http:// or https://" },
	{ "http://user:pw@x:1", { NULL }, NULL, "user:password@" },
	{ "http://x:99999", { NULL }, NULL, "host or port" },
	{ "http://x:", { NULL }, NULL, "host or port" },
	{ "http://:80", { NULL }, NULL, "host or port" },
	{ "http://x/#f", { NULL }, NULL, "fragment" },
	{ "http://x/\x01a", { NULL }, NULL, "control character" },
	{ "http://x\x7f:1/", { NULL }, NULL, "control character" },
	{ "http://x:1/a\x1f" "b", { NULL }, NULL, "control character" },
	{ NULL, { "OTEL_EXPORTER_OTLP_ENDPOINT=localhost:4318", NULL }, NULL,
	  "OTEL_EXPORTER_OTLP_ENDPOINT" },
	{ NULL, { "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://u:p@h", NULL },
	  NULL, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" },
};

Test(otlp_config, url_rules)
{
	struct otlp_config	c;
	char			*cause;
	size_t			 i;
	int			 r;

	for (i = 0; i < sizeof url_cases / sizeof url_cases[0]; i++) {
		const struct url_case	*uc = &url_cases[i];

		otlp_env_set(uc->env);
		cause = NULL;
		r = otlp_config_env(&c, uc->url, &cause);
		if (uc->endpoint != NULL) {
			cr_assert_eq(r, 0, "case %zu: %s", i, cause);
			cr_assert_str_eq(c.endpoint, uc->endpoint, "case %zu",
			    i);
			otlp_config_clear(&c);
		} else {
			cr_assert_eq(r, -1, "case %zu accepted", i);
			cr_assert_not_null(strstr(cause, uc->cause),
			    "case %zu: %s", i, cause);
			/* The refusal never quotes a credential. */
			cr_assert_null(strstr(cause, ":pw@"), "case %zu", i);
			cr_assert_null(strstr(cause, "u:p@"), "case %zu", i);
			free(cause);
		}
	}
}

struct header_case {
	const char	*env[3];
	const char	*headers[4];	/* expected, or { NULL } with cause */
	const char	*cause;
};

static const struct header_case header_cases[] = {
	/* The client's own framing and hop-by-hop headers are refused. */
	{ { "OTEL_EXPORTER_OTLP_HEADERS=content-length=0secret", NULL },
	  { NULL }, "Content-Length cannot be set" },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=a=1,Transfer-Encoding=secret", NULL },
	  { NULL }, "Transfer-Encoding cannot be set" },
	{ { "OTEL_EXPORTER_OTLP_TRACES_HEADERS=HOST=secret", NULL },
	  { NULL }, "Host cannot be set" },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=Connection=secret", NULL },
	  { NULL }, "Connection cannot be set" },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=Upgrade=secret", NULL },
	  { NULL }, "framing and hop-by-hop" },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=api-key=abc", NULL },
	  { "api-key: abc", NULL }, NULL },
	{ { "OTEL_EXPORTER_OTLP_HEADERS= a = 1 ,b=2,, ", NULL },
	  { "a: 1", "b: 2", NULL }, NULL },
	/* Percent-decoded values: a space, a comma, an '=' kept. */
	{ { "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Basic%20dXNlcg%3D%3D,"
	    "x=a%2Cb=c", NULL },
	  { "Authorization: Basic dXNlcg==", "x: a,b=c", NULL }, NULL },
	/* The traces variable wins over the general one. */
	{ { "OTEL_EXPORTER_OTLP_HEADERS=a=1",
	    "OTEL_EXPORTER_OTLP_TRACES_HEADERS=b=2", NULL },
	  { "b: 2", NULL }, NULL },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=novalue", NULL }, { NULL },
	  "OTEL_EXPORTER_OTLP_HEADERS: member 1 has no '='" },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=a=1,bad key=secret1", NULL }, { NULL },
	  "member 2" },
	{ { "OTEL_EXPORTER_OTLP_TRACES_HEADERS=k=sec%ZZret", NULL }, { NULL },
	  "OTEL_EXPORTER_OTLP_TRACES_HEADERS: the value of member 1" },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=k=secret%0d%0aX: y", NULL }, { NULL },
	  "control character" },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=k=secret%00", NULL }, { NULL },
	  "percent escape" },
	{ { "OTEL_EXPORTER_OTLP_HEADERS=k=secret%2", NULL }, { NULL },
	  "percent escape" },
};

Test(otlp_config, headers)
{
	struct otlp_config	c;
	char			*cause;
	size_t			 i, j;

	for (i = 0; i < sizeof header_cases / sizeof header_cases[0]; i++) {
		const struct header_case	*hc = &header_cases[i];

		otlp_env_set(hc->env);
		cause = NULL;
		if (hc->cause == NULL) {
			cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause),
			    0, "case %zu: %s", i, cause);
			for (j = 0; hc->headers[j] != NULL; j++) {
				cr_assert_lt(j, c.nheaders, "case %zu", i);
				cr_assert_str_eq(c.headers[j], hc->headers[j],
				    "case %zu", i);
			}
			cr_assert_eq(c.nheaders, j, "case %zu", i);
			otlp_config_clear(&c);
		} else {
			cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause),
			    -1, "case %zu accepted", i);
			cr_assert_not_null(strstr(cause, hc->cause),
			    "case %zu: %s", i, cause);
			cr_assert_null(strstr(cause, "secret"),
			    "case %zu quotes a value: %s", i, cause);
			free(cause);
		}
	}
}

Test(otlp_config, header_option)
{
	struct otlp_config	c;
	char			*cause = NULL;

	otlp_env_clear();
	cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause), 0);
	cr_assert_eq(otlp_config_header(&c, "X-Key:  secret1 ", &cause), 0);
	cr_assert_str_eq(c.headers[0], "X-Key: secret1");
	cr_assert_eq(otlp_config_header(&c, "no colon secret2", &cause), -1);
	cr_assert_null(strstr(cause, "secret2"));
	free(cause);
	cr_assert_eq(otlp_config_header(&c, "Bad Name: secret3", &cause), -1);
	cr_assert_null(strstr(cause, "secret3"));
	free(cause);
	cr_assert_eq(otlp_config_header(&c, "X: a\r\nInjected: secret4",
	    &cause), -1);
	cr_assert_null(strstr(cause, "secret4"));
	free(cause);
	cr_assert_eq(otlp_config_header(&c, "Content-Length: 0", &cause), -1);
	cr_assert_not_null(strstr(cause, "--otlp-header: Content-Length "
	    "cannot be set"), "%s", cause);
	free(cause);
	cr_assert_eq(otlp_config_header(&c, "keep-alive: x", &cause), -1);
	free(cause);
	cr_assert_eq(otlp_config_header(&c, "Content-Lengthy: 1", &cause), 0);
	cr_assert_eq(c.nheaders, 2);
	otlp_config_clear(&c);
}

struct value_case {
	const char	*env[3];
	int		 protocol;	/* expected, or -1: refused */
	int		 timeout_ms;
	const char	*cause;
};

static const struct value_case value_cases[] = {
	{ { NULL }, OTLP_HTTP_PROTOBUF, 10000, NULL },
	{ { "OTEL_EXPORTER_OTLP_PROTOCOL=http/json", NULL }, OTLP_HTTP_JSON,
	  10000, NULL },
	{ { "OTEL_EXPORTER_OTLP_PROTOCOL=http/json",
	    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf", NULL },
	  OTLP_HTTP_PROTOBUF, 10000, NULL },
	{ { "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", NULL }, -1, 0,
	  "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: grpc is not supported: use "
	  "http/protobuf (port 4318)" },
	{ { "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc", NULL }, -1, 0,
	  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc" },
	{ { "OTEL_EXPORTER_OTLP_PROTOCOL=http/xml", NULL }, -1, 0,
	  "use http/protobuf or http/json" },
	{ { "OTEL_EXPORTER_OTLP_TIMEOUT=2500", NULL }, OTLP_HTTP_PROTOBUF,
	  2500, NULL },
	{ { "OTEL_EXPORTER_OTLP_TIMEOUT=2500",
	    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=700", NULL },
	  OTLP_HTTP_PROTOBUF, 700, NULL },
	{ { "OTEL_EXPORTER_OTLP_TIMEOUT=10s", NULL }, -1, 0,
	  "OTEL_EXPORTER_OTLP_TIMEOUT: the timeout is in milliseconds" },
	{ { "OTEL_EXPORTER_OTLP_TIMEOUT=0", NULL }, -1, 0, "milliseconds" },
	{ { "OTEL_EXPORTER_OTLP_TIMEOUT=-5", NULL }, -1, 0, "milliseconds" },
	{ { "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=99999999999", NULL }, -1, 0,
	  "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" },
};

Test(otlp_config, protocol_and_timeout)
{
	struct otlp_config	c;
	char			*cause;
	size_t			 i;

	for (i = 0; i < sizeof value_cases / sizeof value_cases[0]; i++) {
		const struct value_case	*vc = &value_cases[i];

		otlp_env_set(vc->env);
		cause = NULL;
		if (vc->protocol >= 0) {
			cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause),
			    0, "case %zu: %s", i, cause);
			cr_assert_eq((int)c.protocol, vc->protocol,
			    "case %zu", i);
			cr_assert_eq(c.timeout_ms, vc->timeout_ms, "case %zu",
			    i);
			otlp_config_clear(&c);
		} else {
			cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause),
			    -1, "case %zu accepted", i);
			cr_assert_not_null(strstr(cause, vc->cause),
			    "case %zu: %s", i, cause);
			free(cause);
		}
	}
}

Test(otlp_config, service_and_resource)
{
	static const char *const only_attrs[] = {
		"OTEL_RESOURCE_ATTRIBUTES=service.name=from%20attrs,"
		"deployment.environment=prod,team=a%2Cb", NULL };
	static const char *const both[] = {
		"OTEL_RESOURCE_ATTRIBUTES=service.name=from-attrs,k=v",
		"OTEL_SERVICE_NAME=svc", NULL };
	static const char *const bad[] = {
		"OTEL_RESOURCE_ATTRIBUTES=k", NULL };
	static const char *const none[] = { NULL };
	struct otlp_config	c;
	char			*cause = NULL;

	otlp_env_set(none);
	cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause), 0);
	cr_assert_str_eq(c.service_name, "mcpreel");
	cr_assert_null(c.resource_attrs);
	otlp_config_clear(&c);

	otlp_env_set(only_attrs);
	cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause), 0);
	cr_assert_str_eq(c.service_name, "from attrs");
	cr_assert_not_null(c.resource_attrs);
	cr_assert_null(json_object_get(c.resource_attrs, "service.name"));
	cr_assert_str_eq(json_string_value(json_object_get(c.resource_attrs,
	    "deployment.environment")), "prod");
	cr_assert_str_eq(json_string_value(json_object_get(c.resource_attrs,
	    "team")), "a,b");
	otlp_config_clear(&c);

	otlp_env_set(both);
	cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause), 0);
	cr_assert_str_eq(c.service_name, "svc");
	cr_assert_eq(json_object_size(c.resource_attrs), 1);
	otlp_config_clear(&c);

	otlp_env_set(bad);
	cr_assert_eq(otlp_config_env(&c, "http://h:1", &cause), -1);
	cr_assert_not_null(strstr(cause, "OTEL_RESOURCE_ATTRIBUTES"));
	free(cause);
	otlp_env_clear();
}

Test(otlp_config, certificate)
{
	static const char *const env[] = {
		"OTEL_EXPORTER_OTLP_CERTIFICATE=/a.pem",
		"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE=/t.pem", NULL };
	struct otlp_config	c;
	char			*cause = NULL;

	otlp_env_set(env);
	cr_assert_eq(otlp_config_env(&c, "https://h", &cause), 0);
	cr_assert_str_eq(c.cacert, "/t.pem");
	otlp_config_clear(&c);
	otlp_env_clear();
}
