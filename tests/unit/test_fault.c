/*
 * Fault rules: a table of bad rules each with the message it must get, a
 * table of good ones with their canonical text, the selectors (globs,
 * names of requests and of their answers, counters, the first rule
 * winning, seeded probabilities), each action's bytes, the JSON form and
 * the bounds.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fault.h"
#include "fault_int.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* A bad rule and a fragment its message must have. */
struct fault_bad {
	const char	*rule;
	const char	*want;
};

static const struct fault_bad fault_bad_rules[] = {
	{ "", "no action (actions: delay, error, tool-error, drop, timeout, "
	  "corrupt, close, http-status, mutate)" },
	{ "   ", "no action" },
	{ "tool=x errror", "unknown action or selector `errror` (did you mean "
	  "`error`?) (actions: delay, error," },
	{ "method=tools/call", "no action" },
	{ "error drop", "a second action `drop` after error" },
	{ "delay", "delay needs ms=N" },
	{ "delay ms", "`ms` needs a value: ms=N" },
	{ "delay ms=abc", "`ms=abc`: expected a whole number from 0 to "
	  "86400000" },
	{ "delay ms=-1", "`ms=-1`: expected a whole number from 0" },
	{ "delay ms=86400001", "`ms=86400001`: expected a whole number" },
	{ "delay ms=+5", "`ms=+5`: expected a whole number" },
	{ "delay ms=5x", "`ms=5x`: expected a whole number" },
	{ "ms=5 delay", "`ms` is a parameter of delay, timeout: put it after "
	  "the action" },
	{ "error method=x", "selector `method` after the action error: "
	  "selectors come before it" },
	{ "error ms=5", "`ms` is not a parameter of error (error takes: code, "
	  "message, data)" },
	{ "error code=1.5", "`code=1.5`: expected a whole number from "
	  "-2147483648 to 2147483647" },
	{ "error code=99999999999", "`code=99999999999`: expected a whole "
	  "number" },
	{ "error data={bad", "`data={bad`: not JSON" },
	{ "error message=\"unterminated", "`message=\"...`: no closing \"" },
	{ "error message='x", "`message='...`: no closing '" },
	{ "error message=\"x\"y", "expected a blank after the closing \"" },
	{ "dir=x error", "`dir=x`: expected c2s|s2c" },
	{ "dir=s2c error", "error cannot select dir=s2c: it applies to c2s "
	  "requests" },
	{ "kind=notification error", "error cannot select kind=notification" },
	{ "kind=bogus drop", "`kind=bogus`: expected "
	  "request|response|error|notification" },
	{ "method= drop", "`method=`: empty; expected method=GLOB" },
	{ "tool=a prompt=b drop", "tool= and prompt= cannot both match" },
	{ "kind=notification tool=x drop", "kind=notification cannot meet "
	  "tool=: notifications carry no tool" },
	{ "method=initialize tool=x drop", "method=initialize cannot meet "
	  "tool=: tool= selects tools/call" },
	{ "method=resources/list resource=x drop", "resource= selects "
	  "resources/read" },
	{ "method=initialize tool-error", "tool-error applies to tools/call, "
	  "which method=initialize does not match" },
	{ "prompt=x tool-error", "tool-error applies to tools/call; prompt= "
	  "selects prompts/get" },
	{ "first=2 nth=3 drop", "first= and nth= cannot be combined" },
	{ "nth=2 after=3 drop", "nth= and after= cannot be combined" },
	{ "first=0 drop", "`first=0`: expected a whole number from 1 to" },
	{ "p=1.5 drop", "`p=1.5`: expected a probability from 0 to 1, or a "
	  "percentage from 0% to 100%" },
	{ "p=150% drop", "`p=150%`: expected a probability" },
	{ "p=abc drop", "`p=abc`: expected a probability" },
	{ "p=nan drop", "`p=nan`: expected a probability" },
	{ "p=0x1p-2 drop", "`p=0x1p-2`: expected a probability" },
	{ "p= drop", "`p=`: expected a probability" },
	{ "corrupt mode=weird", "`mode=weird`: expected "
	  "invalid-json|truncate|stray" },
	{ "close mode=truncate", "`mode=truncate`: expected "
	  "pipes|kill|reset|end-stream" },
	{ "http-status", "http-status needs status=401|404|429|500|503" },
	{ "http-status status=418", "`status=418`: expected "
	  "401|404|429|500|503" },
	{ "http-status status=404 retry-after=5", "retry-after= goes with "
	  "status=429 or 503, not 404" },
	{ "http-status status=429 retry-after=-1", "`retry-after=-1`: "
	  "expected a whole number from 0 to 86400" },
	{ "http-status status=429 www-authenticate=x", "www-authenticate= "
	  "goes with status=401, not 429" },
	{ "http-status status=401 www-authenticate=\"a\r\nX-Evil: 1\"",
	  "www-authenticate= is a header value: it cannot hold a line "
	  "break" },
	{ "mutate", "mutate needs set=JSONPATH value=JSON or "
	  "remove=JSONPATH" },
	{ "mutate set=$.a", "mutate set=$.a needs value=JSON" },
	{ "mutate value=1", "mutate value= goes with set=JSONPATH" },
	{ "mutate set=$.a value=1 remove=$.b", "mutate takes set= or remove=, "
	  "not both" },
	{ "mutate set=a value=1", "`set`: bad JSONPath 'a': must start "
	  "with $" },
	{ "mutate remove=$.a[", "`remove`: bad JSONPath '$.a[': unclosed [" },
	{ "mutate remove=$", "`remove=$` names the whole message" },
	{ "mutate remove=$..a..b..c", "`remove=$..a..b..c`: at most 2 `..` "
	  "steps" },
	{ "mutate set=$.a value=nope", "`value=nope`: not JSON" },
	{ "mutate set=$.result.content[0].text{json}.a value=2",
	  "`set=$.result.content[0].text{json}.a`: mutate does not step into "
	  "JSON held by strings ({json})" },
	{ "mutate remove=$..text{json}", "mutate does not step into JSON" },
	{ "delay ms=5 ms=6", "`ms` given twice" },
	{ "method=a method=b drop", "`method` given twice" },
	{ "=x drop", "`=x`: a value with no key before =" },
	{ "bogus=1 drop", "unknown selector `bogus` (selectors: dir, kind, "
	  "method, tool, prompt, resource, first, nth, after, p)" },
	{ "error=1", "`error=`: error is an action and takes no value" },
	{ "metod=x drop", "unknown selector `metod` (did you mean `method`?)" },
	{ "delay ms=5 jiter=3", "`jiter` is not a parameter of delay (did you "
	  "mean `jitter`?) (delay takes: ms, jitter)" },
	{ "drop extra", "unknown word `extra` after drop (drop takes: none)" },
	{ "drop ms=5", "`ms` is not a parameter of drop" },
	{ "timeout", "timeout needs ms=N" },
	{ "dir=s2c timeout ms=5", "timeout cannot select dir=s2c" },
	{ "kind=response http-status status=500", "http-status cannot select "
	  "kind=response" },
	{ "tool=x", "no action" },
	{ "error message=\xff\xfe", "`message`: the value is not UTF-8 text" },
	{ "Error", "unknown action or selector `Error` (did you mean "
	  "`error`?)" },
};

/* A good rule and its canonical text. */
struct fault_good {
	const char	*rule;
	const char	*canon;
};

