#!/bin/sh
# wordcount: prints the number of words on standard input.
wc -w | tr -d ' '
