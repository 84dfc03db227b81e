#!/bin/sh
# A test solver: reads a question as JSON on stdin and writes a letter.
# It answers B to the question about two Developers (whose key is D) and C
# to everything else, with some words around the letter.
in=$(cat)
case "$in" in
*'"id":"07493def-'*) echo "B" ;;
*'"options":{"A":'*) echo "The answer is C." ;;
*) echo "no question on stdin" >&2; exit 2 ;;
esac