static const struct fault_good fault_good_rules[] = {
	{ "error", "error" },
	{ "method=tools/call tool=search p=10% error code=-32001 "
	  "message=\"x\"", "method=tools/call tool=search p=0.1 error "
	  "code=-32001 message=\"x\"" },
	{ "  tool=search \t delay   ms=200 jitter=50 ",
	  "tool=search delay ms=200 jitter=50" },
	{ "delay jitter=50 ms=200", "delay ms=200 jitter=50" },
	{ "p=0.25 dir=c2s drop", "dir=c2s p=0.25 drop" },
	{ "error message='two words'", "error message=\"two words\"" },
	{ "error data='{\"a\": [1, 2]}'", "error data={\"a\":[1,2]}" },
	{ "error data='{\"a\": \"b c\"}'", "error data='{\"a\":\"b c\"}'" },
	{ "tool-error text=\"it's broken\"", "tool-error text=\"it's "
	  "broken\"" },
	{ "tool-error text='say \"hi\" '", "tool-error text='say \"hi\" '" },
	{ "error message=\"a \\\"q\\\" and 's\"", "error message=\"a \\\"q\\\" "
	  "and 's\"" },
	{ "error message=\"\"", "error message=\"\"" },
	{ "error message=back\\slash", "error message=\"back\\\\slash\"" },
	{ "error message=\"with \\\\ backslash\"", "error message=\"with \\\\ "
	  "backslash\"" },
	{ "corrupt", "corrupt" },
	{ "dir=c2s corrupt mode=truncate", "dir=c2s corrupt mode=truncate" },
	{ "close mode=kill", "close mode=kill" },
	{ "nth=5 method=tools/call close", "method=tools/call nth=5 close" },
	{ "after=3 drop", "after=3 drop" },
	{ "after=0 drop", "after=0 drop" },
	{ "http-status status=429 retry-after=30",
	  "http-status status=429 retry-after=30" },
	{ "http-status www-authenticate='Bearer realm=\"x\"' status=401",
	  "http-status status=401 www-authenticate='Bearer realm=\"x\"'" },
	{ "mutate set=$.result.tools value=[]",
	  "mutate set=$.result.tools value=[]" },
	{ "mutate remove=$..annotations", "mutate remove=$..annotations" },
	{ "kind=notification method=notifications/* drop",
	  "kind=notification method=notifications/* drop" },
	{ "timeout ms=5000", "timeout ms=5000" },
	{ "resource=file:///* delay ms=0", "resource=file:///* delay ms=0" },
	{ "prompt=greet error code=-32602", "prompt=greet error code=-32602" },
	{ "p=100% drop", "p=1 drop" },
	{ "p=0 drop", "p=0 drop" },
	{ "p=0.5% drop", "p=0.005 drop" },
	{ "kind=response tool=search corrupt mode=stray",
	  "kind=response tool=search corrupt mode=stray" },
	{ "error data=null", "error data=null" },
	{ "tool-error", "tool-error" },
};

Test(fault, bad_rules, .timeout = UNIT_TIMEOUT)
{
	struct fault_set	*set = fault_set_new(1);
	char			*cause, *want;
	size_t			 i;

	cr_assert_geq(nitems(fault_bad_rules), 40);
	for (i = 0; i < nitems(fault_bad_rules); i++) {
		cause = NULL;
		cr_expect_eq(fault_set_add_text(set, fault_bad_rules[i].rule,
		    &cause), -1, "rule `%s` was taken",
		    fault_bad_rules[i].rule);
		if (cause == NULL)
			continue;
		xasprintf(&want, "fault rule `%s`: ", fault_bad_rules[i].rule);
		cr_expect(strncmp(cause, want, strlen(want)) == 0,
		    "`%s`: message %s lacks its prefix",
		    fault_bad_rules[i].rule, cause);
		cr_expect(strstr(cause, fault_bad_rules[i].want) != NULL,
		    "`%s`: got \"%s\", want \"%s\"", fault_bad_rules[i].rule,
		    cause, fault_bad_rules[i].want);
		free(want);
		free(cause);
	}
	cr_expect_eq(fault_set_count(set), 0);
	fault_set_free(set);
}

Test(fault, good_rules, .timeout = UNIT_TIMEOUT)
{
	struct fault_set	*set = fault_set_new(1), *again;
	char			*cause = NULL;
	size_t			 i;

	cr_assert_geq(nitems(fault_good_rules), 20);
	for (i = 0; i < nitems(fault_good_rules); i++) {
		cause = NULL;
		if (fault_set_add_text(set, fault_good_rules[i].rule,
		    &cause) != 0) {
			cr_expect_fail("`%s`: %s", fault_good_rules[i].rule,
			    cause);
			free(cause);
			continue;
		}
		cr_expect_str_eq(fault_set_rule_text(set,
		    fault_set_count(set) - 1), fault_good_rules[i].canon);
		/* The canonical text reads back as itself. */
		again = fault_set_new(1);
		cr_expect_eq(fault_set_add_text(again,
		    fault_good_rules[i].canon, &cause), 0,
		    "canonical `%s` is refused", fault_good_rules[i].canon);
		if (fault_set_count(again) == 1)
			cr_expect_str_eq(fault_set_rule_text(again, 0),
			    fault_good_rules[i].canon);
		fault_set_free(again);
	}
	cr_expect_null(fault_set_rule_text(set, fault_set_count(set)));
	fault_set_free(set);
}

Test(fault, long_rule, .timeout = UNIT_TIMEOUT)
{
	struct fault_set	*set = fault_set_new(1);
	char			*text, *cause = NULL;

	text = xmalloc(FAULT_RULE_TEXT_MAX + 100);
	memset(text, 'a', FAULT_RULE_TEXT_MAX + 99);
	text[FAULT_RULE_TEXT_MAX + 99] = '\0';
	cr_assert_eq(fault_set_add_text(set, text, &cause), -1);
	cr_expect(strstr(cause, "the most is 65536") != NULL, "%s", cause);
	/* The message quotes a bounded part of the rule. */
	cr_expect_lt(strlen(cause), 300);
	free(cause);
	free(text);
	fault_set_free(set);
}

/*
 * The limit is on the text as written back too, whichever form the rule
 * came in: a JSON rule whose canonical text is too long is refused (its
 * text would not read back), and so is a text rule that quoting makes
 * too long.
 */
Test(fault, long_rule_any_form, .timeout = UNIT_TIMEOUT)
{
	struct fault_set	*set = fault_set_new(1);
	char			*msg, *file, *text, *cause = NULL;
	uint64_t		 seed = 0;
	int			 has_seed = 0;
	size_t			 n = FAULT_RULE_TEXT_MAX + 10, i;

	msg = xmalloc(n + 1);
	memset(msg, 'm', n);
	msg[n] = '\0';
	xasprintf(&file, "{\"rules\": [{\"action\": \"error\", "
	    "\"message\": \"%s\"}]}", msg);
	cr_expect_eq(fault_set_add_json(set, "f.json", file, strlen(file),
	    &seed, &has_seed, &cause), -1);
	cr_expect(cause != NULL && strstr(cause, "the most is 65536") != NULL,
	    "%s", cause);
	free(cause);
	cause = NULL;
	free(file);
	/* Under the limit as given, over it once each \ is escaped. */
	for (i = 0; i < n; i += 2)
		msg[i] = '\\';
	msg[FAULT_RULE_TEXT_MAX - 100] = '\0';
	xasprintf(&text, "error message=%s", msg);
	cr_assert_lt(strlen(text), FAULT_RULE_TEXT_MAX);
	cr_expect_eq(fault_set_add_text(set, text, &cause), -1);
	cr_expect(cause != NULL && strstr(cause, "the most is 65536") != NULL,
	    "%s", cause);
	free(cause);
	free(text);
	free(msg);
	cr_expect_eq(fault_set_count(set), 0);
	fault_set_free(set);
}

