/* numlines N: writes N lines of 100 bytes to stdout, line i being i in 99
 * decimal digits (zero-padded) and a newline, so that a reader can check
 * that nothing is lost or reordered. The counter is incremented in place:
 * the generator costs about what `print s` in awk costs (section 12). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	static char buf[1 << 16];
	char line[100];
	memset(line, '0', 99);
	line[99] = '\n';
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
	for (long i = 0; i < n; i++) {
		fwrite(line, 1, sizeof line, stdout);
		for (int j = 98; j >= 0; j--) {
			if (line[j] != '9') {
				line[j]++;
				break;
			}
			line[j] = '0';
		}
	}
	return fflush(stdout) != 0;
}
