/*
 * check/jload.c against jansson: on any input the fast reader either
 * gives up or builds the tree json_loadb() builds (the same text when
 * dumped in member order, the same type).  A difference would make a
 * finding depend on which reader read a message: abort.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "check_int.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t	*a, *b;
	char	*ta, *tb;

	if ((a = jload(data, size)) == NULL)
		return 0;
	b = json_loadb((const char *)data, size, JSON_DECODE_ANY |
	    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	if (b == NULL || json_typeof(a) != json_typeof(b))
		abort();
	ta = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
	tb = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);
	if (ta == NULL || tb == NULL || strcmp(ta, tb) != 0)
		abort();
	free(ta);
	free(tb);
	json_decref(a);
	json_decref(b);
	return 0;
}
