#!/bin/sh
# "ticks" prints a line every 50 ms forever; "bulk N" prints N bytes of 'a'
# and exits.
case "$1" in
  ticks) while :; do echo tick; sleep 0.05; done ;;
  bulk) head -c "$2" /dev/zero | tr '\0' a ;;
esac
