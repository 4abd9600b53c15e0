/*
 * Secrets outside JSON members (core/redact_text.c) as data: each case is
 * a kind of input (text, URL, form body, command line), the input, and
 * what must be stored.  Then names by shape, and hostile inputs.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "core.h"
#include "unit.h"

#define R	"[REDACTED]"
/* base64("alice:s3cret"), and of a JWT-shaped token. */
#define BASIC	"YWxpY2U6czNjcmV0"
#define JWT	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXBhcnQ"
#define HOSTILE_SIZE	(2 * 1024 * 1024)
#define HOSTILE_MAX_S	5.0

enum text_kind { K_TEXT, K_URL, K_FORM };

struct text_case {
	const char	*name;
	enum text_kind	 kind;
	const char	*in;
	const char	*want;	/* NULL: untouched */
};

static const struct text_case text_cases[] = {
	/* stderr forms */
	{ "password=", K_TEXT, "login password=hunter2 ok",
	  "login password=" R " ok" },
	{ "token: ", K_TEXT, "token: abc123 rest", "token: " R " rest" },
	{ "api_key=\"\"", K_TEXT, "api_key=\"k e y\" next",
	  "api_key=\"" R "\" next" },
	{ "JSON member in text", K_TEXT, "cfg {\"secret\": \"xyz\"}",
	  "cfg {\"secret\": \"" R "\"}" },
	{ "single quotes", K_TEXT, "{'client_secret': 'q1'}",
	  "{'client_secret': '" R "'}" },
	{ "Authorization Basic", K_TEXT, "Authorization: Basic " BASIC,
	  "Authorization: Basic " R },
	{ "Basic anywhere", K_TEXT, "sent basic " BASIC " to it",
	  "sent basic " R " to it" },
	{ "Basic prose", K_TEXT, "Basic functionality works", NULL },
	{ "Basic prose decoding to a ':'", K_TEXT, "Basic Overview; Basic "
	  "Operations; basic Settings", NULL },
	{ "Basic: no user, no colon, short", K_TEXT, "Basic OnBhc3M= basic "
	  "dXNlcg== basic YTpi", NULL },
	{ "Bearer", K_TEXT, "using Bearer abcdefgh12345678",
	  "using Bearer " R },
	{ "X-Auth-Token header line", K_TEXT, "X-Auth-Token: t0k",
	  "X-Auth-Token: " R },
	{ "flag and value", K_TEXT, "run --password hunter2 --v",
	  "run --password " R " --v" },
	{ "flag then flag", K_TEXT, "run --no-auth --verbose", NULL },
	{ "env assignment", K_TEXT, "API_KEY=abc node x.js",
	  "API_KEY=" R " node x.js" },
	{ "URL userinfo", K_TEXT, "at https://bob:pw1@h.example/x",
	  "at https://bob:" R "@h.example/x" },
	{ "URL query", K_TEXT, "GET /mcp?a=1&access_token=zz&b=2",
	  "GET /mcp?a=1&access_token=" R "&b=2" },
	{ "JWT", K_TEXT, "jwt " JWT " end", "jwt " R " end" },
	{ "PEM", K_TEXT, "-----BEGIN PRIVATE KEY-----\nMIIEv\n"
	  "-----END PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----" R
	  "-----END PRIVATE KEY-----" },
	{ "short names in text: no", K_TEXT, "exit code: 3, pwd: /x, pin=4",
	  NULL },
	{ "short names in a query in text", K_TEXT, "GET /cb?x=1&code=c0de",
	  "GET /cb?x=1&code=" R },
	{ "a JSONPath is no name", K_TEXT, "sent at $.params.password: the "
	  "value", NULL },
	{ "time is no pair", K_TEXT, "at 12:30:45 key", NULL },
	{ "comparison", K_TEXT, "if token == x", NULL },
	{ "content type", K_TEXT, "Content-Type: application/json", NULL },
	{ "progressToken kept", K_TEXT, "progressToken: 5", NULL },
	{ "redacted already", K_TEXT, "password=" R, NULL },
	{ "kept: counts and words", K_TEXT, "max_output_tokens: 4096, "
	  "total_tokens=5000 tokens: 1234 sort_key=name monkey=1 hotkey=F5 "
	  "primaryKey: id keyboard: us nextPageToken: c2 page_token=c3 "
	  "tokenizer: bpe authorName: Ann author_id=7 Authority: x "
	  "X-Session-Name: s1 token_count: 12", NULL },
	{ "kept header lines", K_TEXT, "Access-Control-Allow-Credentials: "
	  "true\nx-ratelimit-remaining-tokens: 99", NULL },
	{ "a count name with a word value", K_TEXT, "token_count: abc",
	  "token_count: " R },
	{ "Cookie: to the line's end", K_TEXT, "Cookie: theme=dark; "
	  "connect.sid=s%3Aabc; PHPSESSID=abc123\nnext line",
	  "Cookie: " R "\nnext line" },
	{ "Set-Cookie: attributes", K_TEXT, "set-cookie: sid=abc; Path=/; "
	  "HttpOnly", "set-cookie: " R },
	{ "Cookie in a quoted header", K_TEXT, "curl -H \"Cookie: a=1; "
	  "sid=abc\" https://h/x", "curl -H \"Cookie: " R "\" https://h/x" },
	{ "Authorization Digest", K_TEXT, "Authorization: Digest "
	  "username=\"u\", response=\"6629fae4\", nonce=\"n\"",
	  "Authorization: Digest " R },
	{ "Proxy-Authorization list", K_TEXT, "Proxy-Authorization: "
	  "Negotiate a, b", "Proxy-Authorization: Negotiate " R },
	{ "userinfo without a password in text", K_TEXT,
	  "cloning https://ghtok1234@github.com/o/r into x",
	  "cloning https://" R "@github.com/o/r into x" },
	{ "userinfo no scheme", K_TEXT, "dsn //user:pass1@host/path",
	  "dsn //user:" R "@host/path" },
	{ "an @ in a path is no userinfo", K_TEXT,
	  "see https://h/x@y and //comment@foo", NULL },
	{ "a query's value before a colon is no name", K_TEXT,
	  "GET /sse?p=session_id: legacy SSE endpoint event", NULL },
	{ "a redacted query before a colon stays readable", K_TEXT,
	  "POST /messages/?session_id=" R ": the client closed",
	  NULL },
	{ "a name after a query's value still is one", K_TEXT,
	  "GET /x?p=1 session_id: abc", "GET /x?p=1 session_id: " R },
	{ "path parameter in text", K_TEXT, "GET /app;jsessionid=ABC123 200",
	  "GET /app;jsessionid=" R " 200" },
	{ "escaped quote in a value, JSON", K_TEXT,
	  "{\"note\":\"token: abc\\\"def\"}",
	  "{\"note\":\"token: " R "\\\"def\"}" },
	{ "escaped quote in a value, text", K_TEXT,
	  "note token: abc\\\"def end", "note token: " R " end" },
	{ "JSON text stays JSON", K_TEXT,
	  "{\"session\":{\"id\":1},\"usage\":{\"input_tokens\":12},"
	  "\"x\":2}", NULL },
	{ "JSON text: members by shape", K_TEXT,
	  "{\"level\":\"info\",\"X-Auth-Token\":\"t1\",\"auth\":{\"key\":"
	  "42},\"msg\":\"login password=p1 ok\",\"code\":-32600}",
	  "{\"level\":\"info\",\"X-Auth-Token\":\"" R "\",\"auth\":{\"key\":"
	  "\"" R "\"},\"msg\":\"login password=" R " ok\",\"code\":-32600}" },
	{ "JSON text: a string holding JSON", K_TEXT,
	  "[\"{\\\"api_token\\\": \\\"t2\\\"}\"]",
	  "[\"{\\\"api_token\\\": \\\"" R "\\\"}\"]" },
	/* URLs and targets */
	{ "query by name", K_URL, "/mcp?api_key=k1&x=1",
	  "/mcp?api_key=" R "&x=1" },
	{ "percent name", K_URL, "/mcp?api%5Fkey=k1", "/mcp?api%5Fkey=" R },
	{ "sessionId", K_URL, "/messages?sessionId=abc",
	  "/messages?sessionId=" R },
	{ "code and state", K_URL, "/cb?code=c0de&state=s1",
	  "/cb?code=" R "&state=s1" },
	{ "fragment", K_URL, "/cb#access_token=t1&x=2",
	  "/cb#access_token=" R "&x=2" },
	{ "userinfo", K_URL, "http://u:p4ss@h:1/mcp?token=t",
	  "http://u:" R "@h:1/mcp?token=" R },
	{ "user only", K_URL, "https://ghtoken@h/", "https://" R "@h/" },
	{ "scheme not first", K_URL, "--repo=https://TOKEN1@github.com/o/r",
	  "--repo=https://" R "@github.com/o/r" },
	{ "no scheme", K_URL, "//user:pass1@host/path",
	  "//user:" R "@host/path" },
	{ "path parameter", K_URL, "/app;jsessionid=ABC123?x=1",
	  "/app;jsessionid=" R "?x=1" },
	{ "path parameter mid-path", K_URL,
	  "http://h/a;sid=s1;v=2/b;token=t2/c", "http://h/a;sid=" R
	  ";v=2/b;token=" R "/c" },
	{ "path parameter plain", K_URL, "/a;v=2/b", NULL },
	{ "value shape", K_URL, "/x?q=" JWT, "/x?q=" R },
	{ "plain", K_URL, "/mcp", NULL },
	{ "no secret", K_URL, "http://h/mcp?page=2", NULL },
	/* forms */
	{ "oauth token request", K_FORM,
	  "grant_type=refresh_token&refresh_token=r1&client_id=c&"
	  "client_secret=s2&code=c3&code_verifier=v4&password=p5",
	  "grant_type=refresh_token&refresh_token=" R "&client_id=c&"
	  "client_secret=" R "&code=" R "&code_verifier=" R "&password=" R },
	{ "assertions", K_FORM, "client_assertion=a&assertion=b&"
	  "subject_token=c&device_code=d&user=bob",
	  "client_assertion=" R "&assertion=" R "&subject_token=" R
	  "&device_code=" R "&user=bob" },
	{ "encoded name", K_FORM, "pass%77ord=x&a+b=c",
	  "pass%77ord=" R "&a+b=c" },
	{ "empty value", K_FORM, "password=&x=1", NULL },
	{ "value shape", K_FORM, "note=Bearer+abcdefgh12345678",
	  "note=" R },
};

