#!/bin/sh
# A compiler launcher for a lab's own sources: runs the compiler as given, shows its messages as
# usual, and keeps them beside the object file (<object>.warnings), so that a failing test can show
# the compiler's warnings about the student's code next to its diagnosis (common/src/testing.cpp).
object=""
previous=""
for argument in "$@"; do
  [ "$previous" = "-o" ] && object=$argument
  previous=$argument
done
if [ -z "$object" ]; then
  exec "$@"
fi
messages="$object.warnings"
"$@" 2>"$messages.part"
status=$?
cat "$messages.part" >&2
if [ -s "$messages.part" ]; then
  mv "$messages.part" "$messages"
else
  rm -f "$messages.part" "$messages"
fi
exit $status
