/*
 * The id map: how a response finds its request.  The map grows and deletes
 * by shifting probe runs back, so the big test mixes puts and takes until
 * it has grown many times and every run has been cut somewhere.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "core.h"
#include "unit.h"

#define IDMAP_MANY	100000

/* Write the key used for number i into buf; returns its length. */
static size_t
idmap_test_key(char *buf, size_t size, int i)
{
	int	n;

	n = snprintf(buf, size, "0\"req-%d\"", i);
	cr_assert(n > 0 && (size_t)n < size);
	return (size_t)n;
}

/* A key that was put comes back once, with its value and text. */
Test(idmap, put_take, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m = idmap_new();
	int64_t		 v = 0;
	char		*text = NULL;

	cr_assert_eq(idmap_count(m), 0);
	idmap_put(m, "0 7", 3, 42, "tools/call");
	idmap_put(m, "1 7", 3, 43, "sampling/createMessage");
	cr_assert_eq(idmap_count(m), 2);

	cr_assert_eq(idmap_take(m, "0 7", 3, &v, &text), 0);
	cr_assert_eq(v, 42);
	cr_assert_str_eq(text, "tools/call");
	free(text);
	cr_assert_eq(idmap_count(m), 1);

	/* Gone once taken. */
	cr_assert_eq(idmap_take(m, "0 7", 3, &v, &text), -1);
	cr_assert_eq(idmap_count(m), 1);

	cr_assert_eq(idmap_take(m, "1 7", 3, &v, NULL), 0);
	cr_assert_eq(v, 43);
	cr_assert_eq(idmap_count(m), 0);
	idmap_free(m);
}

/* Putting a key again replaces its value and text, not adds a second. */
Test(idmap, replace, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m = idmap_new();
	int64_t		 v = 0;
	char		*text = NULL;

	idmap_put(m, "k", 1, 1, "first");
	idmap_put(m, "k", 1, 2, "second");
	idmap_put(m, "k", 1, 3, NULL);
	idmap_put(m, "k", 1, 4, "fourth");
	cr_assert_eq(idmap_count(m), 1);
	cr_assert_eq(idmap_take(m, "k", 1, &v, &text), 0);
	cr_assert_eq(v, 4);
	cr_assert_str_eq(text, "fourth");
	free(text);
	cr_assert_eq(idmap_count(m), 0);

	/* A NULL text comes back NULL. */
	idmap_put(m, "k", 1, 5, NULL);
	text = (char *)"not touched";
	cr_assert_eq(idmap_take(m, "k", 1, &v, &text), 0);
	cr_assert_null(text);
	cr_assert_eq(v, 5);
	idmap_free(m);
}

/* Taking what is not there fails and changes nothing. */
Test(idmap, take_missing, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m = idmap_new();
	int64_t		 v = -7;
	char		*text = NULL;

	cr_assert_eq(idmap_take(m, "nothing", 7, &v, &text), -1);
	idmap_put(m, "abc", 3, 1, "x");
	/* Prefixes and extensions of a key are other keys. */
	cr_assert_eq(idmap_take(m, "ab", 2, &v, &text), -1);
	cr_assert_eq(idmap_take(m, "abcd", 4, &v, &text), -1);
	cr_assert_eq(idmap_take(m, "", 0, &v, &text), -1);
	cr_assert_eq(v, -7);
	cr_assert_null(text);
	cr_assert_eq(idmap_count(m), 1);
	idmap_free(m);
}

/* Keys are bytes: NULs inside them count, and the empty key is a key. */
Test(idmap, binary_keys, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m = idmap_new();
	int64_t		 v = 0;

	idmap_put(m, "a\0b", 3, 1, NULL);
	idmap_put(m, "a\0c", 3, 2, NULL);
	idmap_put(m, "", 0, 3, NULL);
	cr_assert_eq(idmap_count(m), 3);
	cr_assert_eq(idmap_take(m, "a\0c", 3, &v, NULL), 0);
	cr_assert_eq(v, 2);
	cr_assert_eq(idmap_take(m, "a", 1, &v, NULL), -1);
	cr_assert_eq(idmap_take(m, "", 0, &v, NULL), 0);
	cr_assert_eq(v, 3);
	cr_assert_eq(idmap_take(m, "a\0b", 3, &v, NULL), 0);
	cr_assert_eq(v, 1);
	cr_assert_eq(idmap_count(m), 0);
	idmap_free(m);
}

/*
 * Many keys with takes interleaved: after every put of i, take i / 2 when
 * i is odd, so holes open all over the probe runs while the map grows.
 * Then every key still present must be found, and every key taken not.
 */
