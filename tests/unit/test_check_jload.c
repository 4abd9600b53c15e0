/* check/jload.c: the fast reader gives jansson's tree or gives up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "check_int.h"
#include "unit.h"

/* Inputs it must read, each exactly as jansson does. */
static const char *jload_read[] = {
	"{}", "[]", " {\"a\" : [1, -2, 0, -0, 3.5, 1e3, 2E-2, -1.25e+2] } ",
	"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
	"{\"name\":\"echo\",\"arguments\":{\"text\":\"h\\\"i\\n\\t\\\\ \\/\"}}}",
	"\"just a string\"", "42", "true", "false", "null",
	"{\"z\":1,\"a\":2,\"m\":{\"k\":[true,false,null,{}]}}",
	"{\"u\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}",
	"9223372036854775807", "-9223372036854775808", "0.1",
	"[[[[[[[[[[1]]]]]]]]]]", "{\"\":\"\"}", "\t\r\n[ 1 , 2 ]\n",
};

/* Inputs it must give up on (jansson then reads them, or says why not). */
static const char *jload_give_up[] = {
	"", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":1,\"a\":2}",
	"01", "-", "1.", "1e", "+1", ".5", "9223372036854775808",
	"1e400", "1e-400", "\"\\u00e9\"", "{\"a\\n\":1}", "\"\x01\"", "\"\xc3\"",
	"\"\xed\xa0\x80\"", "\"\xc0\xaf\"", "\"\xf4\x90\x80\x80\"", "tru",
	"nul", "{} x", "[1] [2]", "\"open", "\"\\x\"", "NaN", "[\"a\"\"b\"]",
	"{1:2}", "\xef\xbb\xbf{}",
};

/* jload(s) equals json_loadb's tree: same text when dumped in order. */
static void
jload_same(const char *s)
{
	json_t	*a, *b;
	char	*ta, *tb;

	a = jload(s, strlen(s));
	cr_assert_not_null(a, "jload gave up on %s", s);
	b = json_loadb(s, strlen(s), JSON_DECODE_ANY |
	    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	cr_assert_not_null(b, "jansson refused %s", s);
	ta = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
	tb = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);
	cr_assert_str_eq(ta, tb, "%s: jload %s, jansson %s", s, ta, tb);
	cr_assert_eq(json_typeof(a), json_typeof(b));
	free(ta);
	free(tb);
	json_decref(a);
	json_decref(b);
}

Test(check_jload, reads_as_jansson, .timeout = UNIT_TIMEOUT)
{
	size_t	i;

	for (i = 0; i < sizeof jload_read / sizeof jload_read[0]; i++)
		jload_same(jload_read[i]);
}

Test(check_jload, gives_up, .timeout = UNIT_TIMEOUT)
{
	json_t	*j;
	size_t	 i;

	for (i = 0; i < sizeof jload_give_up / sizeof jload_give_up[0]; i++) {
		j = jload(jload_give_up[i], strlen(jload_give_up[i]));
		cr_assert_null(j, "jload read %s", jload_give_up[i]);
	}
	/* A NUL byte in the input, and one past the length. */
	cr_assert_null(jload("\"a\0b\"", 5));
	j = jload("[1]\0garbage", 3);
	cr_assert_not_null(j);
	json_decref(j);
}

/* Nesting past its bound is left to jansson. */
Test(check_jload, deep_gives_up, .timeout = UNIT_TIMEOUT)
{
	char	buf[300];
	size_t	i;

	for (i = 0; i < 100; i++) {
		buf[i] = '[';
		buf[199 - i] = ']';
	}
	cr_assert_null(jload(buf, 200));
	for (i = 0; i < 32; i++) {
		buf[i] = '[';
		buf[64 - i] = ']';
	}
	buf[32] = '1';
	buf[65] = '\0';
	jload_same(buf);
}