/* A set of rules, asserted to parse. */
static struct fault_set *
fault_rules(uint64_t seed, const char *const *rules)
{
	struct fault_set	*set = fault_set_new(seed);
	char			*cause = NULL;

	for (; *rules != NULL; rules++) {
		if (fault_set_add_text(set, *rules, &cause) != 0)
			cr_assert_fail("`%s`: %s", *rules, cause);
	}
	return set;
}

/* Decide for a message given as a string; the hit is cleared. */
static int
fault_rule_of(struct fault_set *set, enum dir dir, const char *msg,
    int http)
{
	struct fault_hit	hit;
	int			rc, rule = 0;

	rc = fault_decide(set, dir, msg, strlen(msg), http, &hit);
	if (rc == 1)
		rule = hit.rule;
	else
		cr_expect_eq(hit.rule, 0);
	fault_hit_clear(&hit);
	return rule;
}

#define REQ(id, method) \
	"{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"" method "\"}"
#define CALL(id, tool) \
	"{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"tools/call\"," \
	"\"params\":{\"name\":\"" tool "\",\"arguments\":{}}}"
#define RESULT(id) \
	"{\"jsonrpc\":\"2.0\",\"id\":" id ",\"result\":{}}"
#define NOTE(method) \
	"{\"jsonrpc\":\"2.0\",\"method\":\"" method "\"}"

Test(fault, glob, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*pat, *s;
		int		 want;
	} cases[] = {
		{ "tools/*", "tools/call", 1 }, { "tools/*", "tool/call", 0 },
		{ "*", "", 1 }, { "", "", 1 }, { "", "a", 0 },
		{ "a?c", "abc", 1 }, { "a?c", "ac", 0 },
		{ "*/list", "resources/templates/list", 1 },
		{ "[abc]x", "bx", 1 }, { "[abc]x", "dx", 0 },
		{ "[!abc]x", "dx", 1 }, { "[a-c]*", "cz", 1 },
		{ "[a-c]*", "dz", 0 }, { "\\*", "*", 1 }, { "\\*", "a", 0 },
		{ "[", "[", 1 }, { "[]]", "]", 1 }, { "*a*b*c", "xaybzc", 1 },
		{ "*a*b*c", "xaybzcd", 0 }, { "search", "search2", 0 },
		{ "s*h", "search", 1 }, { "**", "abc", 1 },
		/* "\\" quotes inside a class too, as in fnmatch(3). */
		{ "[\\]]", "]", 1 }, { "[\\]]", "\\", 0 },
		{ "[\\]]x", "]x", 1 }, { "[a\\-z]", "-", 1 },
		{ "[a\\-z]", "m", 0 }, { "[\\!a]", "!", 1 },
		{ "[!\\]]", "]", 0 }, { "[!\\]]", "a", 1 },
		/* A trailing "\\" matches nothing. */
		{ "a\\", "a\\", 0 }, { "\\", "\\", 0 },
	};
	size_t	i;

	for (i = 0; i < nitems(cases); i++)
		cr_expect_eq(fault_match_glob(cases[i].pat, cases[i].s,
		    strlen(cases[i].s)), cases[i].want, "`%s` on `%s`",
		    cases[i].pat, cases[i].s);
}

Test(fault, method_glob, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = { "method=tools/* drop", NULL };
	struct fault_set	*set = fault_rules(1, rules);

	cr_expect_eq(fault_rule_of(set, DIR_C2S, REQ("1", "tools/list"), 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, REQ("2", "resources/list"),
	    0), 0);
	/* An escaped method is decoded before it is matched. */
	cr_expect_eq(fault_rule_of(set, DIR_C2S, REQ("3", "tools\\/list"), 0),
	    1);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, NOTE("tools/x"), 0), 1);
	/* Not JSON-RPC, a batch: no rule selects them. */
	cr_expect_eq(fault_rule_of(set, DIR_C2S, "not json", 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, "[" REQ("4", "tools/list")
	    "]", 0), 0);
	fault_set_free(set);
}

Test(fault, names_of_requests_and_answers, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = {
		"tool=search delay ms=1",
		"prompt=greet delay ms=2",
		"resource=file:///* delay ms=3",
		NULL };
	struct fault_set	*set = fault_rules(1, rules);

	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("1", "search"), 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("2", "fetch"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("\"s-3\"", "search"),
	    0), 1);
	/* Answers are matched by their requests' names, by id. */
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("2"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("\"s-3\""), 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_S2C,
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,"
	    "\"message\":\"x\"}}", 0), 1);
	/* Once answered, an id is forgotten. */
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("1"), 0), 0);
	/* An answer in the same direction as the request does not match. */
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("9", "search"), 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, RESULT("9"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("9"), 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_C2S,
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\","
	    "\"params\":{\"name\":\"greet\"}}", 0), 2);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("4"), 0), 2);
	cr_expect_eq(fault_rule_of(set, DIR_C2S,
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\","
	    "\"params\":{\"uri\":\"file:///etc/x\"}}", 0), 3);
	cr_expect_eq(fault_rule_of(set, DIR_C2S,
	    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\","
	    "\"params\":{\"uri\":\"http://x\"}}", 0), 0);
	/* params.name of another method is no tool. */
	cr_expect_eq(fault_rule_of(set, DIR_C2S,
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/other\","
	    "\"params\":{\"name\":\"search\"}}", 0), 0);
	/* A name that is not a string, or escaped. */
	cr_expect_eq(fault_rule_of(set, DIR_C2S,
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
	    "\"params\":{\"name\":7}}", 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("10", "se\\u0061rch"),
	    0), 1);
	fault_set_free(set);
}

Test(fault, counters, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = {
		"tool=a first=2 drop",
		"tool=b nth=3 drop",
		"tool=c after=2 drop",
		NULL };
	struct fault_set	*set = fault_rules(1, rules);
	int			 got[3][5];
	int			 i;

	for (i = 0; i < 5; i++) {
		got[0][i] = fault_rule_of(set, DIR_C2S, CALL("1", "a"), 0);
		got[1][i] = fault_rule_of(set, DIR_C2S, CALL("1", "b"), 0);
		got[2][i] = fault_rule_of(set, DIR_C2S, CALL("1", "c"), 0);
	}
	for (i = 0; i < 5; i++) {
		cr_expect_eq(got[0][i], i < 2 ? 1 : 0, "first=2, #%d", i + 1);
		cr_expect_eq(got[1][i], i == 2 ? 2 : 0, "nth=3, #%d", i + 1);
		cr_expect_eq(got[2][i], i >= 2 ? 3 : 0, "after=2, #%d", i + 1);
	}
	fault_set_free(set);
}

Test(fault, first_rule_wins, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = {
		"tool=a error",
		"method=tools/call first=1 delay ms=5",
		NULL };
	struct fault_set	*set = fault_rules(1, rules);

	/* Taken by rule 1: rule 2 does not count it. */
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("1", "a"), 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("2", "b"), 0), 2);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("3", "b"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("4", "a"), 0), 1);
	fault_set_free(set);
}

