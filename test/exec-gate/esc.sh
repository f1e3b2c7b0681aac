#!/bin/bash
# The escalated program of test/exec-gate/escalation.test.ts (an explicit allow rule names this path).
case "$1" in
  exit) exit "$2" ;;
  info) echo "ppid=$PPID"; a=$PPID; up=; for i in 1 2 3; do up="$up $a"; a=$(cut -d' ' -f4 "/proc/$a/stat" 2>/dev/null) || break; done; echo "ancestors=$up"; [ -t 0 ] && echo stdin-tty; [ -t 1 ] && echo stdout-tty; echo "preload=${LD_PRELOAD-}"; echo "pythonpath=${PYTHONPATH-}"; echo "cwd=$PWD" ;;
  cat) tr a-z A-Z ;;
  write) echo written > "$2" ;;
  sleep) echo $$ > "$2"; sleep 100 ;;
  signal) kill -TERM $$ ;;
esac
