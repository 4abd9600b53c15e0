/*
 * The identity of a message too long to keep (ident.c), fed its bytes in
 * pieces: it must classify every message as the scanner classifies the
 * whole of it (kind, method and id as written), whatever the pieces.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "core.h"
#include "unit.h"

static const char *ident_cases[] = {
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"a\":[1,{\"b\":\"}]\\\"{\"}]},\"id\":42}",
	"{\"params\":{\"x\":\"\\\\\"},\"method\":\"m\\u0065thod\",\"id\":\"abc\"}",
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}",
	"{\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"id\"}]},\"id\":7}",
	"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"x\"},\"id\":null}",
	"{\"jsonrpc\":\"2.0\",\"id\":-1.5e3 , \"result\" : true }",
	"  {\"\\u0069\\u0064\":9,\"method\":\"a\"}  ",
	"{\"id\":{\"nested\":[1,2]},\"method\":\"obj-id\"}",
	"{\"method\":\"a\",\"method\":\"b\",\"id\":1,\"id\":2}",
	"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}]",
	"{\"jsonrpc\":\"2.0\",\"result\":1,\"error\":2,\"id\":1}",
	"{\"method\":5,\"id\":1}",
	"{}",
	"{\"jsonrpc\":{},\"error\":{}}",
	"{\"result\":[],\"id\":\"a\\\"b\"}",
};

struct got {
	enum msg_kind	kind;
	char		method[300];
	char		id[300];
};

/* The scanner's reading of buf. */
static void
ident_scan(const char *buf, size_t len, struct got *g)
{
	struct scan	 sc;
	char		*m;

	memset(g, 0, sizeof *g);
	scan_message(buf, len, &sc);
	g->kind = sc.kind;
	if (sc.has_method && (m = scan_method_dup(buf, &sc)) != NULL) {
		snprintf(g->method, sizeof g->method, "%s", m);
		free(m);
	}
	if (sc.has_id)
		snprintf(g->id, sizeof g->id, "%.*s", (int)sc.id_len,
		    buf + sc.id_off);
}

Test(ident, pieces_classify_as_the_whole, .timeout = UNIT_TIMEOUT)
{
	static const size_t	 steps[] = { 1, 2, 3, 7, 1000 };
	struct ident		*id = malloc(sizeof *id);
	struct got		 want, got;
	size_t			 i, s, off, n, len, olen;
	char			*out;

	for (i = 0; i < sizeof ident_cases / sizeof ident_cases[0]; i++) {
		len = strlen(ident_cases[i]);
		ident_scan(ident_cases[i], len, &want);
		for (s = 0; s < sizeof steps / sizeof steps[0]; s++) {
			ident_init(id);
			for (off = 0; off < len; off += n) {
				n = len - off < steps[s] ? len - off : steps[s];
				ident_feed(id, ident_cases[i] + off, n);
			}
			out = ident_finish(id, &olen);
			if (out == NULL) {
				cr_assert(want.kind == KIND_INVALID,
				    "'%s' step %zu: no ident, want kind %d",
				    ident_cases[i], steps[s], want.kind);
				continue;
			}
			ident_scan(out, olen, &got);
			cr_assert_eq(got.kind, want.kind, "'%s' step %zu: "
			    "kind %d, want %d (%s)", ident_cases[i], steps[s],
			    got.kind, want.kind, out);
			cr_assert_str_eq(got.method, want.method, "'%s'",
			    ident_cases[i]);
			cr_assert_str_eq(got.id, want.id, "'%s'",
			    ident_cases[i]);
			free(out);
		}
	}
	free(id);
}

/* A huge message: constant memory, the id after 8 MiB of params. */
Test(ident, id_last_after_a_huge_value, .timeout = UNIT_TIMEOUT)
{
	struct ident	*id = malloc(sizeof *id);
	char		*pad = malloc(1 << 20), *out;
	size_t		 i, olen;
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
	    "\"params\":{\"message\":\"";
	static const char tail[] = "\"},\"id\":\"req-9\"}";

	memset(pad, 'x', 1 << 20);
	ident_init(id);
	ident_feed(id, head, sizeof head - 1);
	for (i = 0; i < 8; i++)
		ident_feed(id, pad, 1 << 20);
	ident_feed(id, tail, sizeof tail - 1);
	out = ident_finish(id, &olen);
	cr_assert_not_null(out);
	cr_assert_str_eq(out, "{\"method\":\"tools/call\",\"id\":\"req-9\"}");
	free(out);
	free(pad);
	free(id);
}