Test(fault, default_directions, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = { "corrupt", NULL };
	static const char *const rules2[] = { "error", NULL };
	struct fault_set	*set = fault_rules(1, rules);

	/* corrupt: server to client unless told. */
	cr_expect_eq(fault_rule_of(set, DIR_C2S, REQ("1", "ping"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("1"), 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, REQ("1", "ping"), 0), 1);
	fault_set_free(set);
	/* error: c2s requests only. */
	set = fault_rules(1, rules2);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, NOTE("x"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, REQ("1", "ping"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, REQ("1", "ping"), 0), 1);
	fault_set_free(set);
}

/* The hits of n pings through a set with one p rule. */
static void
fault_draws(uint64_t seed, const char *rule, int *out, int n)
{
	const char *const	 rules[] = { rule, NULL };
	struct fault_set	*set = fault_rules(seed, rules);
	int			 i;

	for (i = 0; i < n; i++)
		out[i] = fault_rule_of(set, DIR_C2S, REQ("1", "ping"), 0);
	fault_set_free(set);
}

Test(fault, probability, .timeout = UNIT_TIMEOUT)
{
	static int	a[10000], b[10000], c[10000];
	int		i, n = 0, same = 0;

	fault_draws(42, "p=0.1 drop", a, 10000);
	fault_draws(42, "p=10% drop", b, 10000);
	fault_draws(43, "p=0.1 drop", c, 10000);
	for (i = 0; i < 10000; i++) {
		n += a[i];
		same += a[i] == c[i];
	}
	cr_expect(memcmp(a, b, sizeof a) == 0, "same seed, other draws");
	cr_expect_lt(same, 10000, "another seed, the same draws");
	/* 10% of 10 000: sd 30, so 850..1150 is five of them. */
	cr_expect(n > 850 && n < 1150, "p=0.1 hit %d of 10000", n);
	fault_draws(7, "p=0 drop", a, 1000);
	fault_draws(7, "p=1 drop", b, 1000);
	for (i = 0, n = 0; i < 1000; i++)
		n += a[i] + b[i];
	cr_expect_eq(n, 1000);
}

/* One decision's hit on a message; the caller clears it. */
static void
fault_hit_of(const char *rule, enum dir dir, const char *msg, int http,
    struct fault_hit *hit)
{
	const char *const	 rules[] = { rule, NULL };
	struct fault_set	*set = fault_rules(5, rules);

	cr_assert_eq(fault_decide(set, dir, msg, strlen(msg), http, hit), 1,
	    "`%s` did not select %s", rule, msg);
	cr_expect_str_eq(hit->rule_text, fault_set_rule_text(set, 0));
	/* rule_text is the set's: keep a copy before freeing it. */
	hit->rule_text = NULL;
	fault_set_free(set);
}

/* Expect a hit's bytes to be want. */
static void
fault_expect_bytes(const struct fault_hit *hit, const char *want)
{
	cr_assert_not_null(hit->bytes);
	cr_expect_eq(hit->len, strlen(want));
	cr_expect(hit->len == strlen(want) && memcmp(hit->bytes, want,
	    hit->len) == 0, "got %.*s, want %s", (int)hit->len, hit->bytes,
	    want);
}

Test(fault, error_answers, .timeout = UNIT_TIMEOUT)
{
	struct fault_hit	hit;

	fault_hit_of("error", DIR_C2S, REQ("7", "ping"), 0, &hit);
	cr_expect_eq(hit.action, FAULT_ERROR);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":"
	    "{\"code\":-32603,\"message\":\"Internal error (injected by "
	    "mcpreel)\"}}");
	cr_expect(strstr(hit.detail, "ping request 7") != NULL, "%s",
	    hit.detail);
	fault_hit_clear(&hit);
	/* The id as written: a string with an escape, a number as 1e0. */
	fault_hit_of("error code=-32001 message='x y' data='{\"n\": 1}'",
	    DIR_C2S, CALL(" \"a\\\"b\" ", "s"), 0, &hit);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\","
	    "\"error\":{\"code\":-32001,\"message\":\"x y\",\"data\":"
	    "{\"n\":1}}}");
	fault_hit_clear(&hit);
	fault_hit_of("error", DIR_C2S, REQ("1e0", "ping"), 0, &hit);
	cr_expect(strstr(hit.bytes, "\"id\":1e0,") != NULL, "%s", hit.bytes);
	fault_hit_clear(&hit);
	cr_expect_null(hit.bytes);
}

Test(fault, tool_error_answer, .timeout = UNIT_TIMEOUT)
{
	struct fault_hit	hit;

	fault_hit_of("tool-error", DIR_C2S, CALL("3", "s"), 0, &hit);
	cr_expect_eq(hit.action, FAULT_TOOL_ERROR);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":"
	    "{\"content\":[{\"type\":\"text\",\"text\":\"Tool error (injected "
	    "by mcpreel)\"}],\"isError\":true}}");
	fault_hit_clear(&hit);
	fault_hit_of("tool-error text=\"no \\\"luck\\\"\"", DIR_C2S,
	    CALL("\"x\"", "s"), 0, &hit);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":"
	    "{\"content\":[{\"type\":\"text\",\"text\":\"no \\\"luck\\\"\"}],"
	    "\"isError\":true}}");
	fault_hit_clear(&hit);
}

Test(fault, tool_error_only_for_tools_call, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = { "tool-error", NULL };
	struct fault_set	*set = fault_rules(1, rules);

	cr_expect_eq(fault_rule_of(set, DIR_C2S, REQ("1", "ping"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("2", "t"), 0), 1);
	fault_set_free(set);
}

Test(fault, corrupt_modes, .timeout = UNIT_TIMEOUT)
{
	struct fault_hit	hit;

	fault_hit_of("corrupt", DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"result\":{}} ", 0, &hit);
	cr_expect_eq(hit.action, FAULT_CORRUPT);
	cr_expect_eq(hit.corrupt, FAULT_CORRUPT_INVALID_JSON);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"result\":{},} ");
	cr_expect_eq(scan_is_json(hit.bytes, hit.len), 0);
	fault_hit_clear(&hit);
	fault_hit_of("corrupt mode=truncate", DIR_S2C, RESULT("12"), 0, &hit);
	cr_expect_eq(hit.corrupt, FAULT_CORRUPT_TRUNCATE);
	cr_expect_eq(hit.len, strlen(RESULT("12")) / 2);
	cr_expect(memcmp(hit.bytes, RESULT("12"), hit.len) == 0);
	cr_expect(strstr(hit.detail, "first 18 of 37 bytes") != NULL, "%s",
	    hit.detail);
	fault_hit_clear(&hit);
	fault_hit_of("dir=c2s corrupt mode=stray", DIR_C2S, NOTE("x"), 0,
	    &hit);
	cr_expect_eq(scan_is_json(hit.bytes, hit.len), 0);
	cr_expect_null(memchr(hit.bytes, '\n', hit.len));
	cr_expect_eq(hit.corrupt, FAULT_CORRUPT_STRAY);
	cr_expect(strstr(hit.detail, "stray") != NULL);
	fault_hit_clear(&hit);
}

