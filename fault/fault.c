/*
 * A set of fault rules: built from --fault texts and --faults files,
 * asked for a decision on each message, its rules replaced on SIGHUP
 * while what it remembers (requests, the PRNG) stays.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_int.h"

/* A new empty set; seed is --seed (the same seed: the same draws). */
struct fault_set *
fault_set_new(uint64_t seed)
{
	struct fault_set	*set;

	set = xcalloc(1, sizeof *set);
	fault_prng_seed(&set->prng, seed);
	set->pending = idmap_new();
	TAILQ_INIT(&set->pends);
	return set;
}

/* Free the rules of a set. */
static void
fault_set_free_rules(struct fault_set *set)
{
	size_t	i;

	for (i = 0; i < set->nrules; i++)
		fault_parse_free(set->rules[i]);
	free(set->rules);
	set->rules = NULL;
	set->nrules = 0;
}

/* Free a set, its rules and what it remembers. */
void
fault_set_free(struct fault_set *set)
{
	if (set == NULL)
		return;
	fault_set_free_rules(set);
	fault_match_clear(set);
	idmap_free(set->pending);
	free(set);
}

/* Append parsed rules to a set, which has room (checked by the caller). */
static void
fault_set_append(struct fault_set *set, struct fault_rule **rules, size_t n)
{
	set->rules = xreallocarray(set->rules, set->nrules + n,
	    sizeof *set->rules);
	memcpy(set->rules + set->nrules, rules, n * sizeof *rules);
	set->nrules += n;
}

/* Add one rule from its text form; -1 with *cause on a bad rule. */
int
fault_set_add_text(struct fault_set *set, const char *text, char **cause)
{
	struct fault_rule	*r;
	char			*why = NULL, *q;

	q = fault_table_quote(text);
	if (set->nrules >= FAULT_RULES_MAX) {
		xasprintf(cause, "fault rule `%s`: too many rules (the most "
		    "is %d)", q, FAULT_RULES_MAX);
		free(q);
		return -1;
	}
	if ((r = fault_parse_text(text, &why)) == NULL) {
		xasprintf(cause, "fault rule `%s`: %s", q, why);
		free(why);
		free(q);
		return -1;
	}
	free(q);
	fault_set_append(set, &r, 1);
	return 0;
}

/*
 * Add the rules of a --faults file's contents (name for messages): all
 * of them or, on any error, none.  *seed_out is set to its "seed" when it
 * has one (*has_seed 1, else 0), and left alone when the file is refused.
 */
int
fault_set_add_json(struct fault_set *set, const char *name, const char *buf,
    size_t len, uint64_t *seed_out, int *has_seed, char **cause)
{
	json_t		*root = NULL, *rules, *j;
	json_error_t	 err;
	struct fault_rule **parsed = NULL;
	const char	*key;
	size_t		 i, n = 0;
	char		*why = NULL;
	uint64_t	 seed = 0;
	int		 got_seed = 0;

	*has_seed = 0;
	if (len > FAULT_FILE_MAX) {
		xasprintf(cause, "%s: %zu bytes; a faults file may have at "
		    "most %d", name, len, FAULT_FILE_MAX);
		return -1;
	}
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
	if (root == NULL) {
		xasprintf(cause, "%s: not JSON: line %d column %d: %s", name,
		    err.line, err.column, err.text);
		return -1;
	}
	if (!json_is_object(root)) {
		xasprintf(cause, "%s: expected an object {\"seed\": N, "
		    "\"rules\": [...]}", name);
		goto fail;
	}
	json_object_foreach(root, key, j) {
		if (strcmp(key, "seed") != 0 && strcmp(key, "rules") != 0) {
			xasprintf(cause, "%s: unknown key `%s` (a faults file "
			    "has \"seed\" and \"rules\")", name, key);
			goto fail;
		}
	}
	if ((j = json_object_get(root, "seed")) != NULL) {
		if (!json_is_integer(j) || json_integer_value(j) < 0) {
			xasprintf(cause, "%s: \"seed\": expected a whole "
			    "number from 0", name);
			goto fail;
		}
		seed = (uint64_t)json_integer_value(j);
		got_seed = 1;
	}
	rules = json_object_get(root, "rules");
	if (rules == NULL || !json_is_array(rules)) {
		xasprintf(cause, "%s: \"rules\": expected an array of rule "
		    "objects", name);
		goto fail;
	}
	if (json_array_size(rules) > FAULT_RULES_MAX - set->nrules) {
		xasprintf(cause, "%s: %zu rules; with %zu before them, more "
		    "than the most, %d", name, json_array_size(rules),
		    set->nrules, FAULT_RULES_MAX);
		goto fail;
	}
	parsed = xcalloc(json_array_size(rules) + 1, sizeof *parsed);
	json_array_foreach(rules, i, j) {
		if ((parsed[n] = fault_parse_json(j, &why)) == NULL) {
			xasprintf(cause, "%s: rules[%zu]: %s", name, i, why);
			free(why);
			goto fail;
		}
		n++;
	}
	fault_set_append(set, parsed, n);
	free(parsed);
	json_decref(root);
	if (got_seed) {
		*seed_out = seed;
		*has_seed = 1;
	}
	return 0;

fail:
	for (i = 0; i < n; i++)
		fault_parse_free(parsed[i]);
	free(parsed);
	json_decref(root);
	*has_seed = 0;
	return -1;
}

