/*
 * chainfloor: the floor of podvisor's ordered-stop step, measured the same
 * way. It starts N stampchildren (mode none, exit delay DELAY_MS) named
 * p0..p(N-1), waits SETTLE_MS, then stops them in reverse order as a
 * supervisor with nothing else to do would: SIGTERM to p(i), waitpid for
 * it, SIGTERM to p(i-1). A step, p(i)'s "exit" stamp to p(i-1)'s "term"
 * stamp, is then the kernel's exit, the parent's wake-up and the signal's
 * delivery, with no supervisor work in between.
 *
 * Usage: chainfloor STAMPCHILD FILE N DELAY_MS SETTLE_MS
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc != 6) {
		fprintf(stderr, "usage: chainfloor STAMPCHILD FILE N DELAY_MS SETTLE_MS\n");
		return 2;
	}
	int n = atoi(argv[3]);
	if (n < 2 || n > 1000) return 2;
	pid_t *pids = calloc((size_t)n, sizeof *pids);
	if (!pids) return 3;
	for (int i = 0; i < n; i++) {
		char name[16];
		snprintf(name, sizeof name, "p%d", i);
		pid_t p = fork();
		if (p < 0) return 3;
		if (p == 0) {
			execl(argv[1], argv[1], argv[2], name, "none", "", argv[4], (char *)NULL);
			_exit(127);
		}
		pids[i] = p;
	}
	long settle = atol(argv[5]);
	struct timespec d = {settle / 1000, (settle % 1000) * 1000000L};
	nanosleep(&d, NULL);
	for (int i = n - 1; i >= 0; i--) {
		kill(pids[i], SIGTERM);
		int st;
		if (waitpid(pids[i], &st, 0) < 0) return 4;
	}
	return 0;
}