Test(fault, other_actions, .timeout = UNIT_TIMEOUT)
{
	struct fault_hit	hit;

	fault_hit_of("delay ms=250", DIR_S2C, NOTE("x"), 0, &hit);
	cr_expect_eq(hit.action, FAULT_DELAY);
	cr_expect_eq(hit.delay_ms, 250);
	cr_expect_null(hit.bytes);
	fault_hit_clear(&hit);
	fault_hit_of("delay ms=100 jitter=1000", DIR_S2C, NOTE("x"), 0, &hit);
	cr_expect(hit.delay_ms >= 0 && hit.delay_ms <= 1100);
	fault_hit_clear(&hit);
	fault_hit_of("drop", DIR_S2C, NOTE("x"), 0, &hit);
	cr_expect_eq(hit.action, FAULT_DROP);
	cr_expect_str_eq(hit.detail, "x notification dropped");
	fault_hit_clear(&hit);
	fault_hit_of("close", DIR_C2S, NOTE("x"), 0, &hit);
	cr_expect_eq(hit.close, FAULT_CLOSE_PIPES);
	fault_hit_clear(&hit);
	fault_hit_of("close", DIR_C2S, NOTE("x"), 1, &hit);
	cr_expect_eq(hit.close, FAULT_CLOSE_RESET);
	fault_hit_clear(&hit);
	fault_hit_of("close mode=end-stream", DIR_S2C, NOTE("x"), 1, &hit);
	cr_expect_eq(hit.close, FAULT_CLOSE_END_STREAM);
	fault_hit_clear(&hit);
	fault_hit_of("http-status status=429 retry-after=30", DIR_C2S,
	    REQ("1", "ping"), 1, &hit);
	cr_expect_eq(hit.status, 429);
	cr_expect_str_eq(hit.retry_after, "30");
	cr_expect_null(hit.www_authenticate);
	fault_hit_clear(&hit);
	fault_hit_of("http-status status=401", DIR_C2S, REQ("1", "ping"), 1,
	    &hit);
	cr_expect_eq(hit.status, 401);
	cr_expect_not_null(hit.www_authenticate);
	fault_hit_clear(&hit);
	cr_expect_str_eq(fault_action_name(FAULT_HTTP_STATUS), "http-status");
	cr_expect_null(fault_action_name(FAULT_ACTION_MAX));
}

Test(fault, timeout_holds_the_answer, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = { "method=slow timeout ms=900",
		"kind=response drop", NULL };
	struct fault_set	*set = fault_rules(1, rules);
	struct fault_hit	 hit;
	const char		*req = REQ("5", "slow"), *res = RESULT("5");

	cr_assert_eq(fault_decide(set, DIR_C2S, req, strlen(req), 0, &hit), 1);
	cr_expect_eq(hit.action, FAULT_TIMEOUT);
	cr_expect_eq(hit.delay_ms, 900);
	fault_hit_clear(&hit);
	/* Its answer belongs to the timeout, not to rule 2. */
	cr_assert_eq(fault_decide(set, DIR_S2C, res, strlen(res), 0, &hit), 1);
	cr_expect_eq(hit.action, FAULT_TIMEOUT);
	cr_expect_eq(hit.rule, 1);
	cr_expect_eq(hit.delay_ms, 900);
	fault_hit_clear(&hit);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("5"), 0), 2);
	fault_set_free(set);
}

/*
 * A request whose id is too long to remember is not put under timeout
 * (its answer could not be held), so no timeout is recorded that the
 * client never saw.
 */
Test(fault, timeout_needs_a_remembered_id, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = { "method=slow timeout ms=100",
		NULL };
	struct fault_set	*set = fault_rules(1, rules);
	char			 id[FAULT_KEEP_MAX + 8], *req, *res;

	memset(id, 'i', sizeof id - 1);
	id[0] = id[sizeof id - 2] = '"';
	id[sizeof id - 1] = '\0';
	xasprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":"
	    "\"slow\"}", id);
	xasprintf(&res, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}",
	    id);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, req, 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, res, 0), 0);
	/* An id of FAULT_KEEP_MAX bytes is still remembered. */
	id[FAULT_KEEP_MAX - 1] = '"';
	id[FAULT_KEEP_MAX] = '\0';
	free(req);
	free(res);
	xasprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":"
	    "\"slow\"}", id);
	xasprintf(&res, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}",
	    id);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, req, 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, res, 0), 1);
	free(req);
	free(res);
	fault_set_free(set);
}

Test(fault, answered_requests_are_not_remembered, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = { "tool=a dir=c2s error",
		"kind=response tool=* delay ms=1", NULL };
	struct fault_set	*set = fault_rules(1, rules);

	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("1", "a"), 0), 1);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("1"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("2", "b"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("2"), 0), 2);
	fault_set_free(set);
}

Test(fault, mutate, .timeout = UNIT_TIMEOUT)
{
	struct fault_hit	 hit;
	const char		*tools = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"result\":{\"tools\":[{\"name\":\"a\",\"x\":1},"
	    "{\"name\":\"b\",\"x\":2}]}}";
	const char *const	 none[] = { "mutate remove=$.nothing", NULL };
	struct fault_set	*set;

	fault_hit_of("mutate set=$.result.tools value=[]", DIR_S2C, tools, 0,
	    &hit);
	cr_expect_eq(hit.action, FAULT_MUTATE);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"tools\":[]}}");
	fault_hit_clear(&hit);
	fault_hit_of("mutate remove=$..x", DIR_S2C, tools, 0, &hit);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}");
	cr_expect(strstr(hit.detail, "at 2 places") != NULL, "%s",
	    hit.detail);
	fault_hit_clear(&hit);
	fault_hit_of("mutate remove=$.result.tools[*]", DIR_S2C, tools, 0,
	    &hit);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"tools\":[]}}");
	fault_hit_clear(&hit);
	/* A new key of an object, and a value set at many places. */
	fault_hit_of("mutate set=$.result.tools[*].description "
	    "value='\"changed\"'", DIR_S2C, tools, 0, &hit);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"tools\":[{\"name\":\"a\",\"x\":1,\"description\":\"changed\"},"
	    "{\"name\":\"b\",\"x\":2,\"description\":\"changed\"}]}}");
	fault_hit_clear(&hit);
	fault_hit_of("mutate set=$.result.tools[1].name value='{\"o\":[1]}'",
	    DIR_S2C, tools, 0, &hit);
	cr_expect(strstr(hit.bytes, "{\"name\":{\"o\":[1]},\"x\":2}") != NULL,
	    "%s", hit.bytes);
	fault_hit_clear(&hit);
	/* Other numbers are written back as they read: 0.1 stays 0.1. */
	fault_hit_of("mutate remove=$.result.x", DIR_S2C, "{\"jsonrpc\":"
	    "\"2.0\",\"id\":1,\"result\":{\"x\":1,\"t\":0.1,"
	    "\"e\":1.5e300,\"p\":0.30000000000000004}}", 0, &hit);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"t\":0.10000000000000001,\"e\":1.5000000000000001e300,"
	    "\"p\":0.30000000000000004}}");
	fault_hit_clear(&hit);
	fault_hit_of("mutate remove=$.result.x", DIR_S2C, "{\"jsonrpc\":"
	    "\"2.0\",\"id\":1,\"result\":{\"x\":1,\"t\":0.1,"
	    "\"e\":1.5e300}}", 0, &hit);
	fault_expect_bytes(&hit, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"t\":0.1,\"e\":1.5e300}}");
	fault_hit_clear(&hit);
	/* A path that matches nothing: the rule does not apply. */
	set = fault_rules(1, none);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, tools, 0), 0);
	fault_set_free(set);
}

/* Nested "a" objects in the deep message, and keys at its bottom. */
#define FAULT_DEEP_NEST		45
#define FAULT_DEEP_KEYS		100000

/*
 * A mutate pattern with two ".." steps over a deep message with many
 * keys: the match steps taken stay within nodes times pattern positions
 * (matching each node's whole path from the root took about 1 000 times
 * that).
 */