static void
check_case(struct redact *r, const struct text_case *c)
{
	char	*out = NULL;
	size_t	 outlen = 0, n;

	switch (c->kind) {
	case K_TEXT:
		n = redact_text(r, c->in, strlen(c->in), &out, &outlen);
		break;
	case K_FORM:
		n = redact_form(r, c->in, strlen(c->in), &out, &outlen);
		break;
	default:
		out = redact_url(r, c->in);
		n = strcmp(out, c->in) != 0;
		if (n == 0) {
			free(out);
			out = NULL;
		}
		break;
	}
	if (c->want == NULL) {
		cr_expect_eq(n, 0, "%s: changed to %s", c->name,
		    out != NULL ? out : "?");
	} else {
		cr_expect_neq(n, 0, "%s: untouched", c->name);
		/* JSON met as text is stored as JSON still. */
		if (n != 0 && c->kind == K_TEXT && scan_is_json(c->in,
		    strlen(c->in)))
			cr_expect(scan_is_json(out, outlen), "%s: not JSON: %s",
			    c->name, out);
		if (n != 0)
			cr_expect_str_eq(out, c->want, "%s: %s", c->name,
			    out);
	}
	free(out);
}

Test(redact_text, cases, .timeout = UNIT_TIMEOUT)
{
	struct redact	*r = redact_new(1);
	size_t		 i;

	for (i = 0; i < sizeof text_cases / sizeof text_cases[0]; i++)
		check_case(r, &text_cases[i]);
	redact_free(r);
}

