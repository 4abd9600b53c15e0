/*
 * A slow disk for the tests: preloaded (LD_PRELOAD), it makes every
 * fsync(2) and fdatasync(2) of the process wait SLOW_SYNC_MS first
 * (150 ms unless set), as a busy or networked disk's syncs may.  With
 * SLOW_SYNC_MARK set, the first slowed sync creates that file: a test can
 * tell that the library was loaded and its syncs were slowed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static void
slow_sync_wait(void)
{
	static int	 marked;
	const char	*v = getenv("SLOW_SYNC_MS");
	const char	*mark = getenv("SLOW_SYNC_MARK");
	int		 fd;

	if (mark != NULL && !__atomic_exchange_n(&marked, 1, __ATOMIC_RELAXED) &&
	    (fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) != -1)
		close(fd);
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
