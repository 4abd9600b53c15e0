/*
 * replay --before: a shell command run before the replay starts, to put
 * a stateful server's files back as they were when the session was
 * recorded.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/*
 * Run cmd with /bin/sh -c, its stdout sent to our stderr (our stdout may
 * be the report) and its stdin from /dev/null, and wait for it; -1 with
 * *cause naming the command and how it ended unless it exited with 0.
 */
int
before_run(const char *cmd, char **cause)
{
	pid_t	pid;
	int	status, fd;

	log_info("replay: running --before %s", cmd);
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1) {
		xasprintf(cause, "--before '%s': cannot start it: %s", cmd,
		    strerror(errno));
		return -1;
	}
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		if ((fd = open("/dev/null", O_RDONLY)) != -1) {
			dup2(fd, STDIN_FILENO);
			if (fd != STDIN_FILENO)
				close(fd);
		}
		if (dup2(STDERR_FILENO, STDOUT_FILENO) == -1)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR) {
			xasprintf(cause, "--before '%s': cannot wait for it: "
			    "%s", cmd, strerror(errno));
			return -1;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		xasprintf(cause, "--before '%s' exited with status %d, so the "
		    "replay was not started (its output, if any, is above); "
		    "fix the command and replay again", cmd,
		    WEXITSTATUS(status));
	else
		xasprintf(cause, "--before '%s' was killed by signal %d (%s), "
		    "so the replay was not started; fix the command and "
		    "replay again", cmd, WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	return -1;
}