Test(fault, mutate_work_is_bounded, .timeout = UNIT_TIMEOUT)
{
	const char *const	 rules[] = { "mutate remove=$..a..a.zzz",
	    "mutate remove=$.result.zzz", NULL };
	struct fault_set	*set;
	struct fault_hit	 hit;
	char			*msg, *p;
	/* Members: jsonrpc, id, result, the "a"s, the keys and zzz. */
	size_t			 i, size, nodes = 3 + FAULT_DEEP_NEST +
	    FAULT_DEEP_KEYS + 1;

	size = 64 + FAULT_DEEP_NEST * 8 + FAULT_DEEP_KEYS * 16;
	msg = xmalloc(size);
	p = msg + sprintf(msg, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":");
	for (i = 0; i < FAULT_DEEP_NEST; i++)
		p += sprintf(p, "{\"a\":");
	*p++ = '{';
	for (i = 0; i < FAULT_DEEP_KEYS; i++)
		p += sprintf(p, "%s\"k%zu\":0", i > 0 ? "," : "", i);
	p += sprintf(p, ",\"zzz\":1}");
	for (i = 0; i < FAULT_DEEP_NEST; i++)
		*p++ = '}';
	strcpy(p, "}");
	cr_assert_lt(strlen(msg), size);

	set = fault_rules(1, rules);
	fault_act_work = 0;
	cr_assert_eq(fault_decide(set, DIR_S2C, msg, strlen(msg), 0, &hit), 1);
	cr_expect_eq(hit.rule, 1);
	cr_expect(strstr(hit.bytes, "zzz") == NULL, "zzz still there");
	cr_expect(strstr(hit.bytes, "\"k99999\":0") != NULL);
	/* $..a..a.zzz: 4 positions, moved once a member. */
	cr_expect_leq(fault_act_work, (uint64_t)nodes * 4,
	    "%llu match steps for %zu nodes",
	    (unsigned long long)fault_act_work, nodes);
	fault_hit_clear(&hit);
	fault_set_free(set);

	/* A pattern without "..": nothing below $.result is visited. */
	set = fault_rules(1, rules + 1);
	fault_act_work = 0;
	cr_expect_eq(fault_decide(set, DIR_S2C, msg, strlen(msg), 0, &hit), 0);
	cr_expect_leq(fault_act_work, 16, "%llu match steps",
	    (unsigned long long)fault_act_work);
	fault_set_free(set);
	free(msg);
}

/* The user reference, whose rules and faults file must parse. */
#define FAULT_DOC		DOCS_DIR "/faults.md"
#define FAULT_DOC_MAX		(256 * 1024)

/* Read the user reference into a string; the caller frees it. */
static char *
fault_doc(void)
{
	FILE	*f;
	char	*doc = xmalloc(FAULT_DOC_MAX + 1);
	size_t	 n;

	f = fopen(FAULT_DOC, "r");
	cr_assert_not_null(f, "cannot open %s", FAULT_DOC);
	n = fread(doc, 1, FAULT_DOC_MAX, f);
	cr_assert_lt(n, FAULT_DOC_MAX, "%s is too big", FAULT_DOC);
	fclose(f);
	doc[n] = '\0';
	return doc;
}

/*
 * Every --fault '...' in docs/faults.md (the examples and the recipes)
 * and its faults file example are taken by the module.
 */
Test(fault, doc_rules_parse, .timeout = UNIT_TIMEOUT)
{
	struct fault_set	*set;
	char			*doc = fault_doc(), *p, *end, *rule;
	char			*cause = NULL;
	uint64_t		 seed = 0;
	int			 has_seed = 0;
	size_t			 n = 0;

	for (p = doc; (p = strstr(p, "--fault '")) != NULL; p = end + 1) {
		p += strlen("--fault '");
		end = strchr(p, '\'');
		cr_assert_not_null(end);
		rule = xstrndup(p, (size_t)(end - p));
		set = fault_set_new(1);
		cr_expect_eq(fault_set_add_text(set, rule, &cause), 0,
		    "docs/faults.md: `%s`: %s", rule, cause);
		free(cause);
		cause = NULL;
		fault_set_free(set);
		free(rule);
		n++;
	}
	cr_expect_geq(n, 10, "only %zu rules found in %s", n, FAULT_DOC);

	p = strstr(doc, "```json\n");
	cr_assert_not_null(p, "no faults file example in %s", FAULT_DOC);
	p += strlen("```json\n");
	end = strstr(p, "```");
	cr_assert_not_null(end);
	set = fault_set_new(1);
	cr_expect_eq(fault_set_add_json(set, "faults.md", p, (size_t)(end - p),
	    &seed, &has_seed, &cause), 0, "%s", cause);
	cr_expect_eq(fault_set_count(set), 3);
	cr_expect_eq(has_seed, 1);
	cr_expect_eq(seed, 42);
	free(cause);
	fault_set_free(set);
	free(doc);
}

/* Find a --fault recipe in docs/faults.md by its comment line. */
static char *
fault_doc_recipe(const char *comment)
{
	char	*doc = fault_doc(), *p, *end, *rule;

	p = strstr(doc, comment);
	cr_assert_not_null(p, "no recipe `%s` in %s", comment, FAULT_DOC);
	p = strstr(p, "--fault '");
	cr_assert_not_null(p);
	p += strlen("--fault '");
	end = strchr(p, '\'');
	cr_assert_not_null(end);
	rule = xstrndup(p, (size_t)(end - p));
	free(doc);
	return rule;
}

/*
 * The recipes do what their comments say: the server dies at the 6th
 * tools/call (after 5 calls and their answers), and the slow server
 * delays answers, not the server's own requests.
 */
Test(fault, doc_recipes_do_what_they_say, .timeout = UNIT_TIMEOUT)
{
	char			*rule, req[128], ans[128];
	const char		*rules[2] = { NULL, NULL };
	const char		*ping = "{\"jsonrpc\":\"2.0\",\"id\":\"s1\","
	    "\"method\":\"ping\"}";
	const char		*pong = "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"result\":{}}";
	struct fault_set	*set;
	int			 i;

	rule = fault_doc_recipe("# A server that dies after the 5th tool "
	    "call");
	rules[0] = rule;
	set = fault_rules(1, rules);
	for (i = 1; i <= 7; i++) {
		snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}",
		    i);
		snprintf(ans, sizeof ans, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{\"content\":[]}}", i);
		cr_expect_eq(fault_rule_of(set, DIR_C2S, req, 0),
		    i == 6 ? 1 : 0, "`%s`: call %d", rule, i);
		if (i >= 6)
			break;
		cr_expect_eq(fault_rule_of(set, DIR_S2C, ans, 0), 0,
		    "`%s`: answer %d", rule, i);
	}
	fault_set_free(set);
	free(rule);

	rule = fault_doc_recipe("# A slow server");
	rules[0] = rule;
	set = fault_rules(1, rules);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, ping, 0), 0, "`%s`", rule);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, pong, 0), 1, "`%s`", rule);
	fault_set_free(set);
	free(rule);

	rule = fault_doc_recipe("# every answer from the server");
	rules[0] = rule;
	set = fault_rules(1, rules);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, ping, 0), 0, "`%s`", rule);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, pong, 0), 1, "`%s`", rule);
	fault_set_free(set);
	free(rule);
}

