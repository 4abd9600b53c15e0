/*
 * A slow disk for the tests: preloaded (LD_PRELOAD), it makes every
 * fsync(2) and fdatasync(2) of the process wait SLOW_SYNC_MS first
 * (150 ms unless set), as a busy or networked disk's syncs may.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static void
slow_sync_wait(void)
{
	const char	*v = getenv("SLOW_SYNC_MS");

	usleep((useconds_t)(v != NULL ? atoi(v) : 150) * 1000);
}

int
fsync(int fd)
{
	static int	(*real)(int);

	if (real == NULL)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	slow_sync_wait();
	return real(fd);
}

int
fdatasync(int fd)
{
	static int	(*real)(int);

	if (real == NULL)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	slow_sync_wait();
	return real(fd);
}