Test(redact_text, names, .timeout = UNIT_TIMEOUT)
{
	static const char *const secret[] = {
		"Authorization", "Proxy-Authorization", "X-Auth-Token",
		"Private-Token", "X-Goog-Api-Key", "Cookie", "Set-Cookie",
		"X-Amz-Security-Token", "X-Hub-Signature-256",
		"Mcp-Session-Id", "client_secret", "code", "code_verifier",
		"refresh_token", "id_token", "PASSWORD", "db.passwd",
		"X-Credential", "apiKey", "sessionId", "APIKey", "GITHUB_TOKEN",
		"ghtoken", "AWS_ACCESS_KEY_ID", "api_key_id", "x-api-key",
		"session", "session_token", "PHPSESSID", "connect.sid",
		"JSESSIONID", "accessToken", "dbPassword", "key", "secretKey",
		"X-OAuth-Token", "Authentication", "csrftoken", NULL
	};
	static const char *const plain[] = {
		"Content-Type", "Accept", "Host", "Origin", "Mcp-Method",
		"MCP-Protocol-Version", "Last-Event-ID", "WWW-Authenticate",
		"Keep-Alive", "User-Agent", "error_code", "grant_type",
		"state", "progressToken", "author", "Content-Length",
		"max_output_tokens", "total_tokens", "tokens",
		"x-ratelimit-remaining-tokens", "sort_key", "monkey", "hotkey",
		"primaryKey", "keyboard", "nextPageToken", "page_token",
		"tokenizer", "authorName", "author_id", "Authority",
		"Access-Control-Allow-Credentials", "X-Session-Name", "keyfile",
		"key_file", "session_count", NULL
	};
	struct redact	*r = redact_new(1), *none = redact_new(0);
	size_t		 i;
	char		*cause = NULL;

	for (i = 0; secret[i] != NULL; i++)
		cr_expect(redact_name_secret(r, secret[i], strlen(secret[i])),
		    "%s", secret[i]);
	for (i = 0; plain[i] != NULL; i++)
		cr_expect(!redact_name_secret(r, plain[i], strlen(plain[i])),
		    "%s", plain[i]);
	/* Without the built-in rules: listed names, and sessionId. */
	cr_expect(!redact_name_secret(none, "X-Auth-Token", 12));
	cr_expect(redact_name_secret(none, "sessionId", 9));
	cr_assert_eq(redact_add_key(none, "ssn", &cause), 0);
	cr_expect(redact_name_secret(none, "SSN", 3));
	cr_expect(redact_name_secret(NULL, "sessionId", 9));
	cr_expect(!redact_name_secret(NULL, "token", 5));
	redact_free(r);
	redact_free(none);
}