/* How many rules a set has. */
size_t
fault_set_count(const struct fault_set *set)
{
	return set->nrules;
}

/*
 * -1 with *cause when a rule's action cannot apply over this transport
 * (http-status or close mode=reset over stdio, mode=pipes over HTTP).
 */
int
fault_set_check_transport(const struct fault_set *set, int http,
    char **cause)
{
	const struct fault_rule	*r;
	unsigned		 t;
	size_t			 i;

	t = http ? FAULT_TRANSPORT_HTTP : FAULT_TRANSPORT_STDIO;
	for (i = 0; i < set->nrules; i++) {
		r = set->rules[i];
		if (!(r->adef->transports & t)) {
			xasprintf(cause, "fault rule %zu `%s`: %s works over "
			    "HTTP only, and this is stdio", i + 1, r->text,
			    r->adef->name);
			return -1;
		}
		if (r->adef->action == FAULT_CLOSE && r->v[FS_MODE].set &&
		    !(fault_close_transports[r->v[FS_MODE].i] & t)) {
			xasprintf(cause, "fault rule %zu `%s`: close mode=%s "
			    "works over %s only (over %s: mode=%s)", i + 1,
			    r->text, r->v[FS_MODE].s, http ? "stdio" : "HTTP",
			    http ? "HTTP" : "stdio", http ?
			    "reset or end-stream" : "pipes or kill");
			return -1;
		}
	}
	return 0;
}

/*
 * SIGHUP: dst takes src's rules (their counters from 0) and keeps its own
 * remembered requests and PRNG state; src is freed.
 */
void
fault_set_take_rules(struct fault_set *dst, struct fault_set *src)
{
	size_t	i;

	fault_set_free_rules(dst);
	dst->rules = src->rules;
	dst->nrules = src->nrules;
	for (i = 0; i < dst->nrules; i++)
		dst->rules[i]->seen = 0;
	src->rules = NULL;
	src->nrules = 0;
	fault_match_forget_timeouts(dst);
	fault_set_free(src);
}

/* The canonical text of rule i (0-based), or NULL. */
const char *
fault_set_rule_text(const struct fault_set *set, size_t i)
{
	if (i >= set->nrules)
		return NULL;
	return set->rules[i]->text;
}

/*
 * Decide for one complete message: 1 and *hit filled when a rule applies
 * (the first that selects it), 0 when it goes on as is.
 */
int
fault_decide(struct fault_set *set, enum dir dir, const char *buf,
    size_t len, int http, struct fault_hit *hit)
{
	struct fault_msg	 m;
	size_t			 i;
	int			 rc = 0, timeout = 0;

	memset(hit, 0, sizeof *hit);
	if (set->nrules == 0 ||
	    fault_match_facts(set, dir, buf, len, http, &m) != 0)
		return 0;
	if (m.timeout_rule > 0 && (size_t)m.timeout_rule <= set->nrules &&
	    set->rules[m.timeout_rule - 1]->adef->action == FAULT_TIMEOUT) {
		fault_act_late_answer(set->rules[m.timeout_rule - 1],
		    m.timeout_rule, &m, hit);
		rc = 1;
	}
	for (i = 0; rc == 0 && i < set->nrules; i++) {
		if (!fault_match_rule(set, set->rules[i], &m))
			continue;
		rc = fault_act_apply(set, set->rules[i], (int)i + 1, &m, hit);
	}
	if (m.kind == KIND_REQUEST && m.idlen <= FAULT_KEEP_MAX) {
		/* Answered in the server's place, or never sent: no answer. */
		switch (rc ? hit->action : FAULT_ACTION_MAX) {
		case FAULT_ERROR:
		case FAULT_TOOL_ERROR:
		case FAULT_DROP:
		case FAULT_CLOSE:
		case FAULT_HTTP_STATUS:
			break;
		case FAULT_TIMEOUT:
			timeout = hit->rule;
			/* FALLTHROUGH */
		default:
			fault_match_remember(set, &m, timeout);
			break;
		}
	}
	fault_match_msg_clear(&m);
	return rc;
}

