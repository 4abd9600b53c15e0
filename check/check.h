/*
 * check: what `mcpreel check` knows about messages.  Everything here is
 * pure: no I/O, no globals, no logging; a caller gets results and
 * readable sentences back and decides what to print.
 *
 * A JSON Schema validator (draft-07 and 2020-12, the keywords tool
 * schemas use; docs/jsonschema.md lists them) for a tool's inputSchema and
 * outputSchema: jsonschema.c compiles a schema (jskeyword.c reads its
 * keywords), jsvalid.c applies it to a value (jsreport.c counts its work
 * and says its errors, jsvalue.c compares and quotes values), jsre.c is its regex matcher (jsparse.c reads patterns),
 * jsfmt.c its "format" checks; they share jsonschema_int.h.
 */
#ifndef MCPREEL_CHECK_H
#define MCPREEL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core.h"

/*
 * How deep schemas and the evaluation of a value against one may nest:
 * subschemas within subschemas at compile time, nested evaluations (a
 * subschema, a $ref, an item) at validation time.  Tool arguments are
 * shallow; the bound keeps the C stack used well under 1 MiB even under
 * ASan, and stops a $ref cycle that never goes deeper into the value
 * ({"anyOf": [{"$ref": "#"}]}) with an error instead of a crash.
 */
#define JSCHEMA_MAX_DEPTH	512
/*
 * The most work one validation may do (a subschema applied, a property
 * or item visited, 16 regex steps, a value compared): beyond it the value
 * is reported as too costly to check, so a schema built to be
 * exponential (anyOf within anyOf) or a huge value cannot hang check.
 * A real tool call needs a few thousand.
 */
#define JSCHEMA_MAX_STEPS	1000000
/*
 * Regex thread steps per step of JSCHEMA_MAX_STEPS: one is a few
 * instructions, far cheaper than applying a subschema, and a plain
 * pattern over a 1 MiB argument (base64 data: two threads a character)
 * must not be "too costly".
 */
#define JSRE_STEPS_PER_UNIT	16
/*
 * Errors reported per validation; the rest are counted in one last
 * "and N more errors", so a huge wrong value cannot flood the caller.
 */
#define JSCHEMA_MAX_ERRORS	100
/*
 * The largest matcher a "pattern" may compile to (instructions, after
 * counted repetitions are expanded); a larger one is unsupported, so
 * ignored with a note, which bounds the memory and the time per step.
 */
#define JSCHEMA_RE_MAX_INSNS	4096

/* jschema_compile() flags. */
#define JSCHEMA_DRAFT07		0x1	/* no $schema: read as draft-07, not
					   2020-12 */
#define JSCHEMA_FORMAT_ASSERT	0x2	/* "format" is an assertion, not only
					   an annotation */

/* Which dialect a schema was read as. */
enum jschema_draft {
	JSCHEMA_D07,		/* draft-04, -06, -07 */
	JSCHEMA_D2020,		/* 2019-09, 2020-12 */
	JSCHEMA_D_MAX
};

struct jschema;
struct jsre;

/* What one validation cost and whether it stopped short (jsvalid.c). */
struct jschema_run {
	uint64_t	steps;		/* work done, in JSCHEMA_MAX_STEPS units */
	int		stopped;	/* 0; JSCHEMA_STOP_COSTLY or _DEEP */
};
#define JSCHEMA_STOP_COSTLY	1	/* JSCHEMA_MAX_STEPS reached */
#define JSCHEMA_STOP_DEEP	2	/* JSCHEMA_MAX_DEPTH reached */

/* Called once per error: where in the value, where in the schema, what. */
typedef void	(*jschema_error_cb)(void *, const char *, const char *,
		    const char *);

/* jsonschema.c */
struct jschema	*jschema_compile(const json_t *, int, char **);
int		 jschema_validate(const struct jschema *, const json_t *,
		     jschema_error_cb, void *);
int		 jschema_validate_run(const struct jschema *, const json_t *,
		     jschema_error_cb, void *, struct jschema_run *);
void		 jschema_free(struct jschema *);
size_t		 jschema_size(const struct jschema *);
enum jschema_draft jschema_draft(const struct jschema *);
size_t		 jschema_nnotes(const struct jschema *);
const char	*jschema_note(const struct jschema *, size_t);

/* jsre.c: the ECMA-262 subset "pattern" uses, on code points. */
struct jsre	*jsre_compile(const char *, size_t, char **);
int		 jsre_match(const struct jsre *, const char *, size_t,
		     uint64_t *, uint64_t);
void		 jsre_free(struct jsre *);

/* jsfmt.c */
int		 jsfmt_known(const char *);
int		 jsfmt_check(const char *, const char *, size_t);

#endif