Test(redact_text, argv, .timeout = UNIT_TIMEOUT)
{
	static char *const in[] = {
		"env", "API_KEY=k1", "GITHUB_TOKEN=k2", "PATH=/bin", "node",
		"server.js", "--password", "p3", "--api-key=k4", "--token",
		"-starts-with-dash", "-token", "k6", "-p", "8080", "--verbose",
		"--header", "Authorization: Bearer abcdefgh12345678",
		"--url", "https://u:k7@h/mcp?access_token=k8",
		"--no-auth", "--port", "1", "--key-file=/etc/k",
		"--header", "Cookie: a=1; sid=abc",
		"--repo=https://TOKEN1@github.com/o/r",
		"--dsn", "user:hunter2@tcp(db:3306)/app",
		"--dsn=u:p@ss@tcp(db:3306)/app", "DSN=u:pw9@h/db",
		"node:20@sha256:abcdef", "12:30",
		"--max-output-tokens", "4096", "--keyfile", "/etc/k.pem",
		"--key", "k9", "--session-name", "foo", "--token-count", "12",
		"--token-count", "abc", NULL
	};
	static const char *const want[] = {
		"env", "API_KEY=" R, "GITHUB_TOKEN=" R, "PATH=/bin", "node",
		"server.js", "--password", R, "--api-key=" R, "--token", R,
		"-token", R, "-p", "8080", "--verbose",
		"--header", "Authorization: Bearer " R,
		"--url", "https://u:" R "@h/mcp?access_token=" R,
		"--no-auth", "--port", "1", "--key-file=/etc/k",
		"--header", "Cookie: " R,
		"--repo=https://" R "@github.com/o/r",
		"--dsn", "user:" R "@tcp(db:3306)/app",
		"--dsn=u:" R "@tcp(db:3306)/app", "DSN=u:" R "@h/db",
		"node:20@sha256:abcdef", "12:30",
		"--max-output-tokens", "4096", "--keyfile", "/etc/k.pem",
		"--key", R, "--session-name", "foo", "--token-count", "12",
		"--token-count", R, NULL
	};
	struct redact	*r = redact_new(1);
	char		**out = redact_argv(r, in);
	size_t		 i;

	for (i = 0; want[i] != NULL; i++)
		cr_expect_str_eq(out[i], want[i], "argv[%zu]: %s", i,
		    out[i]);
	cr_expect_null(out[i]);
	redact_argv_free(out);
	redact_free(r);
}

