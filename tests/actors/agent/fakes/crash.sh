#!/bin/sh
# Fails: "exit3" exits with status 3, "segv" dies of SIGSEGV.
echo '{"type":"system","subtype":"init"}'
case "$1" in
  exit3) echo "something broke" >&2; exit 3 ;;
  segv) kill -SEGV $$ ;;
esac
exit 70