Test(idmap, many_keys, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m = idmap_new();
	unsigned char	*taken = calloc(IDMAP_MANY, 1);
	char		 key[64], name[32], *text;
	size_t		 klen, expect = 0;
	int64_t		 v;
	int		 i;

	cr_assert_not_null(taken);
	for (i = 0; i < IDMAP_MANY; i++) {
		klen = idmap_test_key(key, sizeof key, i);
		snprintf(name, sizeof name, "m%d", i);
		idmap_put(m, key, klen, i, name);
		expect++;
		if (i % 2 == 1) {
			klen = idmap_test_key(key, sizeof key, i / 2);
			cr_assert_eq(idmap_take(m, key, klen, &v, &text), 0,
			    "key %d lost after put %d", i / 2, i);
			cr_assert_eq(v, i / 2);
			snprintf(name, sizeof name, "m%d", i / 2);
			cr_assert_str_eq(text, name);
			free(text);
			taken[i / 2] = 1;
			expect--;
		}
		cr_assert_eq(idmap_count(m), expect);
	}
	cr_assert_eq(expect, IDMAP_MANY / 2);

	/* Everything left is there once; everything taken is gone. */
	for (i = 0; i < IDMAP_MANY; i++) {
		klen = idmap_test_key(key, sizeof key, i);
		if (taken[i]) {
			cr_assert_eq(idmap_take(m, key, klen, &v, NULL), -1,
			    "key %d came back", i);
			continue;
		}
		cr_assert_eq(idmap_take(m, key, klen, &v, NULL), 0,
		    "key %d missing", i);
		cr_assert_eq(v, i);
		expect--;
		cr_assert_eq(idmap_count(m), expect);
	}
	cr_assert_eq(idmap_count(m), 0);

	/* Emptied, it still works. */
	idmap_put(m, "again", 5, 9, "x");
	cr_assert_eq(idmap_take(m, "again", 5, &v, NULL), 0);
	cr_assert_eq(v, 9);
	free(taken);
	idmap_free(m);
}

/*
 * Keys that land in the same slots: with few slots, many keys share probe
 * runs that wrap around the end of the table, and removing from the middle
 * of a wrapped run must keep the rest reachable.
 */
Test(idmap, wrapped_runs, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m;
	char		 key[64];
	size_t		 klen;
	int64_t		 v;
	int		 round, i, j, removed;

	for (round = 0; round < 200; round++) {
		m = idmap_new();
		removed = 0;
		/* Up to just under the first growth (48 of 64 slots). */
		for (i = 0; i < 47; i++) {
			klen = idmap_test_key(key, sizeof key, round * 47 + i);
			idmap_put(m, key, klen, i, NULL);
		}
		for (i = round % 47; i < 47; i += 3) {
			klen = idmap_test_key(key, sizeof key, round * 47 + i);
			cr_assert_eq(idmap_take(m, key, klen, &v, NULL), 0);
			cr_assert_eq(v, i);
			removed++;
			for (j = 0; j < 47; j++) {
				if (j >= round % 47 && j <= i &&
				    (j - round % 47) % 3 == 0)
					continue;
				klen = idmap_test_key(key, sizeof key,
				    round * 47 + j);
				/* Present: put again with the same value. */
				idmap_put(m, key, klen, j, NULL);
			}
			cr_assert_eq(idmap_count(m), (size_t)(47 - removed),
			    "a key became unreachable and was put twice");
		}
		for (i = 0; i < 47; i++) {
			klen = idmap_test_key(key, sizeof key, round * 47 + i);
			if (i >= round % 47 && (i - round % 47) % 3 == 0)
				cr_assert_eq(idmap_take(m, key, klen, &v,
				    NULL), -1);
			else {
				cr_assert_eq(idmap_take(m, key, klen, &v,
				    NULL), 0);
				cr_assert_eq(v, i);
			}
		}
		cr_assert_eq(idmap_count(m), 0);
		idmap_free(m);
	}
}

/* Keys chosen against an unkeyed hash: each collides in the low bits. */
#define IDMAP_HOSTILE_KEYS	1500
#define IDMAP_HOSTILE_BITS	11	/* 2048 slots hold 1500 keys */

/* FNV-1a with a final mix: the unkeyed hash an attacker could aim at (the
   map used it once). */
