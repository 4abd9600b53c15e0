/* Internals shared by the files of store/; nothing outside includes it. */
#ifndef MCPREEL_STORE_INT_H
#define MCPREEL_STORE_INT_H

#include <sqlite3.h>

struct store {
	sqlite3	*db;
	char	*path;
};

#endif
