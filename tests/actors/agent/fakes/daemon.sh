#!/bin/sh
# Starts a daemon that leaves the process group (setsid) and runs on, then
# prints "daemon started". The daemon writes its pid to daemon.pid and the
# CLI its own to cli.pid, both in the working directory. With "exit" the CLI
# then exits 0; with "hang" it waits for ever; with "stubborn" it also
# ignores SIGTERM.
if [ "$1" = stubborn ]; then trap '' TERM; fi
echo $$ > cli.pid
rm -f ready
mkfifo ready
setsid sh -c 'echo $$ > daemon.pid; echo up > ready; exec sleep 600' \
  < /dev/null > /dev/null 2>&1 &
read -r _ < ready
echo "daemon started"
if [ "$1" = stop-keeper ]; then kill -STOP $PPID; exit 0; fi
if [ "$1" = usr1-keeper ]; then kill -USR1 $PPID; exit 0; fi
if [ "$1" = exit ]; then exit 0; fi
sleep 600
