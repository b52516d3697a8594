#!/bin/sh
# Prints nothing and never finishes. With "stubborn" it ignores SIGTERM and
# then says so: a test stops it on that line, once the trap is set.
if [ "$1" = stubborn ]; then
  trap '' TERM
  echo "ignoring TERM"
fi
sleep 600
