/*
 * stopfloor: the kernel's share of a stop of N for bench/stop.sh. A C
 * supervisor that holds, for each child, what podvisor's contract gives it:
 * a process group of its own, stdin on /dev/null, stdout and stderr on two
 * pipes it reads to the end. On SIGTERM it sends each group SIGTERM and then
 * SIGCONT (a stopped child must not wait for the kill, FAULTS B17), reads
 * every pipe to EOF, reaps every child and exits. Nothing else: no log
 * lines, no state. What podvisor takes beyond this row is podvisor's own;
 * what this row takes beyond `tini -g` (one kill for one group, no pipes)
 * is the cost of those per-process kernel objects.
 *
 *   stopfloor [-P] [-C] N CMD [ARG...]
 *
 * Each child runs CMD with its ARGs, an ARG "{}" replaced by "s<i>".
 * -P: no pipes (stdout and stderr inherited); -C: no SIGCONT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int pipes = 1, cont = 1, a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "-P") == 0) pipes = 0;
		else if (strcmp(argv[a], "-C") == 0) cont = 0;
		else break;
	}
	if (argc - a < 2) {
		fprintf(stderr, "usage: stopfloor [-P] [-C] N CMD [ARG...]\n");
		return 2;
	}
	int n = atoi(argv[a]);
	char **cmd = argv + a + 1;
	int nargs = argc - a - 1;
	pid_t *pids = calloc(n, sizeof *pids);
	char **args = calloc(nargs + 1, sizeof *args);
	char name[32];
	if (!pids || !args) return 3;

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0) return 3;
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = sfd};
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

	int open_fds = 0;
	for (int i = 0; i < n; i++) {
		int out[2] = {-1, -1}, err[2] = {-1, -1};
		if (pipes && (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)) {
			perror("stopfloor: pipe");
			return 3;
		}
		snprintf(name, sizeof name, "s%d", i);
		for (int j = 0; j < nargs; j++) args[j] = strcmp(cmd[j], "{}") == 0 ? name : cmd[j];
		pid_t pid = fork();
		if (pid < 0) {
			perror("stopfloor: fork");
			return 3;
		}
		if (pid == 0) {
			setpgid(0, 0);
			sigprocmask(SIG_UNBLOCK, &mask, NULL);
			dup2(devnull, 0);
			if (pipes) {
				dup2(out[1], 1);
				dup2(err[1], 2);
			}
			execvp(args[0], args);
			_exit(127);
		}
		setpgid(pid, pid);
		pids[i] = pid;
		if (pipes) {
			close(out[1]);
			close(err[1]);
			int fds[2] = {out[0], err[0]};
			for (int k = 0; k < 2; k++) {
				fcntl(fds[k], F_SETFL, O_NONBLOCK);
				struct epoll_event pe = {.events = EPOLLIN, .data.fd = fds[k]};
				epoll_ctl(ep, EPOLL_CTL_ADD, fds[k], &pe);
				open_fds++;
			}
		}
	}

	int alive = n;
	char buf[4096];
	struct epoll_event evs[256];
	while (alive > 0 || open_fds > 0) {
		int m = epoll_wait(ep, evs, 256, -1);
		if (m < 0 && errno == EINTR) continue;
		if (m < 0) return 3;
		for (int e = 0; e < m; e++) {
			int fd = evs[e].data.fd;
			if (fd != sfd) {
				ssize_t r = read(fd, buf, sizeof buf);
				if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
					epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
					close(fd);
					open_fds--;
				}
				continue;
			}
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) == sizeof si) {
				if (si.ssi_signo == SIGTERM) {
					for (int i = 0; i < n; i++) {
						if (pids[i] <= 0) continue;
						kill(-pids[i], SIGTERM);
						if (cont) kill(-pids[i], SIGCONT);
					}
				}
			}
			pid_t p;
			while ((p = waitpid(-1, NULL, WNOHANG)) > 0) {
				for (int i = 0; i < n; i++)
					if (pids[i] == p) pids[i] = 0;
				alive--;
			}
		}
	}
	return 0;
}