static uint64_t
idmap_test_fnv(const char *p, size_t len)
{
	uint64_t	h = 1469598103934665603ULL;
	size_t		i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/*
 * Ids that all share one slot under an unkeyed hash cost a few probes
 * each, not one per id already in the map: the hash is keyed per process,
 * so a recording cannot aim its ids at one probe run.  Counts probes, not
 * time.
 */
Test(idmap, hostile_keys_bounded_probes, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m = idmap_new();
	char		(*keys)[32];
	uint64_t	 mask = (1ULL << IDMAP_HOSTILE_BITS) - 1, probes;
	int64_t		 v;
	size_t		 n = 0, len;
	unsigned long	 c = 0;

	keys = calloc(IDMAP_HOSTILE_KEYS, sizeof *keys);
	cr_assert_not_null(keys);
	while (n < IDMAP_HOSTILE_KEYS) {
		len = (size_t)snprintf(keys[n], sizeof keys[n], "0%lu", c++);
		if ((idmap_test_fnv(keys[n], len) & mask) == 0)
			n++;
	}
	for (n = 0; n < IDMAP_HOSTILE_KEYS; n++)
		idmap_put(m, keys[n], strlen(keys[n]), (int64_t)n, NULL);
	for (n = 0; n < IDMAP_HOSTILE_KEYS; n++) {
		cr_assert_eq(idmap_get(m, keys[n], strlen(keys[n]), &v), 0);
		cr_assert_eq(v, (int64_t)n);
	}
	probes = idmap_probes(m);
	printf("idmap: %d colliding keys put and found in %llu probes\n",
	    IDMAP_HOSTILE_KEYS, (unsigned long long)probes);
	/* Random slots cost a few probes per key at a load of 3/4 (about
	   10 000 here); colliding, about n*n/2 each way (over two million). */
	cr_assert_lt(probes, (uint64_t)IDMAP_HOSTILE_KEYS * 32,
	    "%llu probes for %d keys", (unsigned long long)probes,
	    IDMAP_HOSTILE_KEYS);
	idmap_free(m);
	free(keys);
}

/*
 * keep_newest keeps the entries with the greatest values and frees the
 * rest; what is kept is found as before, and the map takes puts again.
 */
Test(idmap, keep_newest, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m = idmap_new();
	char		 key[64], *text = NULL;
	size_t		 len;
	int64_t		 v = 0;
	int		 i;

	for (i = 0; i < 1000; i++) {
		len = idmap_test_key(key, sizeof key, i);
		idmap_put(m, key, len, i, "tools/call");
	}
	cr_assert_eq(idmap_keep_newest(m, 2000), 0, "under the bound: kept");
	cr_assert_eq(idmap_keep_newest(m, 300), 700);
	cr_assert_eq(idmap_count(m), 300);
	for (i = 0; i < 1000; i++) {
		len = idmap_test_key(key, sizeof key, i);
		if (i < 700)
			cr_assert_eq(idmap_get(m, key, len, &v), -1,
			    "%d is among the oldest: gone", i);
		else {
			cr_assert_eq(idmap_get(m, key, len, &v), 0,
			    "%d is among the newest: kept", i);
			cr_assert_eq(v, i);
		}
	}
	len = idmap_test_key(key, sizeof key, 999);
	cr_assert_eq(idmap_take(m, key, len, &v, &text), 0);
	cr_assert_str_eq(text, "tools/call");
	free(text);
	idmap_put(m, "0 new", 5, 5000, NULL);
	cr_assert_eq(idmap_count(m), 300);
	cr_assert_eq(idmap_keep_newest(m, 0), 300, "keep 0: empty");
	cr_assert_eq(idmap_count(m), 0);
	cr_assert_eq(idmap_get(m, "0 new", 5, &v), -1);
	idmap_free(m);
}

/* The map counts the bytes of its keys and texts as they come and go. */
Test(idmap, bytes, .timeout = UNIT_TIMEOUT)
{
	struct idmap	*m = idmap_new();
	int64_t		 v;
	char		*text = NULL;

	cr_assert_eq(idmap_bytes(m), 0);
	idmap_put(m, "0 1", 3, 1, "tools/call");
	cr_assert_eq(idmap_bytes(m), 3 + 11);
	idmap_put(m, "0 1", 3, 1, "ping");
	cr_assert_eq(idmap_bytes(m), 3 + 5, "a replaced text is counted anew");
	idmap_put(m, "0 2", 3, 2, NULL);
	cr_assert_eq(idmap_bytes(m), 3 + 5 + 3);
	cr_assert_eq(idmap_take(m, "0 1", 3, &v, &text), 0);
	free(text);
	cr_assert_eq(idmap_bytes(m), 3);
	cr_assert_eq(idmap_keep_newest(m, 0), 1);
	cr_assert_eq(idmap_bytes(m), 0);
	idmap_free(m);
}