static double
now_s(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Inputs built to make a careless scan quadratic: separators after long
 * names, quotes never closed, fields without end, "Basic " runs.
 */
Test(redact_text, hostile, .timeout = UNIT_TIMEOUT)
{
	static const char *const units[] = {
		"token:", "password=\"", "a=", "--token ", "basic ", "&",
		"-----BEGIN ", "://a:", "key", ":=", "'", "Cookie: ", "//u:",
		"a:b@", "\\\"", "{\"token\":", "[\"x=", ";sid=", NULL
	};
	struct redact	*r = redact_new(1);
	char		*buf = xmalloc(HOSTILE_SIZE + 1), *out, *u;
	size_t		 i, ul, o, outlen;
	double		 t0, dt;

	for (i = 0; units[i] != NULL; i++) {
		ul = strlen(units[i]);
		for (o = 0; o + ul <= HOSTILE_SIZE; o += ul)
			memcpy(buf + o, units[i], ul);
		buf[o] = '\0';
		t0 = now_s();
		if (redact_text(r, buf, o, &out, &outlen) != 0)
			free(out);
		if (redact_form(r, buf, o, &out, &outlen) != 0)
			free(out);
		u = redact_url(r, buf);
		free(u);
		dt = now_s() - t0;
		cr_expect(dt < HOSTILE_MAX_S, "%s x %zu: %.2f s", units[i],
		    o / ul, dt);
	}
	free(buf);
	redact_free(r);
}

/* mcpreel's own log lines are redacted, whatever the call site prints. */
Test(redact_text, log_lines, .timeout = UNIT_TIMEOUT)
{
	char	 path[] = "/tmp/mcpreel-unit-log-XXXXXX", buf[4096];
	int	 fd = mkstemp(path);
	FILE	*f;
	size_t	 n;

	cr_assert_neq(fd, -1);
	close(fd);
	log_init(LOG_LEVEL_INFO, path);
	log_info("forwarding to %s", "http://u:pw1@h/mcp?api_key=k2");
	log_warnx("spawn failed: %s", "API_KEY=k3 --token k4");
	log_close();
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	cr_expect_str_eq(buf, "mcpreel: forwarding to http://u:" R
	    "@h/mcp?api_key=" R "\nmcpreel: spawn failed: API_KEY=" R
	    " --token " R "\n");
}

/*
 * A line longer than a log line is redacted before it is cut: a secret
 * across the cut is not printed in part.
 */
Test(redact_text, log_long_line, .timeout = UNIT_TIMEOUT)
{
	char	 path[] = "/tmp/mcpreel-unit-log-XXXXXX", buf[8192];
	int	 fd = mkstemp(path);
	FILE	*f;
	size_t	 n;

	cr_assert_neq(fd, -1);
	close(fd);
	log_init(LOG_LEVEL_INFO, path);
	log_warnx("%0990d https://user:supersecretpassword@db/x", 0);
	errno = ENOENT;
	log_warn("%01000d password=hunter2hunter2", 0);
	log_close();
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	cr_expect_null(strstr(buf, "supersec"), "%s", buf);
	cr_expect_null(strstr(buf, "hunter"), "%s", buf);
	cr_expect_not_null(strstr(buf, "https://user:[RED"), "%s", buf);
}
