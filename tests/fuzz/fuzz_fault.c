/*
 * Fault rules and decisions on whatever libFuzzer makes.  The input is
 * lines; its first byte is a head:
 *
 *	bits 0-2	how many lines after the head are rules (1-8)
 *	bit 3		the messages come over HTTP (else stdio)
 *	bit 4		the first rule line is a --faults file (JSON)
 *
 * then the rule lines (text form, each a --fault), then messages, one a
 * line, client to server and back in turn.  Every rule taken, of either
 * form and however few lines there are, must read back from its
 * canonical text as the same text; every decision must
 * name a rule of the set with its text, keep delays in bounds, and an
 * answer or a mutated message made by the module must be JSON (corrupt
 * invalid-json must not be).  Memory and time are bounded by the rules'
 * and messages' limits; ASan and UBSan watch the rest.
 */

#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "fuzz.h"

/* Most rule lines an input names. */
#define FUZZ_FAULT_RULES	8

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Check that every rule's canonical text reads back as itself. */
static void
fuzz_fault_canon(const uint8_t *data, size_t size, struct fault_set *set)
{
	struct fault_set	*again;
	const char		*text;
	char			*cause = NULL;
	size_t			 i;

	for (i = 0; i < fault_set_count(set); i++) {
		text = fault_set_rule_text(set, i);
		again = fault_set_new(0);
		if (fault_set_add_text(again, text, &cause) != 0)
			fuzz_fail(data, size, "canonical rule `%s` is refused: "
			    "%s", text, cause);
		if (strcmp(fault_set_rule_text(again, 0), text) != 0)
			fuzz_fail(data, size, "canonical rule `%s` reads back "
			    "as `%s`", text, fault_set_rule_text(again, 0));
		fault_set_free(again);
	}
}

/* The rules are all read: check their text, and the transport. */
static void
fuzz_fault_rules(const uint8_t *data, size_t size, struct fault_set *set,
    int http)
{
	char	*cause = NULL;

	fuzz_fault_canon(data, size, set);
	fault_set_check_transport(set, http, &cause);
	free(cause);
}

/* Whether a corrupt hit's rule is of mode invalid-json (the default). */
static int
fuzz_fault_invalid_json(const struct fault_hit *hit)
{
	return strstr(hit->rule_text, "corrupt mode=truncate") == NULL &&
	    strstr(hit->rule_text, "corrupt mode=stray") == NULL;
}

/* Check one decision's hit against the set. */
static void
fuzz_fault_hit(const uint8_t *data, size_t size, struct fault_set *set,
    const struct fault_hit *hit)
{
	if (hit->rule < 1 || (size_t)hit->rule > fault_set_count(set))
		fuzz_fail(data, size, "hit names rule %d of %zu", hit->rule,
		    fault_set_count(set));
	if (hit->rule_text == NULL || strcmp(hit->rule_text,
	    fault_set_rule_text(set, (size_t)hit->rule - 1)) != 0)
		fuzz_fail(data, size, "hit of rule %d has another text",
		    hit->rule);
	if (fault_action_name(hit->action) == NULL || hit->detail == NULL)
		fuzz_fail(data, size, "hit with no action or no detail");
	if (hit->delay_ms < 0 || hit->delay_ms > FAULT_DELAY_MAX_MS)
		fuzz_fail(data, size, "delay %lld ms out of bounds",
		    (long long)hit->delay_ms);
	switch (hit->action) {
	case FAULT_ERROR:
	case FAULT_TOOL_ERROR:
	case FAULT_MUTATE:
		if (hit->bytes == NULL || !scan_is_json(hit->bytes, hit->len))
			fuzz_fail(data, size, "%s made no JSON",
			    fault_action_name(hit->action));
		break;
	case FAULT_CORRUPT:
		if (hit->bytes == NULL || hit->len > 2 * size + 128)
			fuzz_fail(data, size, "corrupt made %zu bytes",
			    hit->len);
		if (fuzz_fault_invalid_json(hit) &&
		    scan_is_json(hit->bytes, hit->len))
			fuzz_fail(data, size, "corrupt invalid-json made JSON: "
			    "%.*s", (int)hit->len, hit->bytes);
		break;
	default:
		if (hit->bytes != NULL)
			fuzz_fail(data, size, "%s made bytes",
			    fault_action_name(hit->action));
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fault_set	*set, *next;
	struct fault_hit	 hit;
	const char		*p, *end, *nl;
	char			*line, *cause;
	size_t			 nrules, i = 0, len;
	uint64_t		 seed;
	int			 http, json, has_seed, checked = 0;

	if (size < 1)
		return 0;
	nrules = (data[0] & 0x7) + 1;
	http = (data[0] >> 3) & 1;
	json = (data[0] >> 4) & 1;
	p = (const char *)data + 1;
	end = (const char *)data + size;
	set = fault_set_new(size);
	for (; p < end; i++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = (size_t)((nl != NULL ? nl : end) - p);
		cause = NULL;
		if (i < nrules) {
			if (i == 0 && json) {
				fault_set_add_json(set, "fuzz", p, len, &seed,
				    &has_seed, &cause);
			} else {
				line = xstrndup(p, len);
				fault_set_add_text(set, line, &cause);
				free(line);
			}
			free(cause);
			if (i == nrules - 1) {
				fuzz_fault_rules(data, size, set, http);
				checked = 1;
			}
		} else {
			if (fault_decide(set, (i - nrules) % 2 == 0 ?
			    DIR_C2S : DIR_S2C, p, len, http, &hit) == 1)
				fuzz_fault_hit(data, size, set, &hit);
			fault_hit_clear(&hit);
		}
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	/* Fewer lines than rules: the rules there are, checked the same. */
	if (!checked)
		fuzz_fault_rules(data, size, set, http);
	/* SIGHUP: the same rules again, taken over; then one more message. */
	next = fault_set_new(0);
	for (i = 0; i < fault_set_count(set); i++) {
		cause = NULL;
		fault_set_add_text(next, fault_set_rule_text(set, i), &cause);
		free(cause);
	}
	fault_set_take_rules(set, next);
	if (fault_decide(set, DIR_S2C, (const char *)data + 1, size - 1, http,
	    &hit) == 1)
		fuzz_fault_hit(data, size, set, &hit);
	fault_hit_clear(&hit);
	fault_set_free(set);
	return 0;
}
