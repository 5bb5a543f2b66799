/* pipecopy MODE OUT CMD [ARG...]: runs CMD with its stdout on a pipe of 256
 * KiB (podvisor's size for a busy stream) and copies the pipe into the file
 * OUT until EOF, the way a logger that does nothing else would:
 *   rw      read(2) up to 256 KiB, write(2) it (the file opened O_APPEND)
 *   splice  splice(2) from the pipe into the file, up to 1 MiB a call
 *   splice64  the same, 64 KiB a call (the pipe's mutex is held for less)
 * For BENCHMARKS section 14: what splice would give podvisor's file path. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: pipecopy rw|splice|splice64 OUT CMD [ARG...]\n");
		return 2;
	}
	const char *mode = argv[1];
	int rw = strcmp(mode, "rw") == 0;
	size_t chunk = strcmp(mode, "splice64") == 0 ? 64 << 10 : 1 << 20;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0 || fcntl(p[0], F_SETPIPE_SZ, 256 << 10) < 0) {
		perror("pipe");
		return 1;
	}
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (rw ? O_APPEND : 0), 0644);
	if (out < 0) {
		perror(argv[2]);
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	close(p[1]);
	static char buf[256 << 10];
	for (;;) {
		ssize_t n;
		if (rw) {
			n = read(p[0], buf, sizeof buf);
			for (ssize_t w = 0; n > 0 && w < n;) {
				ssize_t m = write(out, buf + w, n - w);
				if (m < 0) {
					perror("write");
					return 1;
				}
				w += m;
			}
		} else {
			n = splice(p[0], NULL, out, NULL, chunk, 0);
		}
		if (n < 0) {
			perror(mode);
			return 1;
		}
		if (n == 0)
			break;
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
