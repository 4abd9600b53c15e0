/*
 * What mdisk.c (building the mock's index on disk) and mfind.c (finding
 * and loading from it) share.
 */
#ifndef MCPREEL_MDISK_INT_H
#define MCPREEL_MDISK_INT_H

#include <sqlite3.h>

#include "replay.h"

#define MDISK_STR1(x)	#x
#define MDISK_STR(x)	MDISK_STR1(x)

/*
 * Parsed messages kept for the next reads: a request and its answer of
 * the play just begun and of the one before, so an exchange repeated
 * (the last of its key) is parsed once.  At most this many messages, of
 * at most the record cap each, are held.
 */
#define MDISK_CACHED	4

/* A parsed message kept, and its number. */
struct mdisk_cached {
	size_t		 msg;
	json_t		*v;		/* NULL: empty */
};

struct mdisk {
	sqlite3		*db;		/* temporary, on disk */
	int		 strict;	/* demand the recorded order */
	struct diff_rules rules;	/* ignores left out of keys (owned) */
	int64_t		 nmsg;		/* messages added */
	int64_t		 n;		/* entries */
	int64_t		 next;		/* strict: the next entry */
	size_t		 nprelude;
	struct idmap	*pending;	/* building: requests unanswered, by
					   direction and id */
	json_t		*shape_of;	/* building: redacted shape -> index */
	int64_t		*shapes;	/* per redacted shape, its first
					   entry (few: one per shape) */
	size_t		 nshapes;
	int		 shapes_capped;
	/* Building. */
	sqlite3_stmt	*add, *add_raw, *w_entry, *w_item;
	/* Serving (mfind.c). */
	sqlite3_stmt	*f_key, *f_rank, *f_used, *f_entry, *f_items;
	sqlite3_stmt	*f_msg, *f_bykey, *f_byshape, *f_method, *f_methods;
	sqlite3_stmt	*f_trunc, *f_unanswered, *f_haskey;
	struct mdisk_cached cache[MDISK_CACHED];
	size_t		 cache_next;	/* the slot to fill next */
};

sqlite3_stmt	*mdisk_prepare(struct mdisk *, const char *);
void		 mdisk_exec(struct mdisk *, sqlite3_stmt *);
void		 mdisk_bind_text(sqlite3_stmt *, int, const char *);
void		 mfind_prepare(struct mdisk *);
void		 mfind_finalize(struct mdisk *);

#endif
