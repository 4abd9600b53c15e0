/*
 * The rule options replay, diff and mock share: --ignore, --ignore-method,
 * -tool, -prompt and -resource, --for narrowing the --ignore just before,
 * and --rules.
 */

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay.h"

/* The --ignore-* options: the getopt char, the scope key, the name. */
static const struct {
	int		 ch;
	const char	*scope_key;
	const char	*option;
} rules_opts_skips[] = {
	{ 'm',	"method",	"--ignore-method" },
	{ 'T',	"tool",		"--ignore-tool" },
	{ 'P',	"prompt",	"--ignore-prompt" },
	{ 'U',	"resource",	"--ignore-resource" },
};
#define RULES_OPTS_NSKIPS (sizeof rules_opts_skips / sizeof rules_opts_skips[0])

/*
 * Add the --ignore-* option ch with value; 1 when ch is not one, 0 when
 * added, -1 with *cause naming the option when value is bad.
 */
int
rules_opts_skip(struct diff_rules *rules, int ch, const char *value,
    char **cause)
{
	size_t	 i;
	char	*why;

	for (i = 0; i < RULES_OPTS_NSKIPS; i++) {
		if (rules_opts_skips[i].ch == ch)
			break;
	}
	if (i == RULES_OPTS_NSKIPS)
		return 1;
	if (rules_add_skip(rules, rules_opts_skips[i].scope_key, value,
	    rules_opts_skips[i].option, &why) != 0) {
		xasprintf(cause, "%s %s: %s", rules_opts_skips[i].option,
		    value, why);
		free(why);
		return -1;
	}
	return 0;
}

/*
 * --for KEY=GLOB: narrow the last --ignore, which must be the option just
 * before (scopable); -1 with *cause if not or the scope is bad.
 */
int
rules_opts_for(struct diff_rules *rules, int scopable, const char *kv,
    char **cause)
{
	char	*why;

	if (!scopable) {
		xasprintf(cause, "--for narrows the --ignore just before it: "
		    "give --ignore PATH first");
		return -1;
	}
	if (rules_scope_last(rules, kv, &why) != 0) {
		xasprintf(cause, "--for %s: %s", kv, why);
		free(why);
		return -1;
	}
	return 0;
}

/*
 * Take the rule option ch of replay and diff (the getopt chars: 'i'
 * --ignore, 'm' 'T' 'P' 'U' --ignore-*, 'f' --for, 'R' --rules), keeping
 * *scopable (whether a --for may follow) across calls: 0 taken, 1 when
 * ch is none of them, -1 with *cause when its value is bad.
 */
int
rules_opts_take(struct diff_rules *rules, int *scopable, int ch,
    const char *arg, char **cause)
{
	int	was = *scopable;

	/* --for narrows the --ignore (and --for) just before it. */
	if (ch != 'f')
		*scopable = ch == 'i';
	switch (ch) {
	case 'i':
		return rules_add_ignore(rules, arg, cause);
	case 'f':
		return rules_opts_for(rules, was, arg, cause);
	case 'R':
		return rules_load(rules, arg, cause);
	default:
		return rules_opts_skip(rules, ch, arg, cause);
	}
}
