#!/bin/sh
# Prints nothing and never finishes. With "stubborn" it ignores SIGTERM and
# then says so, so that the idle timeout (which a line restarts) runs only
# once the trap is set, however slowly the shell started.
if [ "$1" = stubborn ]; then
  trap '' TERM
  echo "ignoring TERM"
fi
sleep 600