/* Free what a hit holds, and zero it. */
void
fault_hit_clear(struct fault_hit *hit)
{
	free(hit->retry_after);
	free(hit->www_authenticate);
	free(hit->bytes);
	free(hit->detail);
	memset(hit, 0, sizeof *hit);
}

/* An action's name as rules and the store write it. */
const char *
fault_action_name(enum fault_action a)
{
	if ((unsigned)a >= FAULT_ACTION_MAX)
		return NULL;
	return fault_adefs[a].name;
}

/* Where usage puts the help of a line, and how wide it may go. */
#define FAULT_USAGE_COL		26
#define FAULT_USAGE_WIDTH	79

/*
 * Append a line "  LEFT  help" to *b: the help at FAULT_USAGE_COL (on
 * the next line when LEFT reaches it), wrapped at FAULT_USAGE_WIDTH.
 */
static void
fault_usage_line(char **b, const char *left, const char *help)
{
	char		*old;
	const char	*w = help, *sp;
	size_t		 col, n;

	old = *b;
	if (left == NULL || strlen(left) + 4 > FAULT_USAGE_COL)
		xasprintf(b, "%s  %s\n%*s", old, left != NULL ? left : "",
		    FAULT_USAGE_COL, "");
	else
		xasprintf(b, "%s  %-*s", old, FAULT_USAGE_COL - 2, left);
	free(old);
	col = FAULT_USAGE_COL;
	while (*w != '\0') {
		sp = strchr(w, ' ');
		n = sp != NULL ? (size_t)(sp - w) : strlen(w);
		old = *b;
		if (col > FAULT_USAGE_COL && col + 1 + n > FAULT_USAGE_WIDTH) {
			xasprintf(b, "%s\n%*s%.*s", old, FAULT_USAGE_COL, "",
			    (int)n, w);
			col = FAULT_USAGE_COL + n;
		} else {
			xasprintf(b, "%s%s%.*s", old, col > FAULT_USAGE_COL ?
			    " " : "", (int)n, w);
			col += n + (col > FAULT_USAGE_COL ? 1 : 0);
		}
		free(old);
		w += n;
		while (*w == ' ')
			w++;
	}
	old = *b;
	xasprintf(b, "%s\n", old);
	free(old);
}

/*
 * The usage text of rules, for --help, made from the tables once: the
 * selectors, the actions, then the params with the actions taking them.
 */
const char *
fault_usage(void)
{
	static char		*usage;
	const struct fault_key	*k;
	char			*left, *old, *who;
	size_t			 i, a;

	if (usage != NULL)
		return usage;
	usage = xstrdup("Fault rules: --fault '[SELECTOR=VALUE ...] ACTION "
	    "[PARAM=VALUE ...]'\n(values may be quoted \"...\" or "
	    "'...'; the first rule that selects a message\napplies; "
	    "docs/faults.md has the details)\n"
	    "Selectors:\n");
	for (i = 0; i < fault_nkeys; i++) {
		k = &fault_keys[i];
		if (k->part != FP_SELECTOR)
			continue;
		xasprintf(&left, "%s=%s", k->name, k->usage);
		fault_usage_line(&usage, left, k->help);
		free(left);
	}
	old = usage;
	xasprintf(&usage, "%sActions:\n", old);
	free(old);
	for (a = 0; a < FAULT_ACTION_MAX; a++) {
		fault_usage_line(&usage, fault_adefs[a].usage,
		    fault_adefs[a].help);
	}
	old = usage;
	xasprintf(&usage, "%sParameters:\n", old);
	free(old);
	for (i = 0; i < fault_nkeys; i++) {
		k = &fault_keys[i];
		if (k->part != FP_PARAM)
			continue;
		who = NULL;
		for (a = 0; a < FAULT_ACTION_MAX; a++) {
			if (!(k->actions & FAULT_BIT(a)))
				continue;
			old = who;
			xasprintf(&who, "%s%s%s", old != NULL ? old : "",
			    old != NULL ? ", " : "", fault_adefs[a].name);
			free(old);
		}
		xasprintf(&left, "%s=%s", k->name, k->usage);
		xasprintf(&old, "(%s) %s", who, k->help);
		fault_usage_line(&usage, left, old);
		free(old);
		free(left);
		free(who);
	}
	return usage;
}
