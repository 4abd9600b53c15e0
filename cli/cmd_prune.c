/* mcpreel prune and rm: delete recorded sessions and reclaim their space. */

#include <sys/types.h>

#include <errno.h>
#include <signal.h>

#include "cli.h"

/*
 * Whether process pid exists (a recorder still running).  EPERM: it
 * exists, as another user's.
 */
int
prune_pid_alive(int64_t pid)
{
	if (pid <= 0 || (int64_t)(pid_t)pid != pid)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}