Test(fault, transport, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*rule;
		int		 stdio_ok, http_ok;
	} cases[] = {
		{ "http-status status=500", 0, 1 },
		{ "close mode=reset", 0, 1 },
		{ "close mode=end-stream", 0, 1 },
		{ "close mode=pipes", 1, 0 },
		{ "close mode=kill", 1, 0 },
		{ "close", 1, 1 },
		{ "error", 1, 1 },
	};
	struct fault_set	*set;
	char			*cause;
	size_t			 i;
	int			 http;

	for (i = 0; i < nitems(cases); i++) {
		for (http = 0; http <= 1; http++) {
			set = fault_set_new(1);
			cause = NULL;
			cr_assert_eq(fault_set_add_text(set, cases[i].rule,
			    &cause), 0);
			cr_expect_eq(fault_set_check_transport(set, http,
			    &cause) == 0, http ? cases[i].http_ok :
			    cases[i].stdio_ok, "`%s` over %s", cases[i].rule,
			    http ? "HTTP" : "stdio");
			if (cause != NULL)
				cr_expect(strstr(cause, "fault rule 1 `") !=
				    NULL, "%s", cause);
			free(cause);
			/* Unchecked, it never selects where it cannot be. */
			cr_expect_eq(fault_rule_of(set, DIR_C2S,
			    REQ("1", "ping"), http) == 1, http ?
			    cases[i].http_ok : cases[i].stdio_ok);
			fault_set_free(set);
		}
	}
}

/* Parse a --faults file's text; the set is returned, *cause on error. */
static int
fault_json(struct fault_set *set, const char *text, uint64_t *seed,
    int *has_seed, char **cause)
{
	return fault_set_add_json(set, "f.json", text, strlen(text), seed,
	    has_seed, cause);
}

Test(fault, json_form, .timeout = UNIT_TIMEOUT)
{
	struct fault_set	*set = fault_set_new(1);
	uint64_t		 seed = 0;
	int			 has_seed = 0;
	char			*cause = NULL;

	cr_assert_eq(fault_set_add_text(set, "drop", &cause), 0);
	cr_assert_eq(fault_json(set, "{\"seed\": 99, \"rules\": ["
	    "{\"action\": \"error\", \"method\": \"tools/call\", \"tool\": "
	    "\"search\", \"p\": 0.1, \"code\": -32001, \"message\": \"x\"},"
	    "{\"action\": \"delay\", \"ms\": 200, \"jitter\": 50, \"p\": "
	    "\"10%\"},"
	    "{\"action\": \"error\", \"data\": {\"a\": [1, \"b c\"]}},"
	    "{\"action\": \"mutate\", \"set\": \"$.result.tools\", "
	    "\"value\": []},"
	    "{\"action\": \"http-status\", \"status\": 429, "
	    "\"retry-after\": 5},"
	    "{\"action\": \"corrupt\", \"dir\": \"c2s\", \"mode\": \"stray\"}"
	    "]}", &seed, &has_seed, &cause), 0, "%s", cause);
	cr_expect_eq(has_seed, 1);
	cr_expect_eq(seed, 99);
	cr_assert_eq(fault_set_count(set), 7);
	cr_expect_str_eq(fault_set_rule_text(set, 1), "method=tools/call "
	    "tool=search p=0.1 error code=-32001 message=\"x\"");
	cr_expect_str_eq(fault_set_rule_text(set, 2),
	    "p=0.1 delay ms=200 jitter=50");
	cr_expect_str_eq(fault_set_rule_text(set, 3),
	    "error data='{\"a\":[1,\"b c\"]}'");
	cr_expect_str_eq(fault_set_rule_text(set, 4),
	    "mutate set=$.result.tools value=[]");
	cr_expect_str_eq(fault_set_rule_text(set, 5),
	    "http-status status=429 retry-after=5");
	cr_expect_str_eq(fault_set_rule_text(set, 6),
	    "dir=c2s corrupt mode=stray");
	/* A refused file leaves the seed alone, even with a good "seed". */
	seed = 7;
	cr_expect_eq(fault_json(set, "{\"seed\": 123, \"rules\": ["
	    "{\"action\": \"nope\"}]}", &seed, &has_seed, &cause), -1);
	free(cause);
	cause = NULL;
	cr_expect_eq(seed, 7);
	cr_expect_eq(has_seed, 0);
	/* No seed: has_seed 0. */
	cr_assert_eq(fault_json(set, "{\"rules\": []}", &seed, &has_seed,
	    &cause), 0);
	cr_expect_eq(has_seed, 0);
	fault_set_free(set);
}

Test(fault, bad_json, .timeout = UNIT_TIMEOUT)
{
	static const struct fault_bad cases[] = {
		{ "", "f.json: not JSON: line" },
		{ "{\"rules\": [", "f.json: not JSON" },
		{ "[]", "f.json: expected an object {\"seed\": N, \"rules\"" },
		{ "{}", "f.json: \"rules\": expected an array" },
		{ "{\"rules\": {}}", "\"rules\": expected an array" },
		{ "{\"rules\": [], \"sed\": 1}", "f.json: unknown key `sed`" },
		{ "{\"seed\": -1, \"rules\": []}", "\"seed\": expected a whole "
		  "number from 0" },
		{ "{\"seed\": \"1\", \"rules\": []}", "\"seed\": expected" },
		{ "{\"rules\": [], \"rules\": []}", "f.json: not JSON" },
		{ "{\"rules\": [1]}", "f.json: rules[0]: a rule is a JSON "
		  "object" },
		{ "{\"rules\": [{}]}", "rules[0]: no \"action\" (one of: "
		  "delay, error" },
		{ "{\"rules\": [{\"action\": 1}]}", "a non-string \"action\"" },
		{ "{\"rules\": [{\"action\": \"drop\"}, {\"action\": "
		  "\"dorp\"}]}", "rules[1]: unknown action `dorp` (did you "
		  "mean `drop`?)" },
		{ "{\"rules\": [{\"action\": \"delay\", \"ms\": \"5\"}]}",
		  "rules[0]: `ms`: expected N, as JSON a whole number" },
		{ "{\"rules\": [{\"action\": \"delay\", \"ms\": 1.5}]}",
		  "`ms`: expected N, as JSON a whole number" },
		{ "{\"rules\": [{\"action\": \"delay\"}]}",
		  "delay needs ms=N" },
		{ "{\"rules\": [{\"action\": \"drop\", \"method\": 5}]}",
		  "`method`: expected GLOB, as JSON a string" },
		{ "{\"rules\": [{\"action\": \"drop\", \"p\": 2}]}",
		  "`p=2`: expected a probability" },
		{ "{\"rules\": [{\"action\": \"drop\", \"p\": true}]}",
		  "`p`: expected P, as JSON a number or a string" },
		{ "{\"rules\": [{\"action\": \"drop\", \"bogus\": 1}]}",
		  "unknown key `bogus` (selectors: dir," },
		{ "{\"rules\": [{\"action\": \"error\", \"ms\": 1}]}",
		  "`ms` is not a parameter of error" },
		{ "{\"rules\": [{\"action\": \"error\", \"message\": "
		  "\"a\\u0000b\"}]}", "\\u0000 is not allowed" },
		{ "{\"rules\": [{\"action\": \"error\", \"dir\": \"s2c\"}]}",
		  "error cannot select dir=s2c" },
		{ "{\"rules\": [{\"action\": \"mutate\", \"remove\": \"x\"}]}",
		  "`remove`: bad JSONPath" },
	};
	struct fault_set	*set = fault_set_new(1);
	uint64_t		 seed = 5;
	int			 has_seed;
	char			*cause;
	size_t			 i;

	for (i = 0; i < nitems(cases); i++) {
		cause = NULL;
		cr_expect_eq(fault_json(set, cases[i].rule, &seed, &has_seed,
		    &cause), -1, "`%s` was taken", cases[i].rule);
		if (cause == NULL)
			continue;
		cr_expect(strstr(cause, cases[i].want) != NULL,
		    "`%s`: got \"%s\", want \"%s\"", cases[i].rule, cause,
		    cases[i].want);
		cr_expect_eq(has_seed, 0);
		free(cause);
	}
	/* All or nothing: a bad rule after good ones adds none. */
	cr_expect_eq(fault_set_count(set), 0);
	fault_set_free(set);
}

