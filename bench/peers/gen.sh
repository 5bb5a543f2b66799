#!/bin/sh
# gen.sh LINES: the log flood. LINES lines of 100 bytes (99 digits and a
# newline), then END-OF-STREAM, which the benchmark waits for at the
# receiving end.
exec awk -v n="$1" 'BEGIN { s = sprintf("%099d", 0); for (i = 0; i < n; i++) print s; print "END-OF-STREAM" }'
