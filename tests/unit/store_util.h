/* store_util.h: what the store's unit tests share (store_util.c). */
#ifndef MCPREEL_TEST_STORE_UTIL_H
#define MCPREEL_TEST_STORE_UTIL_H

#include <stdint.h>

#include <sqlite3.h>

struct writer;

/* The directory of the running test (store_setup makes it). */
extern char	 store_dir[64];

void		 store_setup(void);
void		 store_teardown(void);
char		*store_test_path(const char *);
sqlite3		*store_test_sqlite(const char *);
int64_t		 store_test_int(sqlite3 *, const char *);
struct writer	*store_test_writer(const char *);

#endif
