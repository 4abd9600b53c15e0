/*
 * What jsonschema.c (compiling) and jsvalid.c (applying) share: a schema
 * compiled into nodes, one per schema object, each keyword read once and
 * checked, subschemas and $ref targets as pointers to other nodes (a $ref
 * cycle is a cycle of pointers; the schema owns every node in one list).
 */
#ifndef MCPREEL_JSONSCHEMA_INT_H
#define MCPREEL_JSONSCHEMA_INT_H

#include "check.h"

/* Bits of jsnode.types, one per JSON Schema type. */
#define JST_NULL	0x01
#define JST_BOOLEAN	0x02
#define JST_OBJECT	0x04
#define JST_ARRAY	0x08
#define JST_NUMBER	0x10
#define JST_STRING	0x20
#define JST_INTEGER	0x40

struct jsnode;

/* A name and the subschema for it (properties, dependentSchemas). */
struct jsnamed {
	const char	*name;		/* the schema's key (borrowed) */
	struct jsnode	*node;
};

/* patternProperties: a regex (NULL: unsupported, ignored) and its schema. */
struct jspattern {
	const char	*src;
	struct jsre	*re;
	struct jsnode	*node;
};

/* dependentRequired and array-form dependencies. */
struct jsdepreq {
	const char	*name;
	const char	**req;
	size_t		 nreq;
};

/* A node list (allOf, anyOf, oneOf, prefixItems). */
struct jslist {
	struct jsnode	**v;
	size_t		  n;
};

struct jsnode {
	char		*path;		/* "#/properties/a" (JSON Pointer) */
	int		 boolean;	/* -1: an object; 0 false; 1 true */

	unsigned int	 types;		/* JST_*; 0 when no "type" */
	const json_t	*enumv;		/* an array */
	const json_t	*constv;
	int		 has_const;

	struct jsnamed	*props;		/* sorted by name */
	size_t		 nprops;
	const char	**required;
	size_t		 nrequired;
	struct jsnode	*additional;	/* additionalProperties */
	struct jspattern *patterns;
	size_t		 npatterns;
	struct jsnode	*propnames;
	int64_t		 min_props, max_props;	/* -1: absent */
	struct jsdepreq	*depreq;
	size_t		 ndepreq;
	struct jsnamed	*depschema;
	size_t		 ndepschema;

	struct jslist	 prefix;	/* prefixItems, or items as an array */
	int		 has_prefix;
	struct jsnode	*items;		/* items after the prefix */
	struct jsnode	*contains;
	int64_t		 min_contains, max_contains;	/* -1: absent */
	int64_t		 min_items, max_items;
	int		 unique;

	int64_t		 min_len, max_len;
	struct jsre	*pattern;	/* NULL: none, or unsupported */
	const char	*pattern_src;
	const char	*format;	/* asserted formats only */

	/* Number bounds (NULL: absent), borrowed from the schema. */
	const json_t	*minimum, *maximum, *xminimum, *xmaximum;
	const json_t	*multiple;

	struct jslist	 all, any, one;
	struct jsnode	*not;
	struct jsnode	*if_, *then_, *else_;
	struct jsnode	*ref;
	const char	*ref_src;	/* the $ref as written */
	const json_t	*ref_target;	/* until the target is compiled */
	int		 no_additional;	/* additionalProperties skipped: a
					   patternProperties regex is
					   unsupported */
};

struct jschema {
	struct jsnode	**nodes;	/* every node, for jschema_free */
	size_t		  nnodes, nodecap;
	struct jsnode	 *root;
	json_t		 *doc;		/* our reference to the schema */
	enum jschema_draft draft;
	int		  flags;
	char		**notes;
	size_t		  nnotes, notes_dropped;
};

/* Notes kept per schema; more are counted in one last note. */
#define JSCHEMA_MAX_NOTES	64

/* jsvalid.c */
int		 jsvalid_run(const struct jschema *, const json_t *,
		     jschema_error_cb, void *);

#endif
