/*
 * Fault rules from text (--fault) and from JSON (--faults FILE): both
 * forms are read word by word against the tables of fault_table.c, and
 * checked the same way.  A bad rule is refused with a message naming the
 * word and what was expected.
 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_int.h"

/* Free one parsed value. */
static void
fault_parse_val_clear(struct fault_val *v)
{
	free(v->s);
	json_decref(v->json);
	jpath_free(v->jp);
	memset(v, 0, sizeof *v);
}

/* Free a rule. */
void
fault_parse_free(struct fault_rule *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < FS_MAX; i++)
		fault_parse_val_clear(&r->v[i]);
	free(r->text);
	free(r);
}

/* The shortest text of d that reads back as d. */
static char *
fault_parse_double(double d)
{
	char	*s;
	int	 prec;

	for (prec = 1; prec <= 17; prec++) {
		xasprintf(&s, "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			return s;
		free(s);
	}
	xasprintf(&s, "%.17g", d);
	return s;
}

/* Whether s is a plain decimal number (no hex, inf, nan, blanks). */
static int
fault_parse_decimal(const char *s)
{
	size_t	i;

	if (s[0] == '\0')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (!isdigit((unsigned char)s[i]) && strchr(".eE+-", s[i]) ==
		    NULL)
			return 0;
	}
	return 1;
}

/*
 * Parse one value for key k into the rule; -1 with *why (no prefix) when
 * it is not what k takes.
 */
static int
fault_parse_value(struct fault_rule *r, const struct fault_key *k,
    const char *value, char **why)
{
	struct fault_val	*v = &r->v[k->slot];
	char			*end = NULL, *q = NULL, *jcause = NULL;
	json_error_t		 jerr;
	json_t			*probe;
	long long		 ll;
	double			 d;
	size_t			 i, len;
	int			 pct;

	if (v->set) {
		xasprintf(why, "`%s` given twice", k->name);
		return -1;
	}
	memset(v, 0, sizeof *v);
	v->key = k;
	switch (k->type) {
	case FV_WORD:
		for (i = 0; k->words[i] != NULL; i++) {
			if (strcmp(k->words[i], value) == 0)
				break;
		}
		if (k->words[i] == NULL) {
			q = fault_table_quote(value);
			xasprintf(why, "`%s=%s`: expected %s", k->name, q,
			    k->usage);
			goto fail;
		}
		v->i = (int64_t)i;
		v->s = xstrdup(value);
		break;
	case FV_GLOB:
	case FV_STRING:
		if (k->type == FV_GLOB && value[0] == '\0') {
			xasprintf(why, "`%s=`: empty; expected %s=%s", k->name,
			    k->name, k->usage);
			goto fail;
		}
		if ((probe = json_string(value)) == NULL) {
			xasprintf(why, "`%s`: the value is not UTF-8 text",
			    k->name);
			goto fail;
		}
		json_decref(probe);
		v->s = xstrdup(value);
		break;
	case FV_INT:
		errno = 0;
		ll = strtoll(value, &end, 10);
		if (value[0] == '\0' || isspace((unsigned char)value[0]) ||
		    value[0] == '+' || *end != '\0' || errno != 0 ||
		    ll < k->min || ll > k->max) {
			q = fault_table_quote(value);
			xasprintf(why, "`%s=%s`: expected a whole number from "
			    "%lld to %lld", k->name, q, (long long)k->min,
			    (long long)k->max);
			goto fail;
		}
		v->i = ll;
		xasprintf(&v->s, "%lld", ll);
		break;
	case FV_PROB:
		len = strlen(value);
		pct = len > 0 && value[len - 1] == '%';
		q = xstrndup(value, pct ? len - 1 : len);
		errno = 0;
		d = fault_parse_decimal(q) ? strtod(q, &end) : -1;
		if (!fault_parse_decimal(q) || *end != '\0' || errno != 0 ||
		    !isfinite(d) || d < 0 || d > (pct ? 100 : 1)) {
			free(q);
			q = fault_table_quote(value);
			xasprintf(why, "`%s=%s`: expected a probability from 0 "
			    "to 1, or a percentage from 0%% to 100%%", k->name,
			    q);
			goto fail;
		}
		free(q);
		q = NULL;
		v->d = pct ? d / 100 : d;
		v->s = fault_parse_double(v->d);
		break;
	case FV_JSON:
		v->json = json_loads(value, JSON_DECODE_ANY |
		    JSON_REJECT_DUPLICATES, &jerr);
		if (v->json == NULL) {
			q = fault_table_quote(value);
			xasprintf(why, "`%s=%s`: not JSON (%s)", k->name, q,
			    jerr.text);
			goto fail;
		}
		v->s = json_dumps(v->json, JSON_COMPACT | JSON_ENCODE_ANY);
		if (v->s == NULL)
			fatalx("fault: cannot write a JSON value");
		break;
	case FV_JPATH:
		if ((v->jp = jpath_compile(value, &jcause)) == NULL) {
			xasprintf(why, "`%s`: %s", k->name, jcause);
			free(jcause);
			goto fail;
		}
		if (jpath_descendants(v->jp) > FAULT_MUTATE_DESCENDANTS) {
			q = fault_table_quote(value);
			xasprintf(why, "`%s=%s`: at most %d `..` steps",
			    k->name, q, FAULT_MUTATE_DESCENDANTS);
			goto fail;
		}
		if (jpath_has_json(v->jp)) {
			q = fault_table_quote(value);
			xasprintf(why, "`%s=%s`: mutate does not step into "
			    "JSON held by strings ({json})", k->name, q);
			goto fail;
		}
		if (jpath_match(v->jp, NULL, 0)) {
			q = fault_table_quote(value);
			xasprintf(why, "`%s=%s` names the whole message: name "
			    "a place in it, such as $.result.tools", k->name,
			    q);
			goto fail;
		}
		v->s = xstrdup(value);
		break;
	default:
		fatalx("fault: key %s has no type", k->name);
	}
	v->set = 1;
	free(q);
	return 0;

fail:
	free(q);
	fault_parse_val_clear(v);
	return -1;
}