Test(fault, json_file_too_big, .timeout = UNIT_TIMEOUT)
{
	struct fault_set	*set = fault_set_new(1);
	uint64_t		 seed;
	int			 has_seed;
	char			*cause = NULL;

	cr_expect_eq(fault_set_add_json(set, "big", "{}", FAULT_FILE_MAX + 1,
	    &seed, &has_seed, &cause), -1);
	cr_expect(strstr(cause, "big: 4194305 bytes") != NULL, "%s", cause);
	free(cause);
	fault_set_free(set);
}

Test(fault, rules_max, .timeout = UNIT_TIMEOUT)
{
	struct fault_set	*set = fault_set_new(1);
	char			*cause = NULL, *json;
	uint64_t		 seed;
	int			 i, has_seed;
	size_t			 len;

	for (i = 0; i < FAULT_RULES_MAX; i++)
		cr_assert_eq(fault_set_add_text(set, "drop", &cause), 0);
	cr_expect_eq(fault_set_add_text(set, "drop", &cause), -1);
	cr_expect(strstr(cause, "too many rules (the most is 256)") != NULL,
	    "%s", cause);
	free(cause);
	cause = NULL;
	cr_expect_eq(fault_json(set, "{\"rules\": [{\"action\": \"drop\"}]}",
	    &seed, &has_seed, &cause), -1);
	cr_expect(strstr(cause, "more than the most, 256") != NULL, "%s",
	    cause);
	free(cause);
	fault_set_free(set);
	/* A file with too many rules on its own. */
	set = fault_set_new(1);
	json = xmalloc(32 * (FAULT_RULES_MAX + 2) + 32);
	len = (size_t)sprintf(json, "{\"rules\": [");
	for (i = 0; i <= FAULT_RULES_MAX; i++)
		len += (size_t)sprintf(json + len, "%s{\"action\": \"drop\"}",
		    i > 0 ? "," : "");
	sprintf(json + len, "]}");
	cause = NULL;
	cr_expect_eq(fault_json(set, json, &seed, &has_seed, &cause), -1);
	cr_expect(strstr(cause, "257 rules") != NULL, "%s", cause);
	free(cause);
	free(json);
	fault_set_free(set);
}

Test(fault, pending_max, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = { "kind=response tool=x drop",
		NULL };
	struct fault_set	*set = fault_rules(1, rules);
	char			 buf[128];
	int			 i;

	for (i = 0; i <= FAULT_PENDING_MAX; i++) {
		snprintf(buf, sizeof buf, CALL("%d", "x"), i);
		cr_assert_eq(fault_rule_of(set, DIR_C2S, buf, 0), 0);
	}
	cr_expect_eq(set->npending, FAULT_PENDING_MAX);
	/* The oldest is forgotten; the next oldest is still known. */
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("0"), 0), 0);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("1"), 0), 1);
	cr_expect_eq(set->npending, FAULT_PENDING_MAX - 1);
	/* A request reusing an id replaces the one before. */
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("2", "y"), 0), 0);
	cr_expect_eq(set->npending, FAULT_PENDING_MAX - 1);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("2"), 0), 0);
	fault_set_free(set);
	/* What they hold at worst stays small (65 536 of them: 130 MiB). */
	cr_expect_leq((uint64_t)FAULT_PENDING_MAX * FAULT_PEND_WORST,
	    16 * 1024 * 1024, "%d requests of %d bytes", FAULT_PENDING_MAX,
	    FAULT_PEND_WORST);
}

Test(fault, take_rules, .timeout = UNIT_TIMEOUT)
{
	static const char *const before[] = { "p=0.5 method=ping drop", NULL };
	static const char *const after[] = { "kind=response tool=x drop",
		"p=0.5 method=ping drop", NULL };
	static const char *const rules_ref[] = { "p=0.5 method=ping drop",
		NULL };
	struct fault_set	*set = fault_rules(11, before), *ref, *next;
	int			 got[40], want[40], i;

	ref = fault_rules(11, rules_ref);
	for (i = 0; i < 40; i++)
		want[i] = fault_rule_of(ref, DIR_C2S, REQ("1", "ping"), 0);
	fault_set_free(ref);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, CALL("77", "x"), 0), 0);
	for (i = 0; i < 20; i++)
		got[i] = fault_rule_of(set, DIR_C2S, REQ("1", "ping"), 0);
	next = fault_rules(999, after);
	fault_set_take_rules(set, next);
	cr_expect_eq(fault_set_count(set), 2);
	/* The request remembered before is still known. */
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("77"), 0), 1);
	/* The draws go on from where they were (rule 2 now). */
	for (i = 20; i < 40; i++)
		got[i] = fault_rule_of(set, DIR_C2S, REQ("1", "ping"), 0);
	for (i = 0; i < 40; i++)
		cr_expect_eq(got[i] != 0, want[i] != 0, "draw %d", i);
	fault_set_free(set);
}

Test(fault, usage, .timeout = UNIT_TIMEOUT)
{
	const char	*u = fault_usage();
	size_t		 i;

	for (i = 0; i < FAULT_ACTION_MAX; i++)
		cr_expect(strstr(u, fault_adefs[i].usage) != NULL, "%s",
		    fault_adefs[i].name);
	for (i = 0; i < fault_nkeys; i++)
		cr_expect(strstr(u, fault_keys[i].name) != NULL, "%s",
		    fault_keys[i].name);
	cr_expect_eq(u, fault_usage());
}

Test(fault, kept_is_bounded, .timeout = UNIT_TIMEOUT)
{
	static const char *const rules[] = { "tool=* delay ms=1", NULL };
	struct fault_set	*set = fault_rules(1, rules);
	char			*name, *msg, *id;

	name = xmalloc(FAULT_NAME_MAX + 2);
	memset(name, 'n', FAULT_NAME_MAX + 1);
	name[FAULT_NAME_MAX + 1] = '\0';
	xasprintf(&msg, CALL("1", "%s"), name);
	/* A name too long to keep matches no name selector... */
	cr_expect_eq(fault_rule_of(set, DIR_C2S, msg, 0), 0);
	free(msg);
	name[FAULT_NAME_MAX] = '\0';
	xasprintf(&msg, CALL("2", "%s"), name);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, msg, 0), 1);
	free(msg);
	cr_expect_eq(set->npending, 2);
	/* ... and a request with an id too long to keep is not remembered. */
	id = xmalloc(FAULT_KEEP_MAX + 4);
	memset(id, '7', FAULT_KEEP_MAX + 1);
	id[FAULT_KEEP_MAX + 1] = '\0';
	xasprintf(&msg, CALL("%s", "t"), id);
	cr_expect_eq(fault_rule_of(set, DIR_C2S, msg, 0), 1);
	cr_expect_eq(set->npending, 2);
	free(msg);
	xasprintf(&msg, RESULT("%s"), id);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, msg, 0), 0);
	free(msg);
	cr_expect_eq(fault_rule_of(set, DIR_S2C, RESULT("2"), 0), 1);
	free(id);
	free(name);
	fault_set_free(set);
}
