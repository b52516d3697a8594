#!/bin/sh
# Prints nothing and never finishes; with "stubborn" it also ignores SIGTERM.
if [ "$1" = stubborn ]; then trap '' TERM; fi
sleep 600