/* The name of the (first) key kept in slot. */
static const char *
fault_parse_slot_name(int slot)
{
	size_t	i;

	for (i = 0; i < fault_nkeys; i++) {
		if ((int)fault_keys[i].slot == slot)
			return fault_keys[i].name;
	}
	return "?";
}

/* Whether glob matches at least one of the methods (NULL-terminated). */
static int
fault_parse_glob_any(const char *glob, const char *const *methods)
{
	size_t	i;

	for (i = 0; methods[i] != NULL; i++) {
		if (fault_match_glob(glob, methods[i], strlen(methods[i])))
			return 1;
	}
	return 0;
}

/* What an action applies to, in words, for messages. */
static const char *
fault_parse_applies(const struct fault_adef *a)
{
	if (a->method != NULL)
		return "c2s tools/call requests";
	if (a->kinds == FAULT_BIT(KIND_REQUEST))
		return "c2s requests";
	return "any message";
}

/*
 * Check that the selectors can meet the action and the params go
 * together; work out what the rule can select.  -1 with *why.
 */
static int
fault_parse_check(struct fault_rule *r, char **why)
{
	const struct fault_adef	*a = r->adef;
	const struct fault_val	*v = r->v;
	const char		*named = NULL, *cnt = NULL;
	size_t			 i;
	int			 slot;

	r->dirs = a->default_dirs;
	if (v[FS_DIR].set) {
		r->dirs = FAULT_BIT(v[FS_DIR].i);
		if (!(r->dirs & a->dirs)) {
			xasprintf(why, "%s cannot select dir=%s: it applies to "
			    "%s", a->name, v[FS_DIR].s, fault_parse_applies(a));
			return -1;
		}
	}
	r->kinds = a->kinds;
	if (v[FS_KIND].set) {
		r->kinds = FAULT_BIT(fault_kind_values[v[FS_KIND].i]);
		if (!(r->kinds & a->kinds)) {
			xasprintf(why, "%s cannot select kind=%s: it applies "
			    "to %s", a->name, v[FS_KIND].s,
			    fault_parse_applies(a));
			return -1;
		}
	}
	if (a->method != NULL && v[FS_METHOD].set &&
	    !fault_match_glob(v[FS_METHOD].s, a->method, strlen(a->method))) {
		xasprintf(why, "%s applies to %s, which method=%s does not "
		    "match", a->name, a->method, v[FS_METHOD].s);
		return -1;
	}
	for (i = 0; i < FAULT_NAMES; i++) {
		slot = fault_names[i].slot;
		if (!v[slot].set)
			continue;
		if (named != NULL) {
			xasprintf(why, "%s= and %s= cannot both match: a "
			    "message has one of them", named,
			    fault_parse_slot_name(slot));
			return -1;
		}
		named = fault_parse_slot_name(slot);
		if (v[FS_KIND].set && r->kinds ==
		    FAULT_BIT(KIND_NOTIFICATION)) {
			xasprintf(why, "kind=notification cannot meet %s=: "
			    "notifications carry no %s", named, named);
			return -1;
		}
		r->kinds &= ~FAULT_BIT(KIND_NOTIFICATION);
		if (v[FS_METHOD].set && !fault_parse_glob_any(v[FS_METHOD].s,
		    fault_names[i].methods)) {
			xasprintf(why, "method=%s cannot meet %s=: %s= selects "
			    "%s", v[FS_METHOD].s, named, named,
			    fault_names[i].methods[0]);
			return -1;
		}
		if (a->method != NULL && !fault_parse_glob_any(a->method,
		    fault_names[i].methods)) {
			xasprintf(why, "%s applies to %s; %s= selects %s",
			    a->name, a->method, named,
			    fault_names[i].methods[0]);
			return -1;
		}
	}
	for (slot = FS_FIRST; slot <= FS_AFTER; slot++) {
		if (!v[slot].set)
			continue;
		if (cnt != NULL) {
			xasprintf(why, "%s= and %s= cannot be combined: give "
			    "one counter", cnt, fault_parse_slot_name(slot));
			return -1;
		}
		cnt = fault_parse_slot_name(slot);
	}
	for (i = 0; i < fault_nkeys; i++) {
		if (fault_keys[i].part == FP_PARAM &&
		    (a->required & FAULT_BIT(fault_keys[i].slot)) &&
		    (fault_keys[i].actions & FAULT_BIT(a->action)) &&
		    !v[fault_keys[i].slot].set) {
			xasprintf(why, "%s needs %s=%s (%s)", a->name,
			    fault_keys[i].name, fault_keys[i].usage, a->usage);
			return -1;
		}
	}
	switch (a->action) {
	case FAULT_MUTATE:
		if (v[FS_SET].set && v[FS_REMOVE].set) {
			xasprintf(why, "mutate takes set= or remove=, not both "
			    "(give two rules)");
			return -1;
		}
		if (v[FS_VALUE].set && !v[FS_SET].set) {
			xasprintf(why, "mutate value= goes with set=JSONPATH "
			    "(remove= takes no value)");
			return -1;
		}
		if (!v[FS_SET].set && !v[FS_REMOVE].set) {
			xasprintf(why, "mutate needs set=JSONPATH value=JSON "
			    "or remove=JSONPATH");
			return -1;
		}
		if (v[FS_SET].set && !v[FS_VALUE].set) {
			xasprintf(why, "mutate set=%s needs value=JSON",
			    v[FS_SET].s);
			return -1;
		}
		break;
	case FAULT_HTTP_STATUS:
		if (v[FS_RETRY_AFTER].set && strcmp(v[FS_STATUS].s, "429") !=
		    0 && strcmp(v[FS_STATUS].s, "503") != 0) {
			xasprintf(why, "retry-after= goes with status=429 or "
			    "503, not %s", v[FS_STATUS].s);
			return -1;
		}
		if (v[FS_WWW_AUTHENTICATE].set &&
		    strpbrk(v[FS_WWW_AUTHENTICATE].s, "\r\n") != NULL) {
			xasprintf(why, "www-authenticate= is a header value: "
			    "it cannot hold a line break");
			return -1;
		}
		if (v[FS_WWW_AUTHENTICATE].set &&
		    strcmp(v[FS_STATUS].s, "401") != 0) {
			xasprintf(why, "www-authenticate= goes with "
			    "status=401, not %s", v[FS_STATUS].s);
			return -1;
		}
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Say what is wrong with a key word: name (with a value) at the selector
 * place (adef NULL) or as a param of adef, where the table has no row
 * for it there.
 */
static void
fault_parse_misplaced(const char *name, const struct fault_adef *adef,
    char **why)
{
	const struct fault_key	*k;
	char			*list, *sugg, *q = fault_table_quote(name);

	if (adef == NULL) {
		if ((k = fault_table_key(name, FP_PARAM, NULL, 1)) != NULL &&
		    k->part == FP_PARAM) {
			list = fault_table_takers(name);
			xasprintf(why, "`%s` is a parameter of %s: put it "
			    "after the action", q, list);
			free(list);
		} else if (fault_table_action(name) != NULL) {
			xasprintf(why, "`%s=`: %s is an action and takes no "
			    "value; its parameters follow it (%s ...)", q, q,
			    q);
		} else {
			list = fault_table_list(FP_SELECTOR, NULL);
			sugg = fault_table_suggest(name, NULL);
			xasprintf(why, "unknown selector `%s`%s (selectors: "
			    "%s)", q, sugg, list);
			free(sugg);
			free(list);
		}
		free(q);
		return;
	}
	if (fault_table_key(name, FP_SELECTOR, NULL, 0) != NULL)
		xasprintf(why, "selector `%s` after the action %s: selectors "
		    "come before it", q, adef->name);
	else {
		list = fault_table_list(FP_PARAM, adef);
		sugg = fault_table_suggest(name, adef);
		xasprintf(why, "`%s` is not a parameter of %s%s (%s takes: "
		    "%s)", q, adef->name, sugg, adef->name, list);
		free(sugg);
		free(list);
	}
	free(q);
}

/* Say what is wrong with a bare word (no =) at its place. */
static void
fault_parse_bare(const char *word, const struct fault_adef *adef,
    char **why)
{
	const struct fault_key	*k;
	char			*list, *sugg, *q = fault_table_quote(word);

	if ((k = fault_table_key(word, FP_SELECTOR, adef, 1)) != NULL)
		xasprintf(why, "`%s` needs a value: %s=%s", q, k->name,
		    k->usage);
	else if (adef != NULL && fault_table_action(word) != NULL)
		xasprintf(why, "a second action `%s` after %s: a rule has "
		    "one action (give another rule for it)", q, adef->name);
	else if (adef == NULL) {
		list = fault_table_actions();
		sugg = fault_table_suggest(word, NULL);
		xasprintf(why, "unknown action or selector `%s`%s (actions: "
		    "%s)", q, sugg, list);
		free(sugg);
		free(list);
	} else {
		list = fault_table_list(FP_PARAM, adef);
		sugg = fault_table_suggest(word, adef);
		xasprintf(why, "unknown word `%s` after %s%s (%s takes: %s)",
		    q, adef->name, sugg, adef->name, list);
		free(sugg);
		free(list);
	}
	free(q);
}

/*
 * Take one word of a rule (key NULL: a bare word) at its place: the
 * action, or a selector before it, or a param after it.  -1 with *why.
 */
static int
fault_parse_word(struct fault_rule *r, const char *key, const char *value,
    char **why)
{
	const struct fault_adef	*a;
	const struct fault_key	*k;

	if (key == NULL) {
		if (r->adef == NULL && (a = fault_table_action(value)) !=
		    NULL) {
			r->adef = a;
			return 0;
		}
		fault_parse_bare(value, r->adef, why);
		return -1;
	}
	k = fault_table_key(key, r->adef == NULL ? FP_SELECTOR : FP_PARAM,
	    r->adef, 0);
	if (k == NULL) {
		fault_parse_misplaced(key, r->adef, why);
		return -1;
	}
	return fault_parse_value(r, k, value, why);
}

/* Finish a rule whose words are all read: check it, canonical text. */
static struct fault_rule *
fault_parse_finish(struct fault_rule *r, char **why)
{
	char	*list;

	if (r->adef == NULL) {
		list = fault_table_actions();
		xasprintf(why, "no action (actions: %s)", list);
		free(list);
		goto fail;
	}
	if (fault_parse_check(r, why) != 0)
		goto fail;
	fault_table_canon(r);
	if (strlen(r->text) > FAULT_RULE_TEXT_MAX) {
		xasprintf(why, "the rule is %zu bytes as written back; the "
		    "most is %d", strlen(r->text), FAULT_RULE_TEXT_MAX);
		goto fail;
	}
	return r;

fail:
	fault_parse_free(r);
	return NULL;
}

/*
 * Read one word of text at *p: key (or NULL) and value, unquoted.
 * Returns 1 with a word, 0 at the end, -1 with *why.
 */
static int
fault_parse_next(const char **p, char **key, char **value, char **why)
{
	const char	*s = *p, *start, *eq;
	char		 quote, *out;
	size_t		 n;

	*key = *value = NULL;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '\0') {
		*p = s;
		return 0;
	}
	start = s;
	while (*s != '\0' && *s != '=' && !isspace((unsigned char)*s))
		s++;
	if (*s != '=') {
		*value = xstrndup(start, (size_t)(s - start));
		*p = s;
		return 1;
	}
	eq = s++;
	if (eq == start) {
		n = strcspn(start, " \t\r\n\f\v");
		*value = xstrndup(start, n);
		out = fault_table_quote(*value);
		xasprintf(why, "`%s`: a value with no key before =", out);
		free(out);
		free(*value);
		*value = NULL;
		return -1;
	}
	*key = xstrndup(start, (size_t)(eq - start));
	if (*s != '"' && *s != '\'') {
		start = s;
		while (*s != '\0' && !isspace((unsigned char)*s))
			s++;
		*value = xstrndup(start, (size_t)(s - start));
		*p = s;
		return 1;
	}
	quote = *s++;
	out = *value = xmalloc(strlen(s) + 1);
	for (;;) {
		if (*s == '\0') {
			xasprintf(why, "`%s=%c...`: no closing %c", *key,
			    quote, quote);
			goto fail;
		}
		if (*s == quote)
			break;
		if (*s == '\\' && (s[1] == '"' || s[1] == '\'' ||
		    s[1] == '\\'))
			s++;
		*out++ = *s++;
	}
	*out = '\0';
	s++;
	if (*s != '\0' && !isspace((unsigned char)*s)) {
		xasprintf(why, "`%s=%c...%c`: expected a blank after the "
		    "closing %c", *key, quote, quote, quote);
		goto fail;
	}
	*p = s;
	return 1;

fail:
	free(*key);
	free(*value);
	*key = *value = NULL;
	return -1;
}

/* Parse a rule's text form; NULL with *cause (no prefix) when bad. */
struct fault_rule *
fault_parse_text(const char *text, char **cause)
{
	struct fault_rule	*r;
	const char		*p = text;
	char			*key, *value;
	int			 got;

	if (strlen(text) > FAULT_RULE_TEXT_MAX) {
		xasprintf(cause, "the rule is %zu bytes; the most is %d",
		    strlen(text), FAULT_RULE_TEXT_MAX);
		return NULL;
	}
	r = xcalloc(1, sizeof *r);
	for (;;) {
		got = fault_parse_next(&p, &key, &value, cause);
		if (got < 0)
			goto fail;
		if (got == 0)
			break;
		got = fault_parse_word(r, key, value, cause);
		free(key);
		free(value);
		if (got != 0)
			goto fail;
	}
	return fault_parse_finish(r, cause);

fail:
	fault_parse_free(r);
	return NULL;
}

/*
 * The text form of a JSON member's value for key k, to be read by the
 * same code as the text form; NULL with *why when its JSON type is wrong.
 */
static char *
fault_parse_json_value(const struct fault_key *k, const json_t *j,
    char **why)
{
	char	*s;

	switch (k->type) {
	case FV_INT:
		if (!json_is_integer(j))
			break;
		xasprintf(&s, "%lld", (long long)json_integer_value(j));
		return s;
	case FV_PROB:
		if (json_is_number(j))
			return fault_parse_double(json_number_value(j));
		if (json_is_string(j) && strlen(json_string_value(j)) ==
		    json_string_length(j))
			return xstrdup(json_string_value(j));
		break;
	case FV_JSON:
		s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
		if (s == NULL)
			fatalx("fault: cannot write a JSON value");
		return s;
	case FV_WORD:
		if (json_is_integer(j) && k->slot == FS_STATUS) {
			xasprintf(&s, "%lld", (long long)json_integer_value(j));
			return s;
		}
		/* FALLTHROUGH */
	default:
		if (!json_is_string(j))
			break;
		if (strlen(json_string_value(j)) != json_string_length(j)) {
			xasprintf(why, "`%s`: the string holds a NUL (\\u0000)",
			    k->name);
			return NULL;
		}
		return xstrdup(json_string_value(j));
	}
	xasprintf(why, "`%s`: expected %s, as JSON %s", k->name, k->usage,
	    k->type == FV_INT ? "a whole number" : k->type == FV_PROB ?
	    "a number or a string \"10%\"" : "a string");
	return NULL;
}

/* Parse a rule object of the JSON form; NULL with *cause (no prefix). */
struct fault_rule *
fault_parse_json(const json_t *o, char **cause)
{
	struct fault_rule	*r;
	const struct fault_key	*k;
	const char		*name;
	json_t			*j, *act;
	char			*text, *list, *q;
	int			 rc;

	if (!json_is_object(o)) {
		xasprintf(cause, "a rule is a JSON object {\"action\": ..., "
		    "...}");
		return NULL;
	}
	r = xcalloc(1, sizeof *r);
	act = json_object_get(o, "action");
	if (act == NULL || !json_is_string(act)) {
		list = fault_table_actions();
		xasprintf(cause, "%s \"action\" (one of: %s)", act == NULL ?
		    "no" : "a non-string", list);
		free(list);
		goto fail;
	}
	if ((r->adef = fault_table_action(json_string_value(act))) == NULL) {
		list = fault_table_actions();
		q = fault_table_quote(json_string_value(act));
		text = fault_table_suggest(q, NULL);
		xasprintf(cause, "unknown action `%s`%s (actions: %s)", q,
		    text, list);
		free(text);
		free(q);
		free(list);
		goto fail;
	}
	json_object_foreach((json_t *)o, name, j) {
		if (strcmp(name, "action") == 0)
			continue;
		k = fault_table_key(name, FP_SELECTOR, NULL, 0);
		if (k == NULL)
			k = fault_table_key(name, FP_PARAM, r->adef, 0);
		if (k == NULL) {
			if (fault_table_key(name, FP_PARAM, NULL, 1) == NULL) {
				q = fault_table_quote(name);
				list = fault_table_list(FP_PARAM, r->adef);
				text = fault_table_list(FP_SELECTOR, NULL);
				xasprintf(cause, "unknown key `%s` (selectors: "
				    "%s; %s takes: %s)", q, text,
				    r->adef->name, list);
				free(text);
				free(list);
				free(q);
			} else
				fault_parse_misplaced(name, r->adef, cause);
			goto fail;
		}
		if ((text = fault_parse_json_value(k, j, cause)) == NULL)
			goto fail;
		rc = fault_parse_value(r, k, text, cause);
		free(text);
		if (rc != 0)
			goto fail;
	}
	return fault_parse_finish(r, cause);

fail:
	fault_parse_free(r);
	return NULL;
}
