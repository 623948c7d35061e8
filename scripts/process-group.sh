# Sourced by the scripts that start servers of their own in a session of their own (setsid), with the
# leader's PID in a file: scripts/git-server.sh (nginx, fcgiwrap) and scripts/gitea.sh (Gitea).
#
# stop_group FILE [SECONDS]: ends the process group whose leader FILE names, everything the leader forked
# included, and removes FILE. What is still there after SECONDS (default 2) of SIGTERM gets SIGKILL:
# fcgiwrap ignores SIGTERM, and Gitea takes a few seconds to finish the requests in flight.
stop_group() {
  local pid tries=$(( ${2:-2} * 10 ))
  [ -f "$1" ] || return 0
  pid=$(cat "$1")
  rm -f "$1"
  kill -- "-$pid" 2>/dev/null || return 0
  for _ in $(seq "$tries"); do kill -0 -- "-$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  return 0
}
