#!/bin/sh
# Leaves in place of kernel.cpp what is no kernel: "fifo" a named pipe,
# "zero" a link to /dev/zero, "link" a link to a file outside the workspace
# ($2), "big" a regular file of 5 MiB.
rm -f kernel.cpp
case "$1" in
  fifo) mkfifo kernel.cpp ;;
  zero) ln -s /dev/zero kernel.cpp ;;
  link) ln -s "$2" kernel.cpp ;;
  big) head -c 5242880 /dev/zero | tr '\0' ' ' > kernel.cpp ;;
esac
echo '{"type":"result","subtype":"success","is_error":false,"result":"Done.","usage":{"input_tokens":1,"output_tokens":1}}'
