#!/bin/sh
# Starts a daemon that leaves the process group (setsid) and runs on, then
# prints "daemon started". The daemon writes its pid to daemon.pid and the
# CLI its own to cli.pid, both in the working directory, as eat's PID
# namespace numbers them (/proc/self/stat as the shell reads it; $$ would
# be the number inside the CLI's namespace). With "exit" the CLI then exits
# 0; with "hang" it waits for ever; with "stubborn" it also ignores
# SIGTERM. The other modes attack the keeper: "stop-keeper" and
# "usr1-keeper" signal the CLI's parent, "kill-group" SIGKILLs the CLI's
# whole process group, and "kill-keeper" the keeper found through /proc.
if [ "$1" = stubborn ]; then trap '' TERM; fi
read -r pid _ < /proc/self/stat
echo "$pid" > cli.pid
rm -f ready
mkfifo ready
setsid sh -c 'read -r pid _ < /proc/self/stat; echo "$pid" > daemon.pid
  echo up > ready; exec sleep 600' < /dev/null > /dev/null 2>&1 &
read -r _ < ready
echo "daemon started"
if [ "$1" = stop-keeper ]; then kill -STOP $PPID; exit 0; fi
if [ "$1" = usr1-keeper ]; then kill -USR1 $PPID; exit 0; fi
if [ "$1" = kill-group ]; then kill -KILL 0; fi
if [ "$1" = kill-keeper ]; then
  # Its parent and grandparent, as eat's PID namespace numbers them, when
  # they are eat-keeper (never the test that started the keeper).
  read -r _ _ _ parent _ < /proc/self/stat
  read -r _ _ _ grandparent _ < "/proc/$parent/stat"
  for p in "$parent" "$grandparent"; do
    read -r name < "/proc/$p/comm"
    if [ "$name" = eat-keeper ]; then kill -KILL "$p" 2> /dev/null; fi
  done
  exit 0
fi
if [ "$1" = exit ]; then exit 0; fi
sleep 600
